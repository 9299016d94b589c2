package perf

import (
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
)

// TestSplitKReduceKernel: a bare product (torch.matmul's A·B) whose plan
// splits K under a runtime that calls cuBLAS pays the kernel that sums
// its slices, counted as a helper launch that draws no tensor-core
// power; a Linear's A·Bᵀ, a 16-bit product on Hopper (nvjet) and a
// TensorRT engine pay none, and a product's time still never falls as
// its rows grow.
func TestSplitKReduceKernel(t *testing.T) {
	gs := lookupAll(t, []string{"H200-SXM-141GB", "A100-SXM4-80GB", "L4", "T4"})
	h200, a100 := gs[0], gs[1]
	tf32 := GEMMKernel(64, 768, 768, 1, hwdb.TF32Tensor, 4, 4)
	pl, ok := ChooseGEMM(h200, tf32, PlanOptions())
	if !ok || pl.Split < 2 {
		t.Fatalf("TF32 64×768×768 on an H200: plan %+v, want a split (cuBLAS's cutlass_80 split-K)", pl)
	}
	if pl.Helpers != 1 || !(pl.StallS > 0) || !(pl.StallS < pl.ComputeS) {
		t.Errorf("TF32 64×768×768 on an H200: helpers %d, stall %.3g of %.3g s; want the reduce kernel, one launch, no tensor power", pl.Helpers, pl.StallS, pl.ComputeS)
	}
	reduceOf := func(g *hwdb.GPU, k Kernel, o Options) float64 {
		_, real := peakFor(g, k.Precision)
		return splitKReduceS(g, k, o, real, libOf(g, k, o))
	}
	if r := reduceOf(h200, tf32, PlanOptions()); !(r > 1e-6) || r > 10e-6 {
		t.Errorf("TF32 64×768×768 on an H200: reduce kernel %.3g s, want 1-10 µs (the sweep's: 1.4-3.0 µs and a gap)", r)
	}
	linear := tf32
	linear.TransposedB = true
	fp16 := GEMMKernel(64, 768, 768, 1, hwdb.FP16Tensor, 2, 2)
	trt, err := hwdb.LookupRuntime("tensorrt")
	if err != nil {
		t.Fatal(err)
	}
	engine := PlanOptions()
	engine.Runtime = trt
	for _, c := range []struct {
		what string
		g    *hwdb.GPU
		k    Kernel
		o    Options
	}{
		{"a Linear's A·Bᵀ (cuBLASLt's TN kernels)", h200, linear, PlanOptions()},
		{"fp16 on Hopper (nvjet)", h200, fp16, PlanOptions()},
		{"a TensorRT engine", h200, tf32, engine},
	} {
		if r := reduceOf(c.g, c.k, c.o); r != 0 {
			t.Errorf("%s: reduce kernel %.3g s, want none", c.what, r)
		}
	}
	if r := reduceOf(a100, fp16, PlanOptions()); !(r > 0) {
		t.Errorf("fp16 on an A100 (sm80 kernels): no reduce kernel, want one after a split plan")
	}
	o := PlanOptions()
	for _, g := range gs {
		for _, pr := range []hwdb.Precision{hwdb.FP32, hwdb.TF32Tensor, hwdb.FP16Tensor} {
			for _, nk := range [][2]int64{{768, 768}, {768, 3072}, {4096, 4096}} {
				prev := 0.0
				for m := int64(1); m <= 2048; m++ {
					k := GEMMKernel(m, nk[0], nk[1], 1, pr, 4, 4)
					tm := EstimateKernel(g, k, o).TimeS
					if tm < prev*(1-1e-9) {
						t.Fatalf("%s %s %d×%d×%d: %.4g s, below %d rows' %.4g s", g.Name, pr, m, nk[0], nk[1], tm, m-1, prev)
					}
					prev = tm
				}
			}
		}
	}
}
