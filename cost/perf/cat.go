package perf

import "github.com/onnxcost/onnxcost/hwdb"

// PyTorch concatenates channels_last tensors in CatArrayBatchedCopy's
// aligned or plain variant, never its vectorized one (aten/src/ATen/
// native/cuda/Shape.cu, parallel_cat: "for channels last computing slice
// size correctly is much more involved, so we never send it on the fully
// vectorized path"): each thread loads a few elements of one input and
// stores each to an output offset it works out from the element's index,
// three 32-bit divisions and their multiply-adds over the permuted
// (N, H, W, C) dims. On a GPU whose DRAM delivers many bytes per SM
// cycle (HBM: an H200 streams 18 bytes per SM cycle at its datasheet
// rate, a GeForce board 4-6) that integer work, not the bytes, sets the
// pace. An NCHW cat along the channels is the vectorized copy (16-byte
// loads and stores), a stream.
//
// catElementCycles is the SM cycles an output element costs, FITTED on
// one row: our H100's DenseNet-121 fp16 channels_last CUDA-graph replay
// at batch 128 (testdata/measured/h100_sxm5_pytorch.csv; 62 cats moving
// 5.4 GB, 1.35 G elements), which was priced 11.3% fast with its cats as
// streams. 0.72 cycles is about 46 instructions of the SM's 64-per-cycle
// integer pipe an element: the three divisions' reciprocal, multiply-high
// and correction sequences and the offset's multiply-adds, as the kernel
// computes them. Held out (cmd/onnxcost TestMeasuredEndToEnd), graph
// replays: H100 fp16 batch 32 −13.7% → −5.0%; H200 fp16 batch 32 and 128
// −16.3% → −4.6% and −17.6% → −1.0%; eager calls H100 fp16 batch 128
// −11.7% → −1.1%. The TF32 rows (fp32 elements, 8 bytes moved an
// element) stay memory-bound at this rate and are still 8-13% fast there:
// something else of DenseNet's channels_last fp32 plan (its norms?) is
// short, unmeasured.
const catElementCycles = 0.72

// channelsLastCatS is the time g's SMs take over the index arithmetic of
// a channels_last concatenation k (0 for any other kernel): its compute
// term, which the stream of its bytes overlaps.
func channelsLastCatS(g *hwdb.GPU, k Kernel, p Params) float64 {
	return smCyclesS(g, p, k.ChannelsLastCatElements*catElementCycles)
}
