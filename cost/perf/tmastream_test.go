package perf

import (
	"math"
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
)

// TestTMAGEMMStream: a memory-bound GEMM (one token against a 268 MB fp16
// weight, beyond every L2) streams its operands at the board's stream_eff on Hopper, whose
// GEMM kernels load tiles by TMA, and at the fitted MemEff elsewhere: on
// Ampere, on a board with no measured stream_eff (B200), and on Hopper
// for a convolution of the same bytes, a batched GEMV (cuBLAS's gemvx)
// and a product over packed int4 weights (MatMulNBits' own kernel).
func TestTMAGEMMStream(t *testing.T) {
	const n, kk = 16384, 8192
	gemv := Kernel{Class: ClassGEMM, Precision: hwdb.FP16Tensor, ElemBytes: 2, M: 1, N: n, K: kk, Batch: 1,
		FLOPs: 2 * n * kk, Bytes: 2 * (n*kk + n + kk), WorkingSet: 2 * (n*kk + n + kk)}
	p := PlanOptions().Params
	stream := func(g *hwdb.GPU) float64 { return g.StreamEff }
	fitted := func(*hwdb.GPU) float64 { return p.MemEff }
	for _, c := range []struct {
		gpu          string
		class        KernelClass
		batch        int64
		dequantFLOPs float64
		want         func(g *hwdb.GPU) float64
	}{
		{"H100-SXM5-80GB", ClassGEMM, 1, 0, stream},
		{"H200-SXM-141GB", ClassGEMM, 1, 0, stream},
		{"H100-SXM5-80GB", ClassConv, 1, 0, fitted},
		{"H100-SXM5-80GB", ClassGEMM, 32, 0, fitted},
		{"H100-SXM5-80GB", ClassGEMM, 1, n * kk, fitted},
		{"A100-SXM4-80GB", ClassGEMM, 1, 0, fitted},
		{"B200", ClassGEMM, 1, 0, fitted},
	} {
		g := mustGPU(t, c.gpu)
		k := gemv
		k.Class, k.Batch, k.DequantFLOPs = c.class, c.batch, c.dequantFLOPs
		if got := dramEff(g, k, p); got != c.want(g) {
			t.Errorf("%s %v batch %d dequant %g: DRAM efficiency %.3f, want %.3f", c.gpu, c.class, c.batch, c.dequantFLOPs, got, c.want(g))
		}
		if c.batch > 1 {
			continue // gemvx's own rate stretches its memory time (batchedGEMVStretch)
		}
		kt := EstimateKernel(g, k, PlanOptions())
		want := k.Bytes / (g.MemBW * c.want(g))
		if kt.Level != "hbm" || math.Abs(kt.MemoryS/want-1) > 1e-9 {
			t.Errorf("%s %v batch %d dequant %g: memory time %.3g s at %s, want %.3g s from DRAM", c.gpu, c.class, c.batch, c.dequantFLOPs, kt.MemoryS, kt.Level, want)
		}
	}
	if g := mustGPU(t, "H100-SXM5-80GB"); !(g.StreamEff > p.MemEff) {
		t.Fatalf("H100 stream_eff %.2f is not above MemEff %.2f: the test checks nothing", g.StreamEff, p.MemEff)
	}
}
