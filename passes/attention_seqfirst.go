package passes

import (
	"github.com/onnxcost/onnxcost/ir"
)

// Sequence-first head-split absorption: torch.nn.MultiheadAttention as
// exported keeps its activations [L, N, E] (sequence first, also inside
// batch_first modules, which transpose around it) and splits heads into a
// merged N·H batch axis:
//
//	Q3 = Transpose(Reshape(Q, [L, N·H, d]), [1,0,2])     [N·H, L, d]
//	K3 = Reshape(K, [L, N·H, d])                         (FusedAttention k_perm [1,2,0] absorbed Kᵀ)
//	V3 = Transpose(Reshape(V, [L, N·H, dv]), [1,0,2])
//	O3 = Transpose(FusedAttention(Q3, K3, V3, ...), [1,0,2])   [L, N·H, dv]
//	  -> O = FusedAttention(Q, K, V, ...){num_heads=H, q_perm=v_perm=[1,2,0,3],
//	                                       k_perm=[1,2,3,0], o_perm=[2,0,1,3]}  [L, N, H·dv]
//
// In the 4-axis head view [L, N, H, d] these are the permutations to
// [N, H, L, d] (and back), the packed-layout contract of
// passes/attention_heads.go with other perms; [N·H, L, d] is that layout
// with its first two axes merged, so the arithmetic is unchanged. The
// three transposes were copy kernels; the fused kernel indexes [L, N, E]
// directly. The merge Reshape after O3 ([L·N, E] for out_proj) is a view
// and stays: O3's value becomes the fused output, now [L, N, H·dv].
//
// Guards: the complete pattern only, each intermediate read once and not a
// graph output; N and the head size known, so H = E/d is exact; a mask (or
// Where fill) only of rank 2 or less or [1, L, L], which broadcasts over
// [N, H] the same way it did over N·H (a per-head [N·H, L, L] mask would not).
func fuseAttentionSeqFirst(g *ir.Graph) (bool, error) {
	return runMatcher(g, attentionOps, func(n *ir.Node) bool {
		return ir.IsFused(n, ir.OpFusedAttention) && n.Attr(ir.KeyNumHeads) == nil
	}, matchAttentionSeqFirst)
}

var (
	seqHeadPerm = []int64{1, 0, 2}    // [L, N·H, d] <-> [N·H, L, d]
	seqKPerm    = []int64{1, 2, 0}    // Kᵀ: [L, N·H, d] -> [N·H, d, L]
	seqQPerm4   = []int64{1, 2, 0, 3} // [L, N, H, d] -> [N, H, L, d]
	seqKPerm4   = []int64{1, 2, 3, 0} // [L, N, H, d] -> [N, H, d, L]
	seqOPerm4   = []int64{2, 0, 1, 3} // [N, H, L, dv] -> [L, N, H, dv]
)

// broadcastsOverHeads reports whether mask m broadcasts over [N, H] as it
// did over the merged N·H axis: rank 2 or less ([L, L]), or rank 3 with a
// unit first axis ([1, L, L], the causal mask torch exports).
func broadcastsOverHeads(m *ir.Value) bool {
	if !m.Shape.Ranked {
		return false
	}
	r := m.Shape.Rank()
	return r <= 2 || (r == 3 && m.Shape.Dims[0].Is(1))
}

func matchAttentionSeqFirst(g *ir.Graph, a *ir.Node) (Fusion, bool) {
	if a.AttrInt("k_transposed", 0) != 1 || !permIs(a, "k_perm", seqKPerm) || len(a.Outputs) != 1 {
		return Fusion{}, false
	}
	for _, m := range a.Inputs[3:] {
		if m != nil && !broadcastsOverHeads(m) {
			return Fusion{}, false
		}
	}
	split, q, k, v, hq, ok := splitQKV(g, a, seqHeadPerm, mergesBatchHeads)
	if !ok {
		return Fusion{}, false
	}
	to := onlyUse(g, a.Out(0))
	if !isOp(to, "Transpose") || to.In(0) != a.Out(0) || !permIs(to, "perm", seqHeadPerm) || len(to.Outputs) != 1 {
		return Fusion{}, false
	}
	o := to.Out(0)
	if !floatTensor(o) || o.DType != a.Out(0).DType {
		return Fusion{}, false
	}
	nodes := append(split, a, to)
	// O3's value now carries the fused output in the packed layout: the
	// head-merge Reshape that reads it is unchanged (its target shape is
	// a constant of the same element count).
	packed := q.Shape.Clone()
	packed.Dims[len(packed.Dims)-1] = v.Shape.Dims[len(v.Shape.Dims)-1]
	o.Shape = packed
	return packedHeadsFusion(a, nodes, hq, q, k, v, o, intsAttr("k_perm", seqKPerm4),
		intsAttr("q_perm", seqQPerm4), intsAttr("v_perm", seqQPerm4), intsAttr("o_perm", seqOPerm4)), true
}

// mergesBatchHeads reports whether split [L, N·H, d] is packed [L, N, H·d]
// with its last axis cut into H heads of d and the heads folded into the
// batch axis (L equal, possibly symbolic; N, H·d and d known), and returns H.
func mergesBatchHeads(packed, split *ir.Value) (int64, bool) {
	if !floatTensor(packed) || !floatTensor(split) || packed.DType != split.DType ||
		packed.Shape.Rank() != 3 || split.Shape.Rank() != 3 {
		return 0, false
	}
	p, s := packed.Shape.Dims, split.Shape.Dims
	if !sameDim(p[0], s[0]) || !p[1].IsKnown() || !p[2].IsKnown() || !s[1].IsKnown() || !s[2].IsKnown() {
		return 0, false
	}
	d := s[2].Value
	if d <= 0 || p[2].Value%d != 0 {
		return 0, false
	}
	h := p[2].Value / d
	if h <= 0 || s[1].Value != p[1].Value*h {
		return 0, false
	}
	return h, true
}
