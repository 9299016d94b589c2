package ir

import (
	"strings"
	"testing"
)

// chain builds x -> a(Relu) -> b(Relu) -> y and returns the pieces.
func chain(t *testing.T) (*Graph, *Node, *Node) {
	g := NewGraph("g")
	x := input(t, g, "x", D(2))
	m, y := mustValue(t, g, "m"), mustValue(t, g, "y")
	a := &Node{Name: "a", OpType: "Relu", Inputs: []*Value{x}, Outputs: []*Value{m}}
	b := &Node{Name: "b", OpType: "Relu", Inputs: []*Value{m}, Outputs: []*Value{y}}
	g.AddNode(a)
	g.AddNode(b)
	g.AddOutput(y)
	return g, a, b
}

func TestVerify(t *testing.T) {
	cases := []struct {
		name   string
		break_ func(g *Graph, a, b *Node)
		want   string
	}{
		{"valid", func(g *Graph, a, b *Node) {}, ""},
		{"out of order", func(g *Graph, a, b *Node) { g.Nodes[0], g.Nodes[1] = b, a },
			`node "b" reads "m" before its producer "a" runs`},
		{"stale consumer", func(g *Graph, a, b *Node) { b.Inputs[0] = a.Inputs[0] },
			`value "m" lists consumer "b", which does not read it`},
		{"missing consumer", func(g *Graph, a, b *Node) { g.Local("m").Consumers = nil },
			`value "m": 0 consumers recorded in graph "g", 1 reads`},
		{"wrong producer", func(g *Graph, a, b *Node) { g.Local("y").Producer = a },
			`node "b" writes "y", whose producer is "a"`},
		{"dangling input", func(g *Graph, a, b *Node) { g.SetInput(b, 0, &Value{Name: "ghost"}) },
			`node "b" reads undefined tensor "ghost"`},
		{"removed producer", func(g *Graph, a, b *Node) { g.RemoveNode(b) },
			`graph "g" output "y" is not produced`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, a, b := chain(t)
			c.break_(g, a, b)
			err := Verify(g)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}

// TestVerifySubgraphScope checks that a subgraph may read an outer value
// only once it is produced before the owning node.
func TestVerifySubgraphScope(t *testing.T) {
	g, a, _ := chain(t)
	sub := NewSubgraph("body", g)
	o := mustValue(t, sub, "o")
	sub.AddNode(&Node{Name: "inner", OpType: "Identity", Inputs: []*Value{g.Local("y")}, Outputs: []*Value{o}})
	sub.AddOutput(o)
	c := input(t, g, "c", D(1))
	r := mustValue(t, g, "r")
	owner := &Node{Name: "owner", OpType: "If", Inputs: []*Value{c}, Outputs: []*Value{r}, Attrs: []*Attribute{GraphAttr("then_branch", sub)}}
	if err := g.InsertNodeBefore(owner, a); err != nil {
		t.Fatal(err)
	}
	err := Verify(g)
	if err == nil || !strings.Contains(err.Error(), `node "inner" reads "y" before its producer "b" runs`) {
		t.Fatalf("got %v", err)
	}
	if err := g.Toposort(); err != nil {
		t.Fatal(err)
	}
	if err := Verify(g); err != nil {
		t.Fatalf("after toposort: %v", err)
	}
}

// TestVerifyInferred needs types on outputs of known ops after inference.
func TestVerifyInferred(t *testing.T) {
	g, _, _ := chain(t)
	m := &Model{Opsets: []OpsetImport{{Version: 17}}, Graph: g}
	if err := VerifyInferred(g); err == nil || !strings.Contains(err.Error(), `node "a" output "m" has no inferred type`) {
		t.Fatalf("before inference: got %v", err)
	}
	if _, err := InferShapes(m, InferOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := VerifyInferred(g); err != nil {
		t.Fatalf("after inference: %v", err)
	}
}

// TestVerifyInferredFixtures reads, infers and verifies every fixture.
func TestVerifyInferredFixtures(t *testing.T) {
	paths := fixtureModels()
	if len(paths) == 0 {
		t.Skip("no fixtures in testdata/models")
	}
	for _, p := range paths {
		m, err := ReadFile(p, ReadOptions{})
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if _, err := InferShapes(m, InferOptions{Batch: 1}); err != nil {
			t.Logf("%s: inference: %v (not this test's subject)", p, err)
			continue
		}
		if err := VerifyInferred(m.Graph); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}
