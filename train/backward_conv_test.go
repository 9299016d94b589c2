package train

import (
	"testing"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/costtest"
	"github.com/onnxcost/onnxcost/ir"
)

// TestConvBackwardUsesCalibratedGradients: a strided convolution's
// backward time is exactly its data gradient and weight gradient as
// perf.EstimateConvGrad prices them from the node's geometry (pads,
// strides) in a plan, the model calibrated on DeepBench's backward rows
// (internal/calibrate/backward.go), not the forward's GEMM view.
func TestConvBackwardUsesCalibratedGradients(t *testing.T) {
	b := newBuilder(t)
	x := b.Input("x", 8, 32, 28, 28)
	w0, w := b.Weight("w0", 64, 32, 1, 1), b.Weight("w", 128, 64, 3, 3)
	h, y := b.Val("h", ir.Float32, 8, 64, 28, 28), b.Val("y", ir.Float32, 8, 128, 14, 14)
	b.Node("Conv", []*ir.Value{x, w0}, []*ir.Value{h})
	b.Node("Conv", []*ir.Value{h, w}, []*ir.Value{y}, ir.IntsAttr("pads", 1, 1, 1, 1), ir.IntsAttr("strides", 2, 2))
	b.G.AddOutput(y)
	// The graph runtime's kernel gap, so that the expected times below
	// (perf.PlanOptions, no runtime) are the same pricing.
	rt, err := hwdb.LookupRuntime(hwdb.DefaultRuntime)
	if err != nil {
		t.Fatal(err)
	}
	r := b.analyze(cost.Options{Train: &Options{Optimizer: "sgd"}, Runtime: rt})
	got := r.Nodes[1].Backward
	if got == nil || got.Kernels != "dgrad+wgrad" {
		t.Fatalf("backward %+v, want dgrad+wgrad", got)
	}
	geom := perf.ConvGeom{N: 8, C: 64, H: 28, W: 28, K: 128, R: 3, S: 3, PadH: 1, PadW: 1, StrideH: 2, StrideW: 2}
	g, o := costtest.GPU(), perf.PlanOptions()
	_, dt := perf.EstimateConvGrad(g, geom, perf.GradData, "fp32", 4, 4, o)
	_, wt := perf.EstimateConvGrad(g, geom, perf.GradWeight, "fp32", 4, 4, o)
	if want := dt.TimeS + wt.TimeS; !near(got.TimeS, want) {
		t.Errorf("backward %g s, want dgrad %g + wgrad %g = %g", got.TimeS, dt.TimeS, wt.TimeS, want)
	}
	// The FLOPs stay the useful work: 2·MACs per gradient.
	if want := 4 * r.Nodes[1].MACs; !near(got.FLOPs, want) {
		t.Errorf("backward flops %g, want %g", got.FLOPs, want)
	}
}

// TestConvGeomOfDeclines: geometry the gradient model cannot represent
// (dilation, SAME auto-padding) falls back to the forward's GEMM view
// rather than being guessed; the same convolution without the attribute
// is accepted, with ONNX's [top, left, bottom, right] pads.
func TestConvGeomOfDeclines(t *testing.T) {
	for _, attr := range []*ir.Attribute{nil, ir.IntsAttr("dilations", 2, 2), ir.StringAttr("auto_pad", "SAME_UPPER")} {
		b := newBuilder(t)
		x := b.Input("x", 2, 8, 16, 16)
		w := b.Weight("w", 8, 8, 3, 3)
		y := b.Val("y", ir.Float32, 2, 8, 16, 16)
		attrs := []*ir.Attribute{ir.IntsAttr("pads", 1, 1, 1, 1)}
		if attr != nil {
			attrs = append(attrs, attr)
		}
		n := b.Node("Conv", []*ir.Value{x, w}, []*ir.Value{y}, attrs...)
		g, ok := convGeomOf(&bwCtx{n: n, c: &cost.RuleCtx{}})
		if attr == nil {
			want := perf.ConvGeom{N: 2, C: 8, H: 16, W: 16, K: 8, R: 3, S: 3, PadH: 1, PadW: 1, StrideH: 1, StrideW: 1, Group: 1}
			if !ok || g != want {
				t.Errorf("plain conv: geometry %+v (%v), want %+v", g, ok, want)
			}
			continue
		}
		if ok {
			t.Errorf("%s: geometry accepted", attr.Name)
		}
	}
}

// TestConvBackwardLayoutTransposes: in a mixed-precision step under a
// runtime that hands NCHW tensors to cuDNN, each gradient convolution
// runs between transposes of its three operands (six for dgrad and
// wgrad, each tensor read and written once); channels_last and the fp32
// vector path run none.
func TestConvBackwardLayoutTransposes(t *testing.T) {
	step := func(runtime, dtype string) *report.Backward {
		b := newBuilder(t)
		x := b.Input("x", 8, 32, 28, 28)
		w0, w := b.Weight("w0", 64, 32, 1, 1), b.Weight("w", 128, 64, 3, 3)
		h, y := b.Val("h", ir.Float32, 8, 64, 28, 28), b.Val("y", ir.Float32, 8, 128, 28, 28)
		b.Node("Conv", []*ir.Value{x, w0}, []*ir.Value{h})
		b.Node("Conv", []*ir.Value{h, w}, []*ir.Value{y}, ir.IntsAttr("pads", 1, 1, 1, 1))
		b.G.AddOutput(y)
		rt, err := hwdb.LookupRuntime(runtime)
		if err != nil {
			t.Fatal(err)
		}
		return b.analyze(cost.Options{Train: &Options{Optimizer: "sgd"}, Runtime: rt, DType: dtype}).Nodes[1].Backward
	}
	nchw, nhwc := step("pytorch", "fp16"), step("pytorch-nhwc", "fp16")
	if nchw == nil || nhwc == nil || nchw.Kernels != "dgrad+wgrad+nchw-transpose+cast-bwd" || nhwc.Kernels != "dgrad+wgrad+cast-bwd" {
		t.Fatalf("backward kernels %+v (NCHW) and %+v (channels_last)", nchw, nhwc)
	}
	if nchw.Launches-nhwc.Launches != 6 || !(nchw.TimeS > nhwc.TimeS) {
		t.Errorf("NCHW %g launches, %g s; channels_last %g, %g s: want 6 more and slower", nchw.Launches, nchw.TimeS, nhwc.Launches, nhwc.TimeS)
	}
	// fp16 bytes: x 8·64·28·28, y 8·128·28·28, w 128·64·3·3, each twice.
	if want := 2.0 * 2 * (8*64*28*28 + 8*128*28*28 + 128*64*3*3); nchw.BytesRead-nhwc.BytesRead != want {
		t.Errorf("transposes read %g B, want %g", nchw.BytesRead-nhwc.BytesRead, want)
	}
	if fp32 := step("pytorch", "fp32"); fp32 == nil || fp32.Kernels != "dgrad+wgrad" {
		t.Errorf("fp32 backward %+v: the vector path keeps cuDNN's NCHW kernels", fp32)
	}
}

// TestLayoutCopiesInTheTrainingPeak: under a runtime that hands NCHW
// tensors to cuDNN's tensor-core kernels, each convolution call holds the
// NHWC copies of its operands in its workspace while it runs, and the
// training memory's live tensors count them; channels_last and the fp32
// vector path hold none. The step: two 3×3 convolutions at 56×56, whose
// second's gradient calls copy dY (8·64·56·56), W and dX (8·64·56·56).
func TestLayoutCopiesInTheTrainingPeak(t *testing.T) {
	memory := func(runtime, dtype string) report.TrainMemory {
		b := newBuilder(t)
		x := b.Input("x", 8, 64, 56, 56)
		w0, w := b.Weight("w0", 64, 64, 3, 3), b.Weight("w", 64, 64, 3, 3)
		h, y := b.Val("h", ir.Float32, 8, 64, 56, 56), b.Val("y", ir.Float32, 8, 64, 56, 56)
		pads := ir.IntsAttr("pads", 1, 1, 1, 1)
		b.Node("Conv", []*ir.Value{x, w0}, []*ir.Value{h}, pads)
		b.Node("Conv", []*ir.Value{h, w}, []*ir.Value{y}, pads)
		b.G.AddOutput(y)
		rt, err := hwdb.LookupRuntime(runtime)
		if err != nil {
			t.Fatal(err)
		}
		return b.analyze(cost.Options{Train: &Options{Optimizer: "sgd"}, Runtime: rt, DType: dtype}).Totals.Train.Memory
	}
	nchw, nhwc, fp32 := memory("pytorch", "fp16"), memory("pytorch-nhwc", "fp16"), memory("pytorch", "fp32")
	// One call's set in fp16: two activations of 8·64·56·56 and a 64·64·3·3 filter.
	want := 2.0 * (2*8*64*56*56 + 64*64*3*3)
	if nchw.LayoutCopyBytes != want {
		t.Errorf("NCHW fp16: %g B of layout copies at the peak, want %g", nchw.LayoutCopyBytes, want)
	}
	if nhwc.LayoutCopyBytes != 0 || fp32.LayoutCopyBytes != 0 {
		t.Errorf("channels_last %g B, fp32 %g B of layout copies: want none", nhwc.LayoutCopyBytes, fp32.LayoutCopyBytes)
	}
	if got := nchw.TensorPeakBytes - nhwc.TensorPeakBytes; got != want {
		t.Errorf("NCHW tensor peak %g B over channels_last's %g: +%g, want the copies' %g", nchw.TensorPeakBytes, nhwc.TensorPeakBytes, got, want)
	}
}
