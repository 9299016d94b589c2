package passes

import (
	"testing"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/ir"
)

// Geometry of the hand-built skip + LayerNorm: [B, L, D], normalised over D.
const skB, skL, skD = 2, 4, 8

// skipOpts vary the hand-built block.
type skipOpts struct {
	sumReadAfter  bool // the sum is also read after the LayerNorm (pre-LN residual)
	sumOutput     bool // the sum is a graph output
	sumReadBefore bool // a reader of the sum sits between the Add and the LayerNorm
	meanUsed      bool // the LayerNorm's Mean output is a graph output
	constSkip     bool // the addend is a constant (a bias, not a skip)
	broadcastSkip bool // the addend is [D], broadcast
}

// buildSkipLN builds LayerNormalization(Add(x, r)) at opset 17.
func buildSkipLN(b *builder, o skipOpts) (x, r, y, s *ir.Value) {
	b.M.Opsets[0].Version = 17
	x = b.input("x", skB, skL, skD)
	switch {
	case o.constSkip:
		r = b.weight("r", skB, skL, skD)
	case o.broadcastSkip:
		r = b.input("r", skD)
	default:
		r = b.input("r", skB, skL, skD)
	}
	s = b.op("Add", nil, x, r)
	if o.sumReadBefore {
		b.output(b.op("Mul", nil, s, s))
	}
	nout := 1
	if o.meanUsed {
		nout = 2
	}
	ln := b.node("LayerNormalization", []*ir.Value{s, b.positive("gamma", skD), b.weight("beta", skD)}, nout, ir.IntAttr("axis", -1))
	y = ln.Out(0)
	b.output(y)
	if o.meanUsed {
		b.output(ln.Out(1))
	}
	if o.sumReadAfter {
		b.output(b.op("Add", nil, s, y))
	}
	if o.sumOutput {
		b.output(s)
	}
	return x, r, y, s
}

func TestSkipLayerNormFuses(t *testing.T) {
	b := newBuilder(t)
	x, r, y, _ := buildSkipLN(b, skipOpts{})
	g := b.infer()
	unfused, err := cost.Analyze(g, b.M, a100(t), cost.Options{DType: "fp32"})
	if err != nil {
		t.Fatal(err)
	}
	checkPreservesExact(t, g, "fuse-skip-layernorm")
	n := expectOne(t, g, "SkipLayerNormalization", 2) // Add LayerNormalization
	if n.In(0) != x || n.In(1) != r || len(n.Inputs) != 4 || len(n.Outputs) != 1 || n.Out(0) != y {
		t.Errorf("reads %v writes %v; want (x, r, gamma, beta) -> y", n.Inputs, n.Outputs)
	}
	rep, err := cost.Analyze(g, b.M, a100(t), cost.Options{DType: "fp32"})
	if err != nil {
		t.Fatal(err)
	}
	nc := nodeCost(t, rep, n.Name)
	const elems = skB * skL * skD
	wantRead := float64(f32Bytes * (2*elems + 2*skD)) // x, r, gamma, beta: the sum stays on chip
	wantWritten := float64(f32Bytes * elems)          // y only
	if nc.BytesRead != wantRead || nc.BytesWritten != wantWritten || nc.Launches != 1 {
		t.Errorf("read %g written %g launches %g; want %g %g 1", nc.BytesRead, nc.BytesWritten, nc.Launches, wantRead, wantWritten)
	}
	if rep.Totals.FLOPs != unfused.Totals.FLOPs || rep.Totals.Launches != unfused.Totals.Launches-1 {
		t.Errorf("FLOPs %g launches %g; unfused %g %g (want equal FLOPs, one launch fewer)",
			rep.Totals.FLOPs, rep.Totals.Launches, unfused.Totals.FLOPs, unfused.Totals.Launches)
	}
}

// TestSkipLayerNormSum: a sum read elsewhere (the next residual, or a
// graph output) becomes the fused node's second output.
func TestSkipLayerNormSum(t *testing.T) {
	for name, o := range map[string]skipOpts{
		"read after": {sumReadAfter: true},
		"output":     {sumOutput: true},
	} {
		t.Run(name, func(t *testing.T) {
			b := newBuilder(t)
			_, _, y, s := buildSkipLN(b, o)
			g := b.infer()
			checkPreservesExact(t, g, "fuse-skip-layernorm")
			n := expectOne(t, g, "SkipLayerNormalization", 2)
			if len(n.Outputs) != 2 || n.Out(0) != y || n.Out(1) != s {
				t.Errorf("writes %v, want (y, sum)", n.Outputs)
			}
		})
	}
}

// TestSkipLayerNormRecognised: the residual Add before a LayerNorm
// decomposition joins the recognised LayerNormalization; its parts add up.
func TestSkipLayerNormRecognised(t *testing.T) {
	b := newBuilder(t)
	r := b.input("r", 2, 4, 8)
	y := buildLayerNormOf(b, func(x *ir.Value) *ir.Value { return b.op("Add", nil, x, r) })
	g := b.infer()
	unfused, err := cost.Analyze(g, b.M, a100(t), cost.Options{DType: "fp32"})
	if err != nil {
		t.Fatal(err)
	}
	checkPreservesExact(t, g, "fuse-layernorm", "fuse-skip-layernorm")
	n := expectOne(t, g, "SkipLayerNormalization", 10) // Add + the 9 nodes of the decomposition
	if n.Out(0) != y || n.AttrInt("axis", 0) != -1 {
		t.Errorf("writes %v axis %d", n.Outputs, n.AttrInt("axis", 0))
	}
	rep, err := cost.Analyze(g, b.M, a100(t), cost.Options{DType: "fp32"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Totals.FLOPs != unfused.Totals.FLOPs || rep.Totals.Transcendentals != unfused.Totals.Transcendentals {
		t.Errorf("FLOPs %g transcendentals %g, unfused %g %g", rep.Totals.FLOPs, rep.Totals.Transcendentals, unfused.Totals.FLOPs, unfused.Totals.Transcendentals)
	}
}

// buildLayerNormOf builds torch's LayerNorm export over pre(x), x [2,4,8].
func buildLayerNormOf(b *builder, pre func(*ir.Value) *ir.Value) *ir.Value {
	x := pre(b.input("x", 2, 4, 8))
	axes := []*ir.Attribute{ir.IntsAttr("axes", -1)}
	d := b.op("Sub", nil, x, b.op("ReduceMean", axes, x))
	v := b.op("ReduceMean", axes, b.op("Pow", nil, d, b.scalar("two", 2)))
	y := b.op("Div", nil, d, b.op("Sqrt", nil, b.op("Add", nil, v, b.scalar("eps", 1e-5))))
	y = b.op("Add", nil, b.op("Mul", nil, y, b.weight("gamma", 8)), b.weight("beta", 8))
	b.output(y)
	return y
}

func TestSkipLayerNormGuards(t *testing.T) {
	build := func(b *builder, o skipOpts) *ir.Value { _, _, y, _ := buildSkipLN(b, o); return y }
	expectDeclines(t, "fuse-skip-layernorm", "SkipLayerNormalization", guardCases(build, map[string]skipOpts{
		"sum read before the norm": {sumReadBefore: true},
		"mean output used":         {meanUsed: true},
		"constant addend":          {constSkip: true},
		"broadcast addend":         {broadcastSkip: true},
	}))
}

// TestSkipLayerNormORT: onnxruntime's SkipLayerNormFusion takes a post-LN
// block (the sum read only by the LayerNorm), also with a symbolic
// sequence length both addends share (onnxruntime 1.23.2 fused a block
// with batch and sequence symbolic), and leaves a pre-LN one (the sum
// read again after it) and addends whose dims its shape inference did
// not know (onnxcost names those "?..."), where fuse-skip-layernorm fuses
// the first two.
func TestSkipLayerNormORT(t *testing.T) {
	for _, c := range []struct {
		name  string
		o     skipOpts
		seq   string // a symbolic sequence dim, or "" for skL
		fuses bool
	}{
		{name: "post-LN", fuses: true},
		{name: "pre-LN: the sum read again", o: skipOpts{sumReadAfter: true}},
		{name: "the sum a graph output", o: skipOpts{sumOutput: true}},
		{name: "symbolic sequence", seq: "seq", fuses: true},
		{name: "dims not known", seq: "?reshape_1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBuilder(t)
			if c.seq == "" {
				buildSkipLN(b, c.o)
			} else {
				b.M.Opsets[0].Version = 17
				sym := func(name string) *ir.Value {
					v := b.Input(name, ir.Float32, skB, skL, skD)
					v.Shape = ir.RankedShape(ir.D(skB), ir.S(c.seq), ir.D(skD))
					v.Declared.Shape = v.Shape
					return v
				}
				x, r := sym("x"), sym("r")
				ln := b.node("LayerNormalization", []*ir.Value{b.op("Add", nil, x, r), b.positive("gamma", skD), b.weight("beta", skD)}, 1, ir.IntAttr("axis", -1))
				b.output(ln.Out(0))
			}
			g := b.infer()
			before := ops(g)
			if c.seq == "" {
				checkPreservesExact(t, g, "fuse-skip-layernorm-ort")
			} else if _, err := Run(g, Options{Only: []string{"fuse-skip-layernorm-ort"}, Check: true}); err != nil {
				t.Fatal(err) // the reference evaluator takes known shapes only
			}
			got := ops(g)
			switch {
			case c.fuses && got != "onnxcost.SkipLayerNormalization":
				t.Errorf("ops %q, want one onnxcost.SkipLayerNormalization", got)
			case !c.fuses && got != before:
				t.Errorf("fused what onnxruntime does not: %q -> %q", before, got)
			}
		})
	}
}
