package passes

import (
	"slices"

	"github.com/onnxcost/onnxcost/ir"
)

// Head-split absorption (TensorRT's fused multi-head attention reads the
// packed projection layout): the Reshape/Transpose that split Q, K and V
// into heads and the Transpose/Reshape that merge the heads after
// attention move into the FusedAttention, which then reads the
// projections' [B, L, H·d] outputs and writes [B, L, H·dv] directly. The
// transposes were one copy kernel each; inside the attention kernel they
// are only a different indexing of the same loads and stores.
//
//	Q4 = Transpose(Reshape(Q, [B,L,H,d]), [0,2,1,3])
//	K4 = Reshape(K, [B,L,H,d])                 (FusedAttention k_perm [0,2,3,1] absorbed Kᵀ)
//	V4 = Transpose(Reshape(V, [B,L,H,dv]), [0,2,1,3])
//	O  = Reshape(Transpose(FusedAttention(Q4, K4, V4, ...), [0,2,1,3]), [B,L,H·dv])
//	  -> FusedAttention(Q, K, V, ...){num_heads=H, q_perm, k_perm, v_perm, o_perm} -> O
//
// Attributes added: num_heads (its presence means the packed layout: the
// inputs are split into num_heads heads along their last axis, then
// permuted by q_perm / k_perm / v_perm; the output is permuted by o_perm,
// then its last two axes merged), q_perm, v_perm, o_perm. k_perm keeps
// its meaning, applied to K's head-split view. The replaced Reshapes and
// Transposes join the part attributes (no arithmetic). Only the complete
// pattern is rewritten, each intermediate read once and not a graph
// output, so the fused node's inputs and output are all in one layout.
func fuseAttentionHeads(g *ir.Graph) (bool, error) {
	return runMatcher(g, attentionOps, func(n *ir.Node) bool {
		return n.Domain == ir.FusedDomain && n.OpType == ir.OpFusedAttention && n.Attr(ir.KeyNumHeads) == nil
	}, matchAttentionHeads)
}

// headPerm is the head-split transpose of Q and V, [B,L,H,d] -> [B,H,L,d],
// and the head-merge transpose of the output (its own inverse).
var headPerm = []int64{0, 2, 1, 3}

// kHeadPerm is Kᵀ's transpose, [B,L,H,d] -> [B,H,d,L].
var kHeadPerm = []int64{0, 2, 3, 1}

// matchAttentionHeads matches the split and merge around attention a.
func matchAttentionHeads(g *ir.Graph, a *ir.Node) (Fusion, bool) {
	if a.AttrInt("k_transposed", 0) != 1 || !permIs(a, "k_perm", kHeadPerm) || len(a.Outputs) != 1 {
		return Fusion{}, false
	}
	split, q, k, v, hq, ok := splitQKV(g, a, headPerm, splitsLastAxis)
	if !ok {
		return Fusion{}, false
	}
	to, ro, o, ho, ok := mergeHeads(g, a.Out(0))
	if !ok || ho != hq {
		return Fusion{}, false
	}
	nodes := append(split, a, to, ro)
	return packedHeadsFusion(a, nodes, hq, q, k, v, o,
		intsAttr("q_perm", headPerm), intsAttr("v_perm", headPerm), intsAttr("o_perm", headPerm)), true
}

// packedHeadsFusion is the rewrite both head-split absorptions make
// (passes/attention_heads.go, passes/attention_seqfirst.go): nodes (the
// splits, attention a, the merge) become one FusedAttention reading the
// packed q, k, v and a's other inputs, writing o, with a's attributes less
// those perms replaces, num_heads = heads and perms; every replaced node
// joins the part attributes (a's own parts flattened; its MatMuls and
// Softmax stay implicit).
func packedHeadsFusion(a *ir.Node, nodes []*ir.Node, heads int64, q, k, v, o *ir.Value, perms ...*ir.Attribute) Fusion {
	ins := append([]*ir.Value{q, k, v}, a.Inputs[3:]...)
	p := newParts(ins, []*ir.Value{o}, nodes...)
	var drop []string
	for _, at := range perms {
		drop = append(drop, at.Name)
	}
	attrs := append(carriedAttrs(a, drop...), ir.IntAttr(ir.KeyNumHeads, heads))
	attrs = append(attrs, perms...)
	attrs = append(attrs, p.attrs()...)
	return Fusion{Nodes: nodes, OpType: ir.OpFusedAttention, Inputs: ins, Outputs: []*ir.Value{o}, Attrs: attrs}
}

// intsAttr is an ints attribute holding a copy of v.
func intsAttr(name string, v []int64) *ir.Attribute {
	return &ir.Attribute{Name: name, Type: ir.AttrInts, Ints: append([]int64(nil), v...)}
}

// splitQKV walks back from attention a's Q, K and V through their head
// splits (walkHeadSplit; Q and V transposed by perm, K's transpose
// already absorbed as Kᵀ): the Reshapes and Transposes in graph order of
// discovery (Q's, K's, V's), the three distinct packed inputs and their
// common head count.
func splitQKV(g *ir.Graph, a *ir.Node, perm []int64, split func(packed, split *ir.Value) (int64, bool)) (nodes []*ir.Node, q, k, v *ir.Value, heads int64, ok bool) {
	var packed [3]*ir.Value
	for i := 0; i < 3; i++ {
		r, t, x, h, ok := walkHeadSplit(g, a, a.In(i), i != 1, perm, split)
		if !ok || (i > 0 && h != heads) {
			return nil, nil, nil, nil, 0, false
		}
		heads, packed[i] = h, x
		nodes = append(nodes, r)
		if t != nil {
			nodes = append(nodes, t)
		}
	}
	q, k, v = packed[0], packed[1], packed[2]
	if q == k || q == v || k == v {
		return nil, nil, nil, nil, 0, false
	}
	return nodes, q, k, v, heads, true
}

// walkHeadSplit walks back from attention input xs (read only by a)
// through a Transpose by perm (when transposed) to the Reshape whose
// input, the packed projection, split recognises; it returns the Reshape,
// the Transpose (nil when not transposed), the packed input and H.
func walkHeadSplit(g *ir.Graph, a *ir.Node, xs *ir.Value, transposed bool, perm []int64, split func(packed, split *ir.Value) (int64, bool)) (r, t *ir.Node, x *ir.Value, heads int64, ok bool) {
	if onlyUse(g, xs) != a || !floatTensor(xs) {
		return nil, nil, nil, 0, false
	}
	v := xs
	if transposed {
		t = producerOf(v)
		if !isOp(t, "Transpose") || !permIs(t, "perm", perm) || onlyUse(g, t.In(0)) != t {
			return nil, nil, nil, 0, false
		}
		v = t.In(0)
	}
	r = producerOf(v)
	if !isOp(r, "Reshape") || r.In(0) == nil {
		return nil, nil, nil, 0, false
	}
	x = r.In(0)
	heads, ok = split(x, v)
	if !ok {
		return nil, nil, nil, 0, false
	}
	return r, t, x, heads, true
}

// mergeHeads follows attention output o4 [B,H,L,dv] through the
// head-merge Transpose and the Reshape to [B,L,H·dv]; it returns them, the
// merged output and H.
func mergeHeads(g *ir.Graph, o4 *ir.Value) (t, r *ir.Node, o *ir.Value, heads int64, ok bool) {
	t = onlyUse(g, o4)
	if !isOp(t, "Transpose") || t.In(0) != o4 || !permIs(t, "perm", headPerm) {
		return nil, nil, nil, 0, false
	}
	r = onlyUse(g, t.Out(0))
	if !isOp(r, "Reshape") || r.In(0) != t.Out(0) || len(r.Outputs) != 1 {
		return nil, nil, nil, 0, false
	}
	o = r.Out(0)
	heads, ok = splitsLastAxis(o, t.Out(0))
	if !ok || !floatTensor(o) || o.DType != o4.DType {
		return nil, nil, nil, 0, false
	}
	return t, r, o, heads, true
}

// splitsLastAxis reports whether split [B,L,H,d] is packed [B,L,H·d] with
// its last axis cut into H heads of d (B and L equal, possibly symbolic;
// H and d known), and returns H.
func splitsLastAxis(packed, split *ir.Value) (int64, bool) {
	if !floatTensor(packed) || !floatTensor(split) || packed.DType != split.DType ||
		packed.Shape.Rank() != 3 || split.Shape.Rank() != 4 {
		return 0, false
	}
	p, s := packed.Shape.Dims, split.Shape.Dims
	if !sameDim(p[0], s[0]) || !sameDim(p[1], s[1]) || !s[2].IsKnown() || !s[3].IsKnown() || !p[2].IsKnown() {
		return 0, false
	}
	h, d := s[2].Value, s[3].Value
	if h <= 0 || d <= 0 || p[2].Value != h*d {
		return 0, false
	}
	return h, true
}

// sameDim: two dims that are the same known size or the same symbol.
func sameDim(a, b ir.Dim) bool {
	return ir.RankedShape(a).Equal(ir.RankedShape(b))
}

// permIs reports whether n's ints attribute name equals want.
func permIs(n *ir.Node, name string, want []int64) bool {
	p, ok := n.AttrInts(name)
	if !ok || len(p) != len(want) {
		return false
	}
	for i := range p {
		if p[i] != want[i] {
			return false
		}
	}
	return true
}

// carriedAttrs returns fused node a's attributes less its part attributes
// (the rewrite records the flattened parts anew), the output dtypes
// (Fusion.Apply writes them) and the names in drop.
func carriedAttrs(a *ir.Node, drop ...string) []*ir.Attribute {
	var out []*ir.Attribute
	for _, at := range a.Attrs {
		switch at.Name {
		case ir.KeyPartOps, ir.KeyPartIn, ir.KeyPartOut, ir.KeyPartInExpr, ir.KeyPartOutExpr, ir.KeyPartArity, ir.KeyOutDTypes:
			continue
		}
		if !slices.Contains(drop, at.Name) {
			out = append(out, at)
		}
	}
	return out
}
