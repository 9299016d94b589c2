package perf

import "github.com/onnxcost/onnxcost/hwdb"

// Some library kernels launch one small CTA per tiny piece of work, and
// the SMs retire such CTAs no faster than a fixed rate whatever their
// bytes: each CTA waits out one round trip of its few loads (Little's law
// with few bytes in flight) and the block scheduler starts the next, the
// SMs and DRAM mostly idle.
//
//   - PyTorch runs an NCHW BatchNorm at inference on cuDNN's
//     bn_fw_inf_1C11_kernel_NCHW, one CTA (64-512 threads) per (n, c)
//     plane. In our H200's Kineto trace of MobileNet-V2 fp32 at batch 128
//     (2026-12-04, scripts/gpu_session.sh; calib/profile/testdata/
//     kineto_h200/mobilenet_v2_fp32_b128.json.gz) its 52 batch norms over
//     planes of 49 and 196 elements (7x7, 14x14; 20,480-163,840 CTAs) ran
//     14-100 µs, 5-7x the 12-24 µs their bytes take, at a steady 157-173
//     SM cycles a CTA (a line through them: 0.60 ns a CTA on the H200's
//     132 SMs at 1.98 GHz, 157 cycles), where the large planes
//     (784-12,544 elements) are held by their bytes.
//   - cuDNN's FFT convolution flips its filter in flip_filter, one CTA of
//     3×3 threads per (k, c) filter plane (perf.FFTConv). In our H200's
//     trace of VGG-16 fp32 at batch 128 (kineto_h200/
//     vgg16_fp32_b128.json.gz) its six calls ran 158.5-163 cycles a CTA
//     at 512×512 planes (159-164 µs) and 160 at 256×512 (80 µs), the
//     same rate: a check the batch-norm fit did not see.
//
// smallCTACycles is that rate, a floor on the memory side, so such a
// kernel draws as a slow stream does, not as compute.
// FITTED on the MobileNet trace's small-plane norms (calib/loop
// TestBatchNormPlanesAreTheTrace: the 52 norms' median error 22.8% →
// 5.9% with it); held out: the VGG trace's flip_filter calls; the
// whole-model rows (cmd/onnxcost TestMeasuredEndToEnd: ResNet-50,
// MobileNet-V2, DenseNet-121 and VGG-16 fp32, the NCHW rows, H100 and
// H200) are its check.
const smallCTACycles = 160

// smallCTAS is the time kernel k takes to retire its small CTAs
// (Kernel.SmallCTAs) on g: 0 for a kernel with none.
func smallCTAS(g *hwdb.GPU, k Kernel, p Params) float64 {
	return smCyclesS(g, p, float64(k.SmallCTAs)*smallCTACycles)
}
