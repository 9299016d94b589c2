package passes

import (
	"math"
	"testing"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
)

// Attention geometry of the hand-built blocks.
const (
	attnB, attnH, attnL, attnD = 2, 4, 16, 8
)

// attnOpts vary the hand-built attention block.
type attnOpts struct {
	where        bool // Where(cond, S, fill) instead of Add(S, mask)
	scaleOnQ     bool // Q/sqrt(d) before the MatMul (nn.MultiheadAttention)
	scoresOutput bool // the raw scores are also a graph output
	probsReused  bool // the probabilities are read by another node too
	axis         int64
	dropoutMask  bool // a Dropout whose mask output is used
}

// buildAttention builds softmax(Q·Kᵀ/sqrt(d) + mask)·V with Q, K, V
// [B,H,L,d] and Kᵀ = Transpose(K), as torch exports BERT's attention.
func buildAttention(b *builder, o attnOpts) (q, k, v, mask, out *ir.Value) {
	q = b.input("q", attnB, attnH, attnL, attnD)
	k = b.input("k", attnB, attnH, attnL, attnD)
	v = b.input("v", attnB, attnH, attnL, attnD)
	kt := b.op("Transpose", []*ir.Attribute{ir.IntsAttr("perm", 0, 1, 3, 2)}, k)
	scale := b.scalar("scale", math.Sqrt(attnD))
	qq := q
	if o.scaleOnQ {
		qq = b.op("Div", nil, q, scale)
	}
	s := b.op("MatMul", nil, qq, kt)
	if o.scoresOutput {
		b.output(s)
	}
	if !o.scaleOnQ {
		s = b.op("Div", nil, s, scale)
	}
	if o.where {
		mask = b.input("cond", attnB, 1, 1, attnL)
		mask.DType, mask.Declared.DType = ir.Bool, ir.Bool
		s = b.op("Where", nil, mask, s, b.scalar("fill", -1e4))
	} else {
		mask = b.input("mask", attnB, 1, 1, attnL)
		s = b.op("Add", nil, s, mask)
	}
	axis := o.axis
	if axis == 0 {
		axis = -1
	}
	p := b.op("Softmax", []*ir.Attribute{ir.IntAttr("axis", axis)}, s)
	if o.probsReused {
		b.output(b.op("Neg", nil, p))
	}
	if o.dropoutMask {
		d := b.node("Dropout", []*ir.Value{p}, 2)
		p = d.Out(0)
		b.output(d.Out(1))
	}
	out = b.op("MatMul", nil, p, v)
	b.output(out)
	return q, k, v, mask, out
}

func TestAttentionFuses(t *testing.T) {
	b := newBuilder(t)
	q, k, v, mask, out := buildAttention(b, attnOpts{})
	g := b.infer()
	unfused, err := cost.Analyze(g, b.M, a100(t), cost.Options{DType: "fp32"})
	if err != nil {
		t.Fatal(err)
	}
	runPasses(t, g, "fuse-attention")
	n := expectOne(t, g, "FusedAttention", 6) // Transpose MatMul Div Add Softmax MatMul
	want := []*ir.Value{q, k, v, mask}
	if len(n.Inputs) != len(want) || n.Out(0) != out {
		t.Fatalf("FusedAttention reads %d inputs, want (q, k, v, mask)", len(n.Inputs))
	}
	for i := range want {
		if n.In(i) != want[i] {
			t.Errorf("input %d is %s, want %s", i, n.In(i).Name, want[i].Name)
		}
	}
	if n.AttrInt("k_transposed", 0) != 1 || n.AttrString("scale_on", "") != "scores" || n.AttrString("mask", "") != "add" ||
		math.Abs(n.AttrFloat("scale", 0)-1/math.Sqrt(attnD)) > 1e-6 {
		t.Errorf("attributes %+v", n.Attrs)
	}

	rep, err := cost.Analyze(g, b.M, a100(t), cost.Options{DType: "fp32"})
	if err != nil {
		t.Fatal(err)
	}
	nc := rep.Nodes[0]
	const scores = attnB * attnH * attnL * attnL // B·H·L·L
	const rows = attnB * attnH * attnL
	wantMACs := float64(2 * scores * attnD)                            // Q·Kᵀ and P·V, L·L·d each per head
	wantFLOPs := 2*wantMACs + scores + scores + (4*scores + rows)      // + scale + mask + softmax (4/score + 1/row)
	wantRead := float64(4 * (3*attnB*attnH*attnL*attnD + attnB*attnL)) // q, k, v, mask
	wantWritten := float64(4 * attnB * attnH * attnL * attnD)          // the context only: no scores
	if nc.MACs != wantMACs || nc.FLOPs != wantFLOPs || nc.BytesRead != wantRead || nc.BytesWritten != wantWritten || nc.Launches != 1 {
		t.Errorf("macs %g flops %g read %g written %g launches %g; want %g %g %g %g 1",
			nc.MACs, nc.FLOPs, nc.BytesRead, nc.BytesWritten, nc.Launches, wantMACs, wantFLOPs, wantRead, wantWritten)
	}
	if nc.Transcendentals != scores {
		t.Errorf("transcendentals %g, want one exp per score %d", nc.Transcendentals, scores)
	}
	// FLOPs unchanged by fusion; bytes lose at least the scores' round trips.
	if rep.Totals.FLOPs != unfused.Totals.FLOPs {
		t.Errorf("fused FLOPs %g, unfused %g", rep.Totals.FLOPs, unfused.Totals.FLOPs)
	}
	saved := unfused.Totals.BytesRead + unfused.Totals.BytesWritten - rep.Totals.BytesRead - rep.Totals.BytesWritten
	if saved < 2*4*scores {
		t.Errorf("bytes saved %g, want >= 2·B·H·L·L·4 = %d", saved, 2*4*scores)
	}
}

func TestAttentionVariants(t *testing.T) {
	t.Run("scale on q, where mask", func(t *testing.T) {
		b := newBuilder(t)
		q, _, _, cond, _ := buildAttention(b, attnOpts{scaleOnQ: true, where: true})
		g := b.run("fuse-attention")
		n := expectOne(t, g, "FusedAttention", 6) // Div(q) Transpose MatMul Where Softmax MatMul
		if n.In(0) != q || n.In(3) != cond || n.In(4) == nil || n.AttrString("scale_on", "") != "q" || n.AttrString("mask", "") != "where" {
			t.Errorf("inputs %v attributes %+v", n.Inputs, n.Attrs)
		}
	})
	t.Run("recognised softmax", func(t *testing.T) {
		// A softmax written as exp/sum is recognised first, then fused.
		b := newBuilder(t)
		q := b.input("q", attnB, attnH, attnL, attnD)
		k := b.input("k", attnB, attnH, attnD, attnL)
		v := b.input("v", attnB, attnH, attnL, attnD)
		s := b.op("MatMul", nil, q, k)
		e := b.op("Exp", nil, s)
		p := b.op("Div", nil, e, b.op("ReduceSum", []*ir.Attribute{ir.IntAttr("keepdims", 1)}, e, b.int64s("axes", -1)))
		b.output(b.op("MatMul", nil, p, v))
		g := b.run("fuse-softmax", "fuse-attention")
		n := expectOne(t, g, "FusedAttention", 5) // MatMul Exp ReduceSum Div MatMul
		if n.AttrInt("softmax_in_parts", 0) != 1 || n.AttrInt("k_transposed", 0) != 0 {
			t.Errorf("attributes %+v", n.Attrs)
		}
	})
}

func TestAttentionGuards(t *testing.T) {
	build := func(b *builder, o attnOpts) *ir.Value { _, _, _, _, out := buildAttention(b, o); return out }
	expectDeclines(t, "fuse-attention", "FusedAttention", guardCases(build, map[string]attnOpts{
		"scores are a graph output":    {scoresOutput: true},
		"probabilities read twice":     {probsReused: true},
		"softmax over another axis":    {axis: 2},
		"dropout mask used (training)": {dropoutMask: true},
	}))
}

func a100(t *testing.T) *hwdb.GPU {
	t.Helper()
	g, err := hwdb.Lookup("A100-SXM4-80GB")
	if err != nil {
		t.Fatal(err)
	}
	return g
}
