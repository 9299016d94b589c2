package passes

import (
	"math"

	"github.com/onnxcost/onnxcost/ir"
)

// SDPA attention: an export of torch.nn.functional.scaled_dot_product_attention.
// torch.onnx's symbolic for it (symbolic_opset14.py, and onnxscript's
// torchlib alike) writes the softmax scale as its square root on both
// operands, "for stability":
//
//	S = MatMul(Mul(Q, √s), Mul(Transpose(K), √s))  -> [Add(mask)] -> Softmax -> MatMul(., V)
//
// an explicit attention module does not (it divides the scores, or Q,
// once). Eager PyTorch runs such a call as one kernel (its flash or
// memory-efficient SDPA backend), so the eager plan fuses exactly these
// blocks and leaves a hand-written q·kᵀ, softmax, ·v to its three kernels.
// A boolean mask's export (Where(IsNaN(P), 0, P) after the softmax) is
// not matched: those blocks stay unfused.
func fuseAttentionSDPA(g *ir.Graph) (bool, error) {
	return runMatcher(g, softmaxOps, isSoftmaxNode, matchAttentionSDPA)
}

// matchAttentionSDPA matches the SDPA export around Softmax sm: the
// scores come unscaled from a MatMul of two constant Muls by the same
// factor, each read only by it; Kᵀ's Transpose is absorbed when only the
// Mul reads it. The fused scale is the product, applied to Q.
func matchAttentionSDPA(g *ir.Graph, sm *ir.Node) (Fusion, bool) {
	m := attnMatch{sm: sm}
	if !m.matchSoftmaxScores(g) || m.scale != nil {
		return Fusion{}, false
	}
	qm, km := producerOf(m.qk.In(0)), producerOf(m.qk.In(1))
	if !isOp(qm, "Mul") || !isOp(km, "Mul") || qm == km ||
		onlyUse(g, m.qk.In(0)) != m.qk || onlyUse(g, m.qk.In(1)) != m.qk {
		return Fusion{}, false
	}
	q, cq, okq := constOperand(qm)
	kt, ck, okk := constOperand(km)
	if !okq || !okk || !(cq > 0) || math.Abs(cq-ck) > 1e-6*cq {
		return Fusion{}, false
	}
	m.pre, m.kScale, m.scaleOn, m.scaleVal, m.q, m.k = qm, km, "q", cq*ck, q, kt
	if t := producerOf(kt); isOp(t, "Transpose") && onlyUse(g, kt) == km && t.In(0) != nil {
		m.kT, m.k = t, t.In(0)
	}
	return m.finish(g)
}
