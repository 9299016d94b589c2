package ir

import (
	"fmt"
	"slices"
	"strings"
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
	if uniqueNames(build(many...)) == nil {
		t.Error("5000 distinct names reported as repeated")
	}
	if uniqueNames(build(append(many, many[4321])...)) != nil {
		t.Error("a repeated name among 5001 not found")
	}
	// Both paths leave the filter of every node name.
	for _, in := range [][]string{many, {"", "a", ""}} {
		g := build(in...)
		NameNodes(g)
		if g.nodeNames == nil {
			t.Fatalf("NameNodes(%d names) left no name filter", len(in))
		}
		for _, n := range g.Nodes {
			if !g.nodeNames.has(n.Name) {
				t.Errorf("name %q not in the filter", n.Name)
			}
		}
	}
}

// TestNodeNameFilter: after NameNodes, hasNodeNamed answers from the
// filter and the node list alike, UniqueName never hands out a node's
// name (also one it handed out before, once a node carries it), the filter
// grows past its first size, and Verify refuses a node named behind the
// filter's back.
func TestNodeNameFilter(t *testing.T) {
	g := NewGraph("g")
	for i := range 100 {
		g.Nodes = append(g.Nodes, &Node{Name: fmt.Sprintf("n/folded_%d", i+1), OpType: "Relu", graph: g})
	}
	NameNodes(g)
	for _, name := range []string{"n/folded_7", "n/folded_100"} {
		if !g.hasNodeNamed(name) {
			t.Errorf("hasNodeNamed(%q) = false for a node's name", name)
		}
	}
	if g.hasNodeNamed("n/folded_101") {
		t.Error("hasNodeNamed true for a name no node has")
	}
	seen := map[string]bool{}
	for range 1000 { // grows the filter (sized for 100 names) several times
		name := g.UniqueName("n/folded")
		if seen[name] {
			t.Fatalf("UniqueName repeated %q", name)
		}
		for _, n := range g.Nodes {
			if n.Name == name {
				t.Fatalf("UniqueName gave %q, a node's name", name)
			}
		}
		seen[name] = true
		g.AddNode(&Node{Name: name, OpType: "Relu"})
	}
	for _, n := range g.Nodes {
		if !g.hasNodeNamed(n.Name) {
			t.Fatalf("hasNodeNamed(%q) = false after UniqueName named the node", n.Name)
		}
	}
	if err := Verify(g); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	g.AddNode(&Node{Name: "made up", OpType: "Relu"})
	if err := Verify(g); err == nil || !strings.Contains(err.Error(), "made up") {
		t.Errorf("Verify of a node named behind the filter's back = %v, want an error naming it", err)
	}
}

// TestReadNamesAsOnnxruntime: the reader names an unnamed main-graph node
// "<OpType>_<i>", i its position among the non-Constant nodes, as
// onnxruntime's profiles do; a Constant, or a node whose such name is
// already taken, gets "<OpType>_<n>" from the running count instead.
func TestReadNamesAsOnnxruntime(t *testing.T) {
	g := NewGraph("main")
	for _, n := range []struct{ name, op string }{
		{"", "Constant"}, {"", "Relu"}, {"Add_1", "Add"}, {"", "Add"}, {"", "Mul"}, {"Mul_3", "Relu"},
	} {
		g.AddNode(&Node{Name: n.name, OpType: n.op})
	}
	nameUnnamedNodes(&Model{Graph: g})
	var got []string
	for _, n := range g.Nodes {
		got = append(got, n.Name)
	}
	if want := []string{"Constant_1", "Relu_0", "Add_1", "Add_2", "Mul_2", "Mul_3"}; !slices.Equal(got, want) {
		t.Errorf("names %q, want %q", got, want)
	}
}
