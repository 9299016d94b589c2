package ir

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestImportFusedDomain: the domain is imported once, and only when a
// node is in it.
func TestImportFusedDomain(t *testing.T) {
	m := &Model{Graph: &Graph{Nodes: []*Node{{OpType: "Relu"}}}}
	m.ImportFusedDomain()
	if m.Opset(FusedDomain) != 0 {
		t.Fatal("imported with no fused node")
	}
	m.Graph.Nodes = append(m.Graph.Nodes, &Node{OpType: OpFusedConv, Domain: FusedDomain})
	m.ImportFusedDomain()
	m.ImportFusedDomain()
	if m.Opset(FusedDomain) != 1 || len(m.Opsets) != 1 {
		t.Fatalf("opsets %v", m.Opsets)
	}
}

// TestExternalFiles: each present data file once, beside the model;
// inline and missing data is no file.
func TestExternalFiles(t *testing.T) {
	c := func(loc DataLocation) *Value { return &Value{Const: &Tensor{Loc: loc}} }
	m := &Model{Graph: &Graph{Initializers: []*Value{c(DataLocation{File: "w.bin"}), c(DataLocation{}),
		c(DataLocation{File: "w.bin", Offset: 8}), c(DataLocation{File: "gone.bin", Missing: true}), {}}}}
	got := m.ExternalFiles(filepath.Join("dir", "m.onnx"))
	if want := []string{filepath.Join("dir", "w.bin")}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
