package perf

import "github.com/onnxcost/onnxcost/hwdb"

// PyTorch's TensorIterator runs a pointwise op in one of two loops. When
// every operand is contiguous and of the output's shape it runs
// vectorized_elementwise_kernel (16-byte loads, a few elements per
// thread); when an operand is broadcast (a norm's [d] weight over
// [b, s, d], rotary's cos over the heads, a mask over the scores) or read
// through a strided view (rotate_half's slices), it runs
// elementwise_kernel<128, 4>, whose threads compute each element's
// offsets through an OffsetCalculator (an integer division and multiply
// per dimension and operand) before their loads can issue. On a small
// tensor that index arithmetic is the kernel's critical path: in our
// H200's PyTorch 2.11 Kineto traces (calib/profile/testdata/kineto_h200)
// the non-vectorized kernels lasted a median 2.11 µs (BERT-base fp32
// batch 1, n=24) and 2.50 µs (a small LLaMA fp16 batch 8, n=31) where the
// vectorized kernels of the same traces, on tensors of the same sizes,
// lasted 1.15 µs; 2.24-3.68 µs against 0.96-1.66 µs in a LLaMA-7B decode
// step at batch 8 (testdata/measured/h200_sxm_llama7b_decode_b8_kernels).
// The difference, about 1.15 µs at the H200's 1.98 GHz boost, is kept in
// SM cycles (the arithmetic is the SM's, and such a kernel is far too
// small to pull the clock under its boost): stridedLoopCycles. It is a
// latency, so a strided op large enough to stream hides it under its
// memory time. TensorRT, onnxruntime and Inductor generate or pick their
// own pointwise kernels: only the eager plan's kernels are marked.
const stridedLoopCycles = 2300

// stridedLatencyS is the latency the non-vectorized loop adds to a
// strided pointwise kernel k on g (0 for any other kernel).
func stridedLatencyS(g *hwdb.GPU, k Kernel) float64 {
	if !k.Strided || k.Class != ClassElementwise || !(g.BoostClockMHz > 0) {
		return 0
	}
	return stridedLoopCycles / (g.BoostClockMHz * 1e6)
}
