package main

import (
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/internal/schematest"
)

// TestReportsMatchSchema: real reports of every plan and a few fixtures
// validate against the committed JSON Schema of the report contract.
func TestReportsMatchSchema(t *testing.T) {
	rs := resolveSchema(t, report.ReportSchema)
	for _, m := range []string{"alexnet.onnx", "gpt_small.onnx", "lstm_ptb_dyn.onnx", "loop_if.onnx"} {
		for _, plan := range []string{"unfused", "fused"} {
			checkOutput(t, rs, "cost/report/report.schema.json", "report", fixture(t, m), "--gpu", "T4", "--plan", plan, "--format", "json")
			// With --train: totals.train and nodes[].backward.
			checkOutput(t, rs, "cost/report/report.schema.json", "report", fixture(t, m), "--gpu", "T4", "--plan", plan, "--format", "json", "--train", "--dtype", "fp16")
		}
	}
}

// TestComparisonsMatchSchema: real `compare --format json` output
// validates against the committed JSON Schema of the compare contract.
func TestComparisonsMatchSchema(t *testing.T) {
	rs := resolveSchema(t, report.CompareSchema)
	for _, m := range []string{"alexnet.onnx", "gpt_small.onnx", "lstm_ptb_dyn.onnx"} {
		checkOutput(t, rs, "cost/report/compare.schema.json", "compare", fixture(t, m), "--gpu", "T4", "--format", "json")
	}
}

// checkOutput runs the CLI and validates its JSON output against rs.
func checkOutput(t *testing.T, rs *jsonschema.Resolved, schemaFile string, args ...string) {
	t.Helper()
	var inst any
	runJSON(t, &inst, args...)
	if err := rs.Validate(inst); err != nil {
		t.Errorf("%v: output does not match %s: %v", args, schemaFile, err)
	}
}

// resolveSchema parses and resolves a committed JSON Schema.
func resolveSchema(t *testing.T, schema []byte) *jsonschema.Resolved {
	t.Helper()
	return schematest.Resolve(t, schema)
}
