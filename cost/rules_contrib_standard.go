package cost

import (
	"fmt"

	"github.com/onnxcost/onnxcost/ir"
)

// The com.microsoft twins of standard ops (ir/ops_contrib_standard.go)
// cost what the standard op does at the opset whose semantics they have.
func init() {
	for _, op := range []string{"QuantizeLinear", "DequantizeLinear", "Trilu", "GatherND", "Pad", "GridSample"} {
		RegisterRule(msDomain, op, msStandardRule(op))
	}
}

// msStandardRule runs the standard op's rule with the context's opset
// set to the twin's (ir.MSStandardOpset).
func msStandardRule(op string) Rule {
	return func(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
		r := LookupRule("", op)
		if r == nil {
			return NodeEstimate{}, fmt.Errorf("no rule for the standard %s", op)
		}
		saved := c.Opset
		c.Opset = ir.MSStandardOpset(op)
		e, err := r(n, c)
		c.Opset = saved
		return e, err
	}
}
