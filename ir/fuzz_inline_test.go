package ir

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var genInlineSeeds = flag.Bool("inlineseeds", false, "regenerate testdata/fuzz/FuzzInline")

// fuzzInlineLimits are small, so that the fuzzer reaches both sides of
// the node budget and of the depth limit quickly.
var fuzzInlineLimits = func() Limits {
	lim := DefaultLimits
	lim.MaxNodes = 2000
	lim.MaxDepth = 16
	return lim
}()

// FuzzInline reads arbitrary bytes and inlines the model's functions.
// Properties: no panic; an error is one line; an accepted model has no
// call left, verifies, and has exactly the node count the budget
// predicted.
func FuzzInline(f *testing.F) {
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		lim := fuzzInlineLimits
		m, err := Read(data, ReadOptions{Limits: &lim})
		if err != nil || len(m.Functions) == 0 {
			return
		}
		var predicted int64 = -1
		if in, err := newInliner(m, &lim); err == nil {
			var big *Function
			if n, _, err := in.count(m.Graph, 0, &big); err == nil {
				predicted = n
			}
		}
		_, err = inlineFunctions(m, &lim)
		if err != nil {
			if msg := err.Error(); msg == "" || strings.Contains(msg, "\n") {
				t.Fatalf("error is not one line: %q", msg)
			}
			return
		}
		in, _ := newInliner(m, &lim)
		var calls func(g *Graph) string
		calls = func(g *Graph) string {
			for _, n := range g.Nodes {
				if in.callee(n) != nil {
					return n.Name
				}
				for _, sg := range n.Subgraphs() {
					if c := calls(sg); c != "" {
						return c
					}
				}
			}
			return ""
		}
		if c := calls(m.Graph); c != "" {
			t.Fatalf("call %q left after inlining", c)
		}
		if got := int64(m.Graph.NodeCount()); got != predicted || got > int64(lim.MaxNodes) {
			t.Fatalf("%d nodes after inlining, counted %d (limit %d)", got, predicted, lim.MaxNodes)
		}
		if err := VerifyModel(m); err != nil {
			t.Fatalf("inlined model does not verify: %v\n%s", err, Dump(m.Graph))
		}
	})
}

// TestGenInlineFuzzSeeds writes FuzzInline's seeds when run with
// -inlineseeds: small models that call functions in the ways inlining
// handles (nested calls, attribute references, pass-through outputs,
// calls in subgraphs) and ones it refuses (recursion, a doubling chain
// past the budget).
func TestGenInlineFuzzSeeds(t *testing.T) {
	if !*genInlineSeeds {
		t.Skip("run with -inlineseeds to regenerate testdata/fuzz/FuzzInline")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzInline")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, m *Model) {
		m.IRVersion = 8
		if len(m.Opsets) == 0 {
			m.Opsets = []OpsetImport{{Version: 17}, {Domain: "custom", Version: 1}}
		}
		var buf bytes.Buffer
		if err := Write(&buf, m); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		seed := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", buf.Bytes())
		if err := os.WriteFile(filepath.Join(dir, name), []byte(seed), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Twice calls LeakyAct twice; LeakyAct's alpha refers to the caller's.
	g := NewGraph("main")
	x := input(t, g, "X", D(2))
	y1, y := mustValue(t, g, "Y1"), mustValue(t, g, "Y")
	g.AddNode(&Node{Name: "call1", OpType: "LeakyAct", Domain: "custom", Inputs: []*Value{x}, Outputs: []*Value{y1},
		Attrs: []*Attribute{{Name: "alpha", Type: AttrFloat, F: 0.25}}})
	g.AddNode(&Node{Name: "", OpType: "Twice", Domain: "custom", Inputs: []*Value{y1}, Outputs: []*Value{y}})
	g.AddOutput(y)
	write("nested", &Model{Graph: g, Functions: []*Function{leakyFunction(t), outerFunction(t)}})

	write("chain", chainModel(t, 8, true))
	write("doubling_fits", doublingModel(t, 6))
	write("doubling_over", doublingModel(t, 12))
	write("doubling_deep", doublingModel(t, 20))

	// Pass returns its input (an Identity per call), called in an If
	// branch; Rec calls itself.
	pass := NewGraph("Pass")
	px := mustValue(t, pass, "x")
	pass.AddInput(px)
	pass.AddOutput(px)
	rec := NewGraph("Rec")
	rx, ry := mustValue(t, rec, "x"), mustValue(t, rec, "y")
	rec.AddInput(rx)
	rec.AddNode(&Node{Name: "self", OpType: "Rec", Domain: "custom", Inputs: []*Value{rx}, Outputs: []*Value{ry}})
	rec.AddOutput(ry)
	g = NewGraph("main")
	c, x := input(t, g, "C"), input(t, g, "X", D(3))
	sg := NewSubgraph("then", g)
	a := mustValue(t, sg, "a")
	sg.AddNode(&Node{Name: "p", OpType: "Pass", Domain: "custom", Inputs: []*Value{x}, Outputs: []*Value{a}})
	sg.AddOutput(a)
	br := &Attribute{Name: "then_branch", Type: AttrGraph}
	br.SetG(sg)
	y = mustValue(t, g, "Y")
	g.AddNode(&Node{Name: "if", OpType: "If", Inputs: []*Value{c}, Outputs: []*Value{y}, Attrs: []*Attribute{br}})
	g.AddOutput(y)
	fs := []*Function{{Name: "Pass", Domain: "custom", Body: pass}, {Name: "Rec", Domain: "custom", Body: rec}}
	write("subgraph_pass", &Model{Graph: g, Functions: fs})
	g = NewGraph("main")
	x = input(t, g, "X", D(3))
	y = mustValue(t, g, "Y")
	g.AddNode(&Node{Name: "r", OpType: "Rec", Domain: "custom", Inputs: []*Value{x}, Outputs: []*Value{y}})
	g.AddOutput(y)
	write("recursive", &Model{Graph: g, Functions: fs})
}
