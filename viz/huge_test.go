package viz

import (
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
)

// TestHuge: a fused node counts the nodes it merged; nodes or written
// tensors past HugeNodes make a model huge, and the note says which.
func TestHuge(t *testing.T) {
	r := &report.Report{Nodes: []report.NodeCost{{FusedFrom: []string{"a", "b", "c"}}, {Outputs: make([]report.TensorInfo, 2)}}}
	if n, o := ModelSize(r); n != 4 || o != 2 {
		t.Fatalf("ModelSize = %d, %d; want 4, 2", n, o)
	}
	if IsHuge(r) {
		t.Fatal("4 nodes is huge")
	}
	r.Nodes[1].Outputs = make([]report.TensorInfo, HugeNodes+1)
	if !IsHuge(r) {
		t.Fatal("20,001 outputs is not huge")
	}
	if got, want := HugeNote(r, "shows", "force"), "the model has nodes writing 20001 tensors (over 20000): shows; force"; got != want {
		t.Errorf("HugeNote = %q, want %q", got, want)
	}
	r.Nodes[0].FusedFrom, r.Nodes[1].Outputs = make([]string, HugeNodes+1), nil
	if got, want := HugeNote(r, "s", "f"), "the model has 20002 nodes (over 20000): s; f"; got != want {
		t.Errorf("HugeNote = %q, want %q", got, want)
	}
}
