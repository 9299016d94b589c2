package ir

import (
	"fmt"
	"testing"
)

// TestNameNodes: unique names stay as they are; unnamed nodes get
// "<OpType>_<k>", repeats get "<name>_<k>", never colliding with a name in
// use; a graph of many unique names takes the quick check unchanged.
func TestNameNodes(t *testing.T) {
	build := func(names ...string) *Graph {
		g := NewGraph("g")
		for _, name := range names {
			g.Nodes = append(g.Nodes, &Node{Name: name, OpType: "Relu", graph: g})
		}
		return g
	}
	names := func(g *Graph) []string {
		var out []string
		for _, n := range g.Nodes {
			out = append(out, n.Name)
		}
		return out
	}
	cases := []struct {
		in, want []string
	}{
		{[]string{"a", "b"}, []string{"a", "b"}},
		{[]string{"", "a", ""}, []string{"Relu_1", "a", "Relu_2"}},
		{[]string{"a", "a", "a_1"}, []string{"a", "a_2", "a_1"}},
		{[]string{"Relu_1", ""}, []string{"Relu_1", "Relu_2"}},
	}
	for _, c := range cases {
		g := build(c.in...)
		NameNodes(g)
		if got := names(g); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("NameNodes(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	var many []string
	for i := range 5000 {
		many = append(many, fmt.Sprintf("/model/layers.%d/Mul", i))
	}
	if !namesUnique(build(many...)) {
		t.Error("5000 distinct names reported as repeated")
	}
	if namesUnique(build(append(many, many[4321])...)) {
		t.Error("a repeated name among 5001 not found")
	}
}
