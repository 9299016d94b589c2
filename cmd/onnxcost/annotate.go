package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/spf13/cobra"
)

// annotatePrefix starts every metadata key optimize --annotate writes, so
// a later run can replace its own entries and leave the model's own alone.
const annotatePrefix = "onnxcost."

// annotateModel writes the report's estimate into the model for viewers:
// each node's figures into NodeProto.metadata_props, which Netron shows in
// the node panel, and the totals into ModelProto.metadata_props (Netron's
// model panel). The model's nodes are matched to the report's by name;
// both come from the same passes over the same file, so every node that
// the report costs is found. Values are human text first (onnxcost.summary)
// and then the exact figures in SI units, so scripts need not parse units.
// Existing onnxcost.* entries (from an earlier run) are replaced.
func annotateModel(m *ir.Model, r *report.Report) (annotated int) {
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
		render.Seconds(n.TimeS), render.Percent(share), bound, render.FLOPs(n.FLOPs), render.Bytes(bytes))
	if n.Bound == "" {
		summary = fmt.Sprintf("no kernel: no time · %s", render.Bytes(bytes))
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

func modelAnnotations(r *report.Report) []ir.KeyValue {
	t := r.Totals
	return []ir.KeyValue{
		{Key: annotatePrefix + "summary", Value: fmt.Sprintf("%s on %s (%s, plan %s) · %s · %s moved · %s launches",
			render.Seconds(t.TimeS), r.GPU, r.DType, r.Plan, render.FLOPs(t.FLOPs), render.Bytes(t.BytesRead+t.BytesWritten), render.Count(t.Launches))},
		{Key: annotatePrefix + "gpu", Value: r.GPU},
		{Key: annotatePrefix + "gpu_spec_hash", Value: r.GPUSpecHash},
		{Key: annotatePrefix + "dtype", Value: r.DType},
		{Key: annotatePrefix + "plan", Value: r.Plan},
		{Key: annotatePrefix + "tool_version", Value: r.ToolVersion},
		{Key: annotatePrefix + "cost_model_version", Value: r.CostModelVersion},
		{Key: annotatePrefix + "time_s", Value: num(t.TimeS)},
		{Key: annotatePrefix + "flops", Value: num(t.FLOPs)},
		{Key: annotatePrefix + "bytes", Value: num(t.BytesRead + t.BytesWritten)},
		{Key: annotatePrefix + "launches", Value: num(t.Launches)},
		{Key: annotatePrefix + "peak_memory_bytes", Value: num(t.PeakMemoryBytes)},
		{Key: annotatePrefix + "energy_j", Value: num(t.EnergyJ)},
	}
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

// annotateFlags are optimize's --annotate and the estimate settings it
// needs (the GPU; the plan is the passes optimize runs).
type annotateFlags struct {
	on      bool
	gpu     string
	gpuFile string
	dtype   string
}

func (a *annotateFlags) add(c *cobra.Command) {
	c.Flags().BoolVar(&a.on, "annotate", false, "write each node's estimate into its metadata_props (onnxcost.* keys; Netron shows them); needs --gpu")
	c.Flags().StringVar(&a.gpu, "gpu", "", "GPU for --annotate (see 'onnxcost gpus')")
	c.Flags().StringVar(&a.gpuFile, "gpu-file", "", "YAML or JSON file with your own GPU specs, for --annotate")
	c.Flags().StringVar(&a.dtype, "dtype", "", "compute dtype for --annotate (default: the model's own)")
}

// estimate costs the fused plan for --annotate (nil without it). It loads
// the model on its own, with unbound symbols assumed 1 as `report` does,
// so the written graph keeps its symbolic dims while the numbers exist.
func (a *annotateFlags) estimate(path string, mf modelFlags, pf passFlags, stderr io.Writer) (*report.Report, error) {
	if !a.on {
		if a.gpu != "" {
			return nil, usageErr("optimize: --gpu is only used with --annotate")
		}
		return nil, nil
	}
	f := costFlags{modelFlags: mf, gpu: a.gpu, gpuFile: a.gpuFile, dtype: a.dtype, plan: "fused", passFlags: pf}
	r, _, err := estimate(path, &f)
	if err != nil {
		return nil, err
	}
	printWarnings(stderr, r.Warnings)
	return r, nil
}

// noteExternalData says what the written model's weights are when the
// input keeps them in external files. ir.Write copies the bytes of every
// external file that is present into the output (so the output needs no
// side file and resolves from any folder); tensors whose file was absent
// (a graph-only model) stay references to the same location, which then
// resolves only if that file is placed beside the output. Nothing is
// said for a model with its weights inside.
func noteExternalData(stderr io.Writer, m *ir.Model, in, out string) {
	var inlined float64
	missing := map[string]bool{}
	var files []string
	for _, v := range m.Graph.Initializers {
		t := v.Const
		if t == nil || t.Loc.File == "" {
			continue
		}
		if !t.Loc.Missing {
			inlined += float64(t.Loc.Length)
			continue
		}
		if !missing[t.Loc.File] {
			missing[t.Loc.File] = true
			files = append(files, t.Loc.File)
		}
	}
	if inlined > 0 {
		fmt.Fprintf(stderr, "onnxcost: note: %s: the %s of external weights of %s are copied into it; it needs no side file\n",
			out, render.Bytes(inlined), in)
		if inlined >= 2<<30 {
			fmt.Fprintf(stderr, "onnxcost: warning: %s is over 2 GiB: protobuf readers (onnx.load, onnxruntime) refuse models that size; use it with onnxcost or Netron only\n", out)
		}
	}
	if len(files) > 0 {
		fmt.Fprintf(stderr, "onnxcost: note: %s does not contain the weights that were not present beside %s (graph-only); it refers to them as %s, relative to its own folder, so it runs only once they are placed there\n",
			out, in, strings.Join(files, ", "))
	}
}
