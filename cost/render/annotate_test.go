package render

import (
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

// TestAnnotateReplacesItsOwn: a second run replaces the onnxcost.* entries
// of the first and keeps the model's own; counts are written as integers,
// other figures in shortest round-trip form.
func TestAnnotateReplacesItsOwn(t *testing.T) {
	n := &ir.Node{Name: "conv", OpType: "Conv"}
	n.SetMetadata([]ir.KeyValue{{Key: "author", Value: "me"}})
	m := &ir.Model{Graph: &ir.Graph{Nodes: []*ir.Node{n, {Name: "uncosted"}}}}
	r := &report.Report{GPU: "T4", Totals: report.Totals{TimeS: 2e-3}, Nodes: []report.NodeCost{
		{Name: "conv", OpType: "Conv", Bound: "compute", TimeS: 1e-3, Counts: report.Counts{FLOPs: 239439872}},
	}}
	for range 2 {
		if got := Annotate(m, r); got != 1 {
			t.Fatalf("annotated %d nodes, want 1", got)
		}
	}
	kv := map[string]string{}
	for _, e := range n.Metadata() {
		if _, dup := kv[e.Key]; dup {
			t.Errorf("%s written twice", e.Key)
		}
		kv[e.Key] = e.Value
	}
	if kv["author"] != "me" || kv["onnxcost.flops"] != "239439872" || kv["onnxcost.time_share"] != "0.5" || kv["onnxcost.time_s"] != "0.001" {
		t.Errorf("metadata %v", kv)
	}
	if len(m.Graph.Nodes[1].Metadata()) != 0 {
		t.Error("a node the report does not cost was annotated")
	}
}

// TestAnnotateNamesTheRuntime: the model's summary and its
// onnxcost.runtime entry name the runtime the times are for; a report
// priced without one names its plan alone and writes no runtime entry.
func TestAnnotateNamesTheRuntime(t *testing.T) {
	kvs := func(r *report.Report) map[string]string {
		m := map[string]string{}
		for _, e := range modelAnnotations(r) {
			m[e.Key] = e.Value
		}
		return m
	}
	r := &report.Report{GPU: "A100-SXM4-80GB", DType: "fp16", Plan: "fused", Totals: report.Totals{TimeS: 375e-6}}
	if kv := kvs(r); kv["onnxcost.runtime"] != "" || kv["onnxcost.summary"] != "375 µs on A100-SXM4-80GB (fp16, plan fused) · 0 FLOP · 0 B moved · 0 launches" {
		t.Errorf("no runtime: %q", kv)
	}
	r.Runtime = &report.Runtime{Name: "onnxruntime-iobinding"}
	kv := kvs(r)
	if kv["onnxcost.runtime"] != "onnxruntime-iobinding" || kv["onnxcost.summary"] != "375 µs on A100-SXM4-80GB (fp16, runtime onnxruntime-iobinding, fused kernels) · 0 FLOP · 0 B moved · 0 launches" {
		t.Errorf("under onnxruntime-iobinding: %q", kv)
	}
}
