package perf

import (
	"github.com/onnxcost/onnxcost/hwdb"
)

// A GEMM whose rows are not a whole number of 16-byte vectors (an fp16
// row of an odd length: GPT-2's vocabulary of 50,257 tokens) cannot run
// cuBLAS's Hopper kernels, which move their tiles with the Tensor Memory
// Accelerator (TMA) and wgmma and need 16-byte-aligned row strides (CUDA
// programming guide, cuTensorMapEncodeTiled: globalStrides a multiple of
// 16): cuBLAS falls back to CUTLASS's alignment-1 kernels of the
// Turing/Ampere generation (scalar loads, mma.sync). Our H200 traces of
// GPT-2's LM head (testdata/measured/h200_sxm_pytorch.csv, gpt2_hf_small,
// the [64·b × 256] × [256 × 50257] MatMul; calib/profile/testdata/
// kineto_h200) name them: cutlass_75_tensorop_f16_s1688gemm_f16_128x128_
// tn_align1 ran 52.7 GFLOP in 633.5 µs at batch 32 and 13.2 GFLOP in
// 161.6 µs at batch 8 (83 TFLOP/s, 8% of the fp16 dense peak), and
// cutlass_80_tensorop_s1688gemm_128x128_32x3_tn_align1 in TF32 96 and 93
// TFLOP/s; the model had priced the fp16 head at 79 µs. Their rate is
// their main loop's issue rate, set by the SM and its clock, not by the
// tensor cores' peak, so it is kept per SM cycle: 318 FLOP for fp16 (and
// bf16, the same kernels: ESTIMATE) and 366 for TF32 (the batch-32
// kernels over 132 SMs at 1.98 GHz; the batch-8 ones agree within 3%).
// At batch 1 (M = 64) a 64×64-tile kernel ran at 33 TFLOP/s, slower
// than this rate: the floor under-prices it.
//
// Before Hopper the aligned kernels are themselves mma.sync kernels and
// the fallback costs far less: the time model's Unaligned factor, fitted
// on DeepBench's and Vidur's pre-Hopper and H100 rows, keeps 0.973 of the
// rate, and nanoGPT's ~25% faster A100 training step from padding the
// vocabulary to 50,304 implies well under 2× on the head; no measurement
// here sizes it, so it is left to Unaligned. Blackwell's data-center
// kernels also move tiles by TMA: ESTIMATE, the Hopper rate.
var misalignedFLOPsPerSMCycle = map[hwdb.Precision]float64{
	hwdb.FP16Tensor: 318,
	hwdb.BF16Tensor: 318,
	hwdb.TF32Tensor: 366,
}

// tmaGEMMFamilies are the GPU families whose cuBLAS kernels load tiles by
// TMA.
var tmaGEMMFamilies = map[string]bool{"Hopper": true, "Blackwell": true}

// misalignedGEMMS is the least time a cuBLAS GEMM kernel k runs on g
// under runtime r when its rows are misaligned for TMA (the fallback
// kernels' rate); 0 when its rows are aligned, it is not a library GEMM
// (convolutions are cuDNN's, which pads channels itself), it is a
// GEMV-like kernel (one side of at most gemvMaxCols: cuBLAS's GEMV
// kernels take any stride), g loads tiles otherwise, or r does not hand
// its matrix products to cuBLAS (TensorRT times its own tactics, which
// may pad: unmeasured, so unchanged).
//
// A row-major [M, K] × [K, N] → [M, N] product has row strides K and N
// whichever operand is transposed (a weight stored [N, K] has stride K),
// and M is a row count. Only N is read: it is the output's row (a
// layer's features, a vocabulary, a key length), which no batch changes,
// while K is the forward's rows, batch × sequence, in a weight gradient
// (train's dW and dB kernels, marked perf.GradWeight since the CUDA-core
// split rule needed to know them, maxSplit; N alone keeps this rule off
// them without the mark). With K read, a
// batch of 4 (K = 4) priced at the fallback ran slower than a batch of 8
// (aligned): LSTM-PTB's training step on Hopper fell by 0.01-0.1% as its
// batch grew (scripts/batch_scan.py). The fallback is real there too;
// the invariant that more work never takes less time is kept over it,
// and a misaligned K alone (a data gradient through the vocabulary) is
// priced as before.
func misalignedGEMMS(g *hwdb.GPU, k Kernel, p Params, r *hwdb.Runtime) float64 {
	if k.Class != ClassGEMM || !runsCuBLAS(r) || !tmaGEMMFamilies[g.Family()] || min(k.M, k.N) <= gemvMaxCols {
		return 0
	}
	real := RunPath(g, k.Precision)
	rate, ok := misalignedFLOPsPerSMCycle[real]
	if !ok || k.N%tensorGranule(real) == 0 { // the granule: 16 bytes in elements
		return 0
	}
	cycles := smCyclesPerSecond(g, p)
	if !(cycles > 0) {
		return 0
	}
	flops := FMAFLOPs * float64(k.M) * float64(k.N) * float64(k.K) * float64(max(k.Batch, 1))
	return flops / (rate * cycles)
}

// AlignmentGranule is how many of k's elements make the 16 bytes a row
// of its output must be a multiple of on g's path for it (the granule
// misalignedGEMMS tests): padding a vocabulary or a feature dimension up
// to a multiple of it lets cuBLAS run its TMA kernels (nanoGPT pads
// GPT-2's 50,257 tokens to 50,304).
func AlignmentGranule(g *hwdb.GPU, k Kernel) int64 {
	real := RunPath(g, k.Precision)
	return tensorGranule(real)
}

// smCyclesPerSecond is the SM cycles g runs a second, all SMs at the clock
// the time model holds under p (clockFraction): what a rate kept per SM
// cycle, set by the SMs' issue rather than a datasheet peak, is scaled by.
func smCyclesPerSecond(g *hwdb.GPU, p Params) float64 {
	if g.SMs <= 0 {
		return 0
	}
	return float64(g.SMs) * g.BoostClockMHz * 1e6 * clockFraction(g, p)
}

// runsCuBLAS reports whether runtime r hands matrix products to cuBLAS:
// PyTorch eager and its CUDA-graph replay (nil: the default replay),
// Inductor (which leaves mm to aten unless max-autotune picks a Triton
// template) and the onnxruntime CUDA execution provider.
func runsCuBLAS(r *hwdb.Runtime) bool {
	return r == nil || r.Plan == "eager" || r.Plan == "inductor" || r.Plan == "onnxruntime"
}
