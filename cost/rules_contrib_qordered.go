package cost

import (
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
)

// Cost rules for onnxruntime's QOrdered ops (ir/ops_contrib_qordered.go),
// each one kernel at int8 (integerQuantOp) with the layout change inside
// it:
//
//	QuantizeWithOrder    QuantizeLinear's 3 flops an element
//	DequantizeWithOrder  DequantizeLinear's 2
//	QOrderedMatMul       MatMul's count over A and B, + 1 an output for a
//	                     bias, + 2 for C (scaled and added), + the
//	                     quantize of each output
//	QOrderedGelu         dequantize, Gelu and quantize an element
//	QOrderedLayerNorm.   LayerNormalization's count, + the dequantize of
//	                     each element read and the quantize of each written

func init() {
	RegisterRule(msDomain, "QuantizeWithOrder", elementwiseAs("QuantizeLinear"))
	RegisterRule(msDomain, "DequantizeWithOrder", elementwiseAs("DequantizeLinear"))
	RegisterRule(msDomain, "QOrderedMatMul", qorderedMatMulRule)
	RegisterRule(msDomain, "QOrderedGelu", qlinearElementwiseRule("Gelu", 1))
	RegisterRule(msDomain, "QOrderedLayerNormalization", func(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
		return quantizedPart(n, c, "LayerNormalization", []*ir.Attribute{ir.IntAttr("axis", n.AttrInt("axis", -1))})
	})
}

// elementwiseAs is one elementwise kernel at op's count an output element.
func elementwiseAs(op string) Rule {
	return func(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
		e := kernel(n, c, perf.ClassElementwise)
		f, tr, _ := OpCount(op)
		out := c.Numel(n.Out(0))
		e.FLOPs, e.Transcendentals = f*out, tr*out
		return e, nil
	}
}

func qorderedMatMulRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e, err := matmulRule(0, 2)(n, c)
	if err != nil {
		return e, err
	}
	_, q := quantCounts()
	per := q
	if n.In(5) != nil {
		per++
	}
	if n.In(6) != nil {
		per += 2
	}
	e.FLOPs += per * c.Numel(n.Out(0))
	return e, nil
}
