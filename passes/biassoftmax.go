package passes

import (
	"github.com/onnxcost/onnxcost/ir"
)

// An additive mask and the softmax after it in one kernel: onnxruntime's
// BiasSoftmaxFusion, which its CUDA and ROCm providers run at the default
// optimisation level (onnxruntime/core/optimizer/bias_softmax_fusion.cc,
// registered in graph_transformer_utils.cc's level-2 list after
// AttentionFusion). Attention blocks that AttentionFusion left alone (a
// pre-LN GPT-2 or LLaMA export, fuse-attention-ort) keep their scores'
// mask Add and Softmax; this pass makes them one kernel, as that provider
// runs them.
//
//	Softmax(Add(x, mask), axis = last) -> onnxcost::Softmax(x, mask)
//
// The conditions are the source's: the Add's only reader is the Softmax
// (its sum is not a graph output), both operands are float tensors of
// known rank, the softmax runs over the last axis (the only one the
// fusion takes since opset 13), the two operands agree on that axis, and
// the mask broadcasts over the leading axes either from the inside (the
// input's leading dims, then ones: BERT's [batch, 1, 1, seq] mask on
// [batch, heads, seq, seq] scores) or from the outside (ones, then the
// input's dims: GPT-2's [1, 1, seq, seq] causal mask). A Softmax without
// an axis is taken at opset 13's default, -1 (passes do not see the
// model's opset; exporters write the axis).
func fuseBiasSoftmax(g *ir.Graph) (bool, error) {
	return runMatcher(g, softmaxOps, isSoftmaxNode, matchBiasSoftmax)
}

// matchBiasSoftmax matches the mask Add feeding softmax sm.
func matchBiasSoftmax(g *ir.Graph, sm *ir.Node) (Fusion, bool) {
	if len(sm.Inputs) != 1 || len(sm.Outputs) != 1 || !floatTensor(sm.Out(0)) {
		return Fusion{}, false // an onnxcost Softmax that already took a mask
	}
	s := sm.In(0)
	add := producerOf(s)
	if !isOp(add, "Add") || len(add.Inputs) != 2 || len(add.Outputs) != 1 || !soleConsumer(g, s, sm) || g.IsGraphOutput(s) {
		return Fusion{}, false
	}
	x, mask, ok := splitBiasMask(add.In(0), add.In(1))
	if !ok || !lastAxis(sm.AttrInt("axis", -1), s.Shape.Rank()) {
		return Fusion{}, false
	}
	ins := []*ir.Value{x, mask}
	attrs := append([]*ir.Attribute{ir.IntAttr("axis", -1)}, newParts(ins, sm.Outputs, add, sm).attrs()...)
	return Fusion{Nodes: []*ir.Node{add, sm}, OpType: ir.OpFusedSoftmax, Inputs: ins, Outputs: sm.Outputs, Attrs: attrs}, true
}

// splitBiasMask orders an Add's operands as (input, mask) when the mask
// can be broadcast as BiasSoftmax broadcasts it: the same last dim, and
// over the leading dims either the input's then ones (inner) or ones then
// the input's (outer, a shorter rank included).
func splitBiasMask(a, b *ir.Value) (x, mask *ir.Value, ok bool) {
	for _, v := range []*ir.Value{a, b} {
		// The contrib op takes float, float16 and double (contrib_defs.cc).
		if v == nil || v.Shape.Rank() < 1 || (v.DType != ir.Float32 && v.DType != ir.Float16 && v.DType != ir.Float64) {
			return nil, nil, false
		}
	}
	if broadcastsAsMask(a, b) {
		return a, b, true
	}
	if broadcastsAsMask(b, a) {
		return b, a, true
	}
	return nil, nil, false
}

// broadcastsAsMask reports whether mask is a BiasSoftmax mask for x.
func broadcastsAsMask(x, mask *ir.Value) bool {
	xs, ms := x.Shape.Dims, mask.Shape.Dims
	n, m := len(xs), len(ms)
	if m > n || !sameDim(xs[n-1], ms[m-1]) {
		return false
	}
	if m == n {
		// Inner: x's dims up to some point, then ones.
		i := 0
		for i < n-1 && sameDim(xs[i], ms[i]) {
			i++
		}
		if onesIn(ms[i : n-1]) {
			return true
		}
	}
	// Outer: ones, then x's dims (aligned from the right).
	j := 1
	for j < m && sameDim(xs[n-1-j], ms[m-1-j]) {
		j++
	}
	return onesIn(ms[:m-j])
}

// onesIn reports whether every dim is a known 1.
func onesIn(ds []ir.Dim) bool {
	for _, d := range ds {
		if !d.Is(1) {
			return false
		}
	}
	return true
}
