package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/onnxcost/onnxcost/internal/schematest"
	"github.com/onnxcost/onnxcost/ir"
)

var updateSchema = flag.Bool("update-schema", false, "rewrite the *.schema.json files from the structs")

// schemaFor derives a contract's schema from its Go type.
func schemaFor[T any](t *testing.T, title, desc string) []byte {
	t.Helper()
	dim := &jsonschema.Schema{Types: []string{"integer", "string"}}
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[Shape](): {Types: []string{"null", "array"}, Items: dim,
			Description: "known dims are numbers, symbolic dims their symbol; null when the rank is unknown"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	openObjects(s)
	s.Schema = "https://json-schema.org/draft/2020-12/schema"
	s.Title = title
	s.Description = desc
	out, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

// openObjects drops the "additionalProperties": false that For puts on
// every struct: the contract only adds fields, so a reader validating with
// an older schema must accept a newer document.
func openObjects(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if reflect.DeepEqual(s.AdditionalProperties, &jsonschema.Schema{Not: &jsonschema.Schema{}}) {
		s.AdditionalProperties = nil
	}
	openObjects(s.AdditionalProperties)
	openObjects(s.Items)
	for _, p := range s.Properties {
		openObjects(p)
	}
	for _, d := range s.Defs {
		openObjects(d)
	}
	for _, l := range [][]*jsonschema.Schema{s.AnyOf, s.OneOf, s.AllOf, s.PrefixItems} {
		for _, c := range l {
			openObjects(c)
		}
	}
}

// checkSchemaFile fails when a committed schema differs from the struct it
// describes (and rewrites it under -update-schema).
func checkSchemaFile(t *testing.T, file string, got, committed []byte) *jsonschema.Resolved {
	t.Helper()
	if *updateSchema {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got, committed) {
		t.Fatalf("%s is stale: its struct changed; run go test ./cost/report -run Schema -update-schema", file)
	}
	return schematest.Resolve(t, committed)
}

func TestCompareSchema(t *testing.T) {
	rs := checkSchemaFile(t, "compare.schema.json",
		schemaFor[Comparison](t, "onnxcost compare", "Output of 'onnxcost compare --format json'. Fields are added, never renamed."),
		CompareSchema)
	c := &Comparison{Header: Header{SchemaVersion: SchemaVersion}, Bindings: map[string]int64{}, Warnings: []string{}, Groups: []Group{{Name: "g", OpType: "Conv", Constituents: []string{"g"}}}, UnfusedFusable: Coverage{Ops: map[string]int{"Relu": 1}}}
	js, _ := json.Marshal(c)
	var inst map[string]any
	if err := json.Unmarshal(js, &inst); err != nil {
		t.Fatal(err)
	}
	if err := rs.Validate(inst); err != nil {
		t.Errorf("a valid comparison fails the schema: %v", err)
	}
	inst["groups"].([]any)[0].(map[string]any)["saving_s"] = "fast"
	if err := rs.Validate(inst); err == nil {
		t.Error("schema accepts a string saving_s")
	}
}

func TestReportSchema(t *testing.T) {
	rs := checkSchemaFile(t, "report.schema.json",
		schemaFor[Report](t, "onnxcost report", "Output of 'onnxcost report --format json'. Fields are added, never renamed."),
		ReportSchema)
	r := &Report{Header: Header{SchemaVersion: SchemaVersion}, Bindings: map[string]int64{"batch": 1}, Warnings: []string{}, UnsupportedOps: []Unsupported{}, Nodes: []NodeCost{{Name: "n", OpType: "Relu", FusedFrom: []string{}, Inputs: []TensorInfo{{Name: "x", DType: "float32", Shape: ShapeOf(ir.RankedShape(ir.S("batch"), ir.D(3)))}},
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
