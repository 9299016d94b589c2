package passes

import (
	"github.com/onnxcost/onnxcost/ir"
)

// Packed Q|K|V absorption (GPT-2's c_attn and torch.nn.MultiheadAttention's
// in_proj, as TensorRT's and onnxruntime's fused attention read them): one
// projection writes [B, L, 3·D] (or [L, B, 3·D]) and a Split, or three
// Slices, cut it into Q, K and V along the last axis. Each cut is a copy
// kernel; the attention kernel can index the packed tensor directly.
//
//	Q, K, V = Split(P, last axis, three equal parts)  or  Slice(P, [i·D, (i+1)·D)) for i = 0, 1, 2
//	FusedAttention(Q, K, V, ...){num_heads}
//	  -> FusedAttention(P, P, P, ...){num_heads, qkv_packed = 1}
//
// Only a FusedAttention already in the packed [B, L, H·d] layout
// (passes/attention_heads.go, passes/attention_seqfirst.go) is rewritten:
// there Q, K and V are exactly the Split's outputs or the Slices, in
// order, each read only by the attention.
func fuseAttentionPacked(g *ir.Graph) (bool, error) {
	return runMatcher(g, attentionOps, func(n *ir.Node) bool {
		return ir.IsFused(n, ir.OpFusedAttention) && n.Attr(ir.KeyNumHeads) != nil && !ir.QKVPacked(n)
	}, matchAttentionPacked)
}

func matchAttentionPacked(g *ir.Graph, a *ir.Node) (Fusion, bool) {
	p, cut, ok := packedSplit(g, a)
	if !ok {
		return Fusion{}, false
	}
	for i := 0; i < 3; i++ {
		if !sameType(a.In(i), a.In(0)) {
			return Fusion{}, false
		}
	}
	nodes := append(cut, a)
	ins := append([]*ir.Value{p, p, p}, a.Inputs[3:]...)
	outs := []*ir.Value{a.Out(0)}
	attrs := carriedAttrs(a)
	attrs = append(attrs, ir.IntAttr(ir.KeyQKVPacked, 1))
	attrs = append(attrs, newParts(ins, outs, nodes...).attrs()...)
	return Fusion{Nodes: nodes, OpType: ir.OpFusedAttention, Inputs: ins, Outputs: outs, Attrs: attrs}, true
}

// packedSplit finds the packed projection P whose last axis, cut into
// three equal thirds, gives attention a's Q, K and V in order, each read
// only by a. The cut is one Split (GPT-2's c_attn) or three Slices of P
// (torch.nn.MultiheadAttention's in_proj: [0:E], [E:2E], [2E:3E], step 1).
// It returns P and the cutting nodes.
func packedSplit(g *ir.Graph, a *ir.Node) (*ir.Value, []*ir.Node, bool) {
	for i := 0; i < 3; i++ {
		if onlyUse(g, a.In(i)) != a {
			return nil, nil, false
		}
	}
	first := producerOf(a.In(0))
	if first == nil {
		return nil, nil, false
	}
	p := first.In(0)
	if !floatTensor(p) {
		return nil, nil, false
	}
	last := p.Shape.Dims[p.Shape.Rank()-1]
	if !last.IsKnown() || last.Value%3 != 0 {
		return nil, nil, false
	}
	third := last.Value / 3
	switch {
	case isOp(first, "Split") && len(first.Outputs) == 3:
		for i := 0; i < 3; i++ {
			if a.In(i) != first.Out(i) {
				return nil, nil, false
			}
		}
		if !lastAxis(first.AttrInt("axis", 0), p.Shape.Rank()) {
			return nil, nil, false
		}
		if sizes, ok := splitSizes(first); ok {
			if len(sizes) != 3 || sizes[0] != third || sizes[1] != third || sizes[2] != third {
				return nil, nil, false
			}
		} else if first.In(1) != nil || first.Attr("split") != nil {
			return nil, nil, false // sizes given but not constant
		}
		return p, []*ir.Node{first}, true
	case isOp(first, "Slice"):
		var cut []*ir.Node
		for i := int64(0); i < 3; i++ {
			s := producerOf(a.In(int(i)))
			if !isOp(s, "Slice") || s.In(0) != p || len(s.Outputs) != 1 || !lastAxisSlice(s, last.Value, i*third, (i+1)*third) {
				return nil, nil, false
			}
			cut = append(cut, s)
		}
		return p, cut, true
	}
	return nil, nil, false
}

// splitSizes reads a Split's sizes: the split input (opset 13+) or
// attribute (before); ok is false when neither is given as a constant.
func splitSizes(sp *ir.Node) ([]int64, bool) {
	if t := ir.Known(sp.In(1)); t != nil {
		return t.Ints, true
	}
	if s, ok := sp.AttrInts("split"); ok {
		return s, true
	}
	return nil, false
}
