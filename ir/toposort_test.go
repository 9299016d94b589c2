package ir

import (
	"errors"
	"math/rand"
	"strings"
	"testing"

	"gonum.org/v1/gonum/graph/simple"
	"gonum.org/v1/gonum/graph/topo"
)

// gonumOrder is the sort Toposort replaced (gonum's stabilised Tarjan
// sort over node positions): the reference its order must equal.
func gonumOrder(n int, edges [][2]int) (order []int, cycle []int) {
	dg := simple.NewDirectedGraph()
	for i := 0; i < n; i++ {
		dg.AddNode(simple.Node(i))
	}
	for _, e := range edges {
		dg.SetEdge(dg.NewEdge(simple.Node(e[0]), simple.Node(e[1])))
	}
	sorted, err := topo.SortStabilized(dg, nil)
	if err != nil {
		var cyc topo.Unorderable
		if !errors.As(err, &cyc) {
			panic(err)
		}
		for _, nd := range cyc[0] {
			cycle = append(cycle, int(nd.ID()))
		}
		return nil, cycle
	}
	for _, nd := range sorted {
		order = append(order, int(nd.ID()))
	}
	return order, nil
}

// TestSortStableMatchesGonum checks the slice-based sort against gonum on
// random graphs, acyclic (edges forward and backward in file order, so
// that reordering is needed) and with cycles, repeated edges included.
func TestSortStableMatchesGonum(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for trial := 0; trial < 2000; trial++ {
		n := 1 + rng.Intn(30)
		perm := rng.Perm(n) // a hidden topological order
		cyclic := trial%3 == 0
		var edges [][2]int
		for k := rng.Intn(3 * n); k > 0; k-- {
			a, b := rng.Intn(n), rng.Intn(n)
			if a == b {
				continue
			}
			if !cyclic && perm[a] > perm[b] {
				a, b = b, a
			}
			edges = append(edges, [2]int{a, b})
		}
		// The sort takes successors ascending, as Toposort builds them.
		start := make([]int32, n+1)
		for _, e := range edges {
			start[e[0]+1]++
		}
		for j := 0; j < n; j++ {
			start[j+1] += start[j]
		}
		succ := make([]int32, len(edges))
		fill := append([]int32(nil), start[:n]...)
		for to := 0; to < n; to++ {
			for _, e := range edges {
				if e[1] != to {
					continue
				}
				from := e[0]
				if k := fill[from]; k > start[from] && succ[k-1] == int32(to) {
					continue
				}
				succ[fill[from]] = int32(to)
				fill[from]++
			}
		}
		got, gotCycle := sortStable(n, start, fill, succ)
		want, wantCycle := gonumOrder(n, edges)
		if !equalInts(got, want) || !equalInts(gotCycle, wantCycle) {
			t.Fatalf("trial %d, n=%d edges=%v:\n got order %v cycle %v\nwant order %v cycle %v", trial, n, edges, got, gotCycle, want, wantCycle)
		}
	}
}

// TestSortedOrderIsKept checks the claim Toposort's shortcut rests on:
// when every edge points forward in file order, gonum's stabilised sort
// returns the file order.
func TestSortedOrderIsKept(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for trial := 0; trial < 1000; trial++ {
		n := 1 + rng.Intn(40)
		var edges [][2]int
		for k := rng.Intn(3 * n); k > 0; k-- {
			a, b := rng.Intn(n), rng.Intn(n)
			if a == b {
				continue
			}
			edges = append(edges, [2]int{min(a, b), max(a, b)})
		}
		order, _ := gonumOrder(n, edges)
		for i, v := range order {
			if v != i {
				t.Fatalf("trial %d, n=%d edges=%v: gonum order %v is not the identity", trial, n, edges, order)
			}
		}
	}
}

func equalInts(a []int32, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if int(a[i]) != b[i] {
			return false
		}
	}
	return true
}

// TestToposortDeepChain sorts a 200k-node chain given in reverse file
// order: the search must not recurse per node.
func TestToposortDeepChain(t *testing.T) {
	const n = 200_000
	g := NewGraph("chain")
	x, _ := g.NewValue("x")
	g.AddInput(x)
	vals := make([]*Value, n+1)
	vals[0] = x
	for i := 1; i <= n; i++ {
		vals[i], _ = g.NewValue("v" + itoa(int64(i)))
	}
	nodes := make([]*Node, n)
	for i := 0; i < n; i++ {
		nodes[i] = &Node{Name: "n" + itoa(int64(i)), OpType: "Relu", Inputs: []*Value{vals[i]}, Outputs: []*Value{vals[i+1]}}
	}
	for i := n - 1; i >= 0; i-- {
		if err := g.AddNode(nodes[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Toposort(); err != nil {
		t.Fatal(err)
	}
	for i, nd := range g.Nodes {
		if nd != nodes[i] {
			t.Fatalf("position %d holds %s, want %s", i, nd.Name, nodes[i].Name)
		}
	}
}

// TestReplaceNodes: a group is swapped for one node at its last member's
// place, links follow, and position hints stay usable for later edits.
func TestReplaceNodesSplice(t *testing.T) {
	g := NewGraph("g")
	x, _ := g.NewValue("x")
	g.AddInput(x)
	prev := x
	var nodes []*Node
	for i := 0; i < 8; i++ {
		o, _ := g.NewValue("v" + itoa(int64(i)))
		n := &Node{Name: "n" + itoa(int64(i)), OpType: "Relu", Inputs: []*Value{prev}, Outputs: []*Value{o}}
		if err := g.AddNode(n); err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, n)
		prev = o
	}
	g.AddOutput(prev)
	// Fuse n2..n4 (reads v1, writes v4), then n6..n7.
	f := &Node{Name: "f", OpType: "Fused", Inputs: []*Value{nodes[1].Outputs[0]}, Outputs: []*Value{nodes[4].Outputs[0]}}
	if err := g.ReplaceNodes(nodes[2:5], f); err != nil {
		t.Fatal(err)
	}
	h := &Node{Name: "h", OpType: "Fused", Inputs: []*Value{nodes[5].Outputs[0]}, Outputs: []*Value{nodes[7].Outputs[0]}}
	if err := g.ReplaceNodes(nodes[6:8], h); err != nil {
		t.Fatal(err)
	}
	if got := nodeNames(g.Nodes); got != "n0 n1 f n5 h" {
		t.Fatalf("order %q", got)
	}
	if err := Verify(g); err != nil {
		t.Fatal(err)
	}
	if nodes[4].Outputs[0].Producer != f || len(nodes[1].Outputs[0].Consumers) != 1 || nodes[1].Outputs[0].Consumers[0] != f {
		t.Error("links not moved to the fused node")
	}
	for _, m := range nodes[2:5] {
		if m.Graph() != nil {
			t.Errorf("%s still in a graph", m.Name)
		}
	}
	// A producer outside the group is refused before anything changes.
	bad := &Node{Name: "bad", OpType: "X", Outputs: []*Value{nodes[0].Outputs[0]}}
	if err := g.ReplaceNodes([]*Node{nodes[5]}, bad); err == nil {
		t.Error("replacing with a node whose output another node produces: no error")
	}
	if len(g.Nodes) != 5 {
		t.Errorf("failed replace changed the graph: %d nodes", len(g.Nodes))
	}
}

// TestRemoveNodesBackward: a dead chain hanging off a live one goes in one
// sweep (each removal makes its producer dead), the rest keep their order
// and links, and position hints stay usable for later edits.
func TestRemoveNodesBackward(t *testing.T) {
	g := NewGraph("g")
	x, _ := g.NewValue("x")
	g.AddInput(x)
	var nodes []*Node
	chain := func(name string, in *Value, n int) *Value {
		for i := 0; i < n; i++ {
			o, _ := g.NewValue(name + itoa(int64(i)))
			nd := &Node{Name: name + itoa(int64(i)), OpType: "Relu", Inputs: []*Value{in}, Outputs: []*Value{o}}
			if err := g.AddNode(nd); err != nil {
				t.Fatal(err)
			}
			nodes = append(nodes, nd)
			in = o
		}
		return in
	}
	live := chain("a", x, 3)
	chain("d", nodes[0].Outputs[0], 4) // reads a0, read by nobody
	live = chain("b", live, 2)
	g.AddOutput(live)
	dead := func(n *Node) bool { return len(n.Outputs[0].Consumers) == 0 && !g.IsGraphOutput(n.Outputs[0]) }
	if s := nodeNames(g.RemoveNodesBackward(dead)); s != "d3 d2 d1 d0" {
		t.Fatalf("removed %q", s)
	}
	if s := nodeNames(g.Nodes); s != "a0 a1 a2 b0 b1" {
		t.Fatalf("left %q", s)
	}
	if err := Verify(g); err != nil {
		t.Fatal(err)
	}
	if c := nodes[0].Outputs[0].Consumers; len(c) != 1 || c[0].Name != "a1" {
		t.Errorf("a0's consumers after the sweep: %d", len(c))
	}
	g.RemoveNode(g.Nodes[4])
	if len(g.Nodes) != 4 || g.Nodes[3].Name != "b0" {
		t.Errorf("RemoveNode after the sweep left %d nodes", len(g.Nodes))
	}
	if g.RemoveNodesBackward(func(*Node) bool { return false }) != nil {
		t.Error("nothing dead: want nil")
	}
}

// nodeNames joins the nodes' names with spaces.
func nodeNames(nodes []*Node) string {
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.Name
	}
	return strings.Join(names, " ")
}
