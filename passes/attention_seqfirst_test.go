package passes

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/ir"
)

// Geometry of the hand-built torch.nn.MultiheadAttention block:
// X [L, N, E] (sequence first), H heads of d.
const sfL, sfN, sfH, sfD = 5, 2, 2, 4
const sfE = sfH * sfD

// sfOpts vary the hand-built block.
type sfOpts struct {
	mask       int   // an additive mask: 0 none, 2 [L, L], 1 [1, L, L] (torch's causal mask), 3 per head [N·H, L, L]
	qViewOut   bool  // Q's [N·H, L, d] view is also a graph output
	vReshaped  bool  // V reshaped straight to [N·H, L, d] (no head-split transpose: not torch's layout)
	sliceOrder []int // which third of the in_proj output is taken as Q, K, V (default 0, 1, 2)
	batchFirst bool  // batch_first=True: x [N, L, E] transposed to [L, N, E] before in_proj
	xTOut      bool  // with batchFirst: the transposed input is also a graph output
}

// buildSeqFirstMHA builds nn.MultiheadAttention as torch.onnx exports it
// (opset 17): packed in_proj, three Slices, Reshape to [L, N·H, d] and
// Transpose, Q pre-scaled, Kᵀ, softmax, P·V, Transpose back, Reshape to
// [L·N, E], out_proj, Reshape to [L, N, E].
func buildSeqFirstMHA(b *builder, o sfOpts) {
	var x *ir.Value
	if o.batchFirst {
		x = b.op("Transpose", []*ir.Attribute{ir.IntsAttr("perm", 1, 0, 2)}, b.input("x", sfN, sfL, sfE))
		if o.xTOut {
			b.output(x)
		}
	} else {
		x = b.input("x", sfL, sfN, sfE)
	}
	p := b.op("Add", nil, b.op("MatMul", nil, x, b.weight("in_w", sfE, 3*sfE)), b.weight("in_b", 3*sfE))
	ord := o.sliceOrder
	if ord == nil {
		ord = []int{0, 1, 2}
	}
	third := func(i int, name string) *ir.Value {
		at := int64(ord[i])
		return b.op("Slice", nil, p, b.int64s(name+"_start", at*sfE), b.int64s(name+"_end", (at+1)*sfE), b.int64s(name+"_axes", -1))
	}
	heads := func(v *ir.Value, name string) *ir.Value {
		return b.op("Reshape", nil, v, b.int64s(name+"_shape", sfL, sfN*sfH, sfD))
	}
	tr := func(v *ir.Value, perm ...int64) *ir.Value {
		return b.op("Transpose", []*ir.Attribute{ir.IntsAttr("perm", perm...)}, v)
	}
	q3 := tr(heads(third(0, "q"), "q"), 1, 0, 2)
	if o.qViewOut {
		b.output(q3)
	}
	kt := tr(heads(third(1, "k"), "k"), 1, 2, 0)
	v3 := tr(heads(third(2, "v"), "v"), 1, 0, 2)
	if o.vReshaped {
		v3 = b.op("Reshape", nil, third(2, "v2"), b.int64s("v2_shape", sfN*sfH, sfL, sfD))
	}
	s := b.op("MatMul", nil, b.op("Div", nil, q3, b.scalar("scale", math.Sqrt(sfD))), kt)
	switch o.mask {
	case 2:
		s = b.op("Add", nil, s, b.input("mask", sfL, sfL))
	case 1:
		s = b.op("Add", nil, s, b.input("mask", 1, sfL, sfL))
	case 3:
		s = b.op("Add", nil, s, b.input("mask", sfN*sfH, sfL, sfL))
	}
	pr := b.op("Softmax", []*ir.Attribute{ir.IntAttr("axis", -1)}, s)
	o3 := tr(b.op("MatMul", nil, pr, v3), 1, 0, 2)
	ctx := b.op("Reshape", nil, o3, b.int64s("ctx_shape", sfL*sfN, sfE))
	y := b.op("MatMul", nil, ctx, b.weight("out_w", sfE, sfE))
	b.output(b.op("Reshape", nil, y, b.int64s("y_shape", sfL, sfN, sfE)))
}

// The head split, the merge and the three Slices all join the attention,
// which reads the in_proj output once in [L, N, 3E]; FLOPs do not move and
// the per-head problem the cost rule sees is the same.
func TestAttentionSeqFirstFuse(t *testing.T) {
	for _, mask := range []int{0, 2, 1} {
		b := newBuilder(t)
		buildSeqFirstMHA(b, sfOpts{mask: mask})
		g := b.infer()
		runPasses(t, g, "fuse-attention")
		before := analyzeAt(t, b, g, "fp32")
		beforeAttn := nodeCost(t, before, fusedNodes(g, "FusedAttention")[0].Name)
		checkPreservesExact(t, g, "fuse-attention-seqfirst", "fuse-attention-packed")
		parts := 5 + 6 + 3 // attention (Div, Kᵀ, MatMul, Softmax, MatMul), 3 Reshape + 3 Transpose, 3 Slices
		if mask != 0 {
			parts++
		}
		n := expectOne(t, g, "FusedAttention", parts)
		if n.AttrInt("num_heads", 0) != sfH || !ir.QKVPacked(n) || !permIs(n, "q_perm", seqQPerm4) ||
			!permIs(n, "k_perm", seqKPerm4) || !permIs(n, "v_perm", seqQPerm4) || !permIs(n, "o_perm", seqOPerm4) {
			t.Errorf("attributes: %s", ir.NodeText(n))
		}
		if got, want := n.Out(0).Shape.String(), "[5,2,8]"; got != want {
			t.Errorf("fused output %s, want %s ([L, N, E])", got, want)
		}
		expectNoneOf(t, g, "Transpose", "Slice")
		after := analyzeAt(t, b, g, "fp32")
		nc := nodeCost(t, after, n.Name)
		wantMACs := float64(2 * sfN * sfH * sfL * sfL * sfD) // Q·Kᵀ and P·V per head
		if nc.MACs != wantMACs || nc.MACs != beforeAttn.MACs || after.Totals.FLOPs != before.Totals.FLOPs {
			t.Errorf("mask %d: attention MACs %g (before %g, want %g); FLOPs %g -> %g",
				mask, nc.MACs, beforeAttn.MACs, wantMACs, before.Totals.FLOPs, after.Totals.FLOPs)
		}
		if after.Totals.Launches != before.Totals.Launches-6 {
			t.Errorf("launches %g -> %g, want 3 Transposes and 3 Slices fewer", before.Totals.Launches, after.Totals.Launches)
		}
	}
}

// With every pass the block is in_proj, one attention, out_proj.
func TestAttentionSeqFirstFullTable(t *testing.T) {
	b := newBuilder(t)
	buildSeqFirstMHA(b, sfOpts{mask: 2})
	g := b.infer()
	checkPreserves(t, g, DefaultNames()...)
	if got, want := ops(g), "onnxcost.FusedGemm onnxcost.FusedAttention Reshape MatMul Reshape"; got != want {
		t.Errorf("ops %q, want %q", got, want)
	}
}

func TestAttentionSeqFirstGuards(t *testing.T) {
	for name, c := range map[string]struct {
		o        sfOpts
		noHeads  bool // the head split must stay
		noPacked bool // the Slices must stay
	}{
		"per-head rank-3 mask":         {o: sfOpts{mask: 3}, noHeads: true, noPacked: true},
		"Q head view read elsewhere":   {o: sfOpts{qViewOut: true}, noHeads: true, noPacked: true},
		"V not a head split transpose": {o: sfOpts{vReshaped: true}, noHeads: true, noPacked: true},
		"Slices out of Q, K, V order":  {o: sfOpts{sliceOrder: []int{1, 0, 2}}, noPacked: true},
	} {
		t.Run(name, func(t *testing.T) {
			b := newBuilder(t)
			buildSeqFirstMHA(b, c.o)
			g := b.infer()
			checkPreserves(t, g, "fuse-attention", "fuse-attention-seqfirst", "fuse-attention-packed")
			for _, n := range fusedNodes(g, "FusedAttention") {
				if c.noHeads && n.Attr("num_heads") != nil {
					t.Errorf("heads absorbed though a guard fails: %s", ir.NodeText(n))
				}
				if c.noPacked && ir.QKVPacked(n) {
					t.Errorf("Slices absorbed though a guard fails: %s", ir.NodeText(n))
				}
			}
		})
	}
}

// The committed export (passes/testdata/mha_seqfirst.onnx, graph only,
// scripts/export_mha.py): nn.MultiheadAttention(32, 4) on [10, 2, 32]
// keeps only in_proj, the attention and out_proj as kernels.
func TestAttentionSeqFirstExport(t *testing.T) {
	m := loadInferred(t, filepath.Join("testdata", "mha_seqfirst.onnx"), 0)
	runPasses(t, m.Graph, DefaultNames()...)
	n := expectOne(t, m.Graph, "FusedAttention", 14)
	if n.AttrInt("num_heads", 0) != 4 || !ir.QKVPacked(n) {
		t.Errorf("attention: %s", ir.NodeText(n))
	}
	rep, err := cost.Analyze(m.Graph, m, a100(t), cost.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Totals.Launches != 3 {
		t.Errorf("%g launches, want 3 (in_proj, attention, out_proj): %s", rep.Totals.Launches, ops(m.Graph))
	}
}

// batch_first: the Transpose before in_proj moves into the attention's
// perms (fuse-attention-sink); values and FLOPs unchanged, one launch fewer.
func TestAttentionSinkBatchFirst(t *testing.T) {
	b := newBuilder(t)
	buildSeqFirstMHA(b, sfOpts{mask: 2, batchFirst: true})
	g := b.infer()
	before := analyzeAt(t, b, g, "fp32")
	checkPreserves(t, g, DefaultNames()...)
	if got, want := ops(g), "onnxcost.FusedGemm onnxcost.FusedAttention Reshape MatMul Reshape"; got != want {
		t.Errorf("ops %q, want %q", got, want)
	}
	n := expectOne(t, g, "FusedAttention", 16) // 14 + the mask Add + the input Transpose
	if !permIs(n, ir.KeyQPerm, headPerm) || !permIs(n, ir.KeyKPerm, kHeadPerm) || !permIs(n, ir.KeyVPerm, headPerm) ||
		!permIs(n, ir.KeyOPerm, seqOPerm4) || n.In(0).Shape.String() != "[2,5,24]" || n.Out(0).Shape.String() != "[5,2,8]" {
		t.Errorf("attention: %s", ir.NodeText(n))
	}
	after := analyzeAt(t, b, g, "fp32")
	if after.Totals.FLOPs != before.Totals.FLOPs || after.Totals.MACs != before.Totals.MACs {
		t.Errorf("FLOPs %g -> %g, MACs %g -> %g", before.Totals.FLOPs, after.Totals.FLOPs, before.Totals.MACs, after.Totals.MACs)
	}
}

// The transposed input read elsewhere stays, and with it the
// sequence-first layout.
func TestAttentionSinkGuard(t *testing.T) {
	b := newBuilder(t)
	buildSeqFirstMHA(b, sfOpts{batchFirst: true, xTOut: true})
	g := b.infer()
	checkPreserves(t, g, DefaultNames()...)
	n := expectOne(t, g, "FusedAttention", 14)
	if !permIs(n, ir.KeyQPerm, seqQPerm4) {
		t.Errorf("sunk though the transposed input is a graph output: %s", ir.NodeText(n))
	}
}
