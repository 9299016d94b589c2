package cost

import (
	"fmt"
	"sort"
	"strings"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
)

// nodeDTypeName derives a compute dtype name from the node's tensors when
// no --dtype is given: the first floating input (or output) decides;
// 8-bit integer GEMM inputs mean int8.
func nodeDTypeName(n *ir.Node) string {
	for _, vs := range [][]*ir.Value{n.Inputs, n.Outputs} {
		for _, v := range vs {
			if v == nil {
				continue
			}
			if name, ok := floatDTypeName(v.DType); ok {
				return name
			}
		}
	}
	if x := n.In(0); x != nil && (x.DType == ir.Int8 || x.DType == ir.Uint8) {
		return "int8"
	}
	return "fp32"
}

// floatDTypeName is the report's name of a floating-point dtype.
func floatDTypeName(dt ir.DType) (string, bool) {
	switch dt {
	case ir.Float16:
		return "fp16", true
	case ir.BFloat16:
		return "bf16", true
	case ir.Float64:
		return "fp64", true
	case ir.Float8E4M3FN, ir.Float8E4M3FNUZ, ir.Float8E5M2, ir.Float8E5M2FNUZ:
		return "fp8", true
	case ir.Float32:
		return "fp32", true
	}
	return "", false
}

// computeFor is the compute dtype node n is costed at: --dtype when
// given; else the quantized type of a quantized node (cost/quantized.go);
// else "" and Undefined, each tensor at its own dtype.
func (a *analyzer) computeFor(n *ir.Node) (string, ir.DType) {
	if a.autocast != nil {
		return a.autocast.autocastName(n), ir.Undefined
	}
	if a.opt.DType != "" {
		return a.opt.DType, a.dtype
	}
	if name, dt, ok := quantizedDType(n); ok {
		if integerQuantOp(n) {
			// An integer op's 8-bit operands carry their own type, and its
			// float tensors (scales, a float bias, a float output, an input
			// it quantizes itself) really are float: only a Q/DQ-wrapped
			// op's float tensors stand for the 8-bit data its fused kernel
			// moves.
			return name, ir.Undefined
		}
		return name, dt
	}
	return "", ir.Undefined
}

// precisionFor picks the node's compute path on the analyzer's GPU.
func (a *analyzer) precisionFor(n *ir.Node, cl perf.KernelClass) hwdb.Precision {
	name, _ := a.computeFor(n)
	if name == "" {
		name = nodeDTypeName(n)
	}
	return a.precisionNamed(name, cl)
}

// finishWarnings adds one warning per precision fallback, in sorted order.
func (a *analyzer) finishWarnings() {
	keys := make([]string, 0, len(a.fallbacks))
	for k := range a.fallbacks {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		a.warnf("GPU %s has no rate for the wanted compute path, or a slower one than its fallback (%s): %d node(s) costed on the fallback", a.gpu.Name, k, a.fallbacks[k])
	}
	switch {
	case !(a.gpu.TDPWatts > 0):
		a.warnf("GPU %s has no TDP figure: energy is not estimated", a.gpu.Name)
	case !(a.gpu.IdleWatts > 0):
		a.warnf("GPU %s has no idle power figure: %.0f%% of TDP assumed for the energy model", a.gpu.Name, perf.IdleFraction*100)
	}
	if a.gpu.PeakFor(hwdb.FP32) == 0 {
		a.warnf("GPU %s has no fp32 rate: compute time is not estimated", a.gpu.Name)
	}
	a.tf32Warning()
}

// countOwnFP32 counts forward node n, priced as a kernel of class cl, for
// tf32Warning when it runs at the model's own fp32 (no --dtype).
func (a *analyzer) countOwnFP32(n *ir.Node, cl perf.KernelClass) {
	if !cl.GEMMLike() {
		return
	}
	if name, _ := a.computeFor(n); name != "" || nodeDTypeName(n) != "fp32" || a.ownFP32.seen[n] {
		return
	}
	if a.ownFP32.seen == nil {
		a.ownFP32.seen = map[*ir.Node]bool{}
	}
	a.ownFP32.seen[n] = true
	if cl == perf.ClassConv || cl == perf.ClassWinograd {
		a.ownFP32.conv++
	} else {
		a.ownFP32.gemm++
	}
}

// tf32Warning says when a model priced at its own fp32 runs its
// convolutions or GEMMs at IEEE fp32 where the runtime, left at its
// defaults, would let them use TF32 tensor cores on this GPU
// (hwdb.Runtime.TF32Conv, TF32GEMM): the estimate is of the stricter
// math, and --dtype tf32 prices the other.
func (a *analyzer) tf32Warning() {
	rt := a.runtime
	if rt == nil || a.gpu.PeakFor(hwdb.TF32Tensor) == 0 {
		return
	}
	var what []string
	if rt.TF32Conv > 0 && a.ownFP32.conv > 0 {
		what = append(what, fmt.Sprintf("%d convolution(s)", a.ownFP32.conv))
	}
	if rt.TF32GEMM > 0 && a.ownFP32.gemm > 0 {
		what = append(what, fmt.Sprintf("%d GEMM-like node(s)", a.ownFP32.gemm))
	}
	if len(what) == 0 {
		return
	}
	a.warnf("%s priced at IEEE fp32 (the model's own type), but %s at its defaults lets them run as TF32 on %s: --dtype tf32 prices that",
		strings.Join(what, " and "), rt.Name, a.gpu.Name)
}
