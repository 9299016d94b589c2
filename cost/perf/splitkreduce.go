package perf

import "github.com/onnxcost/onnxcost/hwdb"

// splitKReduceS is the time, gap included, of the kernel cuBLAS launches
// after a split-K plan of product k to sum its K slices into the output
// (cublasLt's splitKreduce_kernel), or 0 where it runs none: fastestPlan
// adds it to every split plan it weighs, so a split must save more than
// the second kernel costs. libOf prices it at the stream gap whatever
// the runtime (ChoiceOptions): the heuristic that picks the plan does
// not know a CUDA graph will replay it. In a graph its idle gap is
// shorter (our H200's sweep, replayed: 1.8 µs beyond the kernels a call
// with it, 1.2 without), so a replayed split product is priced about
// 0.6 µs long: the sweep's fp32 products 9.45% → 11.3%, TF32 10.1% →
// 9.25%, all 390 12.5% → 13.0%.
//
// Our H200's GEMM-choice sweep (testdata/measured/h200_sxm_gemm_choices.csv:
// bare torch.matmul, A·B, in a CUDA graph) runs one after 48 of its 130
// fp32 products (cutlass simt split-K) and 54 of its 130 TF32 ones
// (cutlass_80_tensorop_s1688gemm split-K, every product of up to about
// 256 rows), medians 2.04 and 1.82 µs, and a product that has one takes
// 1.8 µs more per call beyond its kernels than one that has not (1.2):
// the second gap. The partial sums' round trip (partialSumsS) was priced
// and the kernel was not: the sweep's TF32 products were priced 11.2%
// fast (signed median; median |error| 14.2%), its fp32 ones −2.5%.
//
// Two kinds of product run no such kernel, and keep the plan as before:
//   - A product over a module's weight, which PyTorch runs as F.linear
//     (A·Bᵀ: Kernel.TransposedB): our whole-model replays count their
//     kernels, and priced with a reduce after every split plan BERT's
//     TF32 and fp16 calls came out 12-24 kernels over the 215-902
//     measured (one per split Linear) and the LLaMA-7B decode step 164-228
//     over 1,287, where without it they match within 5; cuBLASLt's TN
//     kernels sum their slices in the kernel or do not split.
//   - A 16-bit tensor-core product on Hopper, which cuBLAS runs as its
//     sm90 nvjet kernels: all 130 of the sweep's fp16 products, 113 of
//     them as one kernel with smaller tiles rather than a split, where the
//     model's split plan stands for that kernel's occupancy; with the
//     reduce charged to them the fp16 products went from +25.6% to +29.2%
//     (signed median; all 390 products 11.6% rather than 12.4%, but our
//     H200's fp16 matmul rows worse). The 17 that split (a K of 3,072 or
//     more over a narrow output) stay priced 7-18% fast without it.
//
// Neither a convolution (cuDNN's forward kernels do not split; its weight
// gradients reduce in the kernel) nor a runtime that times its own
// tactics (TensorRT) runs it. It is priced on the parts whose cuBLAS runs
// the sm80 kernels the sweep shows (sm80Families); DeepBench's boards
// (Maxwell to Turing, the cuBLAS of 2017-2018) do not say whether theirs
// summed the slices apart: charged there, the held-out DeepBench rows
// stayed at 14.3% but the M40's calibrated half went 8.5% → 9.2%.
func splitKReduceS(g *hwdb.GPU, k Kernel, o Options, real hwdb.Precision, lib gemmLib) float64 {
	if !lib.product || !lib.splitK || k.TransposedB || !runsCuBLAS(o.Runtime) || !sm80Families[g.Family()] || nvjetProduct(g, real) {
		return 0
	}
	eb := k.ElemBytes
	if !(eb > 0) {
		eb = 4
	}
	return outputPassS(g, k, o, eb)
}

// nvjetProduct reports whether cuBLAS runs a product on path real as
// its sm90 nvjet kernels: a 16-bit tensor-core product on Hopper (our
// H200's sweep: every fp16 product; its TF32 ones run cutlass_80 and
// sm90_xmma kernels), and fp8 by extension (no trace of an fp8 product
// here).
func nvjetProduct(g *hwdb.GPU, real hwdb.Precision) bool {
	switch real {
	case hwdb.FP16Tensor, hwdb.BF16Tensor, hwdb.FP8Tensor:
		return g.Family() == "Hopper"
	}
	return false
}
