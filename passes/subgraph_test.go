package passes

import (
	"fmt"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/ir/irtest"
)

// evalIf runs the branch If's condition picks, its nodes reading the outer
// values in env (what the branch captures).
func evalIf(n *ir.Node, ins []*tensor, env map[*ir.Value]*tensor) ([]*tensor, error) {
	branch := "else_branch"
	if len(ins) > 0 && ins[0] != nil && len(ins[0].data) > 0 && ins[0].data[0] != 0 {
		branch = "then_branch"
	}
	a := n.Attr(branch)
	if a == nil || a.G() == nil {
		return nil, fmt.Errorf("If without %s", branch)
	}
	inner := make(map[*ir.Value]*tensor, len(env))
	for v, t := range env {
		inner[v] = t
	}
	for _, v := range a.G().Initializers {
		inner[v] = constTensor(v.Const)
	}
	return evalNodes(a.G(), inner)
}

// bodyOp adds op to subgraph g with fresh outputs named prefix_<op>_<k>
// (unique across scopes, as ONNX requires) and returns its first output.
func bodyOp(t *testing.T, g *ir.Graph, prefix, op string, ins ...*ir.Value) *ir.Value {
	t.Helper()
	name := g.UniqueName(prefix + "_" + op)
	out, err := g.NewValue(name + "_out")
	if err != nil {
		t.Fatal(err)
	}
	if err := g.AddNode(&ir.Node{Name: name, OpType: op, Inputs: ins, Outputs: []*ir.Value{out}}); err != nil {
		t.Fatal(err)
	}
	return out
}

// bodyWeight adds a random float32 initializer to subgraph g, through a
// builder on g that shares b's model and random source.
func bodyWeight(t *testing.T, b *builder, g *ir.Graph, name string, dims ...int64) *ir.Value {
	sb := &builder{Builder: &irtest.Builder{T: t, M: b.M, G: g}, t: t, g: g, rng: b.rng}
	return sb.weight(name, dims...)
}

// buildIfModel: x [4, 8]; main h = MatMul(x, w) -> Relu -> output 0, h
// also captured by the then branch; If(cond) with then = Relu(Add(MatMul(h,
// w2), b2)) + h and else = Relu(x) -> output 1.
func buildIfModel(t *testing.T, b *builder, cond bool) (thenG, elseG *ir.Graph) {
	x := b.input("x", 4, 8)
	h := b.op("MatMul", nil, x, b.weight("w", 8, 8))
	b.output(b.op("Relu", nil, h))
	c := 0.0
	if cond {
		c = 1
	}
	cv := b.constant("cond", nil, []float64{c})
	cv.DType, cv.Const.DType = ir.Bool, ir.Bool
	cv.Const.Ints, cv.Const.Floats = []int64{int64(c)}, nil
	thenG, elseG = ir.NewSubgraph("then", b.g), ir.NewSubgraph("else", b.g)
	mm := bodyOp(t, thenG, "then", "MatMul", h, bodyWeight(t, b, thenG, "then_w2", 8, 8))
	act := bodyOp(t, thenG, "then", "Relu", bodyOp(t, thenG, "then", "Add", mm, bodyWeight(t, b, thenG, "then_b2", 8)))
	thenG.AddOutput(bodyOp(t, thenG, "then", "Add", act, h))
	elseG.AddOutput(bodyOp(t, elseG, "else", "Relu", x))
	n := b.node("If", []*ir.Value{cv}, 1,
		ir.GraphAttr("then_branch", thenG),
		ir.GraphAttr("else_branch", elseG))
	b.output(n.Out(0))
	return thenG, elseG
}

// The then branch's MatMul, bias Add and Relu become one FusedGemm inside
// the body; the main graph's MatMul keeps its Relu
// because the body captures h (h has two readers); values are unchanged on
// either branch.
func TestPassesInIfBodies(t *testing.T) {
	for _, cond := range []bool{true, false} {
		b := newBuilder(t)
		thenG, elseG := buildIfModel(t, b, cond)
		g := b.infer()
		checkPreservesExact(t, g, DefaultNames()...)
		if got, want := ops(thenG), "onnxcost.FusedGemm Add"; got != want { // the Add after the Relu is no epilogue
			t.Errorf("cond %v: then branch %q, want %q", cond, got, want)
		}
		if got, want := ops(elseG), "Relu"; got != want {
			t.Errorf("cond %v: else branch %q, want %q", cond, got, want)
		}
		if got, want := ops(g), "MatMul Relu If"; got != want {
			t.Errorf("cond %v: main graph %q, want %q (h is captured by the branch: its Relu must stay)", cond, got, want)
		}
		if err := ir.Verify(g); err != nil {
			t.Fatal(err)
		}
	}
}

// Stats count a body's rewrites, and --check verifies with the body in
// the scope of what it captures (verifying the body alone would fail on
// the captured h).
func TestPassesInBodiesStatsAndCheck(t *testing.T) {
	b := newBuilder(t)
	buildIfModel(t, b, true)
	g := b.infer()
	st, err := Run(g, Options{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	if st.Changed["fuse-gemm"] == 0 || !st.Converged {
		t.Errorf("stats %+v: want fuse-gemm counted and converged", st)
	}
}

// A Loop body is rewritten too (its carried value, its own weights).
func TestPassesInLoopBody(t *testing.T) {
	b := newBuilder(t)
	x := b.input("x", 4, 8)
	trips := b.intsOf("trips", ir.Int64, nil, []int64{3})
	body := ir.NewSubgraph("body", b.g)
	in := func(name string, dt ir.DType, dims ...int64) *ir.Value {
		v, err := body.NewValue(name)
		if err != nil {
			t.Fatal(err)
		}
		v.Kind, v.DType, v.Shape = ir.TensorValue, dt, ir.KnownShape(dims...)
		v.Declared = &ir.TypeInfo{Kind: ir.TensorValue, DType: dt, Shape: ir.KnownShape(dims...)}
		body.AddInput(v)
		return v
	}
	in("body_i", ir.Int64)
	cond := in("body_cond", ir.Bool)
	carried := in("body_h", ir.Float32, 4, 8)
	mm := bodyOp(t, body, "body", "MatMul", carried, bodyWeight(t, b, body, "body_w", 8, 8))
	next := bodyOp(t, body, "body", "Relu", bodyOp(t, body, "body", "Add", mm, bodyWeight(t, b, body, "body_b", 8)))
	body.AddOutput(bodyOp(t, body, "body", "Identity", cond))
	body.AddOutput(next)
	n := b.node("Loop", []*ir.Value{trips, nil, x}, 1, ir.GraphAttr("body", body))
	b.output(n.Out(0))
	g := b.infer()
	runPasses(t, g, DefaultNames()...)
	if got, want := ops(body), "onnxcost.FusedGemm Identity"; got != want {
		t.Errorf("loop body %q, want %q (MatMul+Add+Relu fused; the Identity maps an input to an output)", got, want)
	}
}
