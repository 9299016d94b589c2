package passes

import (
	"math"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// Hand-built tests of the LayerNorm, GELU and softmax recognisers: each
// pattern fires on the exported form and declines when a guard fails.

// scalar adds a scalar float initializer.
func (b *builder) scalar(name string, v float64) *ir.Value {
	return b.constant(name, nil, []float64{v})
}

// epsilon adds the epsilon a normalisation adds to its variance: the
// constant v, or a graph input when asInput (the guard that wants a
// constant epsilon must then decline).
func (b *builder) epsilon(v float64, asInput bool) *ir.Value {
	if asInput {
		return b.input("eps", 1)
	}
	return b.scalar("eps", v)
}

// int64s adds an int64 initializer (axes inputs).
func (b *builder) int64s(name string, vals ...int64) *ir.Value {
	v := b.value(name)
	t := ir.IntTensor([]int64{int64(len(vals))}, vals)
	t.Name = name
	b.g.AddInitializer(v, t)
	return v
}

// fusedNodes returns the onnxcost nodes of op.
func fusedNodes(g *ir.Graph, op string) []*ir.Node {
	var out []*ir.Node
	for _, n := range g.Nodes {
		if n.Domain == ir.FusedDomain && n.OpType == op {
			out = append(out, n)
		}
	}
	return out
}

// expectOne checks that g has exactly one onnxcost op, made of want
// nodes, and returns it.
func expectOne(t *testing.T, g *ir.Graph, op string, want int) *ir.Node {
	t.Helper()
	ns := fusedNodes(g, op)
	if len(ns) != 1 {
		t.Fatalf("%d %s nodes, want 1:\n%s", len(ns), op, ir.Dump(g))
	}
	if got := len(ns[0].FusedFrom); got != want {
		t.Errorf("%s fused %d nodes %v, want %d", op, got, ns[0].FusedFrom, want)
	}
	if ns[0].Attr(ir.KeyPartOps) == nil && op != "FusedAttention" {
		t.Errorf("%s has no part attributes", op)
	}
	return ns[0]
}

// expectNone checks that g has no onnxcost op.
func expectNone(t *testing.T, g *ir.Graph, op string) {
	t.Helper()
	if ns := fusedNodes(g, op); len(ns) != 0 {
		t.Errorf("%s fired (%v) though a guard fails", op, ns[0].FusedFrom)
	}
}

// layerNormOpts vary the hand-built LayerNorm.
type layerNormOpts struct {
	mulSquare   bool // Mul(d, d) instead of Pow(d, 2)
	noAffine    bool
	epsInput    bool  // epsilon is a graph input, not a constant
	axes        int64 // normalised axis (default -1)
	subIsOutput bool  // the centred tensor is also a graph output
	sqrtReused  bool  // Sqrt's output read by another node
}

// buildLayerNorm builds torch's LayerNorm export over x [2,4,8] and
// returns the graph output.
func buildLayerNorm(b *builder, o layerNormOpts) *ir.Value {
	x := b.input("x", 2, 4, 8)
	axis := o.axes
	if axis == 0 {
		axis = -1
	}
	axes := []*ir.Attribute{ir.IntsAttr("axes", axis)}
	mean := b.op("ReduceMean", axes, x)
	d := b.op("Sub", nil, x, mean)
	var sq *ir.Value
	if o.mulSquare {
		sq = b.op("Mul", nil, d, d)
	} else {
		sq = b.op("Pow", nil, d, b.scalar("two", 2))
	}
	v := b.op("ReduceMean", axes, sq)
	s := b.op("Sqrt", nil, b.op("Add", nil, v, b.epsilon(1e-5, o.epsInput)))
	y := b.op("Div", nil, d, s)
	if !o.noAffine {
		y = b.op("Add", nil, b.op("Mul", nil, y, b.weight("gamma", 8)), b.weight("beta", 8))
	}
	b.output(y)
	if o.subIsOutput {
		b.output(d)
	}
	if o.sqrtReused {
		b.output(b.op("Neg", nil, s))
	}
	return y
}

func TestLayerNormFuses(t *testing.T) {
	b := newBuilder(t)
	y := buildLayerNorm(b, layerNormOpts{})
	g := b.run("fuse-layernorm")
	n := expectOne(t, g, "LayerNormalization", 9) // ReduceMean Sub Pow ReduceMean Add Sqrt Div Mul Add
	if n.Out(0) != y || len(n.Inputs) != 3 || n.In(0).Name != "x" || n.In(1).Name != "gamma" || n.In(2).Name != "beta" {
		t.Errorf("LayerNormalization reads %v writes %v; want (x, gamma, beta) -> %s", n.Inputs, n.Outputs, y.Name)
	}
	if a, eps := n.AttrInt("axis", 0), n.AttrFloat("epsilon", 0); a != -1 || math.Abs(eps-1e-5) > 1e-9 {
		t.Errorf("axis %d epsilon %g, want -1, 1e-5", a, eps)
	}
	if len(g.Nodes) != 1 {
		t.Errorf("%d nodes left, want 1", len(g.Nodes))
	}
}

func TestLayerNormVariants(t *testing.T) {
	b := newBuilder(t)
	buildLayerNorm(b, layerNormOpts{mulSquare: true, noAffine: true})
	g := b.run("fuse-layernorm")
	n := expectOne(t, g, "LayerNormalization", 7) // no Mul/Add tail
	if len(n.Inputs) != 1 {
		t.Errorf("inputs %d, want 1 (no gamma, beta)", len(n.Inputs))
	}
}

func TestLayerNormGuards(t *testing.T) {
	expectDeclines(t, "fuse-layernorm", "LayerNormalization", guardCases(buildLayerNorm, map[string]layerNormOpts{
		"centred tensor is a graph output": {subIsOutput: true},
		"sqrt read twice":                  {sqrtReused: true},
		"epsilon not a constant":           {epsInput: true},
		"axis is not trailing":             {axes: 1},
	}))
}

// buildGeluErf builds F.gelu's export: Mul(Mul(x, Add(Erf(Div(x, c)), 1)), 0.5).
func buildGeluErf(b *builder, x *ir.Value, c float64) (erf, y *ir.Value) {
	erf = b.op("Erf", nil, b.op("Div", nil, x, b.scalar("sqrt2", c)))
	u := b.op("Add", nil, erf, b.scalar("one", 1))
	y = b.op("Mul", nil, b.op("Mul", nil, x, u), b.scalar("half", 0.5))
	return erf, y
}

func TestGeluErfFuses(t *testing.T) {
	b := newBuilder(t)
	x := b.input("x", 4, 16)
	_, y := buildGeluErf(b, x, math.Sqrt2)
	b.output(y)
	g := b.run("fuse-gelu")
	n := expectOne(t, g, "Gelu", 5) // Div Erf Add Mul Mul
	if n.AttrString("approximate", "") != "none" || n.In(0) != x || n.Out(0) != y {
		t.Errorf("Gelu %v -> %v approximate %q", n.Inputs, n.Outputs, n.AttrString("approximate", ""))
	}
}

// TestGeluErfHalfFirst: HF's x*0.5*(1+erf(x/sqrt2)).
func TestGeluErfHalfFirst(t *testing.T) {
	b := newBuilder(t)
	x := b.input("x", 4, 16)
	erf := b.op("Erf", nil, b.op("Mul", nil, x, b.scalar("rsqrt2", 1/math.Sqrt2)))
	u := b.op("Add", nil, b.scalar("one", 1), erf)
	y := b.op("Mul", nil, b.op("Mul", nil, x, b.scalar("half", 0.5)), u)
	b.output(y)
	g := b.run("fuse-gelu")
	expectOne(t, g, "Gelu", 5)
}

func TestGeluTanhFuses(t *testing.T) {
	for _, pow := range []bool{false, true} {
		b := newBuilder(t)
		x := b.input("x", 4, 16)
		var cube *ir.Value
		if pow {
			cube = b.op("Pow", nil, x, b.scalar("three", 3))
		} else {
			cube = b.op("Mul", nil, x, b.op("Mul", nil, x, x))
		}
		inner := b.op("Add", nil, x, b.op("Mul", nil, b.scalar("c", 0.044715), cube))
		th := b.op("Tanh", nil, b.op("Mul", nil, b.scalar("k", math.Sqrt(2/math.Pi)), inner))
		u := b.op("Add", nil, b.scalar("one", 1), th)
		y := b.op("Mul", nil, b.scalar("half", 0.5), b.op("Mul", nil, x, u))
		b.output(y)
		g := b.run("fuse-gelu")
		want := 9 // Mul Mul Mul Add Mul Tanh Add Mul Mul
		if pow {
			want = 8 // Pow replaces the two Muls of x^3
		}
		n := expectOne(t, g, "Gelu", want)
		if n.AttrString("approximate", "") != "tanh" || len(g.Nodes) != 1 {
			t.Errorf("pow=%v: approximate %q, %d nodes left", pow, n.AttrString("approximate", ""), len(g.Nodes))
		}
	}
}

func TestGeluGuards(t *testing.T) {
	expectDeclines(t, "fuse-gelu", "Gelu", map[string]func(b *builder){
		"wrong constant": func(b *builder) {
			_, y := buildGeluErf(b, b.input("x", 4, 16), math.Sqrt(3))
			b.output(y)
		},
		"erf output is a graph output": func(b *builder) {
			erf, y := buildGeluErf(b, b.input("x", 4, 16), math.Sqrt2)
			b.output(y, erf)
		},
		"erf read twice": func(b *builder) {
			erf, y := buildGeluErf(b, b.input("x", 4, 16), math.Sqrt2)
			b.output(y, b.op("Neg", nil, erf))
		},
	})
}

// buildSoftmax builds exp/sum softmax over axis of x [2,3,5].
func buildSoftmax(b *builder, stable bool, axes []int64, keep int64) (e, y *ir.Value) {
	x := b.input("x", 2, 3, 5)
	in := x
	if stable {
		m := b.op("ReduceMax", []*ir.Attribute{ir.IntsAttr("axes", axes...), ir.IntAttr("keepdims", keep)}, x)
		in = b.op("Sub", nil, x, m)
	}
	e = b.op("Exp", nil, in)
	s := b.op("ReduceSum", []*ir.Attribute{ir.IntAttr("keepdims", keep)}, e, b.int64s("axes", axes...))
	y = b.op("Div", nil, e, s)
	return e, y
}

func TestSoftmaxFuses(t *testing.T) {
	for _, stable := range []bool{true, false} {
		b := newBuilder(t)
		_, y := buildSoftmax(b, stable, []int64{2}, 1)
		b.output(y)
		g := b.run("fuse-softmax")
		want := 3 // Exp ReduceSum Div
		if stable {
			want = 5 // + ReduceMax Sub
		}
		n := expectOne(t, g, "Softmax", want)
		if n.AttrInt("axis", 0) != -1 || n.In(0).Name != "x" {
			t.Errorf("stable=%v: axis %d input %s, want -1, x", stable, n.AttrInt("axis", 0), n.In(0).Name)
		}
	}
}

func TestSoftmaxGuards(t *testing.T) {
	expectDeclines(t, "fuse-softmax", "Softmax", map[string]func(b *builder){
		"two axes": func(b *builder) {
			_, y := buildSoftmax(b, false, []int64{1, 2}, 1)
			b.output(y)
		},
		"keepdims=0": func(b *builder) {
			x := b.input("x", 2, 3, 5)
			e := b.op("Exp", nil, x)
			s := b.op("ReduceSum", []*ir.Attribute{ir.IntAttr("keepdims", 0)}, e, b.int64s("axes", 0))
			b.output(b.op("Div", nil, e, s)) // [2,3,5] / [3,5]: broadcasts, but is not a softmax over axis 0's keepdims form
		},
		"exp read outside": func(b *builder) {
			e, y := buildSoftmax(b, true, []int64{-1}, 1)
			b.output(y, b.op("Neg", nil, e))
		},
	})
}

// TestGeluORTForms: fuse-gelu-ort takes only the GELU forms onnxruntime
// 1.23.2 fused in one-GELU models of each form (a CPU session at level
// all, the optimized graph saved), each of which fuse-gelu also takes:
// the erf form scaled by Div(x, √2) with the 0.5 first or last; not
// Mul(x, 1/√2), not the 0.5 inside, and no tanh form, not even Hugging
// Face's NewGELU (Pow(x, 3), the 0.5 first), which its FastGeluFusion's
// source describes.
func TestGeluORTForms(t *testing.T) {
	erf := func(scaleDiv bool, tail geluTailForm) func(b *builder, x *ir.Value) *ir.Value {
		return func(b *builder, x *ir.Value) *ir.Value {
			var a *ir.Value
			if scaleDiv {
				a = b.op("Div", nil, x, b.scalar("sqrt2", math.Sqrt2))
			} else {
				a = b.op("Mul", nil, x, b.scalar("rsqrt2", 1/math.Sqrt2))
			}
			return geluTailOf(b, x, b.op("Add", nil, b.op("Erf", nil, a), b.scalar("one", 1)), tail)
		}
	}
	tanh := func(pow bool, tail geluTailForm) func(b *builder, x *ir.Value) *ir.Value {
		return func(b *builder, x *ir.Value) *ir.Value {
			cube := b.op("Mul", nil, x, b.op("Mul", nil, x, x))
			if pow {
				cube = b.op("Pow", nil, x, b.scalar("three", 3))
			}
			inner := b.op("Add", nil, b.op("Mul", nil, cube, b.scalar("c", 0.044715)), x)
			th := b.op("Tanh", nil, b.op("Mul", nil, inner, b.scalar("k", math.Sqrt(2/math.Pi))))
			return geluTailOf(b, x, b.op("Add", nil, th, b.scalar("one", 1)), tail)
		}
	}
	for _, c := range []struct {
		name  string
		build func(b *builder, x *ir.Value) *ir.Value
		ort   bool
		// eager: one kernel in eager PyTorch (F.gelu), not Python's
		// composite with torch.pow (fuse-gelu-eager).
		eager bool
	}{
		{"erf, Div, half last", erf(true, halfLast), true, true},
		{"erf, Div, half first", erf(true, halfFirst), true, true},
		{"erf, Div, half inner", erf(true, halfInner), false, true},
		{"erf, Mul by 1/sqrt2", erf(false, halfLast), false, true},
		{"tanh, Pow, half first (NewGELUActivation)", tanh(true, halfFirst), true, false},
		{"tanh, Pow, half last", tanh(true, halfLast), false, false},
		{"tanh, x*x*x, half first", tanh(false, halfFirst), false, true},
		{"tanh, x*x*x, half last (torch.onnx)", tanh(false, halfLast), false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, pass := range []string{"fuse-gelu", "fuse-gelu-ort", "fuse-gelu-eager"} {
				b := newBuilder(t)
				x := b.input("x", 4, 16)
				b.output(c.build(b, x))
				g := b.run(pass)
				want := pass == "fuse-gelu" || pass == "fuse-gelu-ort" && c.ort || pass == "fuse-gelu-eager" && c.eager
				if got := find(g, "Gelu") != nil; got != want {
					t.Errorf("%s: fused %v, want %v (ops %s)", pass, got, want, ops(g))
				}
			}
		})
	}
}

// geluTailOf writes GELU's tail on u = 1 + erf(·) or 1 + tanh(·).
func geluTailOf(b *builder, x, u *ir.Value, tail geluTailForm) *ir.Value {
	switch tail {
	case halfFirst:
		return b.op("Mul", nil, b.op("Mul", nil, x, b.scalar("half", 0.5)), u)
	case halfInner:
		return b.op("Mul", nil, x, b.op("Mul", nil, u, b.scalar("half", 0.5)))
	}
	return b.op("Mul", nil, b.op("Mul", nil, x, u), b.scalar("half", 0.5))
}

// TestNormORTForms: fuse-layernorm-ort and fuse-rmsnorm-ort take only the
// forms onnxruntime 1.23.2 fused in one-norm models of each form (a CPU
// session at level all, the optimized graph saved), each of which the
// plain passes also take.
func TestNormORTForms(t *testing.T) {
	ln := func(mulSquare, affine bool) func(b *builder, x *ir.Value) *ir.Value {
		return func(b *builder, x *ir.Value) *ir.Value {
			d := b.op("Sub", nil, x, b.op("ReduceMean", []*ir.Attribute{ir.IntsAttr("axes", -1)}, x))
			var sq *ir.Value
			if mulSquare {
				sq = b.op("Mul", nil, d, d)
			} else {
				sq = b.op("Pow", nil, d, b.scalar("two", 2))
			}
			v := b.op("Add", nil, b.op("ReduceMean", []*ir.Attribute{ir.IntsAttr("axes", -1)}, sq), b.scalar("eps", 1e-5))
			y := b.op("Div", nil, d, b.op("Sqrt", nil, v))
			if affine {
				y = b.op("Add", nil, b.op("Mul", nil, y, b.constant("gamma", []int64{16}, make([]float64, 16))), b.constant("beta", []int64{16}, make([]float64, 16)))
			}
			return y
		}
	}
	rms := func(mulSquare bool, inv string, scale bool) func(b *builder, x *ir.Value) *ir.Value {
		return func(b *builder, x *ir.Value) *ir.Value {
			var sq *ir.Value
			if mulSquare {
				sq = b.op("Mul", nil, x, x)
			} else {
				sq = b.op("Pow", nil, x, b.scalar("two", 2))
			}
			v := b.op("Add", nil, b.op("ReduceMean", []*ir.Attribute{ir.IntsAttr("axes", -1)}, sq), b.scalar("eps", 1e-6))
			var y *ir.Value
			switch inv {
			case "div":
				y = b.op("Div", nil, x, b.op("Sqrt", nil, v))
			case "recip":
				y = b.op("Mul", nil, x, b.op("Reciprocal", nil, b.op("Sqrt", nil, v)))
			case "div1":
				y = b.op("Mul", nil, x, b.op("Div", nil, b.scalar("one", 1), b.op("Sqrt", nil, v)))
			}
			if scale {
				y = b.op("Mul", nil, y, b.constant("gamma", []int64{16}, make([]float64, 16)))
			}
			return y
		}
	}
	for _, c := range []struct {
		name, plain, ort string
		build            func(b *builder, x *ir.Value) *ir.Value
		fused            bool
	}{
		{"ln Pow affine", "fuse-layernorm", "fuse-layernorm-ort", ln(false, true), true},
		{"ln Mul square", "fuse-layernorm", "fuse-layernorm-ort", ln(true, true), false},
		{"ln no affine", "fuse-layernorm", "fuse-layernorm-ort", ln(false, false), false},
		{"rms Pow Div scale", "fuse-rmsnorm", "fuse-rmsnorm-ort", rms(false, "div", true), true},
		{"rms Reciprocal (torch.rsqrt, dynamo exporter)", "fuse-rmsnorm", "fuse-rmsnorm-ort", rms(false, "recip", true), false},
		{"rms Div(1, Sqrt) (torch.rsqrt, torch.onnx: HF LLaMA)", "fuse-rmsnorm", "fuse-rmsnorm-ort", rms(false, "div1", true), true},
		{"rms Div(1, Sqrt), no scale", "fuse-rmsnorm", "fuse-rmsnorm-ort", rms(false, "div1", false), false},
		{"rms Mul square", "fuse-rmsnorm", "fuse-rmsnorm-ort", rms(true, "div", true), false},
		{"rms no scale", "fuse-rmsnorm", "fuse-rmsnorm-ort", rms(false, "div", false), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, pass := range []string{c.plain, c.ort} {
				b := newBuilder(t)
				x := b.input("x", 4, 8, 16)
				b.output(c.build(b, x))
				g := b.run(pass)
				want := pass == c.plain || c.fused
				if got := len(g.Nodes) == 1; got != want {
					t.Errorf("%s: fused %v, want %v (ops %s)", pass, got, want, ops(g))
				}
			}
		})
	}
}

// TestRMSNormORTAfterCastElimination: a Hugging Face RMSNorm as
// torch.onnx exports it, Cast(x, float) read by the norm and by the
// residual Add, rsqrt as Mul(·, Div(1, Sqrt)), a Cast back and the
// weight: onnxruntime removes the no-op casts (CastElimination) and fuses
// the rest with its weight into one SimplifiedLayerNormalization, as it
// did for all five norms of a two-layer LLaMA written as modeling_llama.
func TestRMSNormORTAfterCastElimination(t *testing.T) {
	b := newBuilder(t)
	x := b.input("x", 4, 8, 16)
	to := []*ir.Attribute{ir.IntAttr("to", int64(ir.Float32))}
	xf := b.op("Cast", to, x)
	v := b.op("Add", nil, b.op("ReduceMean", []*ir.Attribute{ir.IntsAttr("axes", -1)}, b.op("Pow", nil, xf, b.scalar("two", 2))), b.scalar("eps", 1e-6))
	y := b.op("Mul", nil, xf, b.op("Div", nil, b.scalar("one", 1), b.op("Sqrt", nil, v)))
	y = b.op("Mul", nil, b.constant("gamma", []int64{16}, make([]float64, 16)), b.op("Cast", to, y))
	b.output(b.op("Add", nil, xf, y))
	g := b.run("eliminate-cast-ort", "fuse-rmsnorm-ort")
	if got := ops(g); got != "onnxcost.RMSNormalization Add" {
		t.Errorf("ops %s, want one RMSNormalization (its weight in it) and the residual Add", got)
	}
}
