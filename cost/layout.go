package cost

import (
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
)

// layoutKernels adds to a convolution's node the layout conversions its
// runtime runs around it (hwdb.Runtime.ConvLayoutKernels): a runtime that
// hands cuDNN channels-first tensors (PyTorch eager, the ONNX Runtime CUDA
// EP) gets its half-precision tensor-core kernels, which work in NHWC,
// preceded by a transpose of the input and one of the filter (the
// kernel writes its NCHW output itself: cuDNN's "nhwc2nchw" kernels; a
// Volta profile of such convolutions shows two nchwToNhwcKernel calls
// per convolution, tensorflow/tensorflow#15897). Our H100 eager runs
// count two extra kernels per convolution in fp16 and none in fp32 or
// TF32, although they ran channels_last in fp16: what those two are was
// not profiled; they are priced as the same two copies (hwdb/runtimes.yaml
// cites both).
//
// Each transpose is priced as a streaming copy of its tensor (read and
// write), on the elementwise path, in the node's own row: the node's
// launches, bytes and time include them, its FLOPs do not change. The
// copy of a tensor that fits in L2 stays there for the convolution that
// reads it; what does not fit goes through DRAM both ways.
func (a *analyzer) layoutKernels(nc *report.NodeCost, n *ir.Node, est *NodeEstimate, prec hwdb.Precision, agg *aggregate) {
	rt := a.runtime
	if rt == nil || rt.ConvLayoutKernels <= 0 || est.Class != perf.ClassConv || est.composite != nil {
		return
	}
	if prec != hwdb.FP16Tensor && prec != hwdb.BF16Tensor {
		return
	}
	x, w := n.In(0), n.In(1)
	if x == nil || w == nil || x.Shape.Rank() != 4 || w.Shape.Rank() != 4 {
		return // the layouts in question are those of 2-D convolutions
	}
	sizer := a.sizer(n)
	// Two conversions: the input's and the filter's; a profile asking for
	// a different count scales the pair.
	scale := rt.ConvLayoutKernels / 2
	for _, s := range []float64{sizer.Bytes(x), sizer.Bytes(w)} {
		if !(s > 0) {
			continue
		}
		k := perf.Kernel{
			Class: perf.ClassElementwise, Bytes: 2 * s, WorkingSet: 2 * s,
			Precision: prec, ElemBytes: a.elemBytes(n), Launches: scale,
			Resident: true, DRAMBytes: max(2*s-a.gpu.L2Bytes, 0) * scale,
		}
		k.Bytes *= scale
		a.priceExtra(k, agg)
		est.Launches += scale
		est.BytesRead += s * scale
		est.BytesWritten += s * scale
	}
	nc.Counts, nc.Launches = est.Counts, est.Launches
	if nc.Note == "" {
		nc.Note = "with the NCHW→NHWC transposes of input and filter cuDNN runs before a half-precision tensor-core convolution"
	}
}

// priceExtra adds to a node's aggregate a kernel the node runs beyond its
// own (a layout transpose, an autocast cast), priced as any kernel of the
// plan.
func (a *analyzer) priceExtra(k perf.Kernel, agg *aggregate) {
	pk := a.underControl(k)
	kt := pk.KernelTime
	agg.MemoryS += kt.MemoryS
	agg.LatencyS += kt.LatencyS
	agg.LaunchS += kt.LaunchS
	agg.TimeS += kt.TimeS
	agg.EnergyJ += pk.EnergyJ()
}
