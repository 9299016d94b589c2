package cost

import (
	"math"
	"testing"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/costtest"
	"github.com/onnxcost/onnxcost/ir"
)

// TestTransposedBByRuntime: PyTorch runs a product over a module's weight
// as F.linear (cuBLAS "TN", perf.TransposedBCost on the CUDA cores)
// whatever layout the export wrote, and a product over a tensor passed in
// (a graph input, even one counted as a weight) as A·B; onnxruntime runs
// only a Gemm with transB as TN; TensorRT none.
func TestTransposedBByRuntime(t *testing.T) {
	const m, kn = 2048, 4096
	product := func(t *testing.T, build func(b *builder, x *ir.Value) *ir.Node) *builder {
		b := newBuilder(t)
		x := b.Input("x", m, kn)
		n := build(b, x)
		b.G.AddOutput(n.Out(0))
		return b
	}
	out := func(b *builder) *ir.Value { return b.Val("y", ir.Float32, m, kn) }
	builds := map[string]func(b *builder, x *ir.Value) *ir.Node{
		"MatMul over a weight": func(b *builder, x *ir.Value) *ir.Node {
			return b.Node("MatMul", []*ir.Value{x, b.Weight("wt", kn, kn)}, []*ir.Value{out(b)})
		},
		"MatMul over a transposed weight": func(b *builder, x *ir.Value) *ir.Node {
			wt := b.Val("wt", ir.Float32, kn, kn)
			b.Node("Transpose", []*ir.Value{b.Weight("w", kn, kn)}, []*ir.Value{wt}, ir.IntsAttr("perm", 1, 0))
			return b.Node("MatMul", []*ir.Value{x, wt}, []*ir.Value{out(b)})
		},
		"Gemm transB": func(b *builder, x *ir.Value) *ir.Node {
			return b.Node("Gemm", []*ir.Value{x, b.Weight("w", kn, kn)}, []*ir.Value{out(b)}, ir.IntAttr("transB", 1))
		},
		"Gemm": func(b *builder, x *ir.Value) *ir.Node {
			return b.Node("Gemm", []*ir.Value{x, b.Weight("wt", kn, kn)}, []*ir.Value{out(b)})
		},
		"MatMul over an argument": func(b *builder, x *ir.Value) *ir.Node {
			return b.Node("MatMul", []*ir.Value{x, b.Input("w", kn, kn)}, []*ir.Value{out(b)})
		},
	}
	want := map[string][]string{ // the runtimes that run it as TN
		"MatMul over a weight":            {"pytorch", "graph", "pytorch-compile"},
		"MatMul over a transposed weight": {"pytorch", "graph", "pytorch-compile"},
		"Gemm transB":                     {"pytorch", "graph", "pytorch-compile", "onnxruntime"},
		"Gemm":                            {"pytorch", "graph", "pytorch-compile"},
		"MatMul over an argument":         nil,
	}
	productS := func(r *report.Report) float64 {
		var s float64
		for _, n := range r.Nodes {
			s = max(s, n.ComputeS)
		}
		return s
	}
	for _, name := range []string{"pytorch", "graph", "pytorch-compile", "onnxruntime", "tensorrt"} {
		rt, err := hwdb.LookupRuntime(name)
		if err != nil {
			t.Fatal(err)
		}
		opt := Options{Runtime: rt}
		nn := productS(product(t, builds["MatMul over an argument"]).analyze(opt))
		for what, build := range builds {
			tn := false
			for _, r := range want[what] {
				tn = tn || r == name
			}
			wantRatio := 1.0
			if tn {
				wantRatio = perf.TransposedBCost
			}
			if got := productS(product(t, build).analyze(opt)) / nn; math.Abs(got/wantRatio-1) > 1e-9 {
				t.Errorf("%s under %s: %.4f of the A·B product's main loop, want %.4f", what, name, got, wantRatio)
			}
		}
	}
	// Tensor cores run both layouts alike.
	rt, _ := hwdb.LookupRuntime("pytorch")
	half := Options{Runtime: rt, DType: "fp16"}
	if a, b := productS(product(t, builds["MatMul over a weight"]).analyze(half)), productS(product(t, builds["MatMul over an argument"]).analyze(half)); a != b {
		t.Errorf("fp16 under pytorch: TN %.4g s, NN %.4g s, want equal", a, b)
	}
}

// TestORTGemmBiasPass: onnxruntime's CUDA Gemm writes C into the output
// with a cuBLAS call of its own and runs the product onto it (beta = 1):
// under onnxruntime a Gemm with C is the same product as without it, as
// a plain cuBLAS call (no epilogue of its own), plus one helper kernel
// that writes the output once; every other runtime runs one kernel.
func TestORTGemmBiasPass(t *testing.T) {
	const m, kn = 256, 768
	build := func(t *testing.T, withC bool) *builder {
		b := newBuilder(t)
		ins := []*ir.Value{b.Input("x", m, kn), b.Weight("w", kn, kn)}
		if withC {
			ins = append(ins, b.Weight("c", kn))
		}
		y := b.Val("y", ir.Float32, m, kn)
		b.Node("Gemm", ins, []*ir.Value{y}, ir.IntAttr("transB", 1))
		b.G.AddOutput(y)
		return b
	}
	for _, name := range []string{"onnxruntime", "tensorrt", "graph"} {
		rt := testRuntime(t, name)
		opt := Options{Runtime: rt}
		bare, withC := build(t, false).analyze(opt).Nodes[0], build(t, true).analyze(opt).Nodes[0]
		helpers := 0.0
		if name == "onnxruntime" {
			helpers = 1
		}
		if withC.Launches != 1+helpers || withC.HelperLaunches != helpers {
			t.Errorf("%s: a Gemm with C runs %v kernels (%v helpers), want %v (%v)", name, withC.Launches, withC.HelperLaunches, 1+helpers, helpers)
		}
		if name != "onnxruntime" {
			continue
		}
		pass := perf.EstimateKernel(costtest.GPU(), perf.Kernel{Class: perf.ClassElementwise, Bytes: m * kn * 4, WorkingSet: m * kn * 4,
			Precision: hwdb.FP32, ElemBytes: 4, Launches: 1}, planOptionsUnder(rt)).TimeS
		if got := withC.RampS - bare.RampS; math.Abs(got-pass) > 1e-12 {
			t.Errorf("onnxruntime: the bias pass adds %.4g s of ramp, want the output pass's %.4g s", got, pass)
		}
		if withC.ComputeS < bare.ComputeS || withC.ComputeS > bare.ComputeS*1.001 {
			t.Errorf("onnxruntime: the product with C %.4g s of main loop, without %.4g s: want the same plain product", withC.ComputeS, bare.ComputeS)
		}
	}
}

// TestORTConvBiasPass: onnxruntime's CUDA Conv adds its bias after the
// convolution with cudnnAddTensor (its provider's fuse_conv_bias off by
// default): under onnxruntime a convolution with a bias is two kernels,
// the second reading the output and writing it back, whichever algorithm
// cuDNN runs (a 3×3 one may be Winograd, whose kernel's M×N is not the
// output's: on a V100 it is); one kernel elsewhere.
func TestORTConvBiasPass(t *testing.T) {
	gpu := testGPU(t, "V100-SXM2-16GB")
	price := func(b *builder, opt Options) report.NodeCost {
		r, err := Analyze(b.G, b.M, gpu, opt)
		if err != nil {
			t.Fatal(err)
		}
		return r.Nodes[0]
	}
	build := func(t *testing.T, r int64, withBias bool) *builder {
		b := newBuilder(t)
		ins := []*ir.Value{b.Input("x", 1, 64, 56, 56), b.Weight("w", 64, 64, r, r)}
		if withBias {
			ins = append(ins, b.Weight("b", 64))
		}
		y := b.Val("y", ir.Float32, 1, 64, 56, 56)
		p := (r - 1) / 2
		b.Node("Conv", ins, []*ir.Value{y}, ir.IntsAttr("pads", p, p, p, p))
		b.G.AddOutput(y)
		return b
	}
	for _, name := range []string{"onnxruntime", "tensorrt", "pytorch-compile"} {
		rt := testRuntime(t, name)
		opt := Options{Runtime: rt, Plan: "unfused"}
		for _, r := range []int64{1, 3} {
			bare, withB := price(build(t, r, false), opt), price(build(t, r, true), opt)
			if r == 3 && name == "onnxruntime" && withB.KernelClass != string(perf.ClassWinograd) {
				t.Errorf("onnxruntime, 3×3 on %s: priced as %s, want cuDNN's Winograd (the case this checks)", gpu.Name, withB.KernelClass)
			}
			want := 0.0
			if name == "onnxruntime" {
				want = 1
			}
			// Helpers besides the bias's (Winograd's filter transform)
			// are the bare convolution's too.
			if withB.HelperLaunches-bare.HelperLaunches != want || withB.Launches-bare.Launches != want {
				t.Errorf("%s, %d×%d (%s): a convolution with a bias runs %v kernels (%v helpers), without %v (%v helpers); want %v more", name, r, r, withB.KernelClass, withB.Launches, withB.HelperLaunches, bare.Launches, bare.HelperLaunches, want)
			}
			if name != "onnxruntime" {
				continue
			}
			const out = 64 * 56 * 56 * 4
			pass := perf.EstimateKernel(gpu, perf.Kernel{Class: perf.ClassElementwise, Bytes: 2 * out, WorkingSet: 2 * out,
				Precision: hwdb.FP32, ElemBytes: 4, Launches: 1}, planOptionsUnder(rt)).TimeS
			if got := withB.RampS - bare.RampS; math.Abs(got-pass) > 1e-12 {
				t.Errorf("onnxruntime, %d×%d (%s): the bias add adds %.4g s of ramp, want the output pass's %.4g s", r, r, withB.KernelClass, got, pass)
			}
		}
	}
}

// planOptionsUnder are the options Analyze prices a node's helper kernels
// with under runtime rt.
func planOptionsUnder(rt *hwdb.Runtime) perf.Options {
	po := perf.PlanOptions()
	po.Runtime = rt
	return po
}
