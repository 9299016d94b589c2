package cost

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/onnxcost/onnxcost/ir"
)

var updateSchema = flag.Bool("update-schema", false, "rewrite report.schema.json from the Report struct")

// reportSchema derives the schema from the Report struct.
func reportSchema(t *testing.T) []byte {
	t.Helper()
	dim := &jsonschema.Schema{Types: []string{"integer", "string"}}
	s, err := jsonschema.For[Report](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[Shape](): {Types: []string{"null", "array"}, Items: dim,
			Description: "known dims are numbers, symbolic dims their symbol; null when the rank is unknown"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	s.Schema = "https://json-schema.org/draft/2020-12/schema"
	s.Title = "onnxcost report"
	s.Description = "Output of 'onnxcost report --format json'. Fields are added, never renamed."
	out, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

func TestReportSchema(t *testing.T) {
	got := reportSchema(t)
	if *updateSchema {
		if err := os.WriteFile("report.schema.json", got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got, ReportSchema) {
		t.Fatalf("report.schema.json is stale: the Report struct changed; run go test ./cost -run TestReportSchema -update-schema")
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(ReportSchema, &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &Report{SchemaVersion: SchemaVersion, Bindings: map[string]int64{"batch": 1}, Warnings: []string{}, UnsupportedOps: []Unsupported{},
		Nodes: []NodeCost{{Name: "n", OpType: "Relu", FusedFrom: []string{}, Inputs: []TensorInfo{{Name: "x", DType: "float32", Shape: ShapeOf(ir.RankedShape(ir.S("batch"), ir.D(3)))}},
			Outputs: []TensorInfo{{Name: "y", DType: "float32", Shape: nil}}}}}
	js, _ := json.Marshal(r)
	var inst any
	if err := json.Unmarshal(js, &inst); err != nil {
		t.Fatal(err)
	}
	if err := rs.Validate(inst); err != nil {
		t.Errorf("a valid report fails the schema: %v", err)
	}
	// The schema must reject a report whose shape holds a non-dim.
	var broken map[string]any
	json.Unmarshal(js, &broken)
	broken["nodes"].([]any)[0].(map[string]any)["inputs"].([]any)[0].(map[string]any)["shape"] = []any{true}
	if err := rs.Validate(broken); err == nil {
		t.Error("schema accepts a boolean dim")
	}
}
