package passes

import (
	"math"
	"testing"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/ir"
)

// Geometry of the hand-built multi-head block: X [B, L, E], H heads of d.
const mhB, mhL, mhH, mhD = 2, 4, 2, 4
const mhE = mhH * mhD

// mhOpts vary the hand-built block.
type mhOpts struct {
	qSplitReused bool  // Q's head-split view is also a graph output
	mergeOutput  bool  // the merged [B,L,H,d] context (before the Reshape) is a graph output
	vPerm        bool  // V is split with another permutation (not a head split)
	packed       bool  // one [B, L, 3E] projection Split into Q, K, V (GPT-2's c_attn)
	packedOrder  []int // the Split outputs taken as Q, K, V (default 0, 1, 2)
	packedReused bool  // the Split's Q output is also a graph output
}

// buildMHA builds BERT's self-attention as torch exports it: the Q, K, V
// projections, head splits (K transposed for Kᵀ), scaled masked softmax,
// the context, head merge, and the output projection.
func buildMHA(b *builder, o mhOpts) (q, k, v, ctx, out *ir.Value) {
	x := b.input("x", mhB, mhL, mhE)
	mask := b.input("mask", mhB, 1, 1, mhL)
	proj := func(name string) *ir.Value {
		return b.op("Add", nil, b.op("MatMul", nil, x, b.weight(name+"_w", mhE, mhE)), b.weight(name+"_b", mhE))
	}
	split := func(p *ir.Value, name string, perm ...int64) *ir.Value {
		r := b.op("Reshape", nil, p, b.int64s(name+"_shape", mhB, mhL, mhH, mhD))
		if name == "q" && o.qSplitReused {
			b.output(r)
		}
		return b.op("Transpose", []*ir.Attribute{ir.IntsAttr("perm", perm...)}, r)
	}
	if o.packed {
		qkv := b.op("Add", nil, b.op("MatMul", nil, x, b.weight("qkv_w", mhE, 3*mhE)), b.weight("qkv_b", 3*mhE))
		sp := b.node("Split", []*ir.Value{qkv, b.int64s("qkv_split", mhE, mhE, mhE)}, 3, ir.IntAttr("axis", -1))
		ord := o.packedOrder
		if ord == nil {
			ord = []int{0, 1, 2}
		}
		q, k, v = sp.Out(ord[0]), sp.Out(ord[1]), sp.Out(ord[2])
		if o.packedReused {
			b.output(q)
		}
	} else {
		q, k, v = proj("q"), proj("k"), proj("v")
	}
	q4, kt := split(q, "q", 0, 2, 1, 3), split(k, "k", 0, 2, 3, 1)
	v4 := split(v, "v", 0, 2, 1, 3)
	if o.vPerm {
		v4 = b.op("Transpose", []*ir.Attribute{ir.IntsAttr("perm", 0, 1, 3, 2)}, v4)
	}
	s := b.op("Div", nil, b.op("MatMul", nil, q4, kt), b.scalar("scale", math.Sqrt(mhD)))
	p := b.op("Softmax", []*ir.Attribute{ir.IntAttr("axis", -1)}, b.op("Add", nil, s, mask))
	m := b.op("Transpose", []*ir.Attribute{ir.IntsAttr("perm", 0, 2, 1, 3)}, b.op("MatMul", nil, p, v4))
	if o.mergeOutput {
		b.output(m)
	}
	ctx = b.op("Reshape", nil, m, b.int64s("ctx_shape", mhB, mhL, mhE))
	out = b.op("MatMul", nil, ctx, b.weight("o_w", mhE, mhE))
	b.output(out)
	return q, k, v, ctx, out
}

func TestAttentionHeadsFuse(t *testing.T) {
	b := newBuilder(t)
	q, k, v, ctx, _ := buildMHA(b, mhOpts{})
	g := b.run("fuse-attention")
	before, err := cost.Analyze(g, b.M, a100(t), cost.Options{DType: "fp32"})
	if err != nil {
		t.Fatal(err)
	}
	beforeAttn := nodeCost(t, before, fusedNodes(g, "FusedAttention")[0].Name)
	checkPreservesExact(t, g, "fuse-attention-heads")
	// Reshape Transpose (Q), Reshape (K), Reshape Transpose (V), the 6 of
	// the attention, Transpose Reshape (merge).
	n := expectOne(t, g, "FusedAttention", 13)
	if n.In(0) != q || n.In(1) != k || n.In(2) != v || n.Out(0) != ctx {
		t.Errorf("reads %v writes %v; want the projections and the merged context", n.Inputs, n.Outputs)
	}
	if n.AttrInt("num_heads", 0) != mhH || !permIs(n, "q_perm", headPerm) || !permIs(n, "k_perm", kHeadPerm) ||
		!permIs(n, "v_perm", headPerm) || !permIs(n, "o_perm", headPerm) {
		t.Errorf("attributes %+v", n.Attrs)
	}
	after, err := cost.Analyze(g, b.M, a100(t), cost.Options{DType: "fp32"})
	if err != nil {
		t.Fatal(err)
	}
	nc := nodeCost(t, after, n.Name)
	// Same arithmetic and boundary bytes (the packed tensors hold the same
	// elements as the head views); the three transposes' launches go.
	const scores = mhB * mhH * mhL * mhL
	wantMACs := float64(2 * scores * mhD) // Q·Kᵀ and P·V per head
	if nc.MACs != wantMACs || nc.MACs != beforeAttn.MACs || nc.FLOPs != beforeAttn.FLOPs ||
		nc.BytesRead != beforeAttn.BytesRead || nc.BytesWritten != beforeAttn.BytesWritten {
		t.Errorf("macs %g flops %g bytes %g/%g; before %g %g %g/%g; want macs %g",
			nc.MACs, nc.FLOPs, nc.BytesRead, nc.BytesWritten, beforeAttn.MACs, beforeAttn.FLOPs, beforeAttn.BytesRead, beforeAttn.BytesWritten, wantMACs)
	}
	if after.Totals.FLOPs != before.Totals.FLOPs || after.Totals.Launches != before.Totals.Launches-3 {
		t.Errorf("FLOPs %g launches %g; before %g %g (want equal FLOPs, 3 transposes fewer)",
			after.Totals.FLOPs, after.Totals.Launches, before.Totals.FLOPs, before.Totals.Launches)
	}
}

// TestAttentionHeadsFullTable: with every pass, a BERT self-attention is
// one GroupedGemm (Q, K, V), one FusedAttention and the output GEMM.
func TestAttentionHeadsFullTable(t *testing.T) {
	b := newBuilder(t)
	buildMHA(b, mhOpts{})
	g := b.infer()
	checkPreservesExact(t, g, DefaultNames()...)
	if got := ops(g); got != "onnxcost.GroupedGemm onnxcost.FusedAttention MatMul" {
		t.Errorf("ops %q, want GroupedGemm FusedAttention MatMul", got)
	}
}

func TestAttentionHeadsGuards(t *testing.T) {
	build := func(b *builder, o mhOpts) *ir.Value { _, _, _, _, out := buildMHA(b, o); return out }
	cases := guardCases(build, map[string]mhOpts{
		"head view read elsewhere":    {qSplitReused: true},
		"merged context is an output": {mergeOutput: true},
		"not a head split":            {vPerm: true},
	})
	checkGuards(t, cases, []string{"fuse-attention", "fuse-attention-heads"}, func(t *testing.T, g *ir.Graph) {
		for _, n := range fusedNodes(g, "FusedAttention") {
			if n.Attr("num_heads") != nil {
				t.Errorf("heads absorbed (%v) though a guard fails", n.FusedFrom)
			}
		}
	})
}

// GPT-2's packed c_attn: the Split into Q, K, V joins the FusedAttention,
// which then reads the packed projection once; FLOPs do not move and the
// bytes read drop by the Split's copy.
func TestAttentionPackedFuse(t *testing.T) {
	b := newBuilder(t)
	buildMHA(b, mhOpts{packed: true})
	g := b.run("fuse-attention", "fuse-attention-heads")
	before, err := cost.Analyze(g, b.M, a100(t), cost.Options{DType: "fp32"})
	if err != nil {
		t.Fatal(err)
	}
	checkPreservesExact(t, g, "fuse-attention-packed")
	n := expectOne(t, g, "FusedAttention", 14) // the Split and the 13 of the head-absorbed attention
	if !ir.QKVPacked(n) || n.In(0) != n.In(1) || n.In(0) != n.In(2) || n.In(0).Shape.String() != "[2,4,24]" {
		t.Fatalf("packed attention: %s", ir.NodeText(n))
	}
	for _, m := range g.Nodes {
		if isOp(m, "Split") {
			t.Errorf("Split %s left", m.Name)
		}
	}
	after, err := cost.Analyze(g, b.M, a100(t), cost.Options{DType: "fp32"})
	if err != nil {
		t.Fatal(err)
	}
	if after.Totals.FLOPs != before.Totals.FLOPs || after.Totals.MACs != before.Totals.MACs {
		t.Errorf("FLOPs %v -> %v, MACs %v -> %v: fusion must not change arithmetic",
			before.Totals.FLOPs, after.Totals.FLOPs, before.Totals.MACs, after.Totals.MACs)
	}
	if after.Totals.Launches != before.Totals.Launches-1 {
		t.Errorf("launches %v -> %v, want one fewer", before.Totals.Launches, after.Totals.Launches)
	}
}

func TestAttentionPackedGuards(t *testing.T) {
	build := func(b *builder, o mhOpts) *ir.Value { _, _, _, _, out := buildMHA(b, o); return out }
	cases := guardCases(build, map[string]mhOpts{
		"Split outputs not in Q, K, V order": {packed: true, packedOrder: []int{1, 0, 2}},
		"Split's Q output read elsewhere":    {packed: true, packedReused: true},
	})
	checkGuards(t, cases, []string{"fuse-attention", "fuse-attention-heads", "fuse-attention-packed"}, func(t *testing.T, g *ir.Graph) {
		for _, n := range fusedNodes(g, "FusedAttention") {
			if ir.QKVPacked(n) {
				t.Errorf("packed though a guard fails: %s", ir.NodeText(n))
			}
		}
	})
}
