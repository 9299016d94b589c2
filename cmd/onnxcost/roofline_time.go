package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/gctune"
	"github.com/onnxcost/onnxcost/pipeline"
	"github.com/onnxcost/onnxcost/sweep"
	"github.com/onnxcost/onnxcost/viz"
)

// timeRooflineFlags are roofline's --time mode flags.
type timeRooflineFlags struct {
	on    bool
	sweep string // NAME=LIST
	node  string
}

// timeRooflinePoints costs the model at every value of the swept
// parameter and returns the floors and estimate of the whole model, or of
// one node (by name, or the fused node that absorbed it).
func timeRooflinePoints(model string, f *costFlags, tf *timeRooflineFlags, stderr io.Writer) ([]viz.TimePoint, string, error) {
	name, list, ok := strings.Cut(tf.sweep, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return nil, "", usageErr("--sweep %q: want NAME=LIST (batch=1..1024, seq=128,256)", tf.sweep)
	}
	values, err := sweep.ParseList(list)
	if err != nil {
		return nil, "", usageErr("--sweep %s: %v", name, err)
	}
	if f.gpu == "" {
		return nil, "", usageErr("--gpu is required (see 'onnxcost gpus' for the list)")
	}
	if strings.Contains(f.gpu, ",") {
		return nil, "", usageErr("--time draws one GPU; got %s (use 'sweep' to compare GPUs)", f.gpu)
	}
	kind := "dim"
	switch {
	case name == "batch":
		kind = "batch"
	case pipeline.IsZoo(model):
		z, err := pipeline.ParseZoo(model)
		if err != nil {
			return nil, "", pipeErr(err)
		}
		for _, p := range z.Entry.Params {
			if p.Name == name {
				kind = "param"
			}
		}
	}
	// Validate the flags the way sweep does, then walk the values.
	if err := checkValue("--dtype", f.dtype, validDTypes...); err != nil {
		return nil, "", err
	}
	if err := checkValue("--plan", f.plan, "fused", "unfused"); err != nil {
		return nil, "", err
	}
	g, err := resolveGPU(f.gpu, f.gpuFile)
	if err != nil {
		return nil, "", err
	}
	if err := f.passFlags.validate(); err != nil {
		return nil, "", err
	}
	s, err := sweep.NewSweeper(sweep.Config{Model: model, GPUs: []*hwdb.GPU{g}, Plan: f.plan, Passes: f.passFlags.options(),
		Load: pipeline.Options{InputDataDir: f.inputData, Counted: gctune.SizeHeap}, Estimate: pipeline.EstimateOptions{DType: f.dtype, ToolVersion: version}})
	if err != nil {
		return nil, "", pipeErr(err)
	}
	var pts []viz.TimePoint
	dtype := ""
	for _, v := range values {
		p := sweep.Point{Params: map[string]int64{}, Dims: map[string]int64{}}
		batch := f.batch
		switch kind {
		case "batch":
			batch = v
		case "param":
			p.Params[name] = v
		default:
			p.Dims[name] = v
		}
		dims, err := parseDims(f.dims)
		if err != nil {
			return nil, "", err
		}
		for k, d := range dims {
			if _, set := p.Dims[k]; !set {
				p.Dims[k] = d
			}
		}
		reps, l, err := s.Eval(p, batch)
		if err != nil {
			return nil, "", pipeErr(err)
		}
		if kind == "batch" && s.Zoo() == nil && v == values[0] && len(values) > 1 && !sweep.HasSymbolicBatch(l) {
			return nil, "", usageErr("%s: no graph input has a symbolic leading dim, so --sweep batch cannot vary it", model)
		}
		// A name that binds nothing would cost the same model at every
		// value and draw a flat chart as if time did not depend on it.
		if kind == "dim" && v == values[0] {
			if _, ok := l.Bindings[name]; !ok {
				return nil, "", usageErr("--sweep %s: %s has no symbolic dim or parameter %s; %s", name, model, name, sweepableText(l, s.Zoo()))
			}
		}
		r := reps[0]
		dtype = r.DType
		tp, ok := viz.TimePointOf(r, tf.node, float64(v))
		if !ok {
			return nil, "", usageErr("--node %q: no such node in %s (names as in 'report')", tf.node, model)
		}
		pts = append(pts, tp)
	}
	printWarnings(stderr, s.Warnings())
	what := viz.ModelTitle(model)
	if tf.node != "" {
		what += " node " + tf.node
	}
	return pts, fmt.Sprintf("%s on %s, dtype %s: time against %s", what, g.Name, dtype, name), nil
}

// sweepableText says what --sweep can vary on a model: batch when an
// input has a symbolic leading dim, the symbolic dims of its graph inputs,
// and a zoo model's parameters; sorted, so the message is stable.
func sweepableText(l *pipeline.Loaded, z *pipeline.ZooSpec) string {
	seen := map[string]bool{}
	if z != nil {
		for _, p := range z.Entry.Params {
			seen[p.Name] = true
		}
	} else if sweep.HasSymbolicBatch(l) {
		seen["batch"] = true
	}
	for _, in := range l.Model.Graph.Inputs {
		if in.Declared == nil {
			continue
		}
		for _, d := range in.Declared.Shape.Dims {
			if d.Sym != "" {
				seen[d.Sym] = true
			}
		}
	}
	if len(seen) == 0 {
		return "it has no symbolic dims to sweep (a static export)"
	}
	names := make([]string, 0, len(seen))
	for k := range seen {
		names = append(names, k)
	}
	sort.Strings(names)
	what := "its symbolic dims"
	if z != nil {
		what = "its parameters and symbolic dims"
	}
	return fmt.Sprintf("%s: %s (--sweep NAME=LIST)", what, strings.Join(names, ", "))
}

// writeTimeRoofline draws the time-based roofline to out.
func writeTimeRoofline(model, out, format string, f *costFlags, tf *timeRooflineFlags, stderr io.Writer) error {
	pts, title, err := timeRooflinePoints(model, f, tf, stderr)
	if err != nil {
		return err
	}
	name, _, _ := strings.Cut(tf.sweep, "=")
	img, err := viz.TimeRoofline(pts, viz.TimeRooflineOptions{Title: title, XLabel: strings.TrimSpace(name)}, format)
	if err != nil {
		return usageErr("%v", err)
	}
	return writeOut(out, img)
}
