package cost

import (
	"math"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
)

// TestORTHostCopies: a session run fed host arrays copies each input to
// the GPU and each output back, every copy over the host link and
// waited for, and the run synchronizes at its end, so under onnxruntime
// a call's time is its latency with the copies in it; bound on the
// device (onnxruntime-iobinding) the same call has no copies, and the
// difference is exactly the copies' price. No other runtime copies.
func TestORTHostCopies(t *testing.T) {
	const m, k, n = 64, 768, 512
	gpu := testGPU(t, "A100-SXM4-80GB")
	build := func() *builder {
		b := newBuilder(t)
		y := b.Val("y", ir.Float32, m, n)
		b.Node("Gemm", []*ir.Value{b.Input("x", m, k), b.Weight("w", n, k)}, []*ir.Value{y}, ir.IntAttr("transB", 1))
		b.G.AddOutput(y)
		return b
	}
	price := func(name string, opt Options) *report.Report {
		t.Helper()
		b := build()
		opt.Runtime = testRuntime(t, name)
		r, err := Analyze(b.G, b.M, gpu, opt)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	host, bound := price("onnxruntime", Options{}), price("onnxruntime-iobinding", Options{})
	h := host.Runtime
	if h.InputCopyBytes != m*k*4 || h.OutputCopyBytes != m*n*4 {
		t.Errorf("onnxruntime copies %g B in and %g B out, want the input's %d and the output's %d", h.InputCopyBytes, h.OutputCopyBytes, m*k*4, m*n*4)
	}
	in, _ := perf.HostCopyS(gpu, m*k*4, perf.DefaultParams())
	out, _ := perf.HostCopyS(gpu, m*n*4, perf.DefaultParams())
	if h.InputCopyS != in || h.OutputCopyS != out {
		t.Errorf("copies in %.6g s, out %.6g s: want %.6g and %.6g", h.InputCopyS, h.OutputCopyS, in, out)
	}
	if floor := (h.InputCopyBytes + h.OutputCopyBytes) / gpu.PCIeBW; h.HostCopyS() < floor {
		t.Errorf("host copies %.4g s, faster than their bytes over the link (%.4g s)", h.HostCopyS(), floor)
	}
	if got := h.LatencyS - bound.Runtime.LatencyS; math.Abs(got-h.HostCopyS()) > 1e-12 {
		t.Errorf("the host arrays add %.6g s to a call, want the copies' %.6g s", got, h.HostCopyS())
	}
	for _, r := range []*report.Report{host, bound} {
		if !r.Runtime.SyncEachCall || r.Totals.TimeS != r.Runtime.LatencyS {
			t.Errorf("%s: time_s %.6g, latency_s %.6g (synchronized %v): a run that waits for its kernels takes its latency", r.Runtime.Name, r.Totals.TimeS, r.Runtime.LatencyS, r.Runtime.SyncEachCall)
		}
	}
	if b := bound.Runtime; b.HostCopyS() != 0 || b.InputCopyBytes != 0 {
		t.Errorf("onnxruntime-iobinding copies %g B in %.4g s, want none", b.InputCopyBytes, b.HostCopyS())
	}
	for _, name := range []string{"tensorrt", "graph", "pytorch"} {
		if r := price(name, Options{}).Runtime; r.HostCopyS() != 0 || r.SyncEachCall {
			t.Errorf("%s: host copies %.4g s, synchronized %v: want neither", name, r.HostCopyS(), r.SyncEachCall)
		}
	}
	// A generation loop keeps its inputs on the device, and says so.
	gen := price("onnxruntime", Options{AppendKVCache: true}).Runtime
	if gen.HostCopyS() != 0 || !strings.Contains(strings.Join(gen.Notes, "\n"), "no host copies") {
		t.Errorf("generation step: host copies %.4g s, notes %q: want none, said", gen.HostCopyS(), gen.Notes)
	}
	// A GPU with no host link figure: the copies are not priced, and the
	// report warns that the total leaves them out.
	b := build()
	noLink := *gpu
	noLink.PCIeBW = 0
	r, err := Analyze(b.G, b.M, &noLink, Options{Runtime: testRuntime(t, "onnxruntime")})
	if err != nil {
		t.Fatal(err)
	}
	if r.Runtime.HostCopyS() != 0 || !strings.Contains(strings.Join(r.Warnings, "\n"), "not priced") {
		t.Errorf("no host link: host copies %.4g s, warnings %q: want none priced and a warning", r.Runtime.HostCopyS(), r.Warnings)
	}
}

// TestHostIOPlacement: a graph input only host nodes read (shape
// arithmetic onnxruntime runs on the CPU) is not copied, nor an output a
// host node computed; hwdb's figure, not the runtime's name, decides.
func TestHostIOPlacement(t *testing.T) {
	b := newBuilder(t)
	x, idx := b.Input("x", 8, 16), b.Val("ids", ir.Int64, 8)
	b.G.Inputs = append(b.G.Inputs, idx)
	y, s := b.Val("y", ir.Float32, 8, 16), b.Val("s", ir.Int64, 1)
	relu := b.Node("Relu", []*ir.Value{x}, []*ir.Value{y})
	shape := b.Node("Size", []*ir.Value{idx}, []*ir.Value{s})
	_ = relu
	b.G.AddOutput(y)
	b.G.AddOutput(s)
	b.G.Session = &ir.Session{Host: map[*ir.Value]bool{s: true}}
	_ = shape
	rt := &hwdb.Runtime{Name: "custom", HostIO: 1}
	io := hostIO(b.G, rt, Options{})
	if len(io.in) != 1 || io.in[0] != x || len(io.out) != 1 || io.out[0] != y {
		t.Errorf("copied in %v, out %v: want x in and y out only", valueNames(io.in), valueNames(io.out))
	}
	if io := hostIO(b.G, &hwdb.Runtime{Name: "none"}, Options{}); len(io.in)+len(io.out) != 0 {
		t.Errorf("a runtime without host_io copies %v in and %v out", valueNames(io.in), valueNames(io.out))
	}

	// An input only an If's branch reads (an outer value its body
	// captures) is copied in like one a kernel reads directly.
	c, z := ifOnCapturedInput(t)
	if io := hostIO(c.G, rt, Options{}); len(io.in) != 2 || io.in[1] != z {
		t.Errorf("copied in %v: want cond and z, which only the branch reads", valueNames(io.in))
	}
}

// ifOnCapturedInput builds a graph of one If on input cond whose
// branches relu input z, an outer value they capture, and returns it and z.
func ifOnCapturedInput(t *testing.T) (*builder, *ir.Value) {
	c := newBuilder(t)
	cond, z := c.Input("cond", 1), c.Input("z", 8, 16)
	cond.DType = ir.Bool
	then := ir.NewSubgraph("then", c.G)
	tOut, err := then.NewValue("t")
	if err != nil {
		t.Fatal(err)
	}
	tOut.DType, tOut.Shape = ir.Float32, ir.KnownShape(8, 16)
	_ = then.AddNode(&ir.Node{Name: "relu", OpType: "Relu", Inputs: []*ir.Value{z}, Outputs: []*ir.Value{tOut}})
	then.AddOutput(tOut)
	out := c.Val("out", ir.Float32, 8, 16)
	c.Node("If", []*ir.Value{cond}, []*ir.Value{out}, ir.GraphAttr("then_branch", then), ir.GraphAttr("else_branch", then))
	c.G.AddOutput(out)
	return c, z
}

func valueNames(vs []*ir.Value) []string {
	var s []string
	for _, v := range vs {
		s = append(s, v.Name)
	}
	return s
}
