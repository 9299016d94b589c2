package cost

import (
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
)

// onnxruntime's Inverse and IsAllFinite (ir/ops_contrib_linalg.go).
func init() {
	RegisterRule(msDomain, "Inverse", inverseRule)
	RegisterRule(msDomain, "IsAllFinite", isAllFiniteRule)
}

// inverseRule: an N×N inverse by LU factorisation (2N³/3 FLOPs) and the
// inverse from the factors (4N³/3) is 2N³ FLOPs a matrix; one batched
// kernel, priced as a reduction (its triangular solves are latency-bound
// rows, not a GEMM's tiles).
func inverseRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassReduction)
	side, ok := c.Dim(n.In(0), -1)
	if ok && side > 0 {
		e.FLOPs = 2 * side * c.Numel(n.In(0)) // numel = matrices · N²
	}
	return e, nil
}

// isAllFiniteRule: one check an element of every input, reduced to one
// bool in a kernel.
func isAllFiniteRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassReduction)
	for _, v := range n.Inputs {
		e.FLOPs += c.Numel(v)
	}
	return e, nil
}
