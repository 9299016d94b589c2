package passes

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// ortBlock builds the post-LN block the onnxruntime runs used: x·W + b + y → LayerNorm → MLP (W2 + b2, erf GELU, W3 + b)
// + residual → LayerNorm, with x and y of shape [batch, 16, 64], batch
// symbolic in the file when dynamic. reshaped puts a Reshape whose target
// is computed from Shape(x) (torch.onnx's form) before the first MatMul.
func ortBlock(t *testing.T, dynamic, reshaped bool) *ir.Model {
	const seq, hid = 16, 64
	b := newBuilder(t)
	b.M.Opsets[0].Version = 17
	in := func(name string) *ir.Value {
		v := b.Input(name, ir.Float32, 2, seq, hid)
		if dynamic {
			v.Declared.Shape = ir.RankedShape(ir.S("batch"), ir.D(seq), ir.D(hid))
		}
		return v
	}
	x, y := in("x"), in("y")
	if reshaped {
		x = computedReshape(b, x)
	}
	bias := b.weight("b", hid)
	ln := func(v *ir.Value, name string) *ir.Value {
		return b.op("LayerNormalization", []*ir.Attribute{ir.IntAttr("axis", -1)}, v, b.positive("g"+name, hid), b.weight("be"+name, hid))
	}
	h := ln(b.op("Add", nil, b.op("Add", nil, b.op("MatMul", nil, x, b.weight("W", hid, hid)), bias), y), "1")
	f := b.op("Add", nil, b.op("MatMul", nil, h, b.weight("W2", hid, 4*hid)), b.weight("b2", 4*hid))
	e := b.op("Add", nil, b.op("Erf", nil, b.op("Div", nil, f, b.constant("s2", nil, []float64{1.4142135}))), b.constant("one", nil, []float64{1}))
	gl := b.op("Mul", nil, b.op("Mul", nil, f, e), b.constant("half", nil, []float64{0.5}))
	out := ln(b.op("Add", nil, b.op("Add", nil, b.op("MatMul", nil, gl, b.weight("W3", 4*hid, hid)), bias), h), "2")
	b.output(out)
	return b.M
}

// TestORTSession holds the onnxruntime plan to what onnxruntime
// 1.23.2 built (CPU, level all, optimized graph saved) for the same block
// as an ONNX file: with the batch fixed, three Gemms, a Gelu and two
// SkipLayerNormalizations; with it symbolic, the MatMuls apart, the
// first bias in BiasGelu and the others in the SkipLayerNormalizations,
// still six kernels. With a Reshape computed from Shape in front, the
// dims after it are unknown to onnxruntime's inference: both residual
// Adds, their bias Adds and the LayerNorms stay apart (onnxruntime: Add 4,
// BiasGelu, LayerNormalization 2, MatMul 3, and the Shape, Gather and
// Concat of the reshape, which the plan computes from the bound dims).
// Bound shapes are the same in all.
func TestORTSession(t *testing.T) {
	for _, c := range []struct {
		name              string
		dynamic, reshaped bool
		want              string
	}{
		{"static", false, false, "FusedGemm×3 Gelu SkipLayerNormalization×2"},
		{"symbolic batch", true, false, "Gelu(bias) MatMul×3 SkipLayerNormalization(bias)×2"},
		{"symbolic batch, computed reshape", true, true, "Add×4 Gelu(bias) LayerNormalization×2 MatMul×3"},
		{"static, computed reshape", false, true, "FusedGemm×3 Gelu SkipLayerNormalization×2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := ortBlock(t, c.dynamic, c.reshaped)
			bound := ir.InferOptions{Bindings: map[string]int64{}}
			if c.dynamic {
				bound.Bindings["batch"] = 2
			}
			inferORTSession(t, m, bound)
			if (m.Graph.Session != nil) != c.dynamic {
				t.Errorf("session shapes recorded: %v, want %v", m.Graph.Session != nil, c.dynamic)
			}
			for _, v := range m.Graph.Inputs {
				if d, _ := v.Shape.Ints(); d[0] != 2 {
					t.Fatalf("input %s shape %s after ORTSession: the bound shapes were not restored", v.Name, v.Shape)
				}
			}
			runORTPlan(t, m.Graph)
			if got := summarize(m.Graph); got != c.want {
				t.Errorf("kernels %s, want %s (ops %s)", got, c.want, ops(m.Graph))
			}
		})
	}
}

// computedReshape reshapes the rank-3 x to its own shape as torch.onnx
// writes it, Reshape(x, Concat(Gather(Shape(x), i)...)): a target
// onnxruntime's shape inference does not evaluate.
func computedReshape(b *builder, x *ir.Value) *ir.Value {
	sh := b.op("Shape", nil, x)
	var dims []*ir.Value
	for i := range int64(3) {
		idx := b.intsOf("i"+string(rune('0'+i)), ir.Int64, []int64{1}, []int64{i})
		dims = append(dims, b.op("Gather", []*ir.Attribute{ir.IntAttr("axis", 0)}, sh, idx))
	}
	return b.op("Reshape", nil, x, b.op("Concat", []*ir.Attribute{ir.IntAttr("axis", 0)}, dims...))
}

// onHostTest reports whether the runtime computes every output of n on
// the host (ir.Session.Host): shape arithmetic, no kernel.
func onHostTest(g *ir.Graph, n *ir.Node) bool {
	return g.Session != nil && g.Session.OnHost(n)
}

// summarize counts g's kernels by op, "(bias)" marking a fused node that
// took a bias Add in: "Add×3 Gelu(bias) MatMul×3".
func summarize(g *ir.Graph) string {
	count := map[string]int{}
	for _, n := range g.Nodes {
		switch n.OpType {
		case "Reshape", "Unsqueeze", "Squeeze", "Flatten", "Identity", "Shape", "Constant", "Gather", "Concat":
			continue
		}
		if n.BuildTime() || onHostTest(g, n) {
			continue
		}
		k := n.OpType
		if (n.OpType == ir.OpFusedGelu && len(n.Inputs) == 2) || (n.OpType == ir.OpSkipLayerNorm && len(n.Inputs) == 5) {
			k += "(bias)"
		}
		count[k]++
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(count)) {
		if count[k] > 1 {
			k += "×" + string(rune('0'+count[k]))
		}
		parts = append(parts, k)
	}
	return strings.Join(parts, " ")
}

// TestORTSessionKnown: a MatMul scaled by 1/√(last dim) computed from the
// Shape of its input is one FusedMatMul when the input's dims are all
// numbers in the file (onnxruntime folds the Shape, then the scale), and
// stays MatMul and Div when its batch is symbolic: onnxruntime folds a
// Shape only of a fully known shape (it ran BERT-base's Gather of the
// static sequence length from Shape(input_ids) with the batch symbolic).
func TestORTSessionKnown(t *testing.T) {
	for _, dynamic := range []bool{false, true} {
		b := newBuilder(t)
		x := b.Input("x", ir.Float32, 2, 16, 64)
		if dynamic {
			x.Declared.Shape = ir.RankedShape(ir.S("batch"), ir.D(16), ir.D(64))
		}
		d := b.op("Gather", []*ir.Attribute{ir.IntAttr("axis", 0)}, b.op("Shape", nil, x), b.intsOf("last", ir.Int64, nil, []int64{2}))
		k := b.op("Sqrt", nil, b.op("Cast", []*ir.Attribute{ir.IntAttr("to", int64(ir.Float32))}, d))
		b.output(b.op("Div", nil, b.op("MatMul", nil, x, b.weight("W", 64, 32)), k))
		bound := ir.InferOptions{Bindings: map[string]int64{}}
		if dynamic {
			bound.Bindings["batch"] = 2
		}
		inferORTSession(t, b.M, bound)
		runORTPlan(t, b.M.Graph)
		want := "FusedMatMul"
		if dynamic {
			want = "Div MatMul"
		}
		if got := summarize(b.M.Graph); got != want {
			t.Errorf("batch symbolic %v: kernels %s, want %s", dynamic, got, want)
		}
	}
}

// TestORTLeadingScale: onnxruntime 1.23.2 fused Mul(0.5, Tanh(x)) into the
// MatMul after it with x's batch symbolic. With x from a Reshape to a
// shape computed from Shape(x) it fused it at opset 17, where ONNX's
// Reshape takes the rank from the target's length, and left it apart at
// opset 13, where it gives no shape at all: MatMul, Mul, bias Add (28
// small graphs of this form, and the GPT-style fixture's MLP:
// TestORTPlanDynamicExports).
func TestORTLeadingScale(t *testing.T) {
	for _, c := range []struct {
		reshaped bool
		opset    int64
		want     string
	}{
		{false, 13, "Add FusedMatMul Tanh"},
		{true, 13, "Add MatMul Mul Tanh"},
		{true, 17, "Add FusedMatMul Tanh"},
	} {
		b := newBuilder(t)
		setOpset(b.M, c.opset)
		x := b.Input("x", ir.Float32, 2, 16, 64)
		x.Declared.Shape = ir.RankedShape(ir.S("batch"), ir.D(16), ir.D(64))
		if c.reshaped {
			x = computedReshape(b, x)
		}
		s := b.op("Mul", nil, b.constant("half", nil, []float64{0.5}), b.op("Tanh", nil, x))
		b.output(b.op("Add", nil, b.op("MatMul", nil, s, b.weight("W", 64, 32)), b.weight("b", 32)))
		inferORTSession(t, b.M, ir.InferOptions{Bindings: map[string]int64{"batch": 2}})
		runORTPlan(t, b.M.Graph)
		if got := summarize(b.M.Graph); got != c.want {
			t.Errorf("reshaped %v, opset %d: kernels %s, want %s", c.reshaped, c.opset, got, c.want)
		}
	}
}
