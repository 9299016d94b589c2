package cost

import (
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
)

// onnxruntime's fused dropouts, complex products and Gemma's rotary
// embedding (ir/ops_contrib_elementwise.go): one elementwise kernel each.
func init() {
	RegisterRule(msDomain, "BiasDropout", biasDropoutRule)
	RegisterRule(msDomain, "BitmaskBiasDropout", biasDropoutRule)
	// BitmaskDropout takes Dropout's inputs (data, ratio, training_mode)
	// and, like it, is the identity at inference unless its mask is used.
	RegisterRule(msDomain, "BitmaskDropout", dropoutRule)
	RegisterRule(msDomain, "ComplexMul", complexMulRule)
	RegisterRule(msDomain, "ComplexMulConj", complexMulRule)
	RegisterRule(msDomain, "GemmaRotaryEmbedding", gemmaRotaryRule)
}

// gemmaRotaryRule: one kernel whose thread per q element takes the sine
// and cosine of its emb element (recomputed for every head) and writes
// q·cos + q_rot·sin and k·cos + k_rot·sin: 6 FLOPs and 2
// transcendentals per q element.
func gemmaRotaryRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassElementwise)
	q := c.Numel(n.In(1))
	e.FLOPs = 6 * q
	e.Transcendentals = 2 * q
	return e, nil
}

// biasDropoutRule: data + bias (+ residual) is a kernel at inference too;
// in training (training_mode, input 4, a true constant, and ratio, input
// 3, not a constant 0) the kernel also draws, compares and scales, and
// writes its mask (bool, or a bit per element for BitmaskBiasDropout).
func biasDropoutRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassElementwise)
	perElem := 1.0 // + bias
	if n.In(2) != nil {
		perElem++ // + residual
	}
	if dropoutTrains(n.In(3), n.In(4)) {
		perElem += 3 // draw, compare, scale
	}
	e.FLOPs = perElem * c.Numel(n.Out(0))
	return e, nil
}

// complexMulRule: a complex product is 4 multiplies and 2 adds per
// (real, imaginary) pair of the output, 3 FLOPs per output float.
func complexMulRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassElementwise)
	e.FLOPs = 3 * c.Numel(n.Out(0))
	return e, nil
}
