package cost

import (
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
)

func init() {
	RegisterRule(msDomain, "EngramGate", engramGateRule)
	// ExpandDims is Unsqueeze: a view.
	RegisterRule(msDomain, "ExpandDims", viewRule)
}

// engramGateRule counts EngramGate's maths (ir/ops_contrib_engram.go) as
// one fused kernel over key's n elements in r = B·S·hc rows of H:
// RMSNorm of key and of query (4 FLOPs an element and 1 and an rsqrt a
// row each, as RMSNormalization counts), their dot product (2 an
// element) scaled by 1/sqrt(H) (1 a row), the gate's sign, abs, max and
// sigmoid (4 a row, a sqrt and an exp), and gate · value (1 an element);
// the normed output adds another RMSNorm.
func engramGateRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassReduction)
	elems := c.Numel(n.In(0))
	width, _ := c.Dim(n.In(0), -1)
	rows := 0.0
	if width > 0 {
		rows = elems / float64(width)
	}
	e.FLOPs = 11*elems + 7*rows
	e.Transcendentals = 4 * rows
	if n.Out(1) != nil {
		e.FLOPs += 4*elems + rows
		e.Transcendentals += rows
	}
	return e, nil
}
