package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/measured"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/passes"
)

// convHeader is --conv-choices' table.
const convHeader = "dtype,layout,batch,c,hw,k,r,stride,ms,kernel,grid,block,regs,smem,us,ws_mib"

// conv is one swept convolution: its measured time, the kernels cuDNN ran
// and the workspace the call allocated ("" in a CPU dry run).
type conv struct {
	dtype, layout              string
	grad                       perf.Grad // a --conv-grads row's gradient; "" for a forward one
	batch, c, hw, k, r, stride int64
	ms                         float64
	wsMiB                      string
	kernels                    []string
}

// convTable prints each convolution of a --conv-choices table beside the
// price of its one-node graph through the eager plan under the replay
// runtime of its layout (graph for NCHW, graph-nhwc for channels_last).
func convTable(w io.Writer, g *hwdb.GPU, path string, recs [][]string) error {
	cs, err := readConvs(path, recs, false)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%-5s %-6s %5s %5s %4s %5s %2s %2s %10s %10s %8s  %-14s %9s  %s\n", "dtype", "layout", "batch", "c", "hw", "k", "r", "s", "measured", "priced", "error", "model's op", "ws MiB", "cuDNN kernels (grid)")
	var errs errorGroups
	for _, c := range cs {
		op, priced, err := price(g, c)
		if err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		e := errs.add(convGroup(c), priced/(c.ms*1e-3))
		fmt.Fprintf(w, "%-5s %-6s %5d %5d %4d %5d %2d %2d %8.2fus %8.2fus %+7.1f%%  %-14s %9s  %s\n", c.dtype, c.layout, c.batch, c.c, c.hw, c.k, c.r, c.stride,
			c.ms*1e3, priced*1e6, 100*e, strings.TrimPrefix(op, "onnxcost."), cmp.Or(c.wsMiB, "-"), strings.Join(c.kernels, ", "))
	}
	errs.write(w, "convolutions", g)
	return nil
}

// errorGroups collects a table's signed errors (priced/measured − 1) by
// summary group, in the order the groups first appear.
type errorGroups struct {
	order  []string
	signed map[string][]float64
	abs    []float64
}

// add records one row's priced/measured ratio under group key and returns
// its signed error.
func (eg *errorGroups) add(key string, ratio float64) float64 {
	if eg.signed == nil {
		eg.signed = map[string][]float64{}
	}
	if _, ok := eg.signed[key]; !ok {
		eg.order = append(eg.order, key)
	}
	e := ratio - 1
	eg.signed[key] = append(eg.signed[key], e)
	eg.abs = append(eg.abs, math.Abs(e))
	return e
}

// write prints each group's median |error| and signed median, then the
// table's, its rows called what.
func (eg *errorGroups) write(w io.Writer, what string, g *hwdb.GPU) {
	for _, key := range eg.order {
		signed := eg.signed[key]
		abs := make([]float64, len(signed))
		for i, e := range signed {
			abs[i] = math.Abs(e)
		}
		fmt.Fprintf(w, "%s (%d %s): median |error| %.1f%%, signed %+.1f%%\n", key, len(signed), what, 100*median(abs), 100*median(slices.Clone(signed)))
	}
	fmt.Fprintf(w, "%d %s on %s: median |error| %.1f%%\n", len(eg.abs), what, g.Name, 100*median(slices.Clone(eg.abs)))
}

// convGroup is the summary group of swept convolution c: its dtype and
// layout, batch 1 apart (a single image's layers are fill-bound, a
// batch's mostly not).
func convGroup(c conv) string {
	b := "batch 1"
	if c.batch > 1 {
		b = "batch ≥ 2"
	}
	return fmt.Sprintf("%s %s %s", c.dtype, c.layout, b)
}

// price is the one-node graph of c (a Conv with a bias, padding r/2) run
// through the eager plan and costed under the replay runtime of its
// layout: the convolution's op type and its kernels' time, as a replay's
// per-call time has them less the gaps. The eager plan gives the bias its
// own broadcast kernel, as PyTorch runs it and as the sweep's rows time
// it (at::native::elementwise_kernel after cuDNN's): priced inside the
// Conv, the channels_last fp16 rows read 25-72% short where that add,
// strided over NHWC, took most of the call. The sweep times each call in
// a CUDA graph of repeats, so it is priced as a call repeated back to
// back (cost.Options.Warm): its input and filter are in L2 as it starts,
// and the convolution pays the warm share of its fill
// (perf.WarmGEMMFill). Priced as a first call, the batch-1 rows, where
// the fill is most of a call, read 32-59% over.
func price(g *hwdb.GPU, c conv) (op string, kernelS float64, err error) {
	dt := map[string]ir.DType{"fp32": ir.Float32, "fp16": ir.Float16}[c.dtype]
	rt, err := replayRuntime(c, dt != 0)
	if err != nil {
		return "", 0, err
	}
	gr := ir.NewGraph("conv")
	m := &ir.Model{Opsets: []ir.OpsetImport{{Domain: "", Version: 17}}, Graph: gr}
	input := func(name string, dims ...int64) (*ir.Value, error) {
		v, err := gr.NewValue(name)
		if err != nil {
			return nil, err
		}
		v.Kind, v.DType, v.Shape = ir.TensorValue, dt, ir.KnownShape(dims...)
		v.Declared = &ir.TypeInfo{Kind: ir.TensorValue, DType: dt, Shape: ir.KnownShape(dims...)}
		gr.AddInput(v)
		return v, nil
	}
	x, err1 := input("x", c.batch, c.c, c.hw, c.hw)
	wt, err2 := input("w", c.k, c.c, c.r, c.r)
	b, err3 := input("b", c.k)
	y, err4 := gr.NewValue("y")
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return "", 0, err
	}
	p := c.r / 2
	node := &ir.Node{Name: "conv", OpType: "Conv", Inputs: []*ir.Value{x, wt, b}, Outputs: []*ir.Value{y},
		Attrs: []*ir.Attribute{ir.IntsAttr("pads", p, p, p, p), ir.IntsAttr("strides", c.stride, c.stride)}}
	if err := gr.AddNode(node); err != nil {
		return "", 0, err
	}
	gr.AddOutput(y)
	if _, err := ir.InferShapes(m, ir.InferOptions{}); err != nil {
		return "", 0, err
	}
	plan, err := passes.LookupPlan(rt.Plan)
	if err != nil {
		return "", 0, err
	}
	if o, ok := plan.Options(passes.Options{}); ok {
		if _, err := passes.Run(gr, o); err != nil {
			return "", 0, err
		}
	}
	r, err := cost.Analyze(gr, m, g, cost.Options{DType: c.dtype, Plan: rt.Plan, Runtime: rt, Warm: true})
	if err != nil {
		return "", 0, err
	}
	for _, n := range r.Nodes {
		if strings.TrimPrefix(n.OpType, "onnxcost.") != "Add" {
			op = n.OpType
		}
		kernelS += n.TimeS - n.LaunchS
	}
	if op == "" || len(r.Nodes) > 2 {
		return "", 0, fmt.Errorf("%d nodes costed, want the convolution and its bias", len(r.Nodes))
	}
	return op, kernelS, nil
}

// replayRuntime is the CUDA-graph replay runtime of swept convolution c's
// layout (graph for NCHW, graph-nhwc for channels_last), as the sweeps
// time their calls; an error naming the layout and dtype where either is
// not one a sweep writes (dtypeKnown: the caller could map c.dtype).
func replayRuntime(c conv, dtypeKnown bool) (*hwdb.Runtime, error) {
	name := map[string]string{"nchw": "graph", "nhwc": "graph-nhwc"}[c.layout]
	if name == "" || !dtypeKnown {
		return nil, fmt.Errorf("layout %q, dtype %q: want nchw or nhwc, fp32 or fp16", c.layout, c.dtype)
	}
	return hwdb.LookupRuntime(name)
}

// readConvs groups the sweep's rows (one per kernel) into convolutions,
// in order. grads says the table is --conv-grads', whose third column
// names the gradient.
func readConvs(path string, recs [][]string, grads bool) ([]conv, error) {
	var cs []conv
	for _, r := range recs {
		var grad perf.Grad
		if grads {
			grad = perf.Grad(r[2])
			if grad != perf.GradData && grad != perf.GradWeight {
				return nil, fmt.Errorf("%s: gradient %q: want %s or %s", path, r[2], perf.GradData, perf.GradWeight)
			}
			r = slices.Delete(slices.Clone(r), 2, 3)
		}
		d, err := positive(path, r[2:8])
		if err != nil {
			return nil, err
		}
		ms, err := millis(path, r[8])
		if err != nil {
			return nil, err
		}
		c := conv{dtype: r[0], layout: r[1], grad: grad, batch: d[0], c: d[1], hw: d[2], k: d[3], r: d[4], stride: d[5], ms: ms, wsMiB: r[15]}
		if c.wsMiB != "" {
			if v, err := strconv.ParseFloat(c.wsMiB, 64); err != nil || !(v >= 0) {
				return nil, fmt.Errorf("%s: workspace %q: want MiB, a number not below 0", path, c.wsMiB)
			}
		}
		kernel := measured.KernelName(r[9])
		if r[10] != "" {
			kernel += " (" + r[10] + ")"
		}
		if last := len(cs) - 1; last >= 0 && sameConv(cs[last], c) {
			cs[last].kernels = append(cs[last].kernels, kernel)
			continue
		}
		c.kernels = []string{kernel}
		cs = append(cs, c)
	}
	return cs, nil
}

func sameConv(a, b conv) bool {
	return a.dtype == b.dtype && a.layout == b.layout && a.grad == b.grad && a.batch == b.batch && a.c == b.c && a.hw == b.hw &&
		a.k == b.k && a.r == b.r && a.stride == b.stride
}
