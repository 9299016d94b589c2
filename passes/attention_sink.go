package passes

import (
	"slices"

	"github.com/onnxcost/onnxcost/ir"
)

// Batch-first MultiheadAttention (torch.nn.MultiheadAttention with
// batch_first=True, torchvision's ViT) transposes its [N, L, E] input to
// [L, N, E] before the packed in_proj. The projection is position-wise
// (a MatMul over the last axis), so the transpose commutes with it:
//
//	P = MatMul(Transpose(x, [1,0,2]), W) [+ b]   read only by FusedAttention(P, P, P){sequence-first perms}
//	  -> P' = MatMul(x, W) [+ b]                 read by FusedAttention(P', P', P'){q/v_perm [0,2,1,3], k_perm [0,2,3,1]}
//
// The attention kernel reads the batch-first projection with other
// strides; its o_perm keeps writing [L, N, E] for out_proj, so nothing
// after it changes. The Transpose, a copy kernel, goes (it joins the
// attention's fused_from). Guards: the attention is the packed
// sequence-first form passes/attention_seqfirst.go and
// passes/attention_packed.go write; P is read only by it; the Transpose is
// read only by the projection; the projection is a MatMul (or a FusedGemm
// anchored on one) by a constant rank-2 weight with at most a bias, no
// residual or gate (those would need the transposed layout too).
func fuseAttentionSink(g *ir.Graph) (bool, error) {
	changed := false
	for a := range nodesOfType(g, attentionOps...) {
		if !live(g, a) || !ir.IsFused(a, ir.OpFusedAttention) || !ir.QKVPacked(a) ||
			!permIs(a, ir.KeyQPerm, seqQPerm4) || !permIs(a, ir.KeyKPerm, seqKPerm4) || !permIs(a, ir.KeyVPerm, seqQPerm4) {
			continue
		}
		p := a.In(0)
		gemm, tr, ok := sinkableProjection(g, a, p)
		if !ok {
			continue
		}
		x := tr.In(0)
		g.SetInput(gemm, 0, x)
		g.RemoveNode(tr)
		g.RemoveValue(tr.Out(0))
		p.Shape.Dims[0], p.Shape.Dims[1] = p.Shape.Dims[1], p.Shape.Dims[0]
		for _, at := range a.Attrs {
			switch at.Name {
			case ir.KeyQPerm, ir.KeyVPerm:
				at.Ints = slices.Clone(headPerm)
			case ir.KeyKPerm:
				at.Ints = slices.Clone(kHeadPerm)
			}
		}
		a.FusedFrom = append(a.FusedFrom, tr.Name)
		changed = true
	}
	return changed, nil
}

// sinkableProjection returns the projection writing p and the
// [1,0,2] Transpose feeding it when the rewrite may move the transpose
// into attention a.
func sinkableProjection(g *ir.Graph, a *ir.Node, p *ir.Value) (gemm, tr *ir.Node, ok bool) {
	if p == nil || g.IsGraphOutput(p) || !floatTensor(p) || p.Shape.Rank() != 3 {
		return nil, nil, false
	}
	for _, c := range p.Consumers {
		if c != a {
			return nil, nil, false
		}
	}
	gemm = producerOf(p)
	matmul := isOp(gemm, "MatMul") ||
		ir.IsFused(gemm, ir.OpFusedGemm) && ir.AnchorOf(gemm) == "MatMul" && gemm.In(3) == nil && gemm.In(4) == nil
	if !matmul || len(gemm.Outputs) != 1 {
		return nil, nil, false
	}
	if w := gemm.In(1); constant(w) == nil || w.Shape.Rank() != 2 {
		return nil, nil, false
	}
	if b := gemm.In(2); b != nil && (constant(b) == nil || b.Shape.Rank() != 1) {
		return nil, nil, false
	}
	tr = producerOf(gemm.In(0))
	if !isOp(tr, "Transpose") || !permIs(tr, "perm", seqHeadPerm) || onlyUse(g, tr.Out(0)) != gemm || tr.In(0) == nil {
		return nil, nil, false
	}
	return gemm, tr, true
}
