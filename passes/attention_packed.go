package passes

import (
	"github.com/onnxcost/onnxcost/ir"
)

// Packed Q|K|V absorption (GPT-2's c_attn, as TensorRT's and
// onnxruntime's fused attention read it): one projection writes
// [B, L, 3·D] and a Split cuts it into Q, K and V along the last axis.
// The Split is one copy kernel; the attention kernel can index the packed
// tensor directly.
//
//	Q, K, V = Split(P, last axis, three equal parts)
//	FusedAttention(Q, K, V, ...){num_heads}
//	  -> FusedAttention(P, P, P, ...){num_heads, qkv_packed = 1}
//
// Only a FusedAttention already in the packed [B, L, H·d] layout
// (passes/attention_heads.go) is rewritten: there Q, K and V are exactly
// the Split's outputs, in order, each read only by the attention.
func fuseAttentionPacked(g *ir.Graph) (bool, error) {
	return runMatcher(g, func(n *ir.Node) bool {
		return ir.IsFused(n, ir.OpFusedAttention) && n.Attr(ir.KeyNumHeads) != nil && !ir.QKVPacked(n)
	}, matchAttentionPacked)
}

func matchAttentionPacked(g *ir.Graph, a *ir.Node) (Fusion, bool) {
	sp := producerOf(a.In(0))
	if !isOp(sp, "Split") || len(sp.Outputs) != 3 {
		return Fusion{}, false
	}
	for i := 0; i < 3; i++ {
		if a.In(i) != sp.Out(i) || onlyUse(g, sp.Out(i)) != a {
			return Fusion{}, false
		}
	}
	p := sp.In(0)
	if !floatTensor(p) || !lastAxis(sp.AttrInt("axis", 0), p.Shape.Rank()) {
		return Fusion{}, false
	}
	last := p.Shape.Dims[p.Shape.Rank()-1]
	if !last.IsKnown() || last.Value%3 != 0 {
		return Fusion{}, false
	}
	third := last.Value / 3
	if sizes, ok := splitSizes(sp); ok {
		if len(sizes) != 3 || sizes[0] != third || sizes[1] != third || sizes[2] != third {
			return Fusion{}, false
		}
	} else if sp.In(1) != nil || sp.Attr("split") != nil {
		return Fusion{}, false // sizes given but not constant
	}
	for i := 0; i < 3; i++ {
		if !sameType(sp.Out(i), sp.Out(0)) {
			return Fusion{}, false
		}
	}
	nodes := []*ir.Node{sp, a}
	pts := &parts{}
	pts.add(sp)
	pts.add(a)
	attrs := ownAttrs(a)
	attrs = append(attrs, ir.IntAttr(ir.KeyQKVPacked, 1))
	ins := append([]*ir.Value{p, p, p}, a.Inputs[3:]...)
	outs := []*ir.Value{a.Out(0)}
	attrs = append(attrs, pts.attrs(ins, outs)...)
	return Fusion{Nodes: nodes, OpType: ir.OpFusedAttention, Inputs: ins, Outputs: outs, Attrs: attrs}, true
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
