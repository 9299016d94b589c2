package perf

import "github.com/onnxcost/onnxcost/hwdb"

// cuDNN's FFT forward algorithm (CUDNN_CONVOLUTION_FWD_ALGO_FFT) runs a
// stride-1 convolution as five kernels: the filter flipped and
// transformed (flip_filter, fft2d_r2c), the input transformed
// (fft2d_r2c), one complex GEMM per frequency over the channels
// (sm80_xmma_gemm_cf32cf32_..., [N × C]·[C × K]) and the inverse
// transform of the products (fft2d_c2r), each image plane padded to a
// power-of-two size T ≥ H + R − 1 (T×T, T/2+1 complex columns of a real
// transform). The complex GEMM does 4 real multiply-adds per complex one
// but over T·(T/2+1) frequencies instead of P·Q·R·S taps: a third of the
// direct arithmetic for a 3×3 filter over 28×28 (T = 32), which is how
// cudnn.benchmark's pick beats the FP32 peak on the direct count. The
// filter's spectrum, K·C·T·(T/2+1) complex values, is rewritten on every
// call (the workspace: 1.1 GB for VGG-16's 512×512 layers).
//
// Our H200's cudnn.benchmark picks (scripts/measure_gpu.py
// --conv-choices, 2026-12-04; go run ./scripts/choices) run it for
// VGG-16's fp32 3×3 layers of 128-512 channels at 56×56, 28×28 and 14×14
// (batch 32 and 128), not at 224×224, 112×112 (implicit GEMM) or 7×7.

// FFTConv is cuDNN's FFT forward algorithm for c on the fp32 vector path:
// the complex GEMM (ClassGEMM: M = N, N = K, K = C, Batch the
// frequencies, its FLOPs 4× a real product's) and the four other
// kernels as memory-bound ones: the filter's flip (flip_filter, one
// small CTA per (k, c) plane: Kernel.SmallCTAs), the filter's, the
// input's and the inverse transform.
// ok is false where it does not apply: not a 3×3 stride-1 ungrouped
// convolution, or a plane over 32 points, which cuDNN transforms at 64
// and multiplies with pointwise_mult_and_sum_complex, not a complex GEMM
// (2-3x slower on our H200: unpriced).
func FFTConv(c ConvGeom) (gemm Kernel, transforms []Kernel, ok bool) {
	if !WinogradApplies(c) {
		return Kernel{}, nil, false
	}
	t := fftSize(max(c.H+2*c.PadH, c.W+2*c.PadW))
	if t == 0 {
		return Kernel{}, nil, false
	}
	const real, complex = 4.0, 8.0 // fp32 and complex64 bytes
	freqs := t * (t/2 + 1)
	n, ch, k := float64(c.N), float64(c.C), float64(c.K)
	f := float64(freqs)
	in := n * ch * float64(c.H*c.W) * real
	inSpec := n * ch * f * complex
	wt := k * ch * float64(c.R*c.S) * real
	wtSpec := k * ch * f * complex
	outSpec := n * k * f * complex
	out := n * k * float64(c.P()*c.Q()) * real
	stream := func(read, written float64) Kernel {
		return Kernel{Class: ClassElementwise, Precision: hwdb.FP32, ElemBytes: real,
			Bytes: read + written, WorkingSet: read + written, DRAMBytes: read + written,
			WriteShare: written / (read + written), Launches: 1}
	}
	flip := stream(wt, wt)
	flip.SmallCTAs, _ = mulSat(c.K, c.C)
	transforms = []Kernel{flip, stream(wt, wtSpec), stream(in, inSpec), stream(outSpec, out)}
	// The complex GEMM's tiles are 32 images tall (its kernel,
	// ..._cf32_tn_n_tilesize32x64x8): a smaller batch computes the rest
	// of the tile for nothing, which is why cuDNN keeps implicit GEMM for
	// the same layers at batch 1 (our H200's picks).
	rows := (c.N + fftGEMMTile - 1) / fftGEMMTile * fftGEMMTile
	gemm = Kernel{
		Class: ClassGEMM, Precision: hwdb.FP32, ElemBytes: complex,
		FLOPs: 4 * FMAFLOPs * float64(rows) * k * ch * f,
		Bytes: inSpec + wtSpec + outSpec, WorkingSet: inSpec + wtSpec + outSpec, DRAMBytes: inSpec + wtSpec + outSpec,
		M: rows, N: c.K, K: c.C, Batch: freqs, Launches: 1, Complex: true,
	}
	return gemm, transforms, true
}

// fftGEMMTile is the rows (images) of the complex GEMM's tile.
const fftGEMMTile = 32

// fftSize is the transform size cuDNN's FFT kernels pad a plane of n
// (with its padding) to where a complex GEMM multiplies the spectra: 16
// or 32 (its fft2d_r2c_16x16 and _32x32 kernels); 0 above 32.
func fftSize(n int64) int64 {
	for t := int64(16); t <= 32; t *= 2 {
		if n <= t {
			return t
		}
	}
	return 0
}
