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
// Attention op). fuse-attention-ort and fuse-qkv-ort keep to these
// blocks; they are not in the onnxruntime plan: onnxruntime 1.23.2 (a CPU
// session at level all, the graph saved with optimized_model_filepath)
// fused the attention of none of our exports, post-LN BERT included,
// whether its batch was dynamic or bound, and not even after the head
// shapes were rewritten to the constant [0, 0, N, H] its path checks
// want (attention_fusion_helper.h) and the Adds' operands put in the
// order its FindPath walks. The level-1 MatMulAddFusion, which turns a
// projection into a Gemm before AttentionFusion runs at level 2
// (graph_transformer_utils.cc), is one reason; the rest was not
// identified. An exported model runs its attention as separate kernels
// unless the file already holds onnxruntime's Attention op (written by
// its offline transformers optimizer), which is priced as it is.

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

// fuseQKVORT is fuse-qkv for the projections of a post-LN start whose
// attention became one op: the packed QKV GEMM is part of onnxruntime's
// Attention, so projections whose attention stayed apart stay three GEMMs.
func fuseQKVORT(g *ir.Graph) (bool, error) {
	return fuseQKVWhere(g, func(g *ir.Graph, x *ir.Value) bool { return postLNStart(g, x) && feedsAttention(x) })
}

// feedsAttention reports whether a GEMM reading x writes an input of a
// FusedAttention, directly or through its bias Add and the head split's
// Reshape and Transpose.
func feedsAttention(x *ir.Value) bool {
	for _, c := range x.Consumers {
		if !isGemmOp(c) || len(c.Outputs) == 0 {
			continue
		}
		vs := []*ir.Value{c.Out(0)}
		for range 4 {
			var next []*ir.Value
			for _, v := range vs {
				for _, r := range v.Consumers {
					switch {
					case ir.IsFused(r, ir.OpFusedAttention):
						return true
					case (isOp(r, "Add") || isOp(r, "Reshape") || isOp(r, "Transpose")) && len(r.Outputs) == 1:
						next = append(next, r.Out(0))
					}
				}
			}
			vs = next
		}
	}
	return false
}

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
