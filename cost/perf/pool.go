package perf

import "github.com/onnxcost/onnxcost/hwdb"

// PyTorch runs a max pool in max_pool_forward_nhwc (channels_last) or
// max_pool_forward_nchw, one thread per output element walking its window,
// the window's bounds, the element index and the argmax bookkeeping in
// integer arithmetic, so an SM finishes outputs at a fixed rate, not at
// its bytes':
//
//   - in our H200's Kineto trace of VGG-16 fp16 channels_last at batch
//     128 (2026-12-04, calib/profile/testdata/kineto_h200/
//     vgg16_fp16_b128.json.gz; calib/loop TestChannelsLastPoolsAndBiasAdds)
//     its five 2x2 pools over 3.2-103 M outputs ran at 2.97-3.37 SM cycles
//     an output (a median 3.1: 1,257 µs for the first, 0.8 TB/s, where its
//     1.03 GB would stream in 240 µs);
//   - in its trace of VGG-16 fp32 NCHW at batch 128 (kineto_h200/
//     vgg16_fp32_b128.json.gz; calib/loop TestNCHWPoolsAndFFT) the same
//     five pools ran max_pool_forward_nchw at 3.12-3.33 cycles an output
//     (a median 3.17), though each moves twice the bytes: the same
//     arithmetic bound, held out from the fit.
//
// maxPoolOutputCycles is the first trace's median, FITTED on those five;
// the whole-model rows with max pools (VGG-16, ResNet-50, DenseNet-121,
// cmd/onnxcost TestMeasuredEndToEnd) are its check. The analyzer marks
// the NCHW kernel at every precision (its integer work does not depend
// on the element type) and the channels_last one at half precision only:
// applied to the TF32 rows' channels_last fp32 pools it put VGG-16 TF32
// 3 points further over, and no trace says what that kernel does per
// fp32 output. Average pools keep their bytes.
const maxPoolOutputCycles = 3.1

// maxPoolS is the time PyTorch's max-pool kernel k takes on g's SMs (0
// for any other kernel).
func maxPoolS(g *hwdb.GPU, k Kernel, p Params) float64 {
	return smCyclesS(g, p, k.MaxPoolOutputs*maxPoolOutputCycles)
}
