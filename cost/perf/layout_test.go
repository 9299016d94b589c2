package perf

import (
	"math"
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
)

// TestTransposedBCost: a product over a transposed B (a linear layer's
// weight, cuBLAS "TN") runs its tiled main loop TransposedBCost times
// longer on the CUDA cores, and no longer on the tensor cores, as a GEMV
// or as a convolution (the flag is a matrix product's).
func TestTransposedBCost(t *testing.T) {
	o := PlanOptions()
	h100 := lookupAll(t, []string{"H100-SXM5-80GB"})[0]
	ratio := func(k Kernel) float64 {
		tn := k
		tn.TransposedB = true
		return EstimateKernel(h100, tn, o).ComputeS / EstimateKernel(h100, k, o).ComputeS
	}
	fp32 := GEMMKernel(2048, 4096, 4096, 1, hwdb.FP32, 4, 4)
	if r := ratio(fp32); math.Abs(r/TransposedBCost-1) > 1e-12 {
		t.Errorf("fp32 2048×4096×4096: TN/NN %.6f, want %.2f", r, TransposedBCost)
	}
	conv := fp32
	conv.Class = ClassConv
	for name, k := range map[string]Kernel{
		"fp16 tensor-core product": GEMMKernel(2048, 4096, 4096, 1, ResolvePrecision(h100, hwdb.FP16Tensor), 2, 2),
		"fp32 GEMV":                GEMMKernel(1, 4096, 4096, 1, hwdb.FP32, 4, 4),
		"fp32 convolution":         conv,
	} {
		if r := ratio(k); r != 1 {
			t.Errorf("%s: TN/NN %.6f, want 1", name, r)
		}
	}
	// The plan the report describes is the one priced.
	tn := fp32
	tn.TransposedB = true
	if pl, ok := ChooseGEMM(h100, tn, o); !ok || math.Abs(pl.ComputeS/EstimateKernel(h100, tn, o).ComputeS-1) > 1e-12 {
		t.Errorf("ChooseGEMM's plan %.4g s, EstimateKernel's %.4g s", pl.ComputeS, EstimateKernel(h100, tn, o).ComputeS)
	}
}
