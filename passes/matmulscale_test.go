package passes

import (
	"math"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// TestFuseMatMulScale checks onnxruntime's MatMulScaleFusion and
// MatmulTransposeFusion rules, with the numbers unchanged: the attention
// scores' 1/√d Div after the MatMul, a Mul by a constant on an operand, a
// Transpose of the last two axes (Kᵀ), a batch transpose
// (nn.MultiheadAttention's [L, B·H, d] operands) and a chain of them fold
// into one FusedMatMul with alpha, transA, transB, transBatchA/B; a
// transpose or scale read
// elsewhere too stays for that reader; and nothing else folds: a
// transpose of other axes, a scale by a tensor, a Div whose constant is
// the dividend, a second reader of the MatMul's output.
func TestFuseMatMulScale(t *testing.T) {
	const bh, l, d = 2, 5, 4 // batch·heads, sequence, head size
	type tc struct {
		name  string
		build func(b *builder) (kept []string)
		ops   string
		alpha float64
		trA   int64
		trB   int64
		tbA   int64 // transBatchA
		tbB   int64
	}
	qk := func(b *builder) (*ir.Value, *ir.Value) { return b.input("q", bh, l, d), b.input("k", bh, d, l) }
	for _, c := range []tc{
		{name: "scores / sqrt(d)", ops: "onnxcost.FusedMatMul", alpha: 0.5, build: func(b *builder) []string {
			q, k := qk(b)
			b.output(b.op("Div", nil, b.op("MatMul", nil, q, k), b.scalar("sqrt_d", 2)))
			return nil
		}},
		{name: "scaled q, Kᵀ transposed", ops: "onnxcost.FusedMatMul", alpha: 0.125, trB: 1, build: func(b *builder) []string {
			q := b.input("q", bh, l, d)
			kt := b.op("Transpose", []*ir.Attribute{ir.IntsAttr("perm", 0, 2, 1)}, b.input("k", bh, l, d))
			b.output(b.op("MatMul", nil, b.op("Mul", nil, b.scalar("s", 0.125), q), kt))
			return nil
		}},
		{name: "transpose then scale, and a scale after", ops: "onnxcost.FusedMatMul", alpha: 0.25, trA: 1, build: func(b *builder) []string {
			a := b.op("Mul", nil, b.op("Transpose", []*ir.Attribute{ir.IntsAttr("perm", 0, 2, 1)}, b.input("a", bh, d, l)), b.scalar("two", 2))
			b.output(b.op("Mul", nil, b.op("MatMul", nil, a, b.input("k", bh, d, l)), b.scalar("eighth", 0.125)))
			return nil
		}},
		{name: "rank-2 transpose without perm", ops: "onnxcost.FusedMatMul", alpha: 1, trB: 1, build: func(b *builder) []string {
			w := b.op("Transpose", nil, b.weight("w", l, d))
			b.output(b.op("MatMul", nil, b.input("x", 3, d), w))
			return nil
		}},
		{name: "a transpose read elsewhere stays", ops: "Transpose onnxcost.FusedMatMul Relu", alpha: 1, trB: 1, build: func(b *builder) []string {
			kt := b.op("Transpose", []*ir.Attribute{ir.IntsAttr("perm", 0, 2, 1)}, b.input("k", bh, l, d))
			b.output(b.op("MatMul", nil, b.input("q", bh, l, d), kt), b.op("Relu", nil, kt))
			return nil
		}},
		{name: "batch transposes (nn.MultiheadAttention's q·kᵀ)", ops: "onnxcost.FusedMatMul", alpha: 1, trB: 1, tbA: 1, tbB: 1, build: func(b *builder) []string {
			// q, k as [L, B·H, d]: q.transpose(0, 1) and k.permute(1, 2, 0)
			q := b.op("Transpose", []*ir.Attribute{ir.IntsAttr("perm", 1, 0, 2)}, b.input("q", l, bh, d))
			kt := b.op("Transpose", []*ir.Attribute{ir.IntsAttr("perm", 1, 2, 0)}, b.input("k", l, bh, d))
			b.output(b.op("MatMul", nil, q, kt))
			return nil
		}},
		{name: "a batch transpose then a last-two one", ops: "onnxcost.FusedMatMul", alpha: 1, trB: 1, tbB: 1, build: func(b *builder) []string {
			k := b.op("Transpose", []*ir.Attribute{ir.IntsAttr("perm", 1, 0, 2)}, b.input("k", l, bh, d))
			kt := b.op("Transpose", []*ir.Attribute{ir.IntsAttr("perm", 0, 2, 1)}, k)
			b.output(b.op("MatMul", nil, b.input("q", bh, l, d), kt))
			return nil
		}},
		{name: "a batch transpose before a rank-2 weight stays", ops: "Transpose MatMul", build: func(b *builder) []string {
			x := b.op("Transpose", []*ir.Attribute{ir.IntsAttr("perm", 1, 0, 2)}, b.input("x", bh, l, d))
			b.output(b.op("MatMul", nil, x, b.weight("w", d, l)))
			return nil
		}},
		{name: "transpose of other axes", ops: "Transpose MatMul", build: func(b *builder) []string {
			kt := b.op("Transpose", []*ir.Attribute{ir.IntsAttr("perm", 2, 1, 0)}, b.input("k", l, d, bh))
			b.output(b.op("MatMul", nil, b.input("q", bh, l, d), kt))
			return nil
		}},
		{name: "scale by a tensor", ops: "MatMul Mul", build: func(b *builder) []string {
			q, k := qk(b)
			b.output(b.op("Mul", nil, b.op("MatMul", nil, q, k), b.weight("s", l)))
			return nil
		}},
		{name: "constant dividend", ops: "MatMul Div", build: func(b *builder) []string {
			q, k := qk(b)
			b.output(b.op("Div", nil, b.scalar("one", 1), b.op("MatMul", nil, q, k)))
			return nil
		}},
		{name: "scores read twice", ops: "MatMul Div Relu", build: func(b *builder) []string {
			q, k := qk(b)
			s := b.op("MatMul", nil, q, k)
			b.output(b.op("Div", nil, s, b.scalar("sqrt_d", 2)), b.op("Relu", nil, s))
			return nil
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBuilder(t)
			c.build(b)
			g := b.infer()
			checkPreserves(t, g, "fuse-matmul-scale")
			if got := ops(g); got != c.ops {
				t.Fatalf("ops %q, want %q", got, c.ops)
			}
			for _, n := range g.Nodes {
				if n.OpType != ir.OpFusedMatMul {
					continue
				}
				if a := float64(n.AttrFloat("alpha", 1)); math.Abs(a-c.alpha) > 1e-7 || n.AttrInt("transA", 0) != c.trA || n.AttrInt("transB", 0) != c.trB {
					t.Errorf("alpha %g transA %d transB %d, want %g %d %d", a, n.AttrInt("transA", 0), n.AttrInt("transB", 0), c.alpha, c.trA, c.trB)
				}
				if n.AttrInt("transBatchA", 0) != c.tbA || n.AttrInt("transBatchB", 0) != c.tbB {
					t.Errorf("transBatchA %d transBatchB %d, want %d %d", n.AttrInt("transBatchA", 0), n.AttrInt("transBatchB", 0), c.tbA, c.tbB)
				}
			}
		})
	}
}
