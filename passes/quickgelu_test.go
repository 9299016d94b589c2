package passes

import (
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// TestFuseQuickGelu checks onnxruntime's QuickGeluFusion rule: SiLU as
// Sigmoid and Mul, and x·sigmoid(α·x) with a scalar α on either side of
// the Mul, become one QuickGelu with the numbers unchanged, in either
// operand order; and nothing else fuses: a Sigmoid read twice, a gate
// whose other operand is not the Sigmoid's input, an α that is a tensor,
// an α-Mul read elsewhere too.
func TestFuseQuickGelu(t *testing.T) {
	type tc struct {
		name  string
		build func(b *builder, x *ir.Value)
		want  string
		alpha float64
	}
	for _, c := range []tc{
		{name: "silu", build: func(b *builder, x *ir.Value) {
			b.output(b.op("Mul", nil, x, b.op("Sigmoid", nil, x)))
		}, want: "onnxcost.QuickGelu", alpha: 1},
		{name: "silu, sigmoid first", build: func(b *builder, x *ir.Value) {
			b.output(b.op("Mul", nil, b.op("Sigmoid", nil, x), x))
		}, want: "onnxcost.QuickGelu", alpha: 1},
		{name: "alpha", build: func(b *builder, x *ir.Value) {
			b.output(b.op("Mul", nil, x, b.op("Sigmoid", nil, b.op("Mul", nil, x, b.scalar("a", 1.702)))))
		}, want: "onnxcost.QuickGelu", alpha: 1.702},
		{name: "alpha first", build: func(b *builder, x *ir.Value) {
			b.output(b.op("Mul", nil, b.op("Sigmoid", nil, b.op("Mul", nil, b.scalar("a", 1.702), x)), x))
		}, want: "onnxcost.QuickGelu", alpha: 1.702},
		{name: "sigmoid read twice", build: func(b *builder, x *ir.Value) {
			s := b.op("Sigmoid", nil, x)
			b.output(b.op("Mul", nil, x, s), b.op("Relu", nil, s))
		}},
		{name: "other gate", build: func(b *builder, x *ir.Value) {
			b.output(b.op("Mul", nil, b.op("Relu", nil, x), b.op("Sigmoid", nil, x)))
		}},
		{name: "tensor alpha", build: func(b *builder, x *ir.Value) {
			a := b.constant("a", []int64{8}, []float64{1, 2, 3, 4, 5, 6, 7, 8})
			b.output(b.op("Mul", nil, x, b.op("Sigmoid", nil, b.op("Mul", nil, x, a))))
		}},
		{name: "alpha product read twice", build: func(b *builder, x *ir.Value) {
			ax := b.op("Mul", nil, x, b.scalar("a", 1.702))
			b.output(b.op("Mul", nil, x, b.op("Sigmoid", nil, ax)), b.op("Relu", nil, ax))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBuilder(t)
			x := b.Input("x", ir.Float32, 2, 4, 8)
			c.build(b, x)
			g := b.infer()
			before := ops(g)
			if c.want != "" {
				checkPreserves(t, g, "fuse-quickgelu-ort")
			} else if _, err := Run(g, Options{Only: []string{"fuse-quickgelu-ort"}, Check: true}); err != nil {
				t.Fatal(err)
			}
			got := ops(g)
			switch {
			case c.want != "" && got != c.want:
				t.Errorf("ops %q, want %q", got, c.want)
			case c.want != "":
				n := g.Nodes[0]
				if n.In(0) != x || n.AttrFloat("alpha", 0) != c.alpha {
					t.Errorf("QuickGelu(%v){alpha=%v}, want (x){alpha=%v}", n.Inputs, n.AttrFloat("alpha", 0), c.alpha)
				}
			case got != before:
				t.Errorf("fused what onnxruntime does not: %q -> %q", before, got)
			}
		})
	}
}

// TestFuseSilu: the eager plan's SiLU takes x·sigmoid(x) in either
// operand order and leaves x·sigmoid(α·x), three ops in eager PyTorch.
func TestFuseSilu(t *testing.T) {
	for _, c := range []struct {
		name  string
		build func(b *builder, x *ir.Value)
		want  string
	}{
		{"silu", func(b *builder, x *ir.Value) { b.output(b.op("Mul", nil, x, b.op("Sigmoid", nil, x))) }, "onnxcost.QuickGelu"},
		{"silu, sigmoid first", func(b *builder, x *ir.Value) { b.output(b.op("Mul", nil, b.op("Sigmoid", nil, x), x)) }, "onnxcost.QuickGelu"},
		{"alpha", func(b *builder, x *ir.Value) {
			b.output(b.op("Mul", nil, x, b.op("Sigmoid", nil, b.op("Mul", nil, x, b.scalar("a", 1.702)))))
		}, "Mul Sigmoid Mul"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBuilder(t)
			x := b.Input("x", ir.Float32, 2, 4, 8)
			c.build(b, x)
			g := b.infer()
			if c.want == "onnxcost.QuickGelu" {
				checkPreserves(t, g, "fuse-silu")
			} else if _, err := Run(g, Options{Only: []string{"fuse-silu"}, Check: true}); err != nil {
				t.Fatal(err)
			}
			if got := ops(g); got != c.want {
				t.Errorf("ops %q, want %q", got, c.want)
			}
		})
	}
}

// TestFuseRsqrt: torch.rsqrt as torch.onnx and the dynamo exporter write
// it is one kernel; a Sqrt something else reads, or a Div of another
// numerator, is not.
func TestFuseRsqrt(t *testing.T) {
	for _, c := range []struct {
		name string
		form func(b *builder, s *ir.Value) *ir.Value
		want string
	}{
		{"Div(1, Sqrt)", func(b *builder, s *ir.Value) *ir.Value { return b.op("Div", nil, b.scalar("one", 1), s) }, "onnxcost.FusedElementwise"},
		{"Reciprocal(Sqrt)", func(b *builder, s *ir.Value) *ir.Value { return b.op("Reciprocal", nil, s) }, "onnxcost.FusedElementwise"},
		{"Div(2, Sqrt)", func(b *builder, s *ir.Value) *ir.Value { return b.op("Div", nil, b.scalar("two", 2), s) }, "Sqrt Div"},
	} {
		b := newBuilder(t)
		v := b.input("v", 4, 8, 1)
		b.output(c.form(b, b.op("Sqrt", nil, v)))
		if got := ops(b.run("fuse-rsqrt")); got != c.want {
			t.Errorf("%s: ops %s, want %s", c.name, got, c.want)
		}
	}
}
