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
// cycle: 6.93 and 12.67 bytes (the layers' medians, less the fill and
// the eager launch's ramp that run in series with the stream (BodyS);
// 5.97 and 9.79 over the whole durations; 6.83 and 12.33 less the ramp of
// a graph replay, as first fitted; TestGEMVxRatesAreTheProfiles reads
// them back). FITTED on that one profile (two numbers at
// one batch); held out: the step's kernel sums at batch 1 and 32 on the
// H200 and at 1, 8 and 32 on the H100 (cmd/onnxcost
// TestMeasuredEndToEndH100/H200).
const (
	gemvxShortDotBytesPerSMCycle = 6.93  // q·kᵀ: many short dots
	gemvxLongDotBytesPerSMCycle  = 12.67 // p·v: a few long dots
)

// batchedGEMV reports whether product k is a batch of GEMVs (one row per
// sequence and head: a decode step's attention written as matmuls), which
// cuBLAS runs as gemvx rather than its tiled, TMA-fed GEMM kernels.
func batchedGEMV(k Kernel) bool { return k.Class == ClassGEMM && k.M == 1 && k.Batch >= 2 }

// batchedGEMVStretch is the factor on a batched GEMV's memory time under
// a runtime whose matrix products are cuBLAS's (runsCuBLAS): the model's
// stream rate over gemvx's in-flight-limited one, by the shape of its
// dots, when that is slower; 1 for any other kernel.
func batchedGEMVStretch(g *hwdb.GPU, k Kernel, p Params, r *hwdb.Runtime) float64 {
	if !batchedGEMV(k) || k.N <= 1 || k.K <= 1 || !runsCuBLAS(r) ||
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
