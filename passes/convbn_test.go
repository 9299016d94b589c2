package passes

import (
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// convBN builds x -> Conv -> BatchNormalization -> Relu with known
// weights; bias says whether the Conv has its own bias.
func convBN(t *testing.T, bias bool) (*builder, *ir.Node, *ir.Node) {
	b := newBuilder(t)
	x := b.input("x", 2, 3, 6, 6)
	ins := []*ir.Value{x, b.weight("w", 4, 3, 3, 3)}
	if bias {
		ins = append(ins, b.weight("b", 4))
	}
	conv := b.node("Conv", ins, 1, ir.IntsAttr("pads", 1, 1, 1, 1), ir.IntsAttr("strides", 2, 2))
	bn := b.node("BatchNormalization", []*ir.Value{conv.Out(0), b.positive("gamma", 4), b.weight("beta", 4), b.weight("mean", 4), b.positive("var", 4)}, 1,
		ir.FloatAttr("epsilon", 1e-3))
	b.output(b.op("Relu", nil, bn.Out(0)))
	return b, conv, bn
}

func TestFoldBNConvNumeric(t *testing.T) {
	for _, bias := range []bool{false, true} {
		b, conv, bn := convBN(t, bias)
		g := b.infer()
		checkPreserves(t, g, "fold-bn")
		if got, want := ops(g), "Conv Relu"; got != want {
			t.Fatalf("bias=%v: ops %q, want %q", bias, got, want)
		}
		c := find(g, "Conv")
		if len(c.FusedFrom) != 2 || c.FusedFrom[0] != conv.Name || c.FusedFrom[1] != bn.Name {
			t.Errorf("fused_from %v, want [%s %s]", c.FusedFrom, conv.Name, bn.Name)
		}
		if c.In(2) == nil || !c.In(2).IsInitializer {
			t.Errorf("folded Conv has no bias initializer")
		}
	}
}

// With weights not loaded (graph-only model), the fold still happens: the
// Conv gains a [K] bias marked missing and keeps its weight input.
func TestFoldBNGraphOnly(t *testing.T) {
	b := newBuilder(t)
	x := b.input("x", 1, 8, 4, 4)
	w := b.blind("w", 16, 8, 1, 1)
	conv := b.op("Conv", nil, x, w)
	y := b.op("BatchNormalization", nil, conv, b.blind("s", 16), b.blind("bb", 16), b.blind("m", 16), b.blind("v", 16))
	b.output(y)
	g := b.run("fold-bn", "cleanup")
	c := find(g, "Conv")
	if ops(g) != "Conv" || c.In(1) != w || c.Out(0) != y {
		t.Fatalf("got %s", ir.Dump(g))
	}
	bias := c.In(2)
	if bias == nil || !bias.Const.Loc.Missing || len(bias.Const.Dims) != 1 || bias.Const.Dims[0] != 16 {
		t.Fatalf("bias %+v, want a [16] initializer with missing contents", bias)
	}
	if len(g.Initializers) != 2 {
		t.Errorf("cleanup left %d initializers, want 2 (weight, folded bias)", len(g.Initializers))
	}
}

func TestFoldBNGemmNumeric(t *testing.T) {
	for _, transB := range []int64{0, 1} {
		b := newBuilder(t)
		a := b.input("a", 3, 5)
		w := b.weight("w", 5, 4)
		if transB == 1 {
			w = b.weight("wt", 4, 5)
		}
		y := b.op("Gemm", []*ir.Attribute{ir.IntAttr("transB", transB), ir.FloatAttr("alpha", 0.5), ir.FloatAttr("beta", 2)}, a, w, b.weight("c", 4))
		y = b.op("BatchNormalization", nil, y, b.positive("g", 4), b.weight("be", 4), b.weight("m", 4), b.positive("v", 4))
		b.output(y)
		g := b.infer()
		checkPreserves(t, g, "fold-bn")
		if ops(g) != "Gemm" {
			t.Fatalf("transB=%d: ops %q, want Gemm", transB, ops(g))
		}
	}
}

// Negative cases: each guard stops the fold.
func TestFoldBNGuards(t *testing.T) {
	cases := map[string]func(b *builder, conv, bn *ir.Node){
		"conv output has a second reader": func(b *builder, conv, bn *ir.Node) {
			b.output(b.op("Sigmoid", nil, conv.Out(0)))
		},
		"conv output is a graph output": func(b *builder, conv, bn *ir.Node) {
			b.output(conv.Out(0))
		},
		"training mode": func(b *builder, conv, bn *ir.Node) {
			bn.SetAttr(ir.IntAttr("training_mode", 1))
		},
		"statistics output used": func(b *builder, conv, bn *ir.Node) {
			m := b.value("running_mean")
			bn.Outputs = append(bn.Outputs, m)
			m.Producer = bn
			b.output(m)
		},
		"variance not constant": func(b *builder, conv, bn *ir.Node) {
			// Computed at run time: a bare graph input read only as a
			// weight is taken for one (export_params=False, ir/weights.go).
			v := b.op("Relu", nil, b.input("var_in", 4))
			b.g.SetInput(bn, 4, v)
			if err := b.g.Toposort(); err != nil {
				b.t.Fatal(err)
			}
		},
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			b, conv, bn := convBN(t, true)
			mutate(b, conv, bn)
			g := b.g
			if _, err := ir.InferShapes(b.M, ir.InferOptions{}); err != nil {
				t.Fatal(err)
			}
			st := runPasses(t, g, "fold-bn")
			if st.Changed["fold-bn"] != 0 || find(g, "BatchNormalization") == nil {
				t.Errorf("fold-bn fired: %s", ops(g))
			}
		})
	}
}
