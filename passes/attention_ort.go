package passes

import (
	"github.com/onnxcost/onnxcost/ir"
)

// onnxruntime's online attention fusion (AttentionFusion, at its default
// optimisation level) builds its Attention op from one kind of block only:
// a LayerNormalization with exactly four readers, one Add (the residual)
// and three MatMuls (the Q, K and V projections): the post-LN layer of
// BERT and its kin (onnxruntime/core/optimizer/attention_fusion.cc,
// "Check that LayerNormalization has 4 children: 1 Add, 3 MatMul"). A
// pre-LN model (GPT-2, LLaMA, a ViT) runs its attention as separate
// kernels unless the offline transformer optimizer rewrote the file, and
// its Q, K and V projections stay three GEMMs (the packing is part of the
// Attention op). The onnxruntime plan's fuse-attention-ort and fuse-qkv-ort
// keep to these blocks.

// fuseAttentionORT is fuse-attention for blocks whose Q, K and V are
// projections of one post-LN start.
func fuseAttentionORT(g *ir.Graph) (bool, error) {
	return runMatcher(g, softmaxOps, isSoftmaxNode, func(g *ir.Graph, sm *ir.Node) (Fusion, bool) {
		f, ok := matchAnyAttention(g, sm)
		if !ok || len(f.Inputs) < 3 {
			return Fusion{}, false
		}
		x := projectionInput(f.Inputs[0])
		if x == nil || !postLNStart(g, x) || projectionInput(f.Inputs[1]) != x || projectionInput(f.Inputs[2]) != x {
			return Fusion{}, false
		}
		return f, true
	})
}

// fuseQKVORT is fuse-qkv for the projections of a post-LN start only.
func fuseQKVORT(g *ir.Graph) (bool, error) { return fuseQKVWhere(g, postLNStart) }

// postLNStart reports whether x is the output of a LayerNormalization
// read by exactly one Add and three GEMMs.
func postLNStart(g *ir.Graph, x *ir.Value) bool {
	p := producerOf(x)
	if !isOp(p, "LayerNormalization") && !ir.IsFused(p, ir.OpFusedLayerNorm) {
		return false
	}
	if len(x.Consumers) != 4 || g.IsGraphOutput(x) {
		return false
	}
	adds, gemms := 0, 0
	for _, c := range x.Consumers {
		switch {
		case isOp(c, "Add"):
			adds++
		case isGemmOp(c):
			gemms++
		}
	}
	return adds == 1 && gemms == 3
}

// projectionInput walks back from an attention operand through its head
// split (Transpose, Reshape), a constant bias or scale (Add, Mul, Div of a
// constant) to the GEMM that projected it, and returns that GEMM's input;
// nil when the walk meets anything else.
func projectionInput(v *ir.Value) *ir.Value {
	for range 8 {
		p := producerOf(v)
		switch {
		case p == nil:
			return nil
		case isGemmOp(p):
			return p.In(0)
		case isOp(p, "Transpose") || isOp(p, "Reshape"):
			v = p.In(0)
		case isOp(p, "Add") || isOp(p, "Mul") || isOp(p, "Div"):
			x, _, ok := constOperand(p)
			if !ok {
				if x = nonConstOperand(p); x == nil {
					return nil
				}
			}
			v = x
		default:
			return nil
		}
	}
	return nil
}

// nonConstOperand is the one operand of binary p that is not a constant
// (a bias vector); nil unless exactly one is.
func nonConstOperand(p *ir.Node) *ir.Value {
	if len(p.Inputs) != 2 {
		return nil
	}
	a, b := p.In(0), p.In(1)
	switch {
	case a != nil && constant(a) == nil && b != nil && constant(b) != nil:
		return a
	case b != nil && constant(b) == nil && a != nil && constant(a) != nil:
		return b
	}
	return nil
}
