package passes

import (
	"math"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// transformerGraph builds a post-LN transformer encoder as torch exports
// it, with every pattern of passes part 2 in each layer (LayerNorm
// decompositions, erf GELU, attention with scale, mask and K transpose,
// residual adds), repeated until the graph has at least nodes nodes.
// Tiny dims keep inference cheap: B=1, L=8, D=8, 2 heads of 4.
func transformerGraph(tb testing.TB, nodes int) (*ir.Graph, int) {
	const b, l, d, h, hd, ff = 1, 8, 8, 2, 4, 16
	bl := newBuilder(tb)
	x := bl.input("x", b, l, d)
	mask := bl.input("mask", b, 1, 1, l)
	u := bl.g.UniqueName
	w := func(dims ...int64) *ir.Value { return bl.blind(u("w"), dims...) }
	sc := func(v float64) *ir.Value { return bl.scalar(u("c"), v) }
	axes := []*ir.Attribute{ir.IntsAttr("axes", -1)}
	layerNorm := func(x *ir.Value) *ir.Value {
		dd := bl.op("Sub", nil, x, bl.op("ReduceMean", axes, x))
		v := bl.op("ReduceMean", axes, bl.op("Pow", nil, dd, sc(2)))
		y := bl.op("Div", nil, dd, bl.op("Sqrt", nil, bl.op("Add", nil, v, sc(1e-12))))
		return bl.op("Add", nil, bl.op("Mul", nil, y, w(d)), w(d))
	}
	linear := func(x *ir.Value, in, out int64) *ir.Value {
		return bl.op("Add", nil, bl.op("MatMul", nil, x, w(in, out)), w(out))
	}
	heads := func(x *ir.Value, perm ...int64) *ir.Value {
		r := bl.op("Reshape", nil, x, bl.int64s(u("shape"), b, l, h, hd))
		return bl.op("Transpose", []*ir.Attribute{ir.IntsAttr("perm", perm...)}, r)
	}
	layers := 0
	for len(bl.g.Nodes) < nodes {
		layers++
		q := heads(linear(x, d, d), 0, 2, 1, 3)
		kt := heads(linear(x, d, d), 0, 2, 3, 1)
		v := heads(linear(x, d, d), 0, 2, 1, 3)
		s := bl.op("Div", nil, bl.op("MatMul", nil, q, kt), sc(math.Sqrt(hd)))
		p := bl.op("Softmax", []*ir.Attribute{ir.IntAttr("axis", -1)}, bl.op("Add", nil, s, mask))
		ctx := bl.op("Transpose", []*ir.Attribute{ir.IntsAttr("perm", 0, 2, 1, 3)}, bl.op("MatMul", nil, p, v))
		ctx = bl.op("Reshape", nil, ctx, bl.int64s(u("shape"), b, l, d))
		x = layerNorm(bl.op("Add", nil, x, linear(ctx, d, d)))
		f := linear(x, d, ff)
		erf := bl.op("Erf", nil, bl.op("Div", nil, f, sc(math.Sqrt2)))
		f = bl.op("Mul", nil, bl.op("Mul", nil, f, bl.op("Add", nil, erf, sc(1))), sc(0.5))
		x = layerNorm(bl.op("Add", nil, x, linear(f, ff, d)))
	}
	bl.output(x)
	return bl.infer(), layers
}

// BenchmarkPassesPart2 runs the whole pass table on a 10,000-node
// transformer graph (target: well under 1 s per run).
func BenchmarkPassesPart2(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		g, _ := transformerGraph(b, 10000)
		b.StartTimer()
		if _, err := Run(g, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestTransformerGraphFuses checks what the benchmark measures: every
// layer's attention, GELU and LayerNorms are recognised by the full table.
func TestTransformerGraphFuses(t *testing.T) {
	g, layers := transformerGraph(t, 200)
	runPasses(t, g, DefaultNames()...)
	if got := len(fusedNodes(g, "FusedAttention")); got != layers {
		t.Errorf("FusedAttention %d, want %d (1 per layer)", got, layers)
	}
	if got := len(fusedNodes(g, "LayerNormalization")); got != 2*layers {
		t.Errorf("LayerNormalization %d, want %d (2 per layer)", got, 2*layers)
	}
	for _, n := range g.Nodes {
		if n.Domain == "" && (n.OpType == "Softmax" || n.OpType == "Erf" || n.OpType == "ReduceMean") {
			t.Errorf("%s left unfused", ir.NodeText(n))
		}
	}
}
