package ir

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// leakyFunction is custom.LeakyAct(x) -> y {alpha}: t = LeakyRelu(x)
// {alpha=@alpha}; y = Identity(t); alpha defaults to 0.125.
func leakyFunction(t *testing.T) *Function {
	body := NewGraph("LeakyAct")
	x := mustValue(t, body, "x")
	body.AddInput(x)
	tv, y := mustValue(t, body, "t"), mustValue(t, body, "y")
	body.AddNode(&Node{Name: "act", OpType: "LeakyRelu", Inputs: []*Value{x}, Outputs: []*Value{tv},
		Attrs: []*Attribute{refAttr("alpha", AttrFloat, "alpha")}})
	body.AddNode(&Node{Name: "id", OpType: "Identity", Inputs: []*Value{tv}, Outputs: []*Value{y}})
	body.AddOutput(y)
	return &Function{Name: "LeakyAct", Domain: "custom", AttrNames: []string{"alpha"},
		AttrDefaults: []*Attribute{{Name: "alpha", Type: AttrFloat, F: 0.125}},
		Opsets:       []OpsetImport{{Version: 17}}, Body: body}
}

// outerFunction is custom.Twice(x) -> y, calling LeakyAct twice, the
// second time with alpha=0.5.
func outerFunction(t *testing.T) *Function {
	body := NewGraph("Twice")
	x := mustValue(t, body, "x")
	body.AddInput(x)
	m, y := mustValue(t, body, "m"), mustValue(t, body, "y")
	body.AddNode(&Node{Name: "a", OpType: "LeakyAct", Domain: "custom", Inputs: []*Value{x}, Outputs: []*Value{m}})
	body.AddNode(&Node{Name: "b", OpType: "LeakyAct", Domain: "custom", Inputs: []*Value{m}, Outputs: []*Value{y},
		Attrs: []*Attribute{{Name: "alpha", Type: AttrFloat, F: 0.5}}})
	body.AddOutput(y)
	return &Function{Name: "Twice", Domain: "custom", Opsets: []OpsetImport{{Version: 17}, {Domain: "custom", Version: 1}}, Body: body}
}

func TestInlineFunctions(t *testing.T) {
	g := NewGraph("main")
	x := input(t, g, "X", D(2))
	y1, y := mustValue(t, g, "Y1"), mustValue(t, g, "Y")
	g.AddNode(&Node{Name: "call1", OpType: "LeakyAct", Domain: "custom", Inputs: []*Value{x}, Outputs: []*Value{y1},
		Attrs: []*Attribute{{Name: "alpha", Type: AttrFloat, F: 0.25}}})
	g.AddNode(&Node{Name: "call2", OpType: "Twice", Domain: "custom", Inputs: []*Value{y1}, Outputs: []*Value{y}})
	z := mustValue(t, g, "Z")
	g.AddNode(&Node{Name: "after", OpType: "Relu", Inputs: []*Value{y}, Outputs: []*Value{z}})
	g.AddOutput(z)
	m := &Model{Opsets: []OpsetImport{{Version: 17}, {Domain: "custom", Version: 1}}, Graph: g,
		Functions: []*Function{leakyFunction(t), outerFunction(t)}}

	if err := InlineFunctions(m); err != nil {
		t.Fatal(err)
	}
	if err := Verify(m.Graph); err != nil {
		t.Fatalf("verify after inlining: %v\n%s", err, Dump(m.Graph))
	}
	// call1 is one LeakyAct (2 nodes); call2 is Twice = two LeakyActs
	// (4 nodes); then the Relu: 2 + 4 + 1 nodes.
	want := []string{
		"call1/act = LeakyRelu(X:float32[2]) -> call1/t:? {alpha=0.25}",
		"call1/id = Identity(call1/t:?) -> Y1:?",
		"call2/a/act = LeakyRelu(Y1:?) -> call2/a/t:? {alpha=0.125}",
		"call2/a/id = Identity(call2/a/t:?) -> call2/m:?",
		"call2/b/act = LeakyRelu(call2/m:?) -> call2/b/t:? {alpha=0.5}",
		"call2/b/id = Identity(call2/b/t:?) -> Y:?",
		"after = Relu(Y:?) -> Z:?",
	}
	if len(m.Graph.Nodes) != len(want) {
		t.Fatalf("got %d nodes, want %d:\n%s", len(m.Graph.Nodes), len(want), Dump(m.Graph))
	}
	for i, w := range want {
		if line := NodeText(m.Graph.Nodes[i]); line != w {
			t.Errorf("node %d:\n got %s\nwant %s", i, line, w)
		}
	}
}

func TestInlineRecursiveFunctionFails(t *testing.T) {
	body := NewGraph("Rec")
	x := mustValue(t, body, "x")
	body.AddInput(x)
	y := mustValue(t, body, "y")
	body.AddNode(&Node{Name: "self", OpType: "Rec", Domain: "custom", Inputs: []*Value{x}, Outputs: []*Value{y}})
	body.AddOutput(y)
	g := NewGraph("main")
	in := input(t, g, "X", D(1))
	out := mustValue(t, g, "Y")
	g.AddNode(&Node{Name: "call", OpType: "Rec", Domain: "custom", Inputs: []*Value{in}, Outputs: []*Value{out}})
	g.AddOutput(out)
	m := &Model{Graph: g, Functions: []*Function{{Name: "Rec", Domain: "custom", Body: body}}}
	err := InlineFunctions(m)
	if err == nil || !strings.Contains(err.Error(), "recursive function") {
		t.Fatalf("got %v", err)
	}
}

// TestInlineCallWithMoreOutputsThanTheFunction: a call that names an
// output its function does not declare is refused in one line, not
// inlined into a graph that reads a value nothing produces (a FuzzInline
// finding).
func TestInlineCallWithMoreOutputsThanTheFunction(t *testing.T) {
	g := NewGraph("main")
	x := input(t, g, "X", D(2))
	y1, y2, z := mustValue(t, g, "Y1"), mustValue(t, g, "Y2"), mustValue(t, g, "Z")
	g.AddNode(&Node{Name: "call", OpType: "LeakyAct", Domain: "custom", Inputs: []*Value{x}, Outputs: []*Value{y1, y2}})
	g.AddNode(&Node{Name: "after", OpType: "Add", Inputs: []*Value{y1, y2}, Outputs: []*Value{z}})
	g.AddOutput(z)
	m := &Model{Opsets: []OpsetImport{{Version: 17}, {Domain: "custom", Version: 1}}, Graph: g, Functions: []*Function{leakyFunction(t)}}
	err := InlineFunctions(m)
	if err == nil || !strings.Contains(err.Error(), `output 2 ("Y2") but function LeakyAct declares 1`) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("got %v", err)
	}
}

// TestInlinePassThroughAndRoundTrip writes and reads back a model with
// functions, then inlines a function whose output is its input.
func TestInlinePassThroughAndRoundTrip(t *testing.T) {
	body := NewGraph("Pass")
	x := mustValue(t, body, "x")
	body.AddInput(x)
	body.AddOutput(x)
	g := NewGraph("main")
	in := input(t, g, "X", D(3))
	out, z := mustValue(t, g, "Y"), mustValue(t, g, "Z")
	g.AddNode(&Node{Name: "call", OpType: "Pass", Domain: "custom", Inputs: []*Value{in}, Outputs: []*Value{out}})
	g.AddNode(&Node{Name: "r", OpType: "Relu", Inputs: []*Value{out}, Outputs: []*Value{z}})
	g.AddOutput(z)
	m := &Model{Opsets: []OpsetImport{{Version: 17}, {Domain: "custom", Version: 1}}, Graph: g,
		Functions: []*Function{{Name: "Pass", Domain: "custom", Body: body}, leakyFunction(t)}}
	m2 := roundTrip(t, m)
	if a, b := DumpModel(m), DumpModel(m2); a != b {
		t.Fatalf("round trip:\n%s\n---\n%s", a, b)
	}
	if _, err := InlineFunctionsNotes(m2); err != nil {
		t.Fatal(err)
	}
	if err := Verify(m2.Graph); err != nil {
		t.Fatal(err)
	}
	if got := NodeText(m2.Graph.Nodes[0]); got != "call/Identity = Identity(X:float32[3]) -> Y:?" {
		t.Fatalf("got %s", got)
	}
}

// TestInlineFunctionOpsetNotes checks that a function's differing opset
// import is reported and a missing one added.
func TestInlineFunctionOpsetNotes(t *testing.T) {
	g := NewGraph("main")
	x := input(t, g, "X", D(2))
	y := mustValue(t, g, "Y")
	g.AddNode(&Node{Name: "c", OpType: "LeakyAct", Domain: "custom", Inputs: []*Value{x}, Outputs: []*Value{y}})
	g.AddOutput(y)
	f := leakyFunction(t)
	f.Opsets = []OpsetImport{{Version: 18}, {Domain: "com.extra", Version: 2}}
	m := &Model{Opsets: []OpsetImport{{Version: 17}}, Graph: g, Functions: []*Function{f}}
	notes, err := InlineFunctionsNotes(m)
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(notes, "\n")
	if !strings.Contains(joined, "imports ai.onnx version 18 but the model imports version 17") || !strings.Contains(joined, "com.extra version 2, which the model did not import; added") {
		t.Fatalf("notes: %v", notes)
	}
	if m.Opset("com.extra") != 2 {
		t.Fatalf("opsets %v", m.Opsets)
	}
}

// refAttr returns an attribute of type typ that takes the calling node's
// attribute ref.
func refAttr(name string, typ AttrType, ref string) *Attribute {
	a := &Attribute{Name: name, Type: typ}
	a.SetRefAttrName(ref)
	return a
}

// chainModel is n calls in a row of custom.Neg1(x) -> y: y = Neg(x), so
// the inlined graph is n Neg nodes. Call names are empty when unnamed, the
// case where every inlined name collides with an earlier one.
func chainModel(t testing.TB, n int, unnamed bool) *Model {
	body := NewGraph("Neg1")
	x, y := mustValue(t, body, "x"), mustValue(t, body, "y")
	body.AddInput(x)
	body.AddNode(&Node{Name: "neg", OpType: "Neg", Inputs: []*Value{x}, Outputs: []*Value{y}})
	body.AddOutput(y)
	g := NewGraph("main")
	g.reserveValues(n + 1)
	v := input(t, g, "X", D(4))
	for i := range n {
		out := mustValue(t, g, "v"+strconv.Itoa(i))
		name := "call" + strconv.Itoa(i)
		if unnamed {
			name = ""
		}
		g.AddNode(&Node{Name: name, OpType: "Neg1", Domain: "custom", Inputs: []*Value{v}, Outputs: []*Value{out}})
		v = out
	}
	g.AddOutput(v)
	return &Model{Opsets: []OpsetImport{{Version: 17}, {Domain: "custom", Version: 1}}, Graph: g,
		Functions: []*Function{{Name: "Neg1", Domain: "custom", Opsets: []OpsetImport{{Version: 17}}, Body: body}}}
}

// flatModel is the graph chainModel inlines to, built directly.
func flatModel(t testing.TB, n int) *Model {
	m := chainModel(t, n, false)
	g := m.Graph
	for _, nd := range g.Nodes {
		nd.OpType, nd.Domain = "Neg", ""
	}
	m.Functions = nil
	return m
}

// BenchmarkInline inlines a chain of calls of a one-node function; the
// flat case is the same graph written without functions, through the same
// pass (which then has nothing to do) and through Verify, a linear walk,
// for scale.
func BenchmarkInline(b *testing.B) {
	for _, n := range []int{4096, 16384, 32768} {
		for _, unnamed := range []bool{false, true} {
			name := fmt.Sprintf("chain/%d", n)
			if unnamed {
				name = fmt.Sprintf("chain-unnamed/%d", n)
			}
			b.Run(name, func(b *testing.B) {
				for range b.N {
					b.StopTimer()
					m := chainModel(b, n, unnamed)
					b.StartTimer()
					if err := InlineFunctions(m); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		b.Run(fmt.Sprintf("flat-verify/%d", n), func(b *testing.B) {
			m := flatModel(b, n)
			for range b.N {
				if err := Verify(m.Graph); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// doublingModel is levels functions custom.F0 ... where each calls the
// next twice and the last is one Neg: one call of F0 expands to
// 2^(levels-1) nodes.
func doublingModel(t testing.TB, levels int) *Model {
	var fs []*Function
	for i := range levels {
		body := NewGraph("F" + strconv.Itoa(i))
		x, m, y := mustValue(t, body, "x"), mustValue(t, body, "m"), mustValue(t, body, "y")
		body.AddInput(x)
		if i == levels-1 {
			body.AddNode(&Node{Name: "neg", OpType: "Neg", Inputs: []*Value{x}, Outputs: []*Value{y}})
		} else {
			next := "F" + strconv.Itoa(i+1)
			body.AddNode(&Node{Name: "a", OpType: next, Domain: "custom", Inputs: []*Value{x}, Outputs: []*Value{m}})
			body.AddNode(&Node{Name: "b", OpType: next, Domain: "custom", Inputs: []*Value{m}, Outputs: []*Value{y}})
		}
		body.AddOutput(y)
		fs = append(fs, &Function{Name: "F" + strconv.Itoa(i), Domain: "custom", Opsets: []OpsetImport{{Version: 17}}, Body: body})
	}
	g := NewGraph("main")
	x := input(t, g, "X", D(4))
	y := mustValue(t, g, "Y")
	g.AddNode(&Node{Name: "call", OpType: "F0", Domain: "custom", Inputs: []*Value{x}, Outputs: []*Value{y}})
	g.AddOutput(y)
	return &Model{IRVersion: 8, Opsets: []OpsetImport{{Version: 17}, {Domain: "custom", Version: 1}}, Graph: g, Functions: fs}
}

// TestInlineExponentialRefused reads a 3 KB file whose 40 functions each
// call the next twice (2^39 nodes inlined): it must be refused at once,
// in one line naming the function, its size and the limit, not spin
// allocating.
func TestInlineExponentialRefused(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, doublingModel(t, 40)); err != nil {
		t.Fatal(err)
	}
	if buf.Len() > 4096 {
		t.Fatalf("file is %d bytes", buf.Len())
	}
	m, err := Read(buf.Bytes(), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = InlineFunctions(m)
	took := time.Since(start)
	want := "function custom::F0 expands to 549755813888 nodes per call; inlined, the graph would have 549755813888 nodes, more than the limit of 5000000"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	if took > time.Second {
		t.Fatalf("refusal took %v", took)
	}
	if len(m.Graph.Nodes) != 1 {
		t.Fatalf("graph changed: %d nodes", len(m.Graph.Nodes))
	}
	t.Logf("%d-byte file refused in %v", buf.Len(), took)

	// Past int64: the count saturates instead of wrapping.
	err = InlineFunctions(doublingModel(t, 64))
	if err == nil || !strings.Contains(err.Error(), "expands to more than 9223372036854775806 nodes") {
		t.Fatalf("got %v", err)
	}
}

// TestInlineNodeBudget checks the budget is the exact inlined count: the
// limit itself passes, one less is refused, pass-through Identity nodes
// and nodes of subgraphs included.
func TestInlineNodeBudget(t *testing.T) {
	lim := DefaultLimits
	lim.MaxNodes = 1 << 10
	if _, err := inlineFunctions(doublingModel(t, 11), &lim); err != nil {
		t.Fatal(err)
	}
	lim.MaxNodes--
	if _, err := inlineFunctions(doublingModel(t, 11), &lim); err == nil || !strings.Contains(err.Error(), "custom::F0 expands to 1024 nodes") {
		t.Fatalf("got %v", err)
	}

	// Two calls of Pass (one Identity each) in an If branch, and a Relu.
	passModel := func() *Model {
		body := NewGraph("Pass")
		x := mustValue(t, body, "x")
		body.AddInput(x)
		body.AddOutput(x)
		g := NewGraph("main")
		c, in := input(t, g, "C"), input(t, g, "X", D(3))
		sg := NewSubgraph("then", g)
		a, b := mustValue(t, sg, "a"), mustValue(t, sg, "b")
		sg.AddNode(&Node{Name: "p1", OpType: "Pass", Domain: "custom", Inputs: []*Value{in}, Outputs: []*Value{a}})
		sg.AddNode(&Node{Name: "p2", OpType: "Pass", Domain: "custom", Inputs: []*Value{a}, Outputs: []*Value{b}})
		sg.AddOutput(b)
		br := &Attribute{Name: "then_branch", Type: AttrGraph}
		br.SetG(sg)
		y, z := mustValue(t, g, "Y"), mustValue(t, g, "Z")
		g.AddNode(&Node{Name: "if", OpType: "If", Inputs: []*Value{c}, Outputs: []*Value{y}, Attrs: []*Attribute{br}})
		g.AddNode(&Node{Name: "r", OpType: "Relu", Inputs: []*Value{y}, Outputs: []*Value{z}})
		g.AddOutput(z)
		return &Model{Graph: g, Functions: []*Function{{Name: "Pass", Domain: "custom", Body: body}}}
	}
	lim.MaxNodes = 4
	m := passModel()
	if _, err := inlineFunctions(m, &lim); err != nil {
		t.Fatal(err)
	}
	if n := m.Graph.NodeCount(); n != 4 {
		t.Fatalf("%d nodes after inlining, counted 4:\n%s", n, Dump(m.Graph))
	}
	lim.MaxNodes = 3
	if _, err := inlineFunctions(passModel(), &lim); err == nil || !strings.Contains(err.Error(), "would have 4 nodes, more than the limit of 3") {
		t.Fatalf("got %v", err)
	}
}

// TestInlineRecursionThroughSubgraph: a function calling itself inside
// an If branch of its body. Call nesting restarted at each subgraph, so
// inlining this never ended.
func TestInlineRecursionThroughSubgraph(t *testing.T) {
	body := NewGraph("Rec")
	c, x := mustValue(t, body, "c"), mustValue(t, body, "x")
	body.AddInput(c)
	body.AddInput(x)
	sg := NewSubgraph("then", body)
	o := mustValue(t, sg, "o")
	sg.AddNode(&Node{Name: "again", OpType: "Rec", Domain: "custom", Inputs: []*Value{c, x}, Outputs: []*Value{o}})
	sg.AddOutput(o)
	br := &Attribute{Name: "then_branch", Type: AttrGraph}
	br.SetG(sg)
	y := mustValue(t, body, "y")
	body.AddNode(&Node{Name: "if", OpType: "If", Inputs: []*Value{c}, Outputs: []*Value{y}, Attrs: []*Attribute{br}})
	body.AddOutput(y)
	g := NewGraph("main")
	gc, gx := input(t, g, "C"), input(t, g, "X", D(1))
	out := mustValue(t, g, "Y")
	g.AddNode(&Node{Name: "call", OpType: "Rec", Domain: "custom", Inputs: []*Value{gc, gx}, Outputs: []*Value{out}})
	g.AddOutput(out)
	m := &Model{Graph: g, Functions: []*Function{{Name: "Rec", Domain: "custom", Body: body}}}
	err := InlineFunctions(m)
	if err == nil || err.Error() != `function custom::Rec calls itself (node "again"): recursive function` {
		t.Fatalf("got %v", err)
	}
}

// TestInlineLongChain inlines 16,384 calls, named and unnamed, to the
// names inlining has always given: "<call>/neg", and for unnamed calls
// "/neg" with suffixes _1, _2, ... in order.
func TestInlineLongChain(t *testing.T) {
	const n = 16384
	for _, unnamed := range []bool{false, true} {
		m := chainModel(t, n, unnamed)
		start := time.Now()
		if err := InlineFunctions(m); err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		if err := Verify(m.Graph); err != nil {
			t.Fatal(err)
		}
		if len(m.Graph.Nodes) != n {
			t.Fatalf("%d nodes", len(m.Graph.Nodes))
		}
		for i, nd := range m.Graph.Nodes {
			want := "call" + strconv.Itoa(i) + "/neg"
			if unnamed {
				want = "/neg"
				if i > 0 {
					want += "_" + strconv.Itoa(i)
				}
			}
			in := "X"
			if i > 0 {
				in = "v" + strconv.Itoa(i-1)
			}
			if nd.Name != want || nd.OpType != "Neg" || nd.In(0).Name != in || nd.Out(0).Name != "v"+strconv.Itoa(i) {
				t.Fatalf("node %d: %s", i, NodeText(nd))
			}
			if c := nd.In(0).Consumers; len(c) != 1 || c[0] != nd {
				t.Fatalf("node %d: input consumers %v", i, c)
			}
		}
		t.Logf("unnamed=%v: %d calls inlined in %v", unnamed, n, took)
	}
}
