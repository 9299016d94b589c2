package perf

import "github.com/onnxcost/onnxcost/hwdb"

// PyTorch runs a channels_last max pool in max_pool_forward_nhwc, one
// thread per output element walking its window with the channel index,
// the window's bounds and the argmax bookkeeping in integer arithmetic:
// in our H200's Kineto trace of VGG-16 fp16 channels_last at batch 128
// (2026-12-04, calib/profile/testdata/kineto_h200/vgg16_fp16_b128.json.gz;
// calib/loop TestChannelsLastPoolsAndBiasAdds) its five 2x2 pools over
// 3.2-103 M outputs ran at 2.97-3.37 SM cycles an output (a median 3.1:
// 1,257 µs for the first, 0.8 TB/s,
// where its 1.03 GB would stream in 240 µs), bound by that arithmetic,
// not by DRAM. nhwcPoolOutputCycles is that median, FITTED on those five;
// the channels_last whole-model rows (VGG-16, ResNet-50, DenseNet-121
// fp16, cmd/onnxcost TestMeasuredEndToEnd) are its check. Half types
// only (the analyzer marks them): applied to the TF32 rows' fp32 pools
// too it put VGG-16 TF32 3 points further over, and no fp32 trace says
// what that kernel does per output. The NCHW kernel
// (max_pool_forward_nchw) and average pools were not traced either and
// keep their bytes.
const nhwcPoolOutputCycles = 3.1

// nhwcPoolS is the time the channels_last max-pool kernel k takes on g's
// SMs (0 for any other kernel).
func nhwcPoolS(g *hwdb.GPU, k Kernel, p Params) float64 {
	return smCyclesS(g, p, k.NHWCPoolOutputs*nhwcPoolOutputCycles)
}
