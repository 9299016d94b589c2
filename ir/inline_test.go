package ir

import (
	"strings"
	"testing"
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
