package perf

import (
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
)

// imma5x5 is DeepBench's 14×14, 512 → 48 5×5 int8 convolution at batch 2
// on the int8 tensor-core path: 392 pixels, K = 12,800.
func imma5x5() Kernel {
	return ConvKernel(ConvGeom{N: 2, C: 512, H: 14, W: 14, K: 48, R: 5, S: 5, PadH: 2, PadW: 2, StrideH: 1, StrideW: 1}, hwdb.INT8Tensor, 1, 1)
}

// TestCuDNNIMMATile checks cuDNN's int8 tensor-core convolution on
// Turing: the plan is one unsplit cudnnIMMATile a CTA (four here, one
// round on a T4's 40 SMs), at least those CTAs' MACs at an SM's int8
// tensor peak and the filter reformat's time, with the reformat counted
// as a helper kernel whose time draws no tensor-core power; TensorRT,
// other families and other paths keep the fastest plan.
func TestCuDNNIMMATile(t *testing.T) {
	o := PlanOptions()
	g := mustGPU(t, "T4")
	k := imma5x5()
	pl, ok := ChooseGEMM(g, k, o)
	if !ok {
		t.Fatal("no plan")
	}
	ctas := ceilDiv(k.M, cudnnIMMATile.m) * ceilDiv(k.N, cudnnIMMATile.n)
	if pl.TileM != cudnnIMMATile.m || pl.TileN != cudnnIMMATile.n || pl.Split != 1 || pl.CTAs != float64(ctas) {
		t.Fatalf("plan %d×%d split %d, %.0f CTAs; want %d unsplit %d×%d CTAs", pl.TileM, pl.TileN, pl.Split, pl.CTAs, ctas, cudnnIMMATile.m, cudnnIMMATile.n)
	}
	reformat := filterReformatS(g, k, o)
	if pl.Helpers != 1 || !(reformat > 0) || pl.StallS < reformat {
		t.Errorf("helpers %d, stall %.2f µs; want the filter reformat (%.2f µs) as one helper, stalled", pl.Helpers, pl.StallS*1e6, reformat*1e6)
	}
	peak, _ := peakFor(g, hwdb.INT8Tensor)
	oneCTA := FMAFLOPs * float64(cudnnIMMATile.m*cudnnIMMATile.n*k.K) / (peak / float64(g.SMs))
	if pl.ComputeS < oneCTA+reformat {
		t.Errorf("plan %.1f µs, under one CTA's %.1f µs at the SM's peak plus the reformat's %.1f", pl.ComputeS*1e6, oneCTA*1e6, reformat*1e6)
	}
	if !ReformatsFilter(g, k, o) {
		t.Error("ReformatsFilter: false for the plan that reformats")
	}
	trt := testRT(t, "tensorrt")
	notIMMA := func(name, gpu string, k Kernel, rt *hwdb.Runtime) {
		t.Helper()
		if g, lib, co := libUnder(t, gpu, k, rt); lib.cudnnIMMA || ReformatsFilter(g, k, co) {
			t.Errorf("%s: priced as cuDNN's Turing IMMA kernel", name)
		}
	}
	notIMMA("TensorRT", "T4", k, trt)
	notIMMA("A100 (no trace of its int8 kernels)", "A100-SXM4-80GB", k, nil)
	notIMMA("Titan Xp (DP4A)", "Titan-Xp", k, nil)
	fp16 := k
	fp16.Precision = hwdb.FP16Tensor
	notIMMA("fp16 tensor cores", "T4", fp16, nil)
	dgrad := k
	dgrad.Grad = GradData
	notIMMA("data gradient", "T4", dgrad, nil)
}

// TestCuDNNIMMAPixelsNeverCheaper walks the convolution's pixels (what a
// batch grows) from one CTA to several rounds on the T4: the plan never
// gets cheaper.
func TestCuDNNIMMAPixelsNeverCheaper(t *testing.T) {
	o := PlanOptions()
	g := mustGPU(t, "T4")
	k := imma5x5()
	prev := 0.0
	for m := int64(2); m <= 3*int64(g.SMs)*cudnnIMMATile.m+1; m += 53 {
		k.M = m
		pl, ok := ChooseGEMM(g, k, o)
		if !ok {
			t.Fatalf("M = %d: no plan", m)
		}
		if pl.ComputeS < prev*(1-1e-12) {
			t.Fatalf("M = %d: %.2f µs, below the fewer pixels' %.2f µs", m, pl.ComputeS*1e6, prev*1e6)
		}
		prev = pl.ComputeS
	}
}
