package cost

import "github.com/onnxcost/onnxcost/cost/perf"

// Winograd as cuDNN runs it comes in two kinds, and the executed arithmetic
// differs between them (cuDNN's CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD and
// _WINOGRAD_NONFUSED):
//
//   - non-fused, F(4×4,3×3): separate kernels transform the input, multiply
//     the (m+2)² transformed matrices as batched GEMMs and transform the
//     output; each transform runs once per tile and channel, and the
//     filter's transform is done once (offline under TensorRT, cached by a
//     framework). Executed FLOPs: the GEMMs plus one transform of each.
//   - fused, F(2×2,3×3) (the Lavin & Gray Maxwell kernel design,
//     arXiv:1509.09308 §5, that cuDNN 5+ ships as WINOGRAD): one kernel
//     does everything in registers and shared memory. Each CTA owns a
//     block of winogradFusedTileBlock tiles × winogradFusedKBlock output
//     channels and transforms, inside the CTA, the input tiles it reads
//     (again for every K block) and the filters it reads (again for every
//     tile block). Its main loop, like any GEMM's, runs on whole blocks:
//     the tiles past the edge are loaded as zeros and multiplied all the
//     same (only the stores are predicated), so they are executed FLOPs.
//
// The passes choose F(4×4) where the layer is large enough for it (enough
// tiles to fill the GPU) and otherwise the fused F(2×2) kernel: a batch-1
// 13×13 layer has 16 4×4 tiles but 49 2×2 ones (passes/winograd.go).
// This is what the seed's nvprof measurement shows on a Tesla P4 (cuDNN via
// TensorFlow, AlexNet at batch 1): conv3-5 executed at 0.72 of the direct
// FLOP count. Non-fused F(2×2) would give 0.52 there (16 products per 4
// outputs against 9·4, plus ~1% of transforms) and F(4×4) 0.38; the fused
// kernel's padded 64 tiles (49 rounded up to two blocks of 32) and
// per-block transforms give 0.74 (TestWinogradArithFused), 0.74 with the
// bias and ReLU epilogue (TestWinogradP4AlexNet in cmd/onnxcost).
const (
	winogradFusedTileBlock = 32
	winogradFusedKBlock    = 32
)

// winogradFused reports whether the F(m×m,3×3) kernel is the fused one.
func winogradFused(m int64) bool { return m == 2 }

// winogradVariant names the kernel for the report.
func winogradVariant(m int64) string {
	if winogradFused(m) {
		return "fused (cuDNN WINOGRAD)"
	}
	return "non-fused (cuDNN WINOGRAD_NONFUSED)"
}

// winogradArith is the executed arithmetic of F(m×m,3×3) on tiles output
// tiles of C input and K output channels: the products (MACs of the
// (m+2)² batched GEMMs) and all FLOPs (2 per product plus the transforms
// the kernel runs). ok is false for an m without transforms.
func winogradArith(m int64, tiles, c, k float64) (macs, flops float64, ok bool) {
	inOps, outOps, ok := WinogradTransformOps(m)
	if !ok {
		return 0, 0, false
	}
	alpha := float64(m + 2)
	if !winogradFused(m) {
		macs = alpha * alpha * tiles * c * k
		return macs, perf.FMAFLOPs*macs + tiles*c*inOps + tiles*k*outOps, true
	}
	tileBlocks := ceilF(tiles / winogradFusedTileBlock)
	kBlocks := ceilF(k / winogradFusedKBlock)
	padded := tileBlocks * winogradFusedTileBlock
	macs = alpha * alpha * padded * c * k
	flops = perf.FMAFLOPs*macs +
		padded*c*kBlocks*inOps + // each K block transforms the input tiles it reads
		tileBlocks*c*k*winogradFilterOps(m) + // each tile block transforms the filters it reads
		padded*k*outOps
	return macs, flops, true
}

// winogradRows is the M of the batched GEMMs the kernel runs: the tiles,
// padded to whole tile blocks by the fused kernel.
func winogradRows(m int64, tiles float64) float64 {
	if !winogradFused(m) {
		return tiles
	}
	return ceilF(tiles/winogradFusedTileBlock) * winogradFusedTileBlock
}

// winogradFilterOps is the arithmetic of one filter transform G·g·Gᵀ: the
// 1-D transform by G on the 3 columns of g, then on the m+2 rows of G·g
// (counted as WinogradTransformOps counts the others).
func winogradFilterOps(m int64) float64 {
	_, g, _, ok := WinogradTransforms(m)
	if !ok {
		return 0
	}
	return (3 + float64(m+2)) * matOps(g)
}

func ceilF(x float64) float64 {
	if !(x > 0) {
		return 0
	}
	if x >= 1<<52 {
		return x // already whole, and past int64 the conversion is undefined
	}
	n := float64(int64(x))
	if n < x {
		n++
	}
	return n
}
