package cost

import (
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
)

// bnPrepKernels adds to a half-precision 2-D BatchNormalization the
// small kernels its runtime runs before it (hwdb.Runtime.BNPrepKernels).
// Our H100 eager runs (channels_last tensors in fp16, as NVIDIA's
// performance guide advises for tensor cores) count two kernels more per
// BatchNorm in fp16 than in fp32 or TF32, not per convolution:
// DenseNet-121's 121 batch norms (for 120 convolutions) +242, ResNet-50's
// 53 +106, VGG-16 (13 convolutions, no batch norm) none. Unprofiled; the
// times say they are small: priced as copies of the activations around
// the batch norm (a layout conversion), they put ResNet-50 and
// MobileNet-V2 fp16 at batch 128 17% and 16% above their measured CUDA-
// graph replays, while VGG-16, which runs neither, is 23% below its own
// (its convolutions alone are priced too fast). Each is priced as the
// per-channel work of PyTorch's native batch norm for a half input with
// fp32 statistics (the scale w/√(var+ε) and the shift b − mean·scale, C
// elements each): a kernel reading two fp32 C-vectors and writing one,
// on the elementwise path, in the node's own row (launches, bytes and
// time; none of the model's FLOPs). A training step has none: its batch
// norms use the batch's statistics (our ResNet-50 AMP step runs 639
// kernels; with the two per batch norm priced it came to 786, without
// them 680).
func (a *analyzer) bnPrepKernels(nc *report.NodeCost, n *ir.Node, est *NodeEstimate, prec hwdb.Precision, agg *aggregate) {
	rt := a.runtime
	if rt == nil || rt.BNPrepKernels <= 0 || n.Domain != "" || n.OpType != "BatchNormalization" || est.composite != nil {
		return
	}
	if a.opt.Train != nil {
		return // a training step's batch norm normalises by the batch's statistics, not the running ones
	}
	if prec != hwdb.FP16 && prec != hwdb.BF16 && prec != hwdb.FP16Tensor && prec != hwdb.BF16Tensor {
		return
	}
	x := n.In(0)
	if x == nil || x.Shape.Rank() != 4 {
		return // the counts are those of 2-D feature maps' batch norms
	}
	sizer := a.sizer(n)
	channels, ok := sizer.Dim(x, 1)
	if !ok || !(channels > 0) {
		return
	}
	vec := 4 * channels // one fp32 per channel
	k := perf.Kernel{
		Class: perf.ClassElementwise, Bytes: 3 * vec * rt.BNPrepKernels, WorkingSet: 3 * vec,
		Precision: hwdb.FP32, ElemBytes: 4, Launches: rt.BNPrepKernels, Resident: true,
	}
	a.priceExtra(k, 2*vec*rt.BNPrepKernels, vec*rt.BNPrepKernels, est, agg)
	nc.Counts, nc.Launches = est.Counts, est.Launches
	if nc.Note == "" {
		nc.Note = "with the per-channel scale and shift kernels PyTorch runs before a half-precision batch norm"
	}
}

// priceExtra adds to a node's row a kernel the node runs beyond its own
// (a batch norm's per-channel preparation, an autocast cast), priced as
// any kernel of the plan: its time and energy to agg, its launches and
// the bytes it reads and writes to est.
func (a *analyzer) priceExtra(k perf.Kernel, read, written float64, est *NodeEstimate, agg *aggregate) {
	a.priceExtraWith(a.planOptions(), k, read, written, est, agg)
}

// priceExtraWith is priceExtra with the kernel priced under o (a
// library's own kernels at the stream gap: fftTransforms).
func (a *analyzer) priceExtraWith(o perf.Options, k perf.Kernel, read, written float64, est *NodeEstimate, agg *aggregate) {
	pk := perf.UnderControl(a.gpu, k, o, a.opt.Power)
	kt := pk.KernelTime
	agg.MemoryS += kt.MemoryS
	agg.LatencyS += kt.LatencyS
	agg.RampS += kt.RampS
	agg.LaunchS += kt.LaunchS
	agg.TimeS += kt.TimeS
	agg.EnergyJ += pk.EnergyJ()
	est.Launches += k.Launches
	est.BytesRead += read
	est.BytesWritten += written
}
