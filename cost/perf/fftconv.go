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

// FFTWorkspace is the device memory cuDNN's FFT call holds while it runs,
// gemm being FFTConv's product: the three spectra it multiplies and writes
// and a second buffer the size of the filter's spectrum. The second buffer
// is measured, not documented: the workspace our H200's calls allocated
// (testdata/measured/h200_sxm_conv_choices.csv, ws_mib: the caching
// allocator's peak during the call; PyTorch 2.11, cuDNN 9.19) for its
// seven FFT picks (VGG-16's and ResNet-50's fp32 layers, 56×56 to 14×14,
// batch 32 and 128) is the spectra and one filter spectrum more within
// −1.6% to +2.5%, and +5.4% for the one layer of fewer input than output
// channels (128 → 256 at 56×56), where the spectra alone are 33-48%
// short (cost TestFFTWorkspace). What it holds the trace does not say: a
// transposed copy of the filter's spectrum for the batched product would
// be its size, the filter's zero-padded T×T planes 0.94-0.97 of it. Held
// out, whole calls' peaks (torch.cuda.max_memory_allocated over eager
// calls after warm-up; cmd/onnxcost TestMeasuredEndToEnd): VGG-16 fp32
// at batch 32 and 128 priced 3,118 and 4,553 MiB against 2,967 and 4,557
// on our H100 (3,122 and 4,557 on the H200), 2,062 and 3,737 with the
// spectra alone; ResNet-50 fp32 at batch 32 458 MiB against 458 on both,
// 435 before.
func FFTWorkspace(gemm Kernel) float64 {
	// The filter spectrum is the product's B operand: N × K per frequency,
	// in the product's complex elements.
	return gemm.Bytes + float64(gemm.N)*float64(gemm.K)*float64(gemm.Batch)*gemm.ElemBytes
}

// FFTConv is cuDNN's FFT forward algorithm for c on the fp32 vector path:
// the product of the spectra and the four other kernels as memory-bound
// ones: the filter's flip (flip_filter, one small CTA per (k, c) plane:
// Kernel.SmallCTAs), the filter's, the input's and the inverse
// transform. Up to 32 points the product is a complex GEMM (ClassGEMM:
// M = N, N = K, K = C, Batch the frequencies, its FLOPs 4× a real
// product's); at 64 points it is pointwise_mult_and_sum_complex
// (fftPointwise), whose transforms are priced at their measured cycles
// a point (fftFilterPointCycles, fftDataPointCycles).
// ok is false where it does not apply: not a 3×3 stride-1 ungrouped
// convolution, a plane over 64 points, or a 64-point one of fewer than
// fftPointwiseMinK output channels.
func FFTConv(c ConvGeom) (gemm Kernel, transforms []Kernel, ok bool) {
	if !WinogradApplies(c) {
		return Kernel{}, nil, false
	}
	t := fftSize(max(c.H+2*c.PadH, c.W+2*c.PadW))
	if t == 0 || t > fftGEMMMaxSize && c.K < fftPointwiseMinK {
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
	flip.SmallCTAThreads = 9 // a thread per filter tap
	wtFFT, inFFT, outFFT := stream(wt, wtSpec), stream(in, inSpec), stream(outSpec, out)
	// The complex GEMM's tiles are 32 images tall (its kernel,
	// ..._cf32_tn_n_tilesize32x64x8): a smaller batch computes the rest
	// of the tile for nothing, which is why cuDNN keeps implicit GEMM for
	// the same layers at batch 1 (our H200's picks). The 64-point
	// pointwise product has no tiles.
	rows := (c.N + fftGEMMTile - 1) / fftGEMMTile * fftGEMMTile
	if t > fftGEMMMaxSize {
		rows = c.N
		points := float64(t * t)
		wtFFT.TransformCycles = k * ch * points * fftFilterPointCycles
		inFFT.TransformCycles = n * ch * points * fftDataPointCycles
		outFFT.TransformCycles = n * k * points * fftDataPointCycles
	}
	macs := float64(rows) * k * ch * f
	spectra := inSpec + wtSpec + outSpec
	gemm = Kernel{
		Class: ClassGEMM, Precision: hwdb.FP32, ElemBytes: complex,
		FLOPs: 4 * FMAFLOPs * macs, Bytes: spectra, WorkingSet: spectra, DRAMBytes: spectra,
		M: rows, N: c.K, K: c.C, Batch: freqs, Launches: 1, Complex: true, ZeroRows: rows - c.N,
	}
	if t > fftGEMMMaxSize {
		gemm.PointwiseComplexMACs = macs
	}
	return gemm, []Kernel{flip, wtFFT, inFFT, outFFT}, true
}

// fftGEMMTile is the rows (images) of the complex GEMM's tile.
const fftGEMMTile = 32

// fftSize is the transform size cuDNN's FFT kernels pad a plane of n
// (with its padding) to: 16, 32 or 64 (its fft2d_r2c_16x16, _32x32 and
// _64x64 kernels); 0 above 64.
func fftSize(n int64) int64 {
	for t := int64(16); t <= 64; t *= 2 {
		if n <= t {
			return t
		}
	}
	return 0
}

// fftGEMMMaxSize is the largest transform whose spectra cuDNN multiplies
// with a complex GEMM; at 64 points it runs pointwise_mult_and_sum_complex.
const fftGEMMMaxSize = 32

// The 64-point path, from our H200's cudnn.benchmark picks
// (testdata/measured/h200_sxm_conv_choices.csv): VGG-16's 128→256 and
// 256→256 layers at 56×56, batch 32 and 128, run flip_filter,
// fft2d_r2c_64x64 twice, pointwise_mult_and_sum_complex (4,224 CTAs of
// one warp: 64×66, as many as 132 SMs hold at 32 CTAs each) and
// fft2d_c2r_64x64.
//
// complexPointwiseCycles is the SM cycles a complex multiply-add of the
// product costs (4 real FMAs; 0.11 cycles is 28% of a 128-lane SM's FMA
// rate), FITTED: the median of the two batch-32 picks, 0.1123 and 0.1113
// at the boost clock. Held out, the batch-128 pick's product 0.1149 and
// the three of our H200's VGG-16 fp32 trace at batch 128
// (calib/profile/testdata/kineto_h200) 0.1138-0.1141: priced 1.8-2.7%
// fast.
const complexPointwiseCycles = 0.1118

// fftFilterPointCycles and fftDataPointCycles are the SM cycles a point of
// a 64×64 plane costs in the transforms, which run at 2.2-3.1 TB/s where a
// copy streams 4.3: the filter's fft2d_r2c (3×3 taps padded to the plane)
// and the data's (the input's fft2d_r2c, the output's fft2d_c2r). FITTED:
// the medians of the batch-32 picks' kernels, filter 0.498 and 0.492, data
// 0.750, 0.643, 0.657 and 0.660. Held out, the batch-128 pick's: filter
// 0.495, input 0.612, output 0.636 (priced 0%, +8%, +4% long). The 16-
// and 32-point transforms run at 0.42-0.70 cycles a point over 20 µs
// (more in shorter ones) but keep their streams' price: their complex
// GEMM is priced 23-28% long at batch 32, and the two, fitted together as
// whole calls, price those picks within 10%.
const (
	fftFilterPointCycles = 0.495
	fftDataPointCycles   = 0.66
)

// fftPointwiseMinK is the fewest output channels a 64-point FFT is priced
// for. The product's grid, 64 × 66 CTAs for 256 output channels, reads as
// K/4 × frequencies/32: with fewer channels fewer warps share each SM
// and the fitted rate, which 32 resident warps an SM reach, no longer
// holds. Our H200 ran ResNet-50's 64→64 layer at 56×56 as implicit GEMM
// (255.8 µs at batch 32), where that rate prices the FFT at 224 µs; no
// 64-point pick with fewer than 256 output channels was measured.
const fftPointwiseMinK = 256
