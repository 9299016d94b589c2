package perf

import "github.com/onnxcost/onnxcost/hwdb"

// A decode step's attention written as two matmuls (q·kᵀ over the cached
// keys, p·v over the cached values: the zoo's LLaMA graph, and eager
// models that do not call scaled_dot_product_attention) is one batched
// matrix-vector product per sequence and head, which cuBLAS runs with
// its gemvx kernel. Our H200 profile of that step at batch 8
// (scripts/measure_gpu.py --profile llama7b-decode:fp16:8, kept in
// testdata/measured/h200_sxm_llama7b_decode_b8_kernels.csv.gz: 32 heads
// of 128 over 1,025 keys, 67 MB of cache a layer) times it at 43 µs for
// q·kᵀ (1,025 dots of 128 per matrix) and 26 µs for p·v (128 dots of
// 1,025): 1.56 and 2.56 TB/s, 32% and 53% of the datasheet bandwidth,
// where a plain stream of the same bytes reaches 91% (our Add rows). The
// kernel keeps too few loads in flight to stream the cache: by Little's
// law its rate is its bytes in flight over the memory latency, set by the
// SMs and their clock, not by the DRAM interface, so it is kept per SM
// cycle: 5.97 and 9.79 bytes (the layers' medians;
// TestGEMVxRatesAreTheProfiles reads them back). FITTED on that one profile (two numbers at
// one batch); held out: the step's kernel sums at batch 1 and 32 on the
// H200 and at 1, 8 and 32 on the H100 (cmd/onnxcost
// TestMeasuredEndToEndH100/H200).
const (
	gemvxShortDotBytesPerSMCycle = 5.97 // q·kᵀ: many short dots
	gemvxLongDotBytesPerSMCycle  = 9.79 // p·v: a few long dots
)

// batchedGEMVStretch is the factor on a batched GEMV's memory time under
// a runtime whose matrix products are cuBLAS's (runsCuBLAS): the model's
// stream rate over gemvx's in-flight-limited one, by the shape of its
// dots, when that is slower; 1 for any other kernel.
func batchedGEMVStretch(g *hwdb.GPU, k Kernel, p Params, r *hwdb.Runtime) float64 {
	if k.Class != ClassGEMM || k.M != 1 || k.Batch < 2 || k.N <= 1 || k.K <= 1 || !runsCuBLAS(r) ||
		!(p.MemEff > 0) || !(g.MemBW > 0) {
		return 1
	}
	perCycle := gemvxLongDotBytesPerSMCycle
	if k.K < k.N {
		perCycle = gemvxShortDotBytesPerSMCycle
	}
	gemvx := perCycle * smCyclesPerSecond(g, p)
	if !(gemvx > 0) {
		return 1
	}
	return max(g.MemBW*p.MemEff/gemvx, 1)
}

// A GEMM streams its operands at a rate its kernel's loads in flight set
// (Little's law: bytes in flight over the memory latency), which on
// Hopper can be below what the DRAM gives. Our single-kernel rows of
// [1 or 16, 4096] × [4096, 4096] in fp16 and bf16 (a decode step's
// projections: one row per sequence) took 10.0-11.5 µs a call on the
// H100 and the H200 alike (testdata/measured/h1*0_sxm*_kernels.csv),
// 3.0-3.4 TB/s, though the H200's DRAM is 1.43× the H100's. The rate is
// the SMs', so it is kept per SM cycle: 13.0 bytes reproduces the
// H200's four rows (median −0.2%, 11.2 µs against 9.9 µs at the model's
// DRAM rate; FITTED on them). Held out: the H200's decode steps, 13.5
// GB of weights through such kernels, went −23%/−15%/−1.5% →
// −17%/−11%/+0.2% at batch 1/8/32; on the H100, whose DRAM rate at
// MemEff (2.71 TB/s) is below it, only GEMMs whose operands a plan finds
// in L2 are held to it, and its graph rows went 7.5% → 7.2% (all 118
// times 8.60% → 8.50%; cmd/onnxcost TestMeasuredEndToEndH100/H200). It holds a GEMM of any size, so that more
// rows never stream faster (the time model's invariant); a large GEMM is
// compute-bound long before it. Hopper only (an H20's 4 TB/s over 78 SMs
// would be held to 2 TB/s by it, unmeasured); Blackwell's GEMM kernels
// are not measured here, and on every other GPU in hwdb the DRAM rate is
// below this one.
const gemmStreamBytesPerSMCycle = 13.0

// gemmStreamS is the least memory time of a cuBLAS GEMM on a Hopper GPU:
// all its bytes at gemmStreamBytesPerSMCycle; 0 for any other kernel.
func gemmStreamS(g *hwdb.GPU, k Kernel, p Params, r *hwdb.Runtime) float64 {
	if k.Class != ClassGEMM || !runsCuBLAS(r) || g.Family() != "Hopper" || !(k.Bytes > 0) {
		return 0
	}
	rate := gemmStreamBytesPerSMCycle * smCyclesPerSecond(g, p)
	if !(rate > 0) {
		return 0
	}
	return k.Bytes / rate
}
