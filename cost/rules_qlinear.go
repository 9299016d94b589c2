package cost

import (
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
)

// ONNX Runtime's QOperator-format integer ops (com.microsoft; schemas in
// ir/ops_contrib_qlinear.go): each is Dequantize → the float op →
// Quantize in one kernel over 8-bit tensors, the form ORT's static
// quantizer writes and the ONNX Model Zoo's int8 models use. The
// elementwise and pooling ones count the arithmetic of the graph they
// replace, as QLinearAdd always has: per input element read a dequantize
// (subtract the zero point, multiply by the scale), the float op's own
// count, per output element a quantize. The GEMM-like ones count their
// multiply-accumulates, as QLinearConv and QLinearMatMul do: their
// requantizing epilogue is a few operations per output against K
// multiply-adds. Bytes are the tensors at their 8-bit size; scales and
// zero points are scalars.

func init() {
	RegisterRule(msDomain, "QLinearAdd", qlinearElementwiseRule("Add", 2))
	RegisterRule(msDomain, "QLinearMul", qlinearElementwiseRule("Mul", 2))
	RegisterRule(msDomain, "QLinearSigmoid", qlinearElementwiseRule("Sigmoid", 1))
	RegisterRule(msDomain, "QLinearLeakyRelu", qlinearElementwiseRule("LeakyRelu", 1))
	RegisterRule(msDomain, "QLinearWhere", qlinearElementwiseRule("Where", 2))
	RegisterRule(msDomain, "QLinearSoftmax", qlinearSoftmaxRule)
	RegisterRule(msDomain, "QLinearAveragePool", qlinearPartRule("AveragePool"))
	RegisterRule(msDomain, "QLinearGlobalAveragePool", qlinearPartRule("GlobalAveragePool"))
	RegisterRule(msDomain, "QLinearConcat", qlinearConcatRule)
	RegisterRule(msDomain, "QGemm", gemmRuleAt(0, 6))
	RegisterRule(msDomain, "QLinearConv", msQLinearConvRule)
	// MaxPool's count does not depend on the layout.
	RegisterRule(msDomain, "NhwcMaxPool", poolRule(1, 0, 0))
}

// quantCounts are DequantizeLinear's and QuantizeLinear's FLOPs per element.
func quantCounts() (dq, q float64) {
	dq, _, _ = OpCount("DequantizeLinear")
	q, _, _ = OpCount("QuantizeLinear")
	return dq, q
}

// qlinearElementwiseRule: Y = quantize(op(dequantize(each of operands
// quantized inputs))), one elementwise kernel (onnxruntime computes the
// unary ones through a 256-entry table; the count is the arithmetic it
// stands for).
//
//	flops = numel(Y) · (operands·dequantize + op + quantize)
//	        (QLinearAdd: 2·2 + 1 + 3 = 8; QLinearSigmoid: 2 + 3 + 3, one exp;
//	        QLinearWhere: X and Y dequantized, the select 1)
func qlinearElementwiseRule(op string, operands float64) Rule {
	return func(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
		e := kernel(n, c, perf.ClassElementwise)
		dq, q := quantCounts()
		f, tr, _ := OpCount(op)
		out := c.Numel(n.Out(0))
		e.FLOPs = (operands*dq + f + q) * out
		e.Transcendentals = tr * out
		return e, nil
	}
}

// qlinearPartRule runs the float op's rule on a detached node over X
// (quantizedPart). Pooling counts do not depend on the layout, so
// channels_last needs nothing but leaving out.
func qlinearPartRule(op string) Rule {
	return func(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
		return quantizedPart(n, c, op, ir.AttrsWithout(n.Attrs, "channels_last"))
	}
}

// quantizedPart is the estimate of float op (with attrs) on n's X, plus
// the dequantize of every element read and the quantize of every element
// written; the scales and zero points (inputs 1-4) are read too.
func quantizedPart(n *ir.Node, c *RuleCtx, op string, attrs []*ir.Attribute) (NodeEstimate, error) {
	part := &ir.Node{Name: n.Name, OpType: op, Inputs: n.Inputs[:1], Outputs: n.Outputs, Attrs: attrs}
	e, err := c.Estimate(part)
	if err != nil {
		return e, err
	}
	addQuantArith(c, &e, c.Numel(n.In(0)), c.Numel(n.Out(0)))
	c.Read(n, &e, 1, 2, 3, 4)
	return e, nil
}

// addQuantArith adds the dequantize of in elements and the quantize of out
// elements to an estimate its part's rule already completed.
func addQuantArith(c *RuleCtx, e *NodeEstimate, in, out float64) {
	dq, q := quantCounts()
	extra := dq*in + q*out
	e.FLOPs += extra
	e.ExecutedFLOPs += extra // Estimate filled it in before these
}

// qlinearSoftmaxRule: Softmax's counts on the axis QLinearSoftmax names
// (its default follows the opset attribute: 1 before 13, -1 from 13),
// plus the dequantize and quantize of every element.
func qlinearSoftmaxRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	def := int64(-1)
	if n.AttrInt("opset", 13) < 13 {
		def = 1
	}
	return quantizedPart(n, c, "Softmax", []*ir.Attribute{ir.IntAttr("axis", n.AttrInt("axis", def))})
}

// qlinearConcatRule: Concat's copy of the data inputs (2, 5, 8, ...), each
// element requantized to Y's scale (a dequantize and a quantize; an input
// already at Y's scale is copied as is, which the count does not know).
func qlinearConcatRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	var xs []*ir.Value
	var params []int
	for i := range n.Inputs {
		if i >= 2 && (i-2)%3 == 0 {
			xs = append(xs, n.In(i))
		} else {
			params = append(params, i)
		}
	}
	part := &ir.Node{Name: n.Name, OpType: "Concat", Inputs: xs, Outputs: n.Outputs, Attrs: n.Attrs}
	e, err := c.Estimate(part)
	if err != nil {
		return e, err
	}
	out := c.Numel(n.Out(0))
	addQuantArith(c, &e, out, out)
	c.Read(n, &e, params...)
	return e, nil
}

// msQLinearConvRule: the standard QLinearConv's count; with channels_last
// the output's channels are its last dim, which the GEMM view is cut by.
func msQLinearConvRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e, err := convRule(0, 3, 8)(n, c)
	if err != nil || n.AttrInt("channels_last", 0) == 0 {
		return e, err
	}
	channelsLastConvView(&e, n, c)
	return e, nil
}

// channelsLastConvView gives a convolution with an NHWC output the
// implicit GEMM convRule gives an NCHW one: M the output pixels, N the
// output channels (the last dim) of a group.
func channelsLastConvView(e *NodeEstimate, n *ir.Node, c *RuleCtx) {
	if yd, ok := c.Dims(n.Out(0)); ok && len(yd) >= 2 && yd[len(yd)-1] > 0 {
		group := float64(max(n.AttrInt("group", 1), 1))
		ch := yd[len(yd)-1]
		e.M = clampInt(c.Numel(n.Out(0)) / ch)
		e.N = clampInt(ch / group)
	}
}
