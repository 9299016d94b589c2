package ir

import (
	"strings"
	"testing"
)

// reluSigmoid builds x -> Relu(a) -> Sigmoid(b) -> y and returns the graph, both
// nodes and the intermediate value.
func reluSigmoid(t *testing.T) (*Graph, *Node, *Node, *Value) {
	t.Helper()
	g := NewGraph("g")
	val := func(name string) *Value {
		v, err := g.NewValue(name)
		if err != nil {
			t.Fatal(err)
		}
		v.Kind, v.DType, v.Shape = TensorValue, Float32, RankedShape(D(4))
		return v
	}
	x, mid, y := val("x"), val("mid"), val("y")
	g.AddInput(x)
	g.AddOutput(y)
	a := &Node{Name: "a", OpType: "Relu", Inputs: []*Value{x}, Outputs: []*Value{mid}}
	b := &Node{Name: "b", OpType: "Sigmoid", Inputs: []*Value{mid}, Outputs: []*Value{y}}
	for _, n := range []*Node{a, b} {
		if err := g.AddNode(n); err != nil {
			t.Fatal(err)
		}
	}
	return g, a, b, mid
}

// fuseReluSigmoid replaces reluSigmoid's two nodes with one fused node
// f reading x and writing y; it returns the graph, the replaced nodes,
// the dropped intermediate and f.
func fuseReluSigmoid(t *testing.T) (*Graph, *Node, *Node, *Value, *Node) {
	t.Helper()
	g, a, b, mid := reluSigmoid(t)
	x, y := a.In(0), b.Out(0)
	n := &Node{Name: "f", OpType: "F", Domain: FusedDomain, Inputs: []*Value{x}, Outputs: []*Value{y}}
	if err := g.ReplaceNodes([]*Node{a, b}, n); err != nil {
		t.Fatal(err)
	}
	return g, a, b, mid, n
}

func TestReplaceNodes(t *testing.T) {
	g, a, b, mid, n := fuseReluSigmoid(t)
	x, y := a.In(0), b.Out(0)
	if len(g.Nodes) != 1 || g.Nodes[0] != n || y.Producer != n || len(x.Consumers) != 1 || x.Consumers[0] != n {
		t.Fatalf("after replace: nodes %v, y.Producer %v, x.Consumers %v", g.Nodes, y.Producer, x.Consumers)
	}
	if g.Local(mid.Name) != nil {
		t.Errorf("intermediate %q survived", mid.Name)
	}
	if err := Verify(g); err != nil {
		t.Error(err)
	}
}

// TestReplaceNodesLeavesGraphOnError: the last check (a dropped value is a
// graph output) fails after every other check passed; nothing changes.
func TestReplaceNodesLeavesGraphOnError(t *testing.T) {
	g, a, b, mid := reluSigmoid(t)
	g.AddOutput(mid) // mid is now needed outside the group
	before := Dump(g)
	n := &Node{Name: "f", OpType: "F", Domain: FusedDomain, Inputs: []*Value{a.In(0)}, Outputs: []*Value{b.Out(0)}}
	err := g.ReplaceNodes([]*Node{a, b}, n)
	if err == nil || !strings.Contains(err.Error(), "graph output") {
		t.Fatalf("got %v, want a graph-output error", err)
	}
	if after := Dump(g); after != before {
		t.Errorf("graph changed on error:\nbefore\n%s\nafter\n%s", before, after)
	}
	if n.graph != nil || b.Out(0).Producer != b || mid.Producer != a || len(g.Nodes) != 2 {
		t.Error("links changed on error")
	}
}

// TestFusedConvUnrankedInput: the convolution inside a FusedConv asks for a
// fresh symbol when X has no rank. Run detached (InferDetached) that used
// to dereference a nil counter; now the fused output is unranked.
func TestFusedConvUnrankedInput(t *testing.T) {
	outs, err := runFAOp(t, FusedDomain+"::"+OpFusedConv, 1,
		[]faIn{faInput(Float32, Unranked()), faInput(Float32, faShape(8, 3, 3, 3))},
		[]*Attribute{StringAttr(KeyPool, "MaxPool"), IntsAttr(KeyPoolPrefix+"kernel_shape", 2, 2)}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if o := outs[0]; o.Shape.Ranked || o.DType != Float32 {
		t.Errorf("got %s%s, want an unranked float32", o.DType, o.Shape)
	}
	// With a ranked input the parts' rules run: conv 8×8 -> 6×6, pool -> 3×3.
	outs, err = runFAOp(t, FusedDomain+"::"+OpFusedConv, 1,
		[]faIn{faInput(Float32, faShape("N", 3, 8, 8)), faInput(Float32, faShape(8, 3, 3, 3))},
		[]*Attribute{StringAttr(KeyPool, "MaxPool"), IntsAttr(KeyPoolPrefix+"kernel_shape", 2, 2), IntsAttr(KeyPoolPrefix+"strides", 2, 2)}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := faShape("N", 8, 3, 3); !outs[0].Shape.Equal(want) {
		t.Errorf("got %s, want %s", outs[0].Shape, want)
	}
}

// TestRemoveValueFreesName: a removed value is gone from every name
// lookup (its entry stays, marked, see RemoveValue), the name can be
// defined again, and a lookup falls through to an enclosing graph.
func TestRemoveValueFreesName(t *testing.T) {
	outer := NewGraph("outer")
	ov, err := outer.NewValue("x")
	if err != nil {
		t.Fatal(err)
	}
	g := NewSubgraph("body", outer)
	v, err := g.NewValue("x")
	if err != nil {
		t.Fatal(err)
	}
	if g.Lookup("x") != v {
		t.Fatal("the body's x does not shadow the outer one")
	}
	g.RemoveValue(v)
	if g.Local("x") != nil || g.Lookup("x") != ov || len(g.Values()) != 0 || g.DeclaredInfo("x") != nil {
		t.Fatalf("after RemoveValue: Local %v, Lookup %v (want the outer x), Values %v", g.Local("x"), g.Lookup("x"), g.Values())
	}
	w, err := g.NewValue("x")
	if err != nil {
		t.Fatalf("redefining a removed name: %v", err)
	}
	if g.Local("x") != w || len(g.Values()) != 1 {
		t.Fatalf("after redefining: Local %v, Values %v", g.Local("x"), g.Values())
	}
	g.RemoveValue(v) // the old value again: the name now belongs to w
	if g.Local("x") != nil {
		t.Error("removing a stale value of a name did not free it, as deleting the name always did")
	}
}

// TestReleaseRemoved: after a fusion, ReleaseRemoved empties the replaced
// nodes and the intermediate that left with them, and leaves alone the
// output the fused node took over, the graph's input and the new node; a
// second call has nothing left to release.
func TestReleaseRemoved(t *testing.T) {
	g, a, b, mid, n := fuseReluSigmoid(t)
	x, y := n.In(0), n.Out(0)
	g.ReleaseRemoved()
	for _, m := range []*Node{a, b} {
		if m.Inputs != nil || m.Outputs != nil || m.Attrs != nil || m.Name == "" || m.OpType == "" {
			t.Errorf("replaced node %q not released to its name and op: %+v", m.Name, m)
		}
	}
	if mid.Shape.Ranked || mid.Name != "mid" || g.Local("mid") != nil {
		t.Errorf("dead intermediate kept its shape, lost its name or came back into the graph: %+v", mid)
	}
	for _, v := range []*Value{x, y} {
		if !v.Shape.Ranked || v.Shape.String() != "[4]" {
			t.Errorf("live value %q lost its shape: %v", v.Name, v.Shape)
		}
	}
	if y.Producer != n || len(n.Inputs) != 1 || len(g.removed) != 0 {
		t.Errorf("fused node or its output changed, or removed list kept: %v %v %d", y.Producer, n.Inputs, len(g.removed))
	}
	if err := Verify(g); err != nil {
		t.Error(err)
	}
}

// TestReleaseRemovedSkipsReinserted: a node removed and then put back
// into a graph is not released.
func TestReleaseRemovedSkipsReinserted(t *testing.T) {
	g, a, _, _ := reluSigmoid(t)
	g.RemoveNode(a)
	if err := g.AddNode(a); err != nil {
		t.Fatal(err)
	}
	g.ReleaseRemoved()
	if a.In(0) == nil || a.Out(0) == nil {
		t.Errorf("re-added node %q was released: %+v", a.Name, a)
	}
}
