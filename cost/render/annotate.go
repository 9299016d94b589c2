package render

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

// annotatePrefix starts every metadata key Annotate writes, so
// a later run can replace its own entries and leave the model's own alone.
const annotatePrefix = "onnxcost."

// Annotate writes the report's estimate into the model for viewers:
// each node's figures into NodeProto.metadata_props, which Netron shows in
// the node panel, and the totals into ModelProto.metadata_props (Netron's
// model panel). The model's nodes are matched to the report's by name;
// both come from the same passes over the same file, so every node that
// the report costs is found. Values are human text first (onnxcost.summary)
// and then the exact figures in SI units, so scripts need not parse units.
// Existing onnxcost.* entries (from an earlier run) are replaced.
func Annotate(m *ir.Model, r *report.Report) (annotated int) {
	byName := make(map[string]*report.NodeCost, len(r.Nodes))
	for i := range r.Nodes {
		byName[r.Nodes[i].Name] = &r.Nodes[i]
	}
	total := r.Totals.TimeS
	for _, n := range m.Graph.Nodes {
		nc := byName[n.Name]
		if nc == nil {
			continue
		}
		n.SetMetadata(append(withoutOurs(n.Metadata()), nodeAnnotations(nc, total)...))
		annotated++
	}
	m.Metadata = append(withoutOurs(m.Metadata), modelAnnotations(r)...)
	return annotated
}

// nodeAnnotations are a node's figures: a summary, then exact values.
func nodeAnnotations(n *report.NodeCost, total float64) []ir.KeyValue {
	share := 0.0
	if total > 0 {
		share = n.TimeS / total
	}
	bound := n.Bound
	if bound == "" {
		bound = "none (no kernel)"
	}
	bytes := n.BytesRead + n.BytesWritten
	summary := fmt.Sprintf("%s (%s of the model) · %s-bound · %s · %s moved",
		Seconds(n.TimeS), Percent(share), bound, FLOPs(n.FLOPs), Bytes(bytes))
	if n.Bound == "" {
		summary = fmt.Sprintf("no kernel: no time · %s", Bytes(bytes))
	}
	kv := []ir.KeyValue{
		{Key: annotatePrefix + "summary", Value: summary},
		{Key: annotatePrefix + "time_s", Value: num(n.TimeS)},
		{Key: annotatePrefix + "time_share", Value: num(share)},
		{Key: annotatePrefix + "flops", Value: num(n.FLOPs)},
		{Key: annotatePrefix + "bytes", Value: num(bytes)},
		{Key: annotatePrefix + "bytes_read", Value: num(n.BytesRead)},
		{Key: annotatePrefix + "bytes_written", Value: num(n.BytesWritten)},
		{Key: annotatePrefix + "launches", Value: num(n.Launches)},
		{Key: annotatePrefix + "bound", Value: n.Bound},
		{Key: annotatePrefix + "arithmetic_intensity", Value: num(n.ArithmeticIntensity)},
	}
	if n.MemLevel != "" {
		kv = append(kv, ir.KeyValue{Key: annotatePrefix + "mem_level", Value: n.MemLevel})
	}
	if len(n.FusedFrom) > 0 {
		kv = append(kv, ir.KeyValue{Key: annotatePrefix + "fused_from", Value: strings.Join(n.FusedFrom, ", ")})
	}
	if n.Note != "" {
		kv = append(kv, ir.KeyValue{Key: annotatePrefix + "note", Value: n.Note})
	}
	return kv
}

// modelAnnotations are the model's totals and the settings behind them.
func modelAnnotations(r *report.Report) []ir.KeyValue {
	t := r.Totals
	// What the times are for: the runtime too, where one priced them.
	what := "plan " + r.Plan
	if r.Runtime != nil {
		what = "runtime " + r.Runtime.Name + ", " + r.Plan + " kernels"
	}
	kv := []ir.KeyValue{
		{Key: annotatePrefix + "summary", Value: fmt.Sprintf("%s on %s (%s, %s) · %s · %s moved · %s launches",
			Seconds(t.TimeS), r.GPU, r.DType, what, FLOPs(t.FLOPs), Bytes(t.BytesRead+t.BytesWritten), Count(t.Launches))},
		{Key: annotatePrefix + "gpu", Value: r.GPU},
		{Key: annotatePrefix + "gpu_spec_hash", Value: r.GPUSpecHash},
		{Key: annotatePrefix + "dtype", Value: r.DType},
		{Key: annotatePrefix + "plan", Value: r.Plan},
	}
	if r.Runtime != nil {
		kv = append(kv, ir.KeyValue{Key: annotatePrefix + "runtime", Value: r.Runtime.Name})
	}
	return append(kv,
		ir.KeyValue{Key: annotatePrefix + "tool_version", Value: r.ToolVersion},
		ir.KeyValue{Key: annotatePrefix + "cost_model_version", Value: r.CostModelVersion},
		ir.KeyValue{Key: annotatePrefix + "time_s", Value: num(t.TimeS)},
		ir.KeyValue{Key: annotatePrefix + "flops", Value: num(t.FLOPs)},
		ir.KeyValue{Key: annotatePrefix + "bytes", Value: num(t.BytesRead + t.BytesWritten)},
		ir.KeyValue{Key: annotatePrefix + "launches", Value: num(t.Launches)},
		ir.KeyValue{Key: annotatePrefix + "peak_memory_bytes", Value: num(t.PeakMemoryBytes)},
		ir.KeyValue{Key: annotatePrefix + "energy_j", Value: num(t.EnergyJ)},
	)
}

// withoutOurs drops earlier onnxcost.* entries.
func withoutOurs(kvs []ir.KeyValue) []ir.KeyValue {
	out := kvs[:0:0]
	for _, kv := range kvs {
		if !strings.HasPrefix(kv.Key, annotatePrefix) {
			out = append(out, kv)
		}
	}
	return out
}

// num writes a figure exactly (shortest round-trip form).
func num(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e18 {
		return strconv.FormatFloat(x, 'f', -1, 64) // counts: 239439872, not 2.39439872e+08
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}
