package ir

import (
	"fmt"
	"strings"
	"testing"
)

// fcBodyInput adds a subgraph input named name to g.
// fcLoopBody starts a Loop body in g with the inputs a Loop passes it
// (iteration number, condition, one carried value named carried) and
// returns the body, its condition input and its carried input.
func fcLoopBody(t *testing.T, g *Graph, carried string) (body *Graph, condIn, carriedIn *Value) {
	t.Helper()
	body = NewSubgraph("body", g)
	fcBodyInput(t, body, "i")
	return body, fcBodyInput(t, body, "cond_in"), fcBodyInput(t, body, carried)
}

func fcBodyInput(t *testing.T, g *Graph, name string) *Value {
	t.Helper()
	v, err := g.NewValue(name)
	if err != nil {
		t.Fatal(err)
	}
	g.AddInput(v)
	return v
}

func fcGraphAttr(name string, g *Graph) *Attribute {
	return GraphAttr(name, g)
}

func fcTypeString(v *Value) string { return v.DType.String() + v.Shape.String() }

func TestIfShapes(t *testing.T) {
	build := func(cond fcIn) (*Model, *Node) {
		g := NewGraph("main")
		ins := fcAddInputs(t, g, []fcIn{cond, fcKnownIn("a", Float32, 2, 3), fcKnownIn("w1", Float32, 3, 3), fcKnownIn("w2", Float32, 3, 5)})
		thenG, elseG := NewSubgraph("then", g), NewSubgraph("else", g)
		thenG.AddOutput(fcNode(t, thenG, "Gemm", nil, []*Value{ins[1], ins[2]}, 1).Outputs[0]) // [2,3]
		elseG.AddOutput(fcNode(t, elseG, "Gemm", nil, []*Value{ins[1], ins[3]}, 1).Outputs[0]) // [2,5]
		n := fcNode(t, g, "If", []*Attribute{fcGraphAttr("then_branch", thenG), fcGraphAttr("else_branch", elseG)}, ins[:1], 1)
		return &Model{Opsets: []OpsetImport{{Version: 13}}, Graph: g}, n
	}
	// Unknown condition: the branches agree on rank, the differing dim is a symbol.
	m, n := build(fcKnownIn("c", Bool))
	if _, err := InferShapes(m, InferOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := fcTypeString(n.Outputs[0]); !strings.HasPrefix(got, "float32[2,?merge") {
		t.Errorf("If on an unknown condition = %s, want float32[2,?merge_n]", got)
	}
	// A known condition selects its branch.
	for _, c := range []struct {
		v    int64
		want string
	}{{1, "float32[2,3]"}, {0, "float32[2,5]"}} {
		m, n := build(fcIn{name: "c", dt: Bool, shape: KnownShape(), ints: []int64{c.v}})
		if _, err := InferShapes(m, InferOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := fcTypeString(n.Outputs[0]); got != c.want {
			t.Errorf("If on constant %d = %s, want %s", c.v, got, c.want)
		}
	}
}

func TestLoopShapes(t *testing.T) {
	const trip = 4
	build := func(wCols int64, m fcIn) (*Model, *Node) {
		g := NewGraph("main")
		ins := fcAddInputs(t, g, []fcIn{m, fcKnownIn("x", Float32, 2, 4), fcKnownIn("w", Float32, 4, wCols)})
		body, condIn, xIn := fcLoopBody(t, g, "x_in")
		y := fcNode(t, body, "MatMul", nil, []*Value{xIn, ins[2]}, 1).Outputs[0]
		body.AddOutput(condIn)
		body.AddOutput(y) // carried
		body.AddOutput(y) // scan output
		n := fcNode(t, g, "Loop", []*Attribute{fcGraphAttr("body", body)}, []*Value{ins[0], nil, ins[1]}, 2)
		return &Model{Opsets: []OpsetImport{{Version: 13}}, Graph: g}, n
	}
	// Carried [2,4] keeps its shape; scan outputs stack trip=4 iterations.
	m, n := build(4, fcConstInts("M", nil, trip))
	if _, err := InferShapes(m, InferOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, want := fcTypeString(n.Outputs[0]), "float32[2,4]"; got != want {
		t.Errorf("Loop carried = %s, want %s", got, want)
	}
	if got, want := fcTypeString(n.Outputs[1]), "float32["+fcItoa(trip)+",2,4]"; got != want {
		t.Errorf("Loop scan output = %s, want %s", got, want)
	}
	// A carried value that changes shape ([2,4] -> [2,5]) is generalized;
	// an unknown trip count gives a symbolic leading dim.
	m, n = build(5, fcKnownIn("M", Int64))
	if _, err := InferShapes(m, InferOptions{}); err != nil {
		t.Fatal(err)
	}
	if s := n.Outputs[0].Shape; s.Rank() != 2 || !s.Dims[0].Is(2) || s.Dims[1].IsKnown() {
		t.Errorf("Loop carried that grows = %s, want [2,?]", s)
	}
	if s := n.Outputs[1].Shape; s.Rank() != 3 || s.Dims[0].IsKnown() || s.Dims[2].String() != "5" {
		t.Errorf("Loop scan output with unknown trip count = %s, want [?,2,5]", s)
	}
}

func TestScanShapes(t *testing.T) {
	build := func(opset int64, attrs []*Attribute, stateIn, scanIn fcIn) (*Model, *Node) {
		g := NewGraph("main")
		ins := fcAddInputs(t, g, []fcIn{stateIn, scanIn})
		body := NewSubgraph("body", g)
		s := fcBodyInput(t, body, "s_in")
		x := fcBodyInput(t, body, "x_in")
		// Mul, not Einsum: the cases run at opsets 8 and 11, before Einsum.
		sum := fcNode(t, body, "Mul", nil, []*Value{s, x}, 1).Outputs[0]
		body.AddOutput(sum)
		body.AddOutput(sum)
		inputs := ins
		if opset < 9 {
			inputs = append([]*Value{nil}, ins...) // sequence_lens omitted
		}
		n := fcNode(t, g, "Scan", append(attrs, fcGraphAttr("body", body), fcAttrInt("num_scan_inputs", 1)), inputs, 2)
		return &Model{Opsets: []OpsetImport{{Version: opset}}, Graph: g}, n
	}
	cases := []struct {
		name          string
		opset         int64
		attrs         []*Attribute
		state, scan   fcIn
		final, stacks string
	}{
		{"axis 0", 11, nil, fcKnownIn("s", Float32, 4), fcKnownIn("x", Float32, 5, 4), "float32[4]", "float32[5,4]"},
		{"input axis 1, output axis 1", 11, []*Attribute{fcAttrInts("scan_input_axes", 1), fcAttrInts("scan_output_axes", -1)},
			fcKnownIn("s", Float32, 4), fcKnownIn("x", Float32, 4, 5), "float32[4]", "float32[4,5]"},
		{"opset 8 batched", 8, nil, fcKnownIn("s", Float32, 2, 4), fcKnownIn("x", Float32, 2, 5, 4), "float32[2,4]", "float32[2,5,4]"},
		{"symbolic length", 11, nil, fcKnownIn("s", Float32, 4), fcTensorIn("x", Float32, S("T"), D(4)), "float32[4]", "float32[T,4]"},
	}
	for _, c := range cases {
		m, n := build(c.opset, c.attrs, c.state, c.scan)
		if _, err := InferShapes(m, InferOptions{}); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := fcTypeString(n.Outputs[0]); got != c.final {
			t.Errorf("%s: final state = %s, want %s", c.name, got, c.final)
		}
		if got := fcTypeString(n.Outputs[1]); got != c.stacks {
			t.Errorf("%s: scan output = %s, want %s", c.name, got, c.stacks)
		}
	}
}

func TestLoopAppendsToEmptySequence(t *testing.T) {
	// Loop(M, cond, SequenceEmpty) whose body appends a [3] tensor each
	// iteration: the result is a sequence of [3] tensors, not an unknown.
	g := NewGraph("main")
	ins := fcAddInputs(t, g, []fcIn{fcKnownIn("M", Int64), fcKnownIn("x", Float32, 3)})
	empty := fcNode(t, g, "SequenceEmpty", nil, nil, 1).Outputs[0]
	body, condIn, seqIn := fcLoopBody(t, g, "seq_in")
	seqOut := fcNode(t, body, "SequenceInsert", nil, []*Value{seqIn, ins[1]}, 1).Outputs[0]
	body.AddOutput(condIn)
	body.AddOutput(seqOut)
	n := fcNode(t, g, "Loop", []*Attribute{fcGraphAttr("body", body)}, []*Value{ins[0], nil, empty}, 1)
	if _, err := InferShapes(&Model{Opsets: []OpsetImport{{Version: 13}}, Graph: g}, InferOptions{}); err != nil {
		t.Fatal(err)
	}
	if o := n.Outputs[0]; o.Kind != SequenceValue || fcTypeString(o) != "float32[3]" {
		t.Errorf("Loop appending [3] to an empty sequence = kind %d %s, want a sequence of float32[3]", o.Kind, fcTypeString(o))
	}
}

// TestNestedLoopsStayLinear nests 40 loops whose carried value changes
// shape in every body, so every level re-infers its body; the passes
// must stay bounded (see maxFixpointNesting) and the result generalized.
func TestNestedLoopsStayLinear(t *testing.T) {
	const depth = 40
	g := NewGraph("main")
	ins := fcAddInputs(t, g, []fcIn{fcKnownIn("M", Int64), fcKnownIn("x", Float32, 2, 4), fcKnownIn("w", Float32, 4, 5)})
	var build func(parent *Graph, level int) *Graph
	build = func(parent *Graph, level int) *Graph {
		body := NewSubgraph(fmt.Sprintf("body%d", level), parent)
		fcBodyInput(t, body, fmt.Sprintf("i%d", level))
		condIn := fcBodyInput(t, body, fmt.Sprintf("c%d", level))
		xIn := fcBodyInput(t, body, fmt.Sprintf("x%d", level))
		y := xIn
		if level < depth {
			y = fcNode(t, body, "Loop", []*Attribute{fcGraphAttr("body", build(body, level+1))}, []*Value{ins[0], nil, xIn}, 1).Outputs[0]
		}
		out := fcNode(t, body, "MatMul", nil, []*Value{y, ins[2]}, 1).Outputs[0] // [2,4] -> [2,5]: changes every pass
		body.AddOutput(condIn)
		body.AddOutput(out)
		return body
	}
	n := fcNode(t, g, "Loop", []*Attribute{fcGraphAttr("body", build(g, 1))}, []*Value{ins[0], nil, ins[1]}, 1)
	if _, err := InferShapes(&Model{Opsets: []OpsetImport{{Version: 13}}, Graph: g}, InferOptions{}); err != nil {
		t.Fatal(err)
	}
	if s := n.Outputs[0].Shape; s.Rank() != 2 || !s.Dims[0].Is(2) {
		t.Errorf("nested loop output = %s, want [2,?]", s)
	}
}

// TestReadCounted: ReadOptions.Counted hears the main graph's node count
// once, not its subgraphs'.
func TestReadCounted(t *testing.T) {
	g := NewGraph("main")
	ins := fcAddInputs(t, g, []fcIn{fcKnownIn("c", Bool), fcKnownIn("a", Float32, 2, 3), fcKnownIn("w", Float32, 3, 3)})
	thenG, elseG := NewSubgraph("then", g), NewSubgraph("else", g)
	for _, b := range []*Graph{thenG, elseG} {
		x := fcNode(t, b, "Gemm", nil, []*Value{ins[1], ins[2]}, 1).Outputs[0]
		b.AddOutput(fcNode(t, b, "Relu", nil, []*Value{x}, 1).Outputs[0])
	}
	n := fcNode(t, g, "If", []*Attribute{fcGraphAttr("then_branch", thenG), fcGraphAttr("else_branch", elseG)}, ins[:1], 1)
	g.AddOutput(fcNode(t, g, "Relu", nil, n.Outputs, 1).Outputs[0])
	var buf strings.Builder
	if err := Write(&buf, &Model{IRVersion: 8, Opsets: []OpsetImport{{Version: 13}}, Graph: g}); err != nil {
		t.Fatal(err)
	}
	var heard []int
	if _, err := Read([]byte(buf.String()), ReadOptions{Counted: func(n int) { heard = append(heard, n) }}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(heard) != "[2]" {
		t.Errorf("Counted heard %v, want [2] (the main graph's If and Relu)", heard)
	}
}
