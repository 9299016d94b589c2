package perf

import (
	"strings"

	"github.com/onnxcost/onnxcost/hwdb"
)

// Some library kernels launch one small CTA per tiny piece of work, and
// the SMs retire such CTAs no faster than a fixed lifetime each over the
// CTAs an SM holds at once, whatever their bytes: each CTA waits out a
// few round trips of its few loads (Little's law with few bytes in
// flight) and the block scheduler starts the next, the SMs and DRAM
// mostly idle.
//
//   - PyTorch runs an NCHW BatchNorm at inference on cuDNN's
//     bn_fw_inf_1C11_kernel_NCHW, one CTA (64-512 threads) per (n, c)
//     plane. In our H200's Kineto trace of MobileNet-V2 fp32 at batch 128
//     (2026-12-04, scripts/gpu_session.sh; calib/profile/testdata/
//     kineto_h200/mobilenet_v2_fp32_b128.json.gz) its 52 batch norms over
//     planes of 49 and 196 elements (7x7, 14x14; 20,480-163,840 CTAs) ran
//     14-100 µs, 5-7x the 12-24 µs their bytes take, at a steady 157-173
//     SM cycles a CTA (a line through them: 0.60 ns a CTA on the H200's
//     132 SMs at 1.98 GHz, 157 cycles): CTAs of 64 threads. Its larger
//     planes take larger CTAs (cudnnBatchNormThreads in package cost).
//   - cuDNN's FFT convolution flips its filter in flip_filter, one CTA of
//     3×3 threads per (k, c) filter plane (perf.FFTConv). In our H200's
//     trace of VGG-16 fp32 at batch 128 (kineto_h200/
//     vgg16_fp32_b128.json.gz) its six calls ran 158.5-163 cycles a CTA
//     at 512×512 planes (159-164 µs) and 160 at 256×512 (80 µs), the
//     same rate: a check the batch-norm fit did not see.
//
// smallCTALifetimeCycles is how long one such CTA lives on an SM, in SM
// cycles: the SMs retire CTAs at residentCTAs of them per lifetime. The
// norms' line above, 160 cycles a CTA of 64 threads with 32 of them
// resident on each Hopper SM, is a lifetime of 5,120 cycles (2.6 µs at
// 1.98 GHz, a few dependent round trips to DRAM and the block scheduler's
// turn). The same lifetime holds CTAs of other sizes, fewer of which
// reside: in the MobileNet trace the norms' 256-thread CTAs (planes of
// 784 elements, 8 resident: 640 cycles apiece) ran 607-646 cycles apiece
// where their bytes allow 516 (59-61 µs at 24,576 CTAs, priced 48.5 by
// the bytes before; 512-thread CTAs over 3,136 elements and more stay
// held by their bytes), and
// PyTorch's adaptive_average_pool (VGG-16's 7×7 → 7×7, one 256-thread CTA
// a plane, 65,536 CTAs) 700 (175.6 µs, priced 6.2 by its bytes); ATen's
// reduce_kernel for a mean over 49-element rows (a warp a row, 16 rows a
// 512-thread CTA, 4 resident) 1,030 cycles a CTA against the lifetime's
// 1,280 (40.3 µs at 10,240 CTAs).
// FITTED on the MobileNet trace's small-plane norms (calib/loop
// TestBatchNormPlanesAreTheTrace: the 52 norms' median error 22.8% →
// 5.9% with it at 64 threads); held out: the VGG trace's flip_filter
// calls and adaptive pool, the MobileNet trace's 256-thread norms and
// mean; the whole-model rows (cmd/onnxcost TestMeasuredEndToEnd:
// ResNet-50, MobileNet-V2, DenseNet-121 and VGG-16 fp32, the NCHW rows,
// H100 and H200) are its check.
const smallCTALifetimeCycles = 5120

// smallCTADefaultThreads is the CTA size of a kernel that does not say
// (Kernel.SmallCTAThreads 0): the norms' 64 threads the lifetime was
// fitted at.
const smallCTADefaultThreads = 64

// smallCTAS is the time kernel k takes to retire its small CTAs
// (Kernel.SmallCTAs) on g: 0 for a kernel with none.
func smallCTAS(g *hwdb.GPU, k Kernel, p Params) float64 {
	if k.SmallCTAs <= 0 {
		return 0
	}
	threads := k.SmallCTAThreads
	if threads <= 0 {
		threads = smallCTADefaultThreads
	}
	return smCyclesS(g, p, float64(k.SmallCTAs)*smallCTALifetimeCycles/residentCTAs(g, threads))
}

// residentCTAs is how many CTAs of threads threads one SM of g holds at
// once, by the architecture's limits on resident threads and blocks
// (smResidency); registers and shared memory, which the small kernels
// here barely use, are left out.
func residentCTAs(g *hwdb.GPU, threads int64) float64 {
	maxThreads, maxCTAs := smResidency(g)
	return float64(max(min(maxCTAs, maxThreads/max(threads, 1)), 1))
}

// smResidency is the most threads and CTAs one SM of g holds at once:
// NVIDIA's CUDA C++ Programming Guide, "Technical Specifications per
// Compute Capability" (maximum resident threads and blocks per SM): 1,024
// and 16 on Turing (7.5), 1,536 and 16 on GA10x (8.6), 1,536 and 24 on Ada
// (8.9), 2,048 and 32 on Maxwell, Pascal, Volta, GA100, Hopper and
// Blackwell (5.x-7.0, 8.0, 9.0, 10.0). Other vendors and unknown parts
// take the last (the rate was fitted at it).
func smResidency(g *hwdb.GPU) (threads, ctas int64) {
	switch g.Family() {
	case "Turing":
		return 1024, 16
	case "Ada Lovelace":
		return 1536, 24
	case "Ampere":
		if !strings.Contains(g.Arch, "GA100") {
			return 1536, 16
		}
	}
	return 2048, 32
}
