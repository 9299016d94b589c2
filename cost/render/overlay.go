package render

import (
	"encoding/json"
	"fmt"

	"github.com/onnxcost/onnxcost/cost/report"
)

// Overlays are side files that viewers load beside the unchanged model, so
// a report's figures appear on the graph people already have open. Both
// viewers show the original model, so a fused kernel's figures are given to
// every node it was fused from: otherwise the Relu and MaxPool folded into
// a Conv would look unpriced. Nodes with no name are left out because
// neither viewer can match them.

// overlayNode is one original node and the kernel that runs it; kernel
// is nil for a node the plan's passes folded away (a shape computation
// done once at build time), which therefore costs nothing per run.
type overlayNode struct {
	name   string
	kernel *report.NodeCost
}

// overlayNodes lists the original nodes in report order, each once (the
// first kernel to claim a name wins, which keeps the output deterministic),
// then the nodes of the unfused report all that r's plan folded away.
func overlayNodes(r, all *report.Report) []overlayNode {
	seen := make(map[string]bool, len(r.Nodes))
	var known map[string]bool // the model's names: a plan's own (x/folded_9) match nothing
	if all != nil {
		known = make(map[string]bool, len(all.Nodes))
		for i := range all.Nodes {
			known[all.Nodes[i].Name] = true
		}
	}
	var out []overlayNode
	add := func(name string, k *report.NodeCost) {
		if name == "" || seen[name] || (known != nil && !known[name]) {
			return
		}
		seen[name] = true
		out = append(out, overlayNode{name, k})
	}
	for i := range r.Nodes {
		k := &r.Nodes[i]
		add(k.Name, k)
		for _, m := range k.FusedFrom {
			add(m, k)
		}
	}
	if all != nil {
		for i := range all.Nodes {
			add(all.Nodes[i].Name, nil)
		}
	}
	return out
}

// netronAttachment follows metadata.Attachment in lutzroeder/netron
// source/view.js: a .json file whose "signature" is "netron:attachment",
// opened while a model is shown, adds its "metrics" entries to the sidebar.
// An entry with "kind" "node" and "target" equal to the node's name (its
// first line) lands in that node's Metrics section as name: value; an
// absent "type" reads as an attribute, shown as text.
type netronAttachment struct {
	Signature string         `json:"signature"`
	Metadata  []netronMetric `json:"metadata"`
	Metrics   []netronMetric `json:"metrics"`
}

type netronMetric struct {
	Kind   string `json:"kind"`
	Target string `json:"target"`
	Name   string `json:"name"`
	Value  string `json:"value"`
}

// NetronAttachment writes r as Netron's attachment sidecar: per node the
// time, share of the model, bound, FLOPs and bytes in readable units, and
// for a fused node the kernel whose figures these are. Nodes of the
// unfused report all (nil: none) that r's plan folds away are listed as
// folded, with no time.
func NetronAttachment(r, all *report.Report) ([]byte, error) {
	a := netronAttachment{Signature: "netron:attachment", Metadata: []netronMetric{}, Metrics: []netronMetric{}}
	total := r.Totals.TimeS
	for _, n := range overlayNodes(r, all) {
		k := n.kernel
		if k == nil {
			a.Metrics = append(a.Metrics,
				netronMetric{Kind: "node", Target: n.name, Name: "onnxcost.time", Value: Seconds(0)},
				netronMetric{Kind: "node", Target: n.name, Name: "onnxcost.bound", Value: "none (folded into a constant when the plan is built)"})
			continue
		}
		share := 0.0
		if total > 0 {
			share = k.TimeS / total
		}
		bound := k.Bound
		if bound == "" {
			bound = "none (no kernel)"
		}
		add := func(name, value string) {
			a.Metrics = append(a.Metrics, netronMetric{Kind: "node", Target: n.name, Name: name, Value: value})
		}
		add("onnxcost.time", Seconds(k.TimeS))
		add("onnxcost.share", Percent(share))
		add("onnxcost.bound", bound)
		add("onnxcost.flops", FLOPs(k.FLOPs))
		add("onnxcost.bytes", Bytes(k.BytesRead+k.BytesWritten))
		if len(k.FusedFrom) > 1 {
			add("onnxcost.kernel", fmt.Sprintf("%s %s (fuses %d nodes; figures are the kernel's)", k.OpType, k.Name, len(k.FusedFrom)))
		}
	}
	return json.MarshalIndent(a, "", " ")
}

// meGraphNodeData is the single-graph node data file of Model Explorer
// (google-ai-edge/model-explorer, GraphNodeData in
// src/server/package/src/model_explorer/node_data_builder.py; loaded by
// node_data_provider_dropdown.ts, which takes a top-level "results" object
// as the data of the graph on screen). "results" keys are node ids (an
// ONNX node's name) or output tensor names; "gradient" colours nodes from
// the least value (stop 0) to the greatest (stop 1). One file is one data
// set ("run"); the viewer loads several and switches between them.
type meGraphNodeData struct {
	Name                string              `json:"name"`
	Results             map[string]meResult `json:"results"`
	Gradient            []meGradient        `json:"gradient"`
	HideAggregatedStats []string            `json:"hideAggregatedStats,omitempty"`
}

type meResult struct {
	Value float64 `json:"value"`
}

type meGradient struct {
	Stop    float64 `json:"stop"`
	BgColor string  `json:"bgColor"`
}

// ModelExplorerNodeData writes r as a Model Explorer node data set: each
// node's time in milliseconds, coloured white (fastest) to red (slowest).
// When fused kernels give their time to several nodes, group sums would
// count a kernel more than once, so the sum column is hidden.
// Nodes of the unfused report all (nil: none) that r's plan folds away
// get 0.
func ModelExplorerNodeData(r, all *report.Report) ([]byte, error) {
	d := meGraphNodeData{
		Name:     fmt.Sprintf("onnxcost time (ms), %s, %s", PlanText(r), r.GPU),
		Results:  map[string]meResult{},
		Gradient: []meGradient{{0, "#ffffff"}, {0.5, "#ffb74d"}, {1, "#d32f2f"}},
	}
	for _, n := range overlayNodes(r, all) {
		if n.kernel == nil {
			d.Results[n.name] = meResult{}
			continue
		}
		d.Results[n.name] = meResult{Value: n.kernel.TimeS * 1e3}
		if len(n.kernel.FusedFrom) > 1 {
			d.HideAggregatedStats = []string{"sum"}
		}
	}
	return json.MarshalIndent(d, "", " ")
}

// Overlays writes the three overlay files of a model: Netron's attachment
// and Model Explorer's data set from priced (the runtime's own plan, or
// the one asked for), and a second Model Explorer data set from the
// unfused plan (nil when unfused is nil), which also names the nodes
// priced's plan folds away.
func Overlays(priced, unfused *report.Report) (netron, explorer, explorerUnfused []byte, err error) {
	if netron, err = NetronAttachment(priced, unfused); err != nil {
		return nil, nil, nil, err
	}
	if explorer, err = ModelExplorerNodeData(priced, unfused); err != nil || unfused == nil {
		return netron, explorer, nil, err
	}
	explorerUnfused, err = ModelExplorerNodeData(unfused, nil)
	return netron, explorer, explorerUnfused, err
}
