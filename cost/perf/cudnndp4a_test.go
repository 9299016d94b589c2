package perf

import (
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
)

// int8Conv is an int8 convolution of c → k channels with r×r filters
// (padded to keep the map) over n images of hw×hw pixels.
func int8Conv(n, c, hw, k, r int64) Kernel {
	return ConvKernel(ConvGeom{N: n, C: c, H: hw, W: hw, K: k, R: r, S: r, PadH: r / 2, PadW: r / 2, StrideH: 1, StrideW: 1}, hwdb.INT8, 1, 1)
}

// TestCuDNNDP4ATile checks cuDNN's int8 convolution on the DP4A path:
// one cudnnDP4ATile a CTA with its K loop whole, so DeepBench's 7×7, 832
// → 128 5×5 layer at batch 2 (98 pixels, K = 20,800), one CTA on a Titan
// Xp, costs at least that CTA's MACs at its SM's DP4A peak (421 µs; 419
// measured) and not far more, where the fastest plan of any tile spread
// it over 16 small CTAs; the T4's tensor-core int8, TensorRT's own
// tactics and fp32 keep the fastest plan.
func TestCuDNNDP4ATile(t *testing.T) {
	o := PlanOptions()
	g := mustGPU(t, "Titan-Xp")
	k := int8Conv(2, 832, 7, 128, 5)
	pl, ok := ChooseGEMM(g, k, o)
	if !ok {
		t.Fatal("no plan")
	}
	if pl.TileM != cudnnDP4ATile.m || pl.TileN != cudnnDP4ATile.n || pl.Split != 1 || pl.CTAs != 1 {
		t.Fatalf("plan %d×%d split %d, %.0f CTAs; want one unsplit %d×%d CTA", pl.TileM, pl.TileN, pl.Split, pl.CTAs, cudnnDP4ATile.m, cudnnDP4ATile.n)
	}
	peak, _ := peakFor(g, hwdb.INT8)
	oneCTA := FMAFLOPs * float64(cudnnDP4ATile.m*cudnnDP4ATile.n*k.K) / (peak / float64(g.SMs))
	if pl.ComputeS < oneCTA || pl.ComputeS > 1.5*oneCTA {
		t.Errorf("main loop %.0f µs, want one CTA's %.0f µs at the SM's peak to 1.5× it", pl.ComputeS*1e6, oneCTA*1e6)
	}
	// An int8 tensor-core request resolves to DP4A where there are none.
	if kt := int8Conv(2, 832, 7, 128, 5); !libOf(g, Kernel{Class: kt.Class, Precision: hwdb.INT8Tensor, M: kt.M, N: kt.N, K: kt.K}, o).cudnnDP4A {
		t.Error("int8 tensor-core convolution on a Titan Xp: not priced as cuDNN's DP4A kernel")
	}
	trt := testRT(t, "tensorrt")
	notDP4A := func(name, gpu string, k Kernel, rt *hwdb.Runtime) {
		t.Helper()
		if _, lib, _ := libUnder(t, gpu, k, rt); lib.cudnnDP4A {
			t.Errorf("%s: priced as cuDNN's DP4A kernel", name)
		}
	}
	geom := ConvGeom{N: 2, C: 832, H: 7, W: 7, K: 128, R: 5, S: 5, PadH: 2, PadW: 2, StrideH: 1, StrideW: 1}
	notDP4A("TensorRT", "Titan-Xp", k, trt)
	notDP4A("T4 tensor cores", "T4", ConvKernel(geom, hwdb.INT8Tensor, 1, 1), nil)
	notDP4A("fp32", "Titan-Xp", ConvKernel(geom, hwdb.FP32, 4, 4), nil)
}

// TestCuDNNDP4APixelsNeverCheaper walks an int8 3×3 convolution's pixels
// (what a batch grows) from one CTA to several rounds on each DP4A part:
// the main loop never gets cheaper.
func TestCuDNNDP4APixelsNeverCheaper(t *testing.T) {
	o := PlanOptions()
	for _, name := range []string{"Titan-Xp", "P4", "V100-SXM2-16GB"} {
		g := mustGPU(t, name)
		k := int8Conv(1, 256, 1, 256, 3)
		prev := 0.0
		for m := int64(2); m <= 3*int64(g.SMs)*cudnnDP4ATile.m/2+1; m += 37 {
			k.M = m
			pl, ok := ChooseGEMM(g, k, o)
			if !ok {
				t.Fatalf("%s: M = %d: no plan", name, m)
			}
			if pl.ComputeS < prev*(1-1e-12) {
				t.Fatalf("%s: M = %d: %.2f µs, below the fewer pixels' %.2f µs", name, m, pl.ComputeS*1e6, prev*1e6)
			}
			prev = pl.ComputeS
		}
	}
}

// TestDP4AGatherEff checks the implicit GEMM's gather charge on the DP4A
// path: a quarter of EffConv's loss, for cuDNN's int8 forward
// convolutions only.
func TestDP4AGatherEff(t *testing.T) {
	p := PlanOptions().Params
	g := mustGPU(t, "Titan-Xp")
	k := int8Conv(2, 832, 7, 128, 5)
	want := 1 - (1-p.EffConv)/4
	if got := tiledEff(g, k, p); got != want {
		t.Errorf("int8 convolution's rate %.4f of a GEMM's, want %.4f", got, want)
	}
	k.Grad = GradData
	if got := tiledEff(g, k, p); got != p.EffConv {
		t.Errorf("data gradient's rate %.4f, want EffConv %.4f", got, p.EffConv)
	}
}

// libUnder is the library kernel libOf gives k on the named GPU under
// runtime rt (nil: the default replay), with the GPU and options.
func libUnder(t *testing.T, gpu string, k Kernel, rt *hwdb.Runtime) (*hwdb.GPU, gemmLib, Options) {
	t.Helper()
	o := PlanOptions()
	o.Runtime = rt
	g := mustGPU(t, gpu)
	return g, libOf(g, k, o), o
}
