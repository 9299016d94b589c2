package perf

import "github.com/onnxcost/onnxcost/hwdb"

// PyTorch runs an NCHW BatchNorm at inference on cuDNN's
// bn_fw_inf_1C11_kernel_NCHW, one CTA (64-512 threads) per (n, c) plane.
// A small plane leaves each CTA a single load per thread, and the kernel
// retires CTAs no faster than a fixed rate whatever the bytes: in our
// H200's Kineto trace of MobileNet-V2 fp32 at batch 128 (2026-12-04,
// scripts/gpu_session.sh; calib/profile/testdata/kineto_h200/
// mobilenet_v2_fp32_b128.json.gz) its 52 batch norms over planes of 49 and
// 196 elements (7x7, 14x14; 20,480-163,840 CTAs) ran 14-100 µs, 5-7x the
// 12-24 µs their bytes take, at a steady 157-173 SM cycles a CTA (a
// line through them: 0.60 ns a CTA on the H200's 132 SMs at 1.98 GHz,
// 157 cycles), where the large planes (784-12,544 elements) are held by
// their bytes. bnPlaneCycles is that rate, a floor on the memory side:
// each CTA waits out one round trip of its few loads (Little's law with
// few bytes in flight), the SMs and DRAM mostly idle, so it draws as a
// slow stream does, not as compute.
// FITTED on that one trace's small-plane norms (calib/loop
// TestBatchNormPlanesAreTheTrace: the 52 norms' median error 22.8% →
// 5.9% with it); the whole-model rows
// (cmd/onnxcost TestMeasuredEndToEnd: ResNet-50, MobileNet-V2 and
// DenseNet-121 fp32, the NCHW rows, H100 and H200) are its check.
const bnPlaneCycles = 160

// bnPlaneS is the time cuDNN's NCHW batch-norm kernel k takes to retire
// its planes' CTAs on g (0 for any other kernel).
func bnPlaneS(g *hwdb.GPU, k Kernel, p Params) float64 {
	return smCyclesS(g, p, float64(k.BNPlanes)*bnPlaneCycles)
}
