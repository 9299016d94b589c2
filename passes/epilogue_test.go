package passes

import (
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// resBlock builds x -> Conv(w,b) -> Add(residual r) -> Relu -> MaxPool.
func resBlock(t *testing.T) *builder {
	b := newBuilder(t)
	x := b.input("x", 1, 4, 8, 8)
	r := b.input("r", 1, 6, 8, 8)
	y := b.op("Conv", []*ir.Attribute{ir.IntsAttr("pads", 1, 1, 1, 1), ir.IntsAttr("kernel_shape", 3, 3)}, x, b.weight("w", 6, 4, 3, 3), b.weight("b", 6))
	y = b.op("Add", nil, y, r)
	y = b.op("Relu", nil, y)
	y = b.op("MaxPool", []*ir.Attribute{ir.IntsAttr("kernel_shape", 2, 2), ir.IntsAttr("strides", 2, 2)}, y)
	b.output(y)
	return b
}

func TestFuseConvResidualReluPool(t *testing.T) {
	b := resBlock(t)
	g := b.infer()
	names := []string{}
	for _, n := range g.Nodes {
		names = append(names, n.Name)
	}
	checkPreserves(t, g, "fuse-conv")
	if got := ops(g); got != "onnxcost.FusedConv" {
		t.Fatalf("ops %q, want one FusedConv", got)
	}
	n := g.Nodes[0]
	if strings.Join(n.FusedFrom, ",") != strings.Join(names, ",") {
		t.Errorf("fused_from %v, want %v", n.FusedFrom, names)
	}
	if n.Name != names[0] {
		t.Errorf("fused node named %q, want the conv's name %q", n.Name, names[0])
	}
	if n.AttrString("activation", "") != "Relu" || n.AttrInt("residual", 0) != 1 || n.AttrString("pool", "") != "MaxPool" {
		t.Errorf("attributes: %s", ir.NodeText(n))
	}
	if len(n.Inputs) != 4 || n.In(3) != g.Inputs[1] {
		t.Errorf("inputs: %s", ir.NodeText(n))
	}
}

// Each activation form, with a bias given as a separate Add of a [K,1,1]
// constant (as TensorFlow converters write it).
func TestFuseConvActivations(t *testing.T) {
	acts := map[string]func(b *builder, y *ir.Value) *ir.Value{
		"Relu": func(b *builder, y *ir.Value) *ir.Value { return b.op("Relu", nil, y) },
		"LeakyRelu": func(b *builder, y *ir.Value) *ir.Value {
			return b.op("LeakyRelu", []*ir.Attribute{ir.FloatAttr("alpha", 0.2)}, y)
		},
		"Sigmoid": func(b *builder, y *ir.Value) *ir.Value { return b.op("Sigmoid", nil, y) },
		"HardSwish": func(b *builder, y *ir.Value) *ir.Value {
			b.M.Opsets[0].Version = 14 // HardSwish's first opset
			return b.op("HardSwish", nil, y)
		},
		"Clip": func(b *builder, y *ir.Value) *ir.Value { // Relu6
			return b.op("Clip", nil, y, b.constant("lo", nil, []float64{0}), b.constant("hi", nil, []float64{6}))
		},
		"Silu": func(b *builder, y *ir.Value) *ir.Value { return b.op("Mul", nil, b.op("Sigmoid", nil, y), y) },
	}
	for name, act := range acts {
		t.Run(name, func(t *testing.T) {
			b := newBuilder(t)
			x := b.input("x", 1, 3, 5, 5)
			y := b.op("Conv", nil, x, b.weight("w", 4, 3, 3, 3))
			y = b.op("Add", nil, y, b.weight("bias", 4, 1, 1))
			b.output(act(b, y))
			g := b.infer()
			checkPreserves(t, g, "fuse-conv")
			if ops(g) != "onnxcost.FusedConv" || g.Nodes[0].AttrString("activation", "") != name {
				t.Fatalf("got %s", ir.Dump(g))
			}
		})
	}
}

func TestFuseGemm(t *testing.T) {
	t.Run("MatMul+bias+residual+Relu", func(t *testing.T) {
		b := newBuilder(t)
		a := b.input("a", 3, 5)
		r := b.input("r", 3, 4)
		y := b.op("MatMul", nil, a, b.weight("w", 5, 4))
		y = b.op("Add", nil, b.weight("bias", 4), y)
		y = b.op("Add", nil, y, r)
		b.output(b.op("Relu", nil, y))
		g := b.infer()
		checkPreserves(t, g, "fuse-gemm")
		if ops(g) != "onnxcost.FusedGemm" || g.Nodes[0].AttrString("anchor", "") != "MatMul" {
			t.Fatalf("got %s", ir.Dump(g))
		}
	})
	t.Run("Gemm without C absorbs the bias, beta reset", func(t *testing.T) {
		b := newBuilder(t)
		a := b.input("a", 3, 5)
		y := b.op("Gemm", []*ir.Attribute{ir.IntAttr("transB", 1), ir.FloatAttr("beta", 3)}, a, b.weight("w", 4, 5))
		y = b.op("Add", nil, y, b.weight("bias", 1, 4))
		b.output(b.op("Sigmoid", nil, y))
		g := b.infer()
		checkPreserves(t, g, "fuse-gemm")
		if ops(g) != "onnxcost.FusedGemm" {
			t.Fatalf("got %s", ir.Dump(g))
		}
	})
}

// Negative cases: each guard stops the fusion at the step it protects.
func TestFuseConvGuards(t *testing.T) {
	cases := []struct {
		name, want string
		build      func(b *builder, y *ir.Value)
	}{
		{"relu input read twice", "Conv Relu Sigmoid", func(b *builder, y *ir.Value) {
			b.output(b.op("Relu", nil, y), b.op("Sigmoid", nil, y))
		}},
		{"conv output is a graph output", "Conv Relu", func(b *builder, y *ir.Value) {
			b.output(y, b.op("Relu", nil, y))
		}},
		{"bias broadcasts along width, not channels", "Conv Add", func(b *builder, y *ir.Value) {
			b.output(b.op("Add", nil, y, b.weight("wb", 5)))
		}},
		{"residual broadcasts", "Conv Add", func(b *builder, y *ir.Value) {
			b.output(b.op("Add", nil, y, b.input("r", 1, 4, 1, 1)))
		}},
		{"clip bounds not constant", "Conv Clip", func(b *builder, y *ir.Value) {
			b.output(b.op("Clip", nil, y, b.input("lo", 1)))
		}},
		{"pool indices used", "onnxcost.FusedConv MaxPool", func(b *builder, y *ir.Value) {
			p := b.node("MaxPool", []*ir.Value{b.op("Relu", nil, y)}, 2, ir.IntsAttr("kernel_shape", 2, 2))
			b.output(p.Out(0), p.Out(1))
		}},
		{"activation after an unfusable op", "Conv Softmax Relu", func(b *builder, y *ir.Value) {
			b.output(b.op("Relu", nil, b.op("Softmax", nil, y)))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newBuilder(t)
			x := b.input("x", 1, 3, 5, 5)
			y := b.op("Conv", []*ir.Attribute{ir.IntsAttr("pads", 1, 1, 1, 1)}, x, b.weight("w", 4, 3, 3, 3))
			c.build(b, y)
			g := b.run("fuse-conv")
			if got := ops(g); got != c.want {
				t.Errorf("ops %q, want %q", got, c.want)
			}
		})
	}
}

// Integer GEMMs are not fused: the epilogue rules are float math.
func TestFuseGemmIntGuard(t *testing.T) {
	b := newBuilder(t)
	a := b.value("a")
	a.Kind, a.DType, a.Shape = ir.TensorValue, ir.Int32, ir.KnownShape(2, 3)
	b.g.AddInput(a)
	w := b.value("w")
	b.g.AddInitializer(w, ir.IntTensor([]int64{3, 2}, []int64{1, 2, 3, 4, 5, 6}))
	w.Const.DType, w.DType = ir.Int32, ir.Int32
	b.output(b.op("Relu", nil, b.op("MatMul", nil, a, w)))
	g := b.run("fuse-gemm")
	if got := ops(g); got != "MatMul Relu" {
		t.Errorf("ops %q, want MatMul Relu", got)
	}
}

// HardSwish as PyTorch exports it below opset 14, y * HardSigmoid(y,
// alpha=1/6), is the Conv's HardSwish epilogue (one kernel, as at opset
// 14); a HardSigmoid with other constants is another function and stays.
func TestFuseConvHardSwishDecomposed(t *testing.T) {
	for _, c := range []struct {
		name  string
		alpha float64
		want  string
	}{
		{"alpha 1/6", float64(float32(1.0 / 6)), "onnxcost.FusedConv"},
		{"alpha 0.2 is not HardSwish", 0.2, "Conv HardSigmoid Mul"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBuilder(t)
			x := b.input("x", 1, 3, 5, 5)
			y := b.op("Conv", nil, x, b.weight("w", 4, 3, 3, 3), b.weight("bias", 4))
			hs := b.op("HardSigmoid", []*ir.Attribute{ir.FloatAttr("alpha", c.alpha)}, y)
			b.output(b.op("Mul", nil, y, hs))
			g := b.infer()
			checkPreserves(t, g, "fuse-conv")
			if ops(g) != c.want {
				t.Fatalf("got %s, want %s", ops(g), c.want)
			}
			if c.want == "onnxcost.FusedConv" && g.Nodes[0].AttrString("activation", "") != "HardSwish" {
				t.Fatalf("activation: %s", ir.NodeText(g.Nodes[0]))
			}
		})
	}
}

// TestFuseConvActORT checks fuse-conv-act against onnxruntime's CUDA
// ConvActivationFusion: a Relu, after the bias or after a residual Add, is
// fused; HardSigmoid, Clip and SiLU are not, nor an Add with no Relu after
// it (the per-channel bias alone still folds into the Conv), nor an fp16
// Conv.
func TestFuseConvActORT(t *testing.T) {
	cases := []struct {
		name string
		tail func(b *builder, y, r *ir.Value) *ir.Value
		want string
	}{
		{"relu", func(b *builder, y, r *ir.Value) *ir.Value { return b.op("Relu", nil, y) }, "onnxcost.FusedConv"},
		{"residual relu", func(b *builder, y, r *ir.Value) *ir.Value { return b.op("Relu", nil, b.op("Add", nil, y, r)) }, "onnxcost.FusedConv"},
		{"hardsigmoid", func(b *builder, y, r *ir.Value) *ir.Value { return b.op("HardSigmoid", nil, y) }, "onnxcost.FusedConv HardSigmoid"},
		{"relu6", func(b *builder, y, r *ir.Value) *ir.Value {
			return b.op("Clip", nil, y, b.constant("lo", nil, []float64{0}), b.constant("hi", nil, []float64{6}))
		}, "onnxcost.FusedConv Clip"},
		{"silu", func(b *builder, y, r *ir.Value) *ir.Value { return b.op("Mul", nil, b.op("Sigmoid", nil, y), y) }, "onnxcost.FusedConv Sigmoid Mul"},
		{"residual only", func(b *builder, y, r *ir.Value) *ir.Value { return b.op("Add", nil, y, r) }, "onnxcost.FusedConv Add"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newBuilder(t)
			x := b.input("x", 1, 3, 5, 5)
			r := b.input("r", 1, 4, 3, 3)
			y := b.op("Conv", nil, x, b.weight("w", 4, 3, 3, 3))
			y = b.op("Add", nil, y, b.weight("bias", 4, 1, 1)) // a separate per-channel bias
			b.output(c.tail(b, y, r))
			g := b.infer()
			checkPreserves(t, g, "fuse-conv-act")
			if got := ops(g); got != c.want {
				t.Fatalf("ops %q, want %q:\n%s", got, c.want, ir.Dump(g))
			}
		})
	}
	t.Run("fp16", func(t *testing.T) {
		b := newBuilder(t)
		x := b.Input("x", ir.Float16, 1, 3, 5, 5)
		w := b.Input("w", ir.Float16, 4, 3, 3, 3)
		b.output(b.op("Relu", nil, b.op("Conv", nil, x, w)))
		g := b.infer()
		if _, err := Run(g, Options{Only: []string{"fuse-conv-act"}}); err != nil {
			t.Fatal(err)
		}
		if got := ops(g); got != "Conv Relu" {
			t.Fatalf("fp16 Conv fused: ops %q, want %q", got, "Conv Relu")
		}
	})
}

// TestFoldConvAdd checks the onnxruntime plan's ConvAddFusion: a
// per-channel constant Add after a Conv becomes its bias, and the
// activation and the residual Add after it stay their own kernels.
func TestFoldConvAdd(t *testing.T) {
	b := newBuilder(t)
	x := b.input("x", 1, 3, 5, 5)
	r := b.input("r", 1, 4, 3, 3)
	y := b.op("Conv", nil, x, b.weight("w", 4, 3, 3, 3))
	y = b.op("Add", nil, y, b.weight("bias", 4, 1, 1))
	b.output(b.op("Relu", nil, b.op("Add", nil, y, r)))
	g := b.infer()
	checkPreserves(t, g, "fold-conv-add")
	if got, want := ops(g), "onnxcost.FusedConv Add Relu"; got != want {
		t.Fatalf("ops %q, want %q:\n%s", got, want, ir.Dump(g))
	}
}
