package cost

import (
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// TestEveryInferredOpHasRule: every op shape inference supports has a cost
// rule or is on the documented NoCostRule list (reported as unsupported).
func TestEveryInferredOpHasRule(t *testing.T) {
	for _, s := range ir.Ops() {
		k := ir.QualifiedOp(s.Domain, s.Name)
		if s.Domain == "" && s.Name == "Constant" {
			continue // handled by Analyze itself: no run-time cost
		}
		_, listed := NoCostRule[k]
		if LookupRule(s.Domain, s.Name) == nil && !listed {
			t.Errorf("op %s has a shape rule but no cost rule and is not on NoCostRule", k)
		}
		if LookupRule(s.Domain, s.Name) != nil && listed {
			t.Errorf("op %s has a cost rule and is also on NoCostRule", k)
		}
	}
}

// TestNoCostRuleReasons: every entry says why.
func TestNoCostRuleReasons(t *testing.T) {
	for k, why := range NoCostRule {
		if why == "" {
			t.Errorf("NoCostRule[%s] has no reason", k)
		}
	}
}
