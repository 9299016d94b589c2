package passes

import (
	"slices"

	"github.com/onnxcost/onnxcost/ir"
)

// Head-layout absorption for attention whose heads are already split
// upstream (LLaMA: Reshape to [B, L, H, d], then the rotary embedding on
// that layout, then Transposes to [B, H, L, d] and Kᵀ, with grouped-query
// attention's Unsqueeze of K and V to [B, KVH, 1, ...]). The Transposes
// are copy kernels between the rotary kernel and the attention; the
// attention kernel can read [B, L, H, d] with other strides and write its
// result in the layout the output projection wants.
//
//	Q' = Unsqueeze?(Transpose(Q, pq))   K' = Unsqueeze?(Transpose(K, pk))   V' = Unsqueeze?(Transpose(V, pv))
//	O  = Transpose(FusedAttention(Q', K', V', ...), po)
//	  -> FusedAttention(Q, K, V, ...){q_perm=pq, q_unsq, k_transposed=1, k_perm=pk, k_unsq, v_perm, v_unsq, o_perm=po}
//
// (ir.AttentionLayout states the contract.) Each piece is optional; a
// node is rewritten when at least one Transpose is absorbed. Only a
// FusedAttention without num_heads (its heads are not packed) and with
// no layout attribute yet is a start; passes/attention_heads.go and
// passes/attention_seqfirst.go run first, so their packed forms win.
// Guards: every absorbed intermediate is read only by the next step and
// is not a graph output; Unsqueeze axes are constants; Kᵀ already
// absorbed by fuse-attention (k_transposed) is left as it is.
func fuseAttentionLayout(g *ir.Graph) (bool, error) {
	return runMatcher(g, attentionOps, func(n *ir.Node) bool {
		if !ir.IsFused(n, ir.OpFusedAttention) || n.Attr(ir.KeyNumHeads) != nil || ir.QKVPacked(n) {
			return false
		}
		for _, k := range []string{ir.KeyQPerm, ir.KeyVPerm, ir.KeyOPerm, ir.KeyQUnsq, ir.KeyKUnsq, ir.KeyVUnsq} {
			if n.Attr(k) != nil {
				return false
			}
		}
		return !headSplitPending(n)
	}, matchAttentionLayout)
}

// headSplitPending reports whether attention a has the head split that
// passes/attention_heads.go or passes/attention_seqfirst.go absorb (Q a
// head-split Transpose of a Reshape of a rank-3 projection, Kᵀ's
// head-split transpose already absorbed) although they have not matched
// yet: with a symbolic batch the merge Transpose also feeds the Shape of a
// dynamic Reshape until the batch is bound and cleanup folds it. Those
// passes absorb the Reshapes too; taking the Transposes here would block
// them, and an `optimize`d model re-read at a bound batch would keep views
// the in-memory plan drops.
func headSplitPending(a *ir.Node) bool {
	if a.AttrInt("k_transposed", 0) != 1 || !(permIs(a, "k_perm", kHeadPerm) || permIs(a, "k_perm", seqKPerm)) {
		return false
	}
	t := producerOf(a.In(0))
	if !isOp(t, "Transpose") || !(permIs(t, "perm", headPerm) || permIs(t, "perm", seqHeadPerm)) {
		return false
	}
	r := producerOf(t.In(0))
	return isOp(r, "Reshape") && r.In(0) != nil && r.In(0).Shape.Ranked && r.In(0).Shape.Rank() == 3
}

// layoutSteps is what was absorbed in front of one attention input.
type layoutSteps struct {
	t, u  *ir.Node // the Transpose and the Unsqueeze (nil when absent)
	in    *ir.Value
	perm  []int64
	axes  []int64
	found bool
}

// viewChain walks back from attention input x (read only by a) through an
// optional Unsqueeze to a Transpose; found is false without the Transpose.
func viewChain(g *ir.Graph, a *ir.Node, x *ir.Value) layoutSteps {
	if onlyUse(g, x) != a || !floatTensor(x) {
		return layoutSteps{}
	}
	var s layoutSteps
	v := x
	if u := producerOf(v); isOp(u, "Unsqueeze") {
		axes, ok := unsqueezeAxes(u)
		if !ok || onlyUse(g, u.In(0)) != u {
			return layoutSteps{}
		}
		s.u, s.axes, v = u, axes, u.In(0)
	}
	t := producerOf(v)
	if !isOp(t, "Transpose") || t.In(0) == nil || !floatTensor(t.In(0)) {
		return layoutSteps{}
	}
	perm, ok := t.AttrInts("perm")
	if !ok || len(perm) != t.In(0).Shape.Rank() {
		return layoutSteps{}
	}
	s.t, s.in, s.perm, s.found = t, t.In(0), perm, true
	return s
}

// unsqueezeAxes reads an Unsqueeze's axes (input from opset 13, attribute
// before), normalised to non-negative and sorted, as ToHeadLayout inserts
// them.
func unsqueezeAxes(u *ir.Node) ([]int64, bool) {
	var axes []int64
	if t := ir.Known(u.In(1)); t != nil {
		axes = slices.Clone(t.Ints)
	} else if a, ok := u.AttrInts("axes"); ok && u.In(1) == nil {
		axes = slices.Clone(a)
	} else {
		return nil, false
	}
	r := int64(u.Out(0).Shape.Rank())
	for i, a := range axes {
		if a < 0 {
			axes[i] = a + r
		}
		if axes[i] < 0 || axes[i] >= r {
			return nil, false
		}
	}
	slices.Sort(axes)
	return axes, true
}

func matchAttentionLayout(g *ir.Graph, a *ir.Node) (Fusion, bool) {
	if len(a.Outputs) != 1 {
		return Fusion{}, false
	}
	q := viewChain(g, a, a.In(0))
	var k layoutSteps
	if a.AttrInt("k_transposed", 0) != 1 {
		k = viewChain(g, a, a.In(1))
	}
	v := viewChain(g, a, a.In(2))
	var to *ir.Node
	if t := onlyUse(g, a.Out(0)); isOp(t, "Transpose") && t.In(0) == a.Out(0) && len(t.Outputs) == 1 && floatTensor(t.Out(0)) {
		if p, ok := t.AttrInts("perm"); ok && len(p) == a.Out(0).Shape.Rank() {
			to = t
		}
	}
	if !q.found && !k.found && !v.found && to == nil {
		return Fusion{}, false
	}
	if (q.found && (q.in == k.in || q.in == v.in)) || (k.found && k.in == v.in) {
		return Fusion{}, false // one tensor read as two operands: keep it simple
	}
	var nodes []*ir.Node
	ins := slices.Clone(a.Inputs)
	attrs := carriedAttrs(a, "k_transposed")
	for i, s := range []struct {
		steps      layoutSteps
		perm, unsq string
	}{{q, ir.KeyQPerm, ir.KeyQUnsq}, {k, ir.KeyKPerm, ir.KeyKUnsq}, {v, ir.KeyVPerm, ir.KeyVUnsq}} {
		if !s.steps.found {
			continue
		}
		nodes = append(nodes, s.steps.t)
		if s.steps.u != nil {
			nodes = append(nodes, s.steps.u)
			attrs = append(attrs, intsAttr(s.unsq, s.steps.axes))
		}
		ins[i] = s.steps.in
		attrs = append(attrs, intsAttr(s.perm, s.steps.perm))
	}
	if k.found || a.AttrInt("k_transposed", 0) == 1 {
		attrs = append(attrs, ir.IntAttr("k_transposed", 1))
	}
	nodes = append(nodes, a)
	out := a.Out(0)
	if to != nil {
		p, _ := to.AttrInts("perm")
		attrs = append(attrs, intsAttr(ir.KeyOPerm, p))
		nodes = append(nodes, to)
		out = to.Out(0)
	}
	// The attention or its output Transpose is last in graph order, as
	// Fusion.Apply needs (it places the new node where the last one was).
	attrs = append(attrs, newParts(ins, []*ir.Value{out}, nodes...).attrs()...)
	return Fusion{Nodes: nodes, OpType: ir.OpFusedAttention, Inputs: ins, Outputs: []*ir.Value{out}, Attrs: attrs}, true
}
