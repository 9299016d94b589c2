package passes

import (
	"math"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// Geometry of the hand-built LLaMA attention: X [B, L, H·d].
const llB, llL, llH, llD = 1, 5, 2, 4

// llOpts vary the hand-built block.
type llOpts struct {
	qViewOut bool // Q's transposed view is also a graph output
	outTwice bool // the attention output is read by its Transpose and a graph output
}

// buildLlamaAttention builds the zoo LLaMA's attention (models/decoder.go)
// with one query group: projections, Reshape to [B, L, H, d], a pointwise
// stand-in for the rotary kernel on that layout, then Q Reshape to
// [B, L, H, 1, d] and Transpose to [B, H, 1, L, d]; Kᵀ by Transpose
// [0,2,3,1] and Unsqueeze(2); V by Transpose [0,2,1,3] and Unsqueeze(2);
// causal mask; the output Transposed back to [B, L, H, 1, d] and Reshaped.
func buildLlamaAttention(b *builder, o llOpts) {
	x := b.input("x", llB, llL, llH*llD)
	mask := b.input("mask", 1, 1, 1, llL, llL)
	proj := func(name string) *ir.Value {
		p := b.op("MatMul", nil, x, b.weight(name+"_w", llH*llD, llH*llD))
		return b.op("Reshape", nil, p, b.int64s(name+"_shape", llB, llL, llH, llD))
	}
	tr := func(v *ir.Value, perm ...int64) *ir.Value {
		return b.op("Transpose", []*ir.Attribute{ir.IntsAttr("perm", perm...)}, v)
	}
	rot := func(v *ir.Value, name string) *ir.Value { return b.op("Mul", nil, v, b.weight(name+"_rot", llD)) }
	q := b.op("Reshape", nil, rot(proj("q"), "q"), b.int64s("q5_shape", llB, llL, llH, 1, llD))
	q5 := tr(q, 0, 2, 3, 1, 4)
	if o.qViewOut {
		b.output(q5)
	}
	kt := b.op("Unsqueeze", nil, tr(rot(proj("k"), "k"), 0, 2, 3, 1), b.int64s("k_axes", 2))
	v5 := b.op("Unsqueeze", nil, tr(proj("v"), 0, 2, 1, 3), b.int64s("v_axes", 2))
	s := b.op("Div", nil, b.op("MatMul", nil, q5, kt), b.scalar("scale", math.Sqrt(llD)))
	p := b.op("Softmax", []*ir.Attribute{ir.IntAttr("axis", -1)}, b.op("Add", nil, s, mask))
	a := b.op("MatMul", nil, p, v5)
	if o.outTwice {
		b.output(a)
	}
	ctx := b.op("Reshape", nil, tr(a, 0, 3, 1, 2, 4), b.int64s("ctx_shape", llB, llL, llH*llD))
	b.output(b.op("MatMul", nil, ctx, b.weight("o_w", llH*llD, llH*llD)))
}

// The four Transposes and two Unsqueezes join the attention; FLOPs and
// the attention's own MACs and bytes are unchanged, four launches go.
func TestAttentionLayoutFuse(t *testing.T) {
	b := newBuilder(t)
	buildLlamaAttention(b, llOpts{})
	g := b.infer()
	runPasses(t, g, "fuse-attention")
	before := analyzeAt(t, b, g, "fp32")
	beforeAttn := nodeCost(t, before, fusedNodes(g, "FusedAttention")[0].Name)
	checkPreservesExact(t, g, "fuse-attention-layout")
	n := expectOne(t, g, "FusedAttention", 5+6) // Div, MatMul, Add, Softmax, MatMul + 4 Transpose, 2 Unsqueeze
	if !permIs(n, ir.KeyQPerm, []int64{0, 2, 3, 1, 4}) || !permIs(n, ir.KeyKPerm, []int64{0, 2, 3, 1}) ||
		!permIs(n, ir.KeyKUnsq, []int64{2}) || !permIs(n, ir.KeyVPerm, []int64{0, 2, 1, 3}) ||
		!permIs(n, ir.KeyVUnsq, []int64{2}) || !permIs(n, ir.KeyOPerm, []int64{0, 3, 1, 2, 4}) || n.AttrInt("k_transposed", 0) != 1 {
		t.Errorf("attributes: %s", ir.NodeText(n))
	}
	expectNoneOf(t, g, "Transpose")
	after := analyzeAt(t, b, g, "fp32")
	nc := nodeCost(t, after, n.Name)
	wantMACs := float64(2 * llB * llH * llL * llL * llD)
	if nc.MACs != wantMACs || nc.MACs != beforeAttn.MACs || nc.BytesRead != beforeAttn.BytesRead ||
		nc.BytesWritten != beforeAttn.BytesWritten || after.Totals.FLOPs != before.Totals.FLOPs {
		t.Errorf("attention MACs %g bytes %g/%g; before %g %g/%g; want MACs %g; FLOPs %g -> %g",
			nc.MACs, nc.BytesRead, nc.BytesWritten, beforeAttn.MACs, beforeAttn.BytesRead, beforeAttn.BytesWritten,
			wantMACs, before.Totals.FLOPs, after.Totals.FLOPs)
	}
	if after.Totals.Launches != before.Totals.Launches-4 {
		t.Errorf("launches %g -> %g, want 4 Transposes fewer", before.Totals.Launches, after.Totals.Launches)
	}
}

// With every pass: the projections, the pointwise ops, one attention and
// the output projection; no Transpose.
func TestAttentionLayoutFullTable(t *testing.T) {
	b := newBuilder(t)
	buildLlamaAttention(b, llOpts{})
	g := b.infer()
	checkPreserves(t, g, DefaultNames()...)
	expectNoneOf(t, g, "Transpose")
}

func TestAttentionLayoutGuards(t *testing.T) {
	for name, c := range map[string]struct {
		o    llOpts
		keep string // the attribute that must not be set
	}{
		"Q view read elsewhere":    {o: llOpts{qViewOut: true}, keep: ir.KeyQPerm},
		"output read by two nodes": {o: llOpts{outTwice: true}, keep: ir.KeyOPerm},
	} {
		t.Run(name, func(t *testing.T) {
			b := newBuilder(t)
			buildLlamaAttention(b, c.o)
			g := b.infer()
			checkPreservesExact(t, g, "fuse-attention", "fuse-attention-layout")
			n := expectOne(t, g, "FusedAttention", 10) // 5 + the 5 views the guard leaves out one of
			if n.Attr(c.keep) != nil {
				t.Errorf("%s set though its guard fails: %s", c.keep, ir.NodeText(n))
			}
			if n.Attr(ir.KeyVPerm) == nil {
				t.Errorf("V's layout not absorbed (the guard is per input): %s", ir.NodeText(n))
			}
		})
	}
}

// BERT's head split with the merge read elsewhere (as a symbolic batch's
// Shape reads it until cleanup folds it): the layout pass leaves the
// Transposes to fuse-attention-heads, which absorbs the Reshapes too once
// it can match.
func TestAttentionLayoutLeavesHeadSplit(t *testing.T) {
	b := newBuilder(t)
	buildMHA(b, mhOpts{mergeOutput: true})
	g := b.infer()
	checkPreservesExact(t, g, "fuse-attention", "fuse-attention-heads", "fuse-attention-layout")
	for _, n := range fusedNodes(g, "FusedAttention") {
		if n.Attr(ir.KeyQPerm) != nil || n.Attr(ir.KeyVPerm) != nil {
			t.Errorf("layout absorbed a pending head split: %s", ir.NodeText(n))
		}
	}
}
