package passes

import (
	"github.com/onnxcost/onnxcost/ir"
)

// Attention fusion (flash-attention style): the scores never reach
// memory. Matched per head-batched block as PyTorch exports it:
//
//	S = MatMul(Q', Kᵀ)            Q' = Q, or Q scaled by a constant (Div/Mul)
//	S' = scale and/or mask S      Div/Mul by a constant; Add(mask) or Where(c, S, fill)
//	P = Softmax(S') over the last axis   (default-domain, or a recognised onnxcost Softmax)
//	P' = P, or Dropout(P) with no mask output used
//	O = MatMul(P', V)
//	  -> FusedAttention(Q, K, V, mask, fill) -> O
//
// Kᵀ's Transpose is absorbed when it feeds only this attention (input 1
// is then its input, in the layout before the transpose; k_perm records
// the permutation). The Q/K/V projections, the head-split
// Reshape/Transposes of Q and V and the output projection stay as they
// are: they are GEMMs and data movement, left to fuse-gemm and cleanup.
//
// Inputs: 0 Q, 1 K (or Kᵀ when no transpose was absorbed), 2 V,
// 3 the mask (Add's addend or Where's condition), 4 Where's fill value.
// Attributes: scale (the multiplier, 1/x for a Div; 0 when none),
// scale_on ("scores", "q" or ""), mask ("add", "where" or ""),
// k_transposed (1 when input 1 is K with k_perm to apply), and the part
// attributes of every replaced node other than the two MatMuls and the
// Softmax, which cost/rules_fused_attn.go counts from the shapes.
// softmax_in_parts is 1 when the Softmax was a recognised decomposition
// whose own parts were flattened into the part attributes.
func fuseAttention(g *ir.Graph) (bool, error) {
	return runMatcher(g, softmaxOps, isSoftmaxNode, matchAnyAttention)
}

// matchAnyAttention matches an export of F.scaled_dot_product_attention
// whole (both of its scale Muls, attention_sdpa.go), else the general
// block.
func matchAnyAttention(g *ir.Graph, sm *ir.Node) (Fusion, bool) {
	if f, ok := matchAttentionSDPA(g, sm); ok {
		return f, true
	}
	return matchAttention(g, sm)
}

// softmaxOps are the op types isSoftmaxNode accepts.
var softmaxOps = []string{"Softmax", ir.OpFusedSoftmax}

// attentionOps is the op type of the passes that rewrite a recognised
// attention again.
var attentionOps = []string{ir.OpFusedAttention}

// isSoftmaxNode reports whether n is a default-domain Softmax or a
// recognised onnxcost Softmax.
func isSoftmaxNode(n *ir.Node) bool {
	return isOp(n, "Softmax") || ir.IsFused(n, ir.OpFusedSoftmax)
}

// attnMatch collects the pieces of one attention block.
type attnMatch struct {
	pre, kT, qk, scale, mask, sm, drop, pv *ir.Node
	// kScale is the constant Mul of Kᵀ in an export of
	// F.scaled_dot_product_attention (attention_sdpa.go); nil otherwise.
	kScale                *ir.Node
	q, k, v, maskIn, fill *ir.Value
	scaleVal              float64
	scaleOn, maskOp       string
}

// matchAttention matches the block around Softmax sm.
func matchAttention(g *ir.Graph, sm *ir.Node) (Fusion, bool) {
	m := attnMatch{sm: sm}
	if !m.matchSoftmaxScores(g) {
		return Fusion{}, false
	}
	m.matchQK(g)
	return m.finish(g)
}

// matchSoftmaxScores checks that the softmax normalises the last axis of
// float scores and walks back to their MatMul (matchScores).
func (m *attnMatch) matchSoftmaxScores(g *ir.Graph) bool {
	s := m.sm.In(0)
	return floatTensor(s) && s.Shape.Rank() >= 2 && lastAxisSoftmax(m.sm, s.Shape.Rank()) && m.matchScores(g, s)
}

// finish matches the probabilities' MatMul with V and builds the fusion
// when Q, K, V and the output are float tensors.
func (m *attnMatch) finish(g *ir.Graph) (Fusion, bool) {
	if !m.matchPV(g) {
		return Fusion{}, false
	}
	for _, v := range []*ir.Value{m.q, m.k, m.v, m.pv.Out(0)} {
		if !floatTensor(v) {
			return Fusion{}, false
		}
	}
	return m.fusion(), true
}

// lastAxisSoftmax reports whether sm normalises the last axis of a rank-r
// input. An absent axis attribute means 1 before opset 13 and -1 after;
// the pass cannot see the opset, so it accepts an absent axis only for
// rank 2, where both defaults name the last axis.
func lastAxisSoftmax(sm *ir.Node, r int) bool {
	a := sm.Attr("axis")
	if a == nil {
		return r == 2
	}
	return a.Type == ir.AttrInt && (a.I == -1 || a.I == int64(r-1))
}

// matchScores walks back from the softmax input through at most one
// constant scale and one mask to the Q·Kᵀ MatMul.
func (m *attnMatch) matchScores(g *ir.Graph, s *ir.Value) bool {
	user := m.sm
	for step := 0; step < 3; step++ {
		p := producerOf(s)
		if p == nil || onlyUse(g, s) != user {
			return false
		}
		switch {
		case isOp(p, "MatMul"):
			m.qk = p
			return true
		case (isOp(p, "Div") || isOp(p, "Mul")) && m.scale == nil:
			// A constant scale, before or after the mask.
			x, k, ok := constOperand(p)
			if !ok || k == 0 {
				return false
			}
			m.scale, m.scaleOn, m.scaleVal = p, "scores", k
			if p.OpType == "Div" {
				m.scaleVal = 1 / k
			}
			s, user = x, p
		case isOp(p, "Add") && m.mask == nil && len(p.Inputs) == 2:
			i := scoresOperand(p, 0, 1)
			if i < 0 {
				return false
			}
			m.mask, m.maskOp, m.maskIn = p, "add", p.In(1-i)
			s, user = p.In(i), p
		case isOp(p, "Where") && m.mask == nil && len(p.Inputs) == 3:
			i := scoresOperand(p, 1, 2)
			if i < 0 {
				return false
			}
			m.mask, m.maskOp, m.maskIn, m.fill = p, "where", p.In(0), p.In(3-i)
			s, user = p.In(i), p
		default:
			return false
		}
	}
	return false
}

// scoresOperand picks which of slots a, b of mask node p carries the
// scores: the operand with p's full output shape whose producer is a
// MatMul or a scale; -1 when neither or both are ambiguous in a way the
// pass cannot decide (then a is preferred if it qualifies).
func scoresOperand(p *ir.Node, a, b int) int {
	qualifies := func(i int) bool {
		v := p.In(i)
		if v == nil || !v.Shape.Equal(p.Out(0).Shape) {
			return false
		}
		pr := producerOf(v)
		return isOp(pr, "MatMul") || isOp(pr, "Div") || isOp(pr, "Mul")
	}
	switch {
	case qualifies(a):
		return a
	case qualifies(b):
		return b
	}
	return -1
}

// matchQK takes Q and K from the scores MatMul, absorbing a constant
// pre-scale of Q (when the scores were not scaled) and the transpose of K
// when each feeds only this MatMul.
func (m *attnMatch) matchQK(g *ir.Graph) {
	m.q, m.k = m.qk.In(0), m.qk.In(1)
	if p := producerOf(m.q); m.scale == nil && (isOp(p, "Div") || isOp(p, "Mul")) && onlyUse(g, m.q) == m.qk {
		if x, k, ok := constOperand(p); ok && k != 0 {
			m.pre, m.scaleOn, m.scaleVal, m.q = p, "q", k, x
			if p.OpType == "Div" {
				m.scaleVal = 1 / k
			}
		}
	}
	if t := producerOf(m.k); isOp(t, "Transpose") && onlyUse(g, m.k) == m.qk && t.In(0) != nil {
		m.kT, m.k = t, t.In(0)
	}
}

// matchPV follows the probabilities, through an inference Dropout, to the
// MatMul with V.
func (m *attnMatch) matchPV(g *ir.Graph) bool {
	p := m.sm.Out(0)
	next := onlyUse(g, p)
	if isOp(next, "Dropout") && next.In(0) == p && (next.Out(1) == nil || (len(next.Out(1).Consumers) == 0 && !g.IsGraphOutput(next.Out(1)))) {
		m.drop, p = next, next.Out(0)
		next = onlyUse(g, p)
	}
	if !isOp(next, "MatMul") || next.In(0) != p || next.In(1) == p {
		return false
	}
	m.pv, m.v = next, next.In(1)
	return true
}

// fusion builds the FusedAttention rewrite.
func (m *attnMatch) fusion() Fusion {
	var nodes []*ir.Node
	for _, n := range []*ir.Node{m.pre, m.kT, m.kScale, m.qk, m.scale, m.mask, m.sm, m.drop, m.pv} {
		if n != nil {
			nodes = append(nodes, n)
		}
	}
	// Parts the cost rule does not derive from the shapes: everything but
	// the two MatMuls and a default-domain Softmax.
	ins, outs := trimNil([]*ir.Value{m.q, m.k, m.v, m.maskIn, m.fill}), []*ir.Value{m.pv.Out(0)}
	p := newParts(ins, outs)
	for _, n := range nodes {
		if n == m.qk || n == m.pv || (n == m.sm && n.Domain == "") {
			continue
		}
		p.add(n)
	}
	attrs := []*ir.Attribute{
		ir.FloatAttr("scale", m.scaleVal),
		ir.StringAttr("scale_on", m.scaleOn),
		ir.StringAttr("mask", m.maskOp),
	}
	if m.kT != nil {
		attrs = append(attrs, ir.IntAttr("k_transposed", 1))
		if perm, ok := m.kT.AttrInts("perm"); ok {
			attrs = append(attrs, &ir.Attribute{Name: "k_perm", Type: ir.AttrInts, Ints: perm})
		}
	}
	if m.sm.Domain == ir.FusedDomain {
		attrs = append(attrs, ir.IntAttr("softmax_in_parts", 1))
	}
	attrs = append(attrs, p.attrs()...)
	return Fusion{
		Nodes: nodes, OpType: ir.OpFusedAttention,
		Inputs:  ins,
		Outputs: outs,
		Attrs:   attrs,
	}
}
