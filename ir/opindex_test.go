package ir

import (
	"fmt"
	"slices"
	"testing"
)

// nodesOfTypeScan is AppendNodesOfType's meaning, by a scan of g.Nodes.
func nodesOfTypeScan(g *Graph, ops ...string) []*Node {
	var out []*Node
	for _, n := range g.Nodes {
		if n.graph == g && slices.Contains(ops, n.OpType) {
			out = append(out, n)
		}
	}
	return out
}

// reluChain builds x -> n0 -> n1 -> ... with op types cycling through
// ops, and returns the graph and its values (x first).
func reluChain(t *testing.T, ops []string, count int) (*Graph, []*Value) {
	t.Helper()
	g := NewGraph("g")
	vals := make([]*Value, count+1)
	for i := range vals {
		v, err := g.NewValue(fmt.Sprintf("v%d", i))
		if err != nil {
			t.Fatal(err)
		}
		v.Kind, v.DType, v.Shape = TensorValue, Float32, RankedShape(D(4))
		vals[i] = v
	}
	g.AddInput(vals[0])
	g.AddOutput(vals[count])
	for i := 0; i < count; i++ {
		n := &Node{Name: fmt.Sprintf("n%d", i), OpType: ops[i%len(ops)], Inputs: []*Value{vals[i]}, Outputs: []*Value{vals[i+1]}}
		if err := g.AddNode(n); err != nil {
			t.Fatal(err)
		}
	}
	return g, vals
}

// TestAppendNodesOfType: the index answers as a scan does, in graph
// order, after every kind of edit, including replacements inside a Batch
// (replaced nodes still in the list) and nodes inserted or removed.
func TestAppendNodesOfType(t *testing.T) {
	ops := []string{"Relu", "Sigmoid", "Tanh", "Relu", "Exp"}
	g, vals := reluChain(t, ops, 40)
	check := func(when string) {
		t.Helper()
		for _, q := range [][]string{{"Relu"}, {"Sigmoid", "Relu"}, {"Exp", "Tanh", "F"}, {"Missing"}, {}} {
			got := g.AppendNodesOfType(nil, q...)
			if want := nodesOfTypeScan(g, q...); !slices.Equal(got, want) {
				t.Fatalf("%s: nodes of %v: got %d nodes, want %d", when, q, len(got), len(want))
			}
		}
	}
	check("built")
	check("unchanged") // the cached index
	err := g.Batch(func() error {
		f := &Node{Name: "f", OpType: "F", Domain: FusedDomain, Inputs: []*Value{vals[2]}, Outputs: []*Value{vals[5]}}
		if err := g.ReplaceNodes(g.Nodes[2:5], f); err != nil {
			return err
		}
		check("replaced in a batch")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	check("batch compacted")
	ins := &Node{Name: "ins", OpType: "Relu", Inputs: []*Value{vals[0]}}
	if err := g.InsertNodeBefore(ins, g.Nodes[0]); err != nil {
		t.Fatal(err)
	}
	check("inserted first")
	g.RemoveNode(ins)
	check("removed")
	if err := g.Toposort(); err != nil {
		t.Fatal(err)
	}
	check("sorted")
}
