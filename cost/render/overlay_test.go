package render

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
)

func overlayReports() (fused, unfused *report.Report) {
	fused = &report.Report{Plan: "fused", GPU: "A100", Totals: report.Totals{TimeS: 4e-5}}
	fused.Nodes = []report.NodeCost{
		{Name: "conv", OpType: "FusedConv", FusedFrom: []string{"conv", "relu"}, Bound: "compute", TimeS: 3e-5,
			Counts: report.Counts{FLOPs: 2e9, BytesRead: 1e6, BytesWritten: 5e5}},
		{Name: "shape/folded_1", OpType: "Constant"},
		{Name: "flat", OpType: "Flatten"},
		{Name: "", OpType: "Add", TimeS: 1e-5},
	}
	unfused = &report.Report{Plan: "unfused", GPU: "A100", Totals: report.Totals{TimeS: 5e-5}}
	for _, n := range []string{"conv", "relu", "shape", "flat", ""} {
		unfused.Nodes = append(unfused.Nodes, report.NodeCost{Name: n, TimeS: 1e-5, Bound: "memory"})
	}
	return fused, unfused
}

// TestNetronAttachmentFormat checks the file against what Netron's
// metadata.Attachment (lutzroeder/netron source/view.js) reads: the
// "netron:attachment" signature, and "metrics" entries with kind, target
// (the node's name), name and a string value.
func TestNetronAttachmentFormat(t *testing.T) {
	fused, unfused := overlayReports()
	b, err := NetronAttachment(fused, unfused)
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Signature string
		Metadata  []map[string]any
		Metrics   []map[string]any
	}
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	if a.Signature != "netron:attachment" || a.Metadata == nil {
		t.Fatalf("signature %q, metadata %v", a.Signature, a.Metadata)
	}
	byNode := map[string]map[string]string{}
	for _, m := range a.Metrics {
		target, _ := m["target"].(string)
		name, _ := m["name"].(string)
		value, ok := m["value"].(string)
		if m["kind"] != "node" || target == "" || name == "" || !ok || len(m) != 4 {
			t.Fatalf("entry %v is not a node metric", m)
		}
		if byNode[target] == nil {
			byNode[target] = map[string]string{}
		}
		byNode[target][name] = value
	}
	if len(byNode) != 4 {
		t.Fatalf("nodes %v, want conv, relu, flat and the folded shape", byNode)
	}
	if relu := byNode["relu"]; relu["onnxcost.time"] != Seconds(3e-5) || relu["onnxcost.share"] != Percent(0.75) ||
		relu["onnxcost.flops"] != FLOPs(2e9) || relu["onnxcost.bytes"] != Bytes(1.5e6) || relu["onnxcost.kernel"] == "" {
		t.Errorf("relu, fused into conv: %v", relu)
	}
	if byNode["flat"]["onnxcost.bound"] != "none (no kernel)" || byNode["shape"]["onnxcost.time"] != Seconds(0) {
		t.Errorf("flat %v, shape %v", byNode["flat"], byNode["shape"])
	}
	if b2, _ := NetronAttachment(fused, unfused); !bytes.Equal(b, b2) {
		t.Error("not deterministic")
	}
}

// TestModelExplorerNodeDataFormat checks the file against GraphNodeData
// (google-ai-edge/model-explorer
// src/server/package/src/model_explorer/node_data_builder.py): a
// top-level "results" object of {value: number} keyed by node id, and a
// gradient with stops 0 and 1.
func TestModelExplorerNodeDataFormat(t *testing.T) {
	fused, unfused := overlayReports()
	f, m, u, err := Overlays(fused, unfused)
	if err != nil || f == nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		b    []byte
		want map[string]float64
	}{
		{m, map[string]float64{"conv": 0.03, "relu": 0.03, "flat": 0, "shape": 0}},
		{u, map[string]float64{"conv": 0.01, "relu": 0.01, "flat": 0.01, "shape": 0.01}},
	} {
		var d struct {
			Name     string
			Results  map[string]map[string]float64
			Gradient []struct{ Stop float64 }
		}
		if err := json.Unmarshal(c.b, &d); err != nil {
			t.Fatal(err)
		}
		if d.Name == "" || len(d.Gradient) < 2 || d.Gradient[0].Stop != 0 || d.Gradient[len(d.Gradient)-1].Stop != 1 {
			t.Fatalf("name %q, gradient %v", d.Name, d.Gradient)
		}
		if _, nested := d.Results["results"]; nested || len(d.Results) != len(c.want) {
			t.Fatalf("results %v, want %v", d.Results, c.want)
		}
		for k, v := range c.want {
			r := d.Results[k]
			if len(r) != 1 || r["value"] < v*0.999 || r["value"] > v*1.001 {
				t.Errorf("%s: %v, want value %g", k, r, v)
			}
		}
	}
}
