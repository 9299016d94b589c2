package cost

import (
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
)

func init() { RegisterRule("com.microsoft", "QLinearAdd", qlinearAddRule) }

// qlinearAddRule: ONNX Runtime's int8 residual add (passes/qdq_add.go) as
// one elementwise kernel over 8-bit tensors: per output element the two
// dequantizations, the add and the requantization it replaces.
//
//	flops = numel(C) · (2·DequantizeLinear + Add + QuantizeLinear)   (2+2 + 1 + 3 = 8)
//	bytes = A, B, C at one byte per element, plus the scalar scales and zero points
func qlinearAddRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassElementwise)
	dq, _, _ := OpCount("DequantizeLinear")
	add, _, _ := OpCount("Add")
	q, _, _ := OpCount("QuantizeLinear")
	e.FLOPs = (2*dq + add + q) * c.Numel(n.Out(0))
	return e, nil
}
