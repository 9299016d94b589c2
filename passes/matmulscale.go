package passes

import (
	"slices"

	"github.com/onnxcost/onnxcost/ir"
)

// A MatMul takes the transposes of its operands' last two axes and the
// scalar scales around it as arguments of its one GEMM: onnxruntime's
// MatmulTransposeFusion and MatMulScaleFusion, which its CPU, CUDA and
// ROCm providers run at the default optimisation level
// (onnxruntime/core/optimizer/matmul_transpose_fusion.cc and
// matmul_scale_fusion.cc), writing a com.microsoft FusedMatMul (alpha,
// transA, transB) that cuBLAS runs as one call. In an attention block that
// AttentionFusion left alone (a pre-LN GPT-2 or LLaMA export) the scores'
// 1/√d scale is such a Div; a Kᵀ written as its own Transpose of the last
// two axes is such a transpose.
//
//	MatMul(Transpose(a), Mul(b, c)) -> Div(·, d)  ->  FusedMatMul(a, b, transA=1, alpha=c/d)
//
// The conditions are the sources': a scale is a Mul by, or a Div by (the
// divisor only), a constant of one element whose rank does not exceed the
// other operand's; a transpose swaps the last two axes and keeps the rest
// (no perm: a rank-2 transpose) and is not a graph output; every operand
// is float, float16, bfloat16 or double. A scale or transpose on an
// operand whose result is also read elsewhere stays for that reader (the
// MatMul reads what it was applied to); a scale after the MatMul is taken
// only when it is the MatMul's one reader. The sources apply the two rules
// in turn until neither changes the graph, so chains of them (a transpose
// then a scale) fold into one node here.
func fuseMatMulScale(g *ir.Graph) (bool, error) {
	return runMatcher(g, []string{"MatMul"}, func(n *ir.Node) bool { return isOp(n, "MatMul") }, matchMatMulScale)
}

// fusedMatMulType reports whether v has an element type of FusedMatMul's
// CUDA kernel.
func fusedMatMulType(v *ir.Value) bool {
	if !floatTensor(v) {
		return false
	}
	switch v.DType {
	case ir.Float32, ir.Float16, ir.BFloat16, ir.Float64:
		return true
	}
	return false
}

// matchMatMulScale gathers the transposes and scales around MatMul mm.
func matchMatMulScale(g *ir.Graph, mm *ir.Node) (Fusion, bool) {
	if len(mm.Inputs) != 2 || len(mm.Outputs) != 1 || !fusedMatMulType(mm.In(0)) || !fusedMatMulType(mm.In(1)) {
		return Fusion{}, false
	}
	alpha := 1.0
	var trans, transBatch [2]bool
	var before [][]*ir.Node // per operand, the nodes absorbed, nearest first
	ins := []*ir.Value{mm.In(0), mm.In(1)}
	for i := range ins {
		var absorbed []*ir.Node
		owned := true // the value is read only by nodes of the group so far
		// perm[k] is the axis of ins[i] that becomes the operand's axis k.
		perm := identityPerm(ins[i].Shape.Rank())
		// A batch transpose folds only between operands of one rank (as
		// nn.MultiheadAttention's batched MatMuls): onnxruntime left a
		// dynamic-batch ViT's [L, B, E] in_proj input transposed before
		// its MatMul with a rank-2 weight.
		batchOK := mm.In(0).Shape.Rank() == mm.In(1).Shape.Rank()
		for range 8 { // a chain of scales and transposes; a few links
			p := producerOf(ins[i])
			own := owned && soleConsumer(g, ins[i], readerIn(mm, absorbed))
			if x, next, t, tb, ok := foldTranspose(g, p, perm); ok && (!tb || batchOK) {
				trans[i], transBatch[i], perm = t, tb, next
				ins[i] = x
			} else if x, k, ok := scalarScale(g, p); ok && x.Shape.Rank() >= 1 && sessionShape(g, x).Ranked {
				// A scale before the MatMul only when onnxruntime knew the
				// scaled value's rank (ir.Graph.Session): MatMulScaleFusion
				// skips a leading scale whose input has no shape or is a
				// scalar (GetInputNodeMerges), as Mul(0.5, x) → MatMul is
				// when x comes of a Reshape to a computed shape before
				// opset 14 (the GPT-style fixture's MLP).
				alpha *= k
				ins[i] = x
			} else {
				break
			}
			if owned = own; owned {
				absorbed = append(absorbed, p)
			}
		}
		before = append(before, absorbed)
	}
	out := mm.Out(0)
	var after []*ir.Node
	for range 8 {
		s := onlyUse(g, out)
		x, k, ok := scalarScale(g, s)
		if !ok || x != out || !fusedMatMulType(s.Out(0)) {
			break
		}
		alpha *= k
		after = append(after, s)
		out = s.Out(0)
	}
	if len(before[0])+len(before[1])+len(after) == 0 && !trans[0] && !trans[1] && !transBatch[0] && !transBatch[1] && alpha == 1 {
		return Fusion{}, false
	}
	// Topological order: each operand's chain from its far end, the
	// MatMul, then the scales after it (the fused node goes where the
	// last one was).
	var nodes []*ir.Node
	for _, chain := range before {
		for j := len(chain) - 1; j >= 0; j-- {
			nodes = append(nodes, chain[j])
		}
	}
	nodes = append(append(nodes, mm), after...)
	attrs := []*ir.Attribute{ir.FloatAttr("alpha", float64(float32(alpha))), ir.IntAttr("transA", b2i(trans[0])), ir.IntAttr("transB", b2i(trans[1]))}
	for i, name := range []string{"transBatchA", "transBatchB"} {
		if transBatch[i] {
			attrs = append(attrs, ir.IntAttr(name, 1))
		}
	}
	return Fusion{Nodes: nodes, OpType: ir.OpFusedMatMul, Inputs: ins, Outputs: []*ir.Value{out}, Attrs: attrs}, true
}

// readerIn is the group node that reads the value an operand chain has
// reached: the last node absorbed, else the MatMul.
func readerIn(mm *ir.Node, absorbed []*ir.Node) *ir.Node {
	if len(absorbed) == 0 {
		return mm
	}
	return absorbed[len(absorbed)-1]
}

// foldTranspose folds Transpose n into an operand whose axes are taken
// from n's output by perm (perm[k]: the axis that becomes the operand's
// axis k): it returns n's input, the composed perm on it and the
// FusedMatMul flags that compose to, when they are one of the forms
// FusedMatMul takes (ir.FusedMatMulOperand): the last two axes swapped
// (trans), the first axis moved to just before the last (transBatch: a
// [S, B·H, d] → [B·H, S, d] transpose, as nn.MultiheadAttention's export
// writes before its batched MatMuls), or both. onnxruntime's
// MatmulTransposeFusion folds those; ViT-B/16 runs 36 such transposes
// fewer in onnxruntime's own graph than a fusion of the last two axes
// alone left.
func foldTranspose(g *ir.Graph, n *ir.Node, perm []int) (x *ir.Value, next []int, trans, transBatch, ok bool) {
	if !isOp(n, "Transpose") || len(n.Outputs) != 1 || g.IsGraphOutput(n.Out(0)) || !fusedMatMulType(n.In(0)) {
		return nil, nil, false, false, false
	}
	r := n.In(0).Shape.Rank()
	if r < 2 || len(perm) != r {
		return nil, nil, false, false, false
	}
	p, has := n.AttrInts("perm")
	if !has { // no perm: the axes reversed
		p = make([]int64, r)
		for i := range p {
			p[i] = int64(r - 1 - i)
		}
	}
	if len(p) != r {
		return nil, nil, false, false, false
	}
	next = make([]int, r)
	for k, a := range perm {
		if p[a] < 0 || p[a] >= int64(r) {
			return nil, nil, false, false, false
		}
		next[k] = int(p[a])
	}
	trans, transBatch, ok = fusedMatMulForm(next)
	return n.In(0), next, trans, transBatch, ok
}

// fusedMatMulForm names perm as FusedMatMul's flags (ir.FusedMatMulOperand
// builds the same perms from them); ok is false for any other perm.
func fusedMatMulForm(perm []int) (trans, transBatch, ok bool) {
	r := len(perm)
	for _, f := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
		if (f[1] && r < 3) || (f[0] && r < 2) {
			continue
		}
		if slices.Equal(perm, formPerm(r, f[0], f[1])) {
			return f[0], f[1], true
		}
	}
	return false, false, false
}

// formPerm is the perm of the flags for rank r (ir.FusedMatMulOperand's).
func formPerm(r int, trans, transBatch bool) []int {
	p := identityPerm(r)
	if transBatch {
		copy(p, p[1:r-1])
		p[r-2], p[r-1] = 0, r-1
	}
	if trans {
		p[r-2], p[r-1] = p[r-1], p[r-2]
	}
	return p
}

func identityPerm(r int) []int {
	p := make([]int, max(r, 0))
	for i := range p {
		p[i] = i
	}
	return p
}

// scalarScale splits n, when it scales a value x by a one-element
// constant (x·k, k·x or x/k, the constant's rank at most x's), into x and
// the factor: MatMulScaleFusion's GetScaleFromNode, on the decomposition
// matchers' constOperand. The constant must be one onnxruntime could
// compute when it built the graph (ir.Graph.Session): a scale computed
// from the Shape of a tensor with a symbolic dim (1/√head size, as
// torch.onnx exports it) it cannot, and that Mul or Div stays.
func scalarScale(g *ir.Graph, n *ir.Node) (x *ir.Value, k float64, ok bool) {
	if (!isOp(n, "Mul") && !isOp(n, "Div")) || len(n.Outputs) != 1 {
		return nil, 0, false
	}
	x, k, ok = constOperand(n)
	c := n.In(1)
	if x == c {
		c = n.In(0)
	}
	if !ok || k == 0 || !c.Shape.Ranked || c.Shape.Rank() > x.Shape.Rank() || !sessionKnown(g, c) {
		return nil, 0, false
	}
	if n.OpType == "Div" {
		k = 1 / k
	}
	return x, k, true
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
