package cost

import (
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/internal/detmath"
	"github.com/onnxcost/onnxcost/ir"
)

// perElem is a rule's arithmetic: flops and transcendentals per input
// element, per output element and per row (the normalised axis' outer
// count: one per softmax row or layer-norm instance).
type perElem struct {
	inFLOPs, inTrans   float64
	outFLOPs, outTrans float64
	rowFLOPs, rowTrans float64
}

// reductionOps: 1 flop per input element plus the listed extras.
var reductionOps = map[string]perElem{
	"ReduceSum":       {inFLOPs: 1},
	"ReduceMax":       {inFLOPs: 1},
	"ReduceMin":       {inFLOPs: 1},
	"ReduceProd":      {inFLOPs: 1},
	"ArgMax":          {inFLOPs: 1},
	"ArgMin":          {inFLOPs: 1},
	"ReduceMean":      {inFLOPs: 1, outFLOPs: 1},                          // + divide per output
	"ReduceL1":        {inFLOPs: 2},                                       // abs, add
	"ReduceSumSquare": {inFLOPs: 2},                                       // square, add
	"ReduceL2":        {inFLOPs: 2, outFLOPs: 1, outTrans: 1},             // square, add; sqrt per output
	"ReduceLogSum":    {inFLOPs: 1, outFLOPs: 1, outTrans: 1},             // add; log per output
	"ReduceLogSumExp": {inFLOPs: 3, inTrans: 1, outFLOPs: 2, outTrans: 1}, // max-subtract, exp, add; log, add max back
	"CumSum":          {inFLOPs: 1},
}

// normOps are normalisations and softmax-like ops; rows are counted over
// the op's axis (see rowsOf).
var normOps = map[string]perElem{
	// max (1), subtract (1), exp (1), sum (1) per element; one divide per
	// element is folded into a multiply by the reciprocal: 4 flops + 1 exp
	// per element, + 1 reciprocal per row.
	"Softmax":    {inFLOPs: 4, inTrans: 1, rowFLOPs: 1},
	"LogSoftmax": {inFLOPs: 4, inTrans: 1, rowFLOPs: 1, rowTrans: 1},
	"Hardmax":    {inFLOPs: 1},
	// Inference BatchNorm: scale and shift folded per channel: 2 flops per element.
	"BatchNormalization": {inFLOPs: 2},
	// Mean (1), variance (subtract, square, add: 3), normalise (subtract,
	// multiply: 2), scale and shift (2) = 8 per element; 1 rsqrt per row.
	"LayerNormalization":        {inFLOPs: 8, rowFLOPs: 1, rowTrans: 1},
	"InstanceNormalization":     {inFLOPs: 8, rowFLOPs: 1, rowTrans: 1},
	"GroupNormalization":        {inFLOPs: 8, rowFLOPs: 1, rowTrans: 1},
	"MeanVarianceNormalization": {inFLOPs: 6, rowFLOPs: 1, rowTrans: 1},
	// RMSNorm: square, add, multiply by rsqrt, scale = 4; 1 rsqrt per row.
	"RMSNormalization": {inFLOPs: 4, rowFLOPs: 1, rowTrans: 1},
	// ONNX Runtime writes SimplifiedLayerNormalization (RMSNorm) in the
	// default domain too.
	"SimplifiedLayerNormalization": {inFLOPs: 4, rowFLOPs: 1, rowTrans: 1},
	// Lp: |x|^p or x^2, add, divide = 3 per element; root per row.
	"LpNormalization": {inFLOPs: 3, rowFLOPs: 1, rowTrans: 1},
}

func init() {
	for op := range reductionOps {
		RegisterRule("", op, reductionRule)
	}
	for op := range normOps {
		RegisterRule("", op, normRule)
	}
	RegisterRule("", "MaxPool", poolRule(1, 0, 0))
	RegisterRule("", "AveragePool", poolRule(1, 1, 0))
	RegisterRule("", "LpPool", poolRule(2, 1, 1))
	RegisterRule("", "GlobalMaxPool", globalPoolRule(1, 0, 0))
	RegisterRule("", "GlobalAveragePool", globalPoolRule(1, 1, 0))
	RegisterRule("", "GlobalLpPool", globalPoolRule(2, 1, 1))
	RegisterRule("", "LRN", lrnRule)
	RegisterRule("", "TopK", topKRule)
}

func reductionRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassReduction)
	p := reductionOps[n.OpType]
	in, out := c.Numel(n.In(0)), c.Numel(n.Out(0))
	e.FLOPs = p.inFLOPs*in + p.outFLOPs*out
	e.Transcendentals = p.inTrans*in + p.outTrans*out
	if n.OpType != "CumSum" && n.OpType != "ArgMax" && n.OpType != "ArgMin" {
		setReduceRows(&e, n, c)
	}
	return e, nil
}

func normRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassReduction)
	p := normOps[n.OpType]
	in := c.Numel(n.In(0))
	rows := rowsOf(n, c)
	e.FLOPs = p.inFLOPs*in + p.rowFLOPs*rows
	e.Transcendentals = p.inTrans*in + p.rowTrans*rows
	setRows(&e, n, c, n.OpType)
	if n.OpType == "BatchNormalization" && n.AttrInt("training_mode", 0) != 0 {
		// Training mode also computes the batch statistics: mean (1) and
		// variance (3) per element, and the running-stat updates.
		e.FLOPs += 4 * in
		e.Note = "training_mode: batch statistics counted (4 flops per element)"
	}
	return e, nil
}

// rowsOf is the number of independent normalisation groups: the product of
// the dims before the op's axis (Softmax, LayerNorm, RMSNorm), N*C for
// instance norm, N*groups for group norm, N*C for BatchNorm (unused).
func rowsOf(n *ir.Node, c *RuleCtx) float64 {
	dims, ok := c.Dims(n.In(0))
	if !ok || len(dims) == 0 {
		return 0
	}
	switch n.OpType {
	case "InstanceNormalization", "MeanVarianceNormalization":
		if len(dims) >= 2 {
			return dims[0] * dims[1]
		}
		return dims[0]
	case "GroupNormalization":
		return dims[0] * float64(max(n.AttrInt("num_groups", 1), 1))
	case "BatchNormalization", "Hardmax":
		return 0
	}
	axis, ok := normAxis(n, c, len(dims))
	if !ok {
		return 0
	}
	if n.OpType == "LpNormalization" {
		// Lp normalises along one axis: rows = elements / that axis' size.
		if axis < int64(len(dims)) && dims[axis] > 0 {
			return prod(dims) / dims[axis]
		}
		return 0
	}
	return prod(dims[:axis])
}

// normAxis is the axis a Softmax, LayerNorm, RMSNorm or LpNormalization
// node normalises from (along, for Lp) in an input of the given rank, made
// non-negative; false when it lies outside [0, rank].
func normAxis(n *ir.Node, c *RuleCtx, rank int) (int64, bool) {
	def := int64(-1)
	if (n.OpType == "Softmax" || n.OpType == "LogSoftmax") && c.Opset > 0 && c.Opset < 13 {
		def = 1 // before opset 13 Softmax flattened to 2-D at axis (default 1)
	}
	axis := n.AttrInt("axis", def)
	if axis < 0 {
		axis += int64(rank)
	}
	return axis, axis >= 0 && axis <= int64(rank)
}

// poolRule: per output element, kernel-size operations of cost perTap
// (compare for max, add for average, pow+add for Lp), plus perOut
// operations (the divide of an average, the root of Lp, outTrans of them
// transcendental).
func poolRule(perTap, perOut, outTrans float64) Rule {
	return func(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
		e := kernel(n, c, perf.ClassReduction)
		out := c.Numel(n.Out(0))
		k, ok := n.AttrInts("kernel_shape")
		if !ok {
			c.Warnf("no kernel_shape attribute; pooling work not counted")
			return e, nil
		}
		taps := 1.0
		for _, v := range k {
			taps *= float64(max(v, 0))
		}
		e.FLOPs = out * (perTap*taps + perOut)
		e.Transcendentals = out * outTrans
		return e, nil
	}
}

// globalPoolRule: every input element is visited once.
func globalPoolRule(perIn, perOut, outTrans float64) Rule {
	return func(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
		e := kernel(n, c, perf.ClassReduction)
		in, out := c.Numel(n.In(0)), c.Numel(n.Out(0))
		e.FLOPs = perIn*in + perOut*out
		e.Transcendentals = outTrans * out
		return e, nil
	}
}

// lrnRule: per element, a window of size squares and adds (2*size), then
// bias, pow and divide (3, the pow transcendental).
func lrnRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassReduction)
	in := c.Numel(n.In(0))
	size := float64(max(n.AttrInt("size", 1), 1))
	e.FLOPs = in * (2*size + 3)
	e.Transcendentals = in
	return e, nil
}

// topKRule: a heap selection, about log2(k) comparisons per input element.
func topKRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassReduction)
	in := c.Numel(n.In(0))
	k := 1.0
	if v := n.In(1); v != nil && v.Const != nil && len(v.Const.Ints) == 1 {
		k = float64(max(v.Const.Ints[0], 1))
	} else if n.In(1) == nil {
		k = float64(max(n.AttrInt("k", 1), 1)) // opset 1-9 attribute
	}
	e.FLOPs = in * max(1, detmath.Log2(k))
	return e, nil
}
