package report

import "testing"

// TestFindNodeAndPerGPU: a node is found by its name or by a name it
// absorbed; PerGPU scales each node's counts by its share and sums them,
// leaving the report as it was.
func TestFindNodeAndPerGPU(t *testing.T) {
	r := &Report{Nodes: []NodeCost{
		{Name: "gemm", FusedFrom: []string{"mm", "add"}, GPUShare: 0.25, Counts: Counts{FLOPs: 400, BytesRead: 80}},
		{Name: "norm", Counts: Counts{FLOPs: 10, BytesRead: 20}},
	}}
	if n := r.FindNode("add"); n == nil || n.Name != "gemm" {
		t.Errorf("FindNode(add) = %v, want the fused gemm", n)
	}
	if n := r.FindNode("norm"); n == nil || n != &r.Nodes[1] {
		t.Errorf("FindNode(norm) = %v", n)
	}
	if r.FindNode("none") != nil {
		t.Error("FindNode found a missing node")
	}
	p := r.PerGPU()
	if p.Totals.FLOPs != 110 || p.Totals.BytesRead != 40 || r.Nodes[0].FLOPs != 400 {
		t.Errorf("per GPU totals %+v; original node %+v", p.Totals.Counts, r.Nodes[0].Counts)
	}
}
