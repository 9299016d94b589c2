package cost

import (
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/ir/irtest"
)

// TestPartialTotals: Conv → an op with neither a shape nor a cost rule →
// Conv → Relu. The second Conv and the Relu read tensors of unknown shape
// and count 0 MACs: the totals are marked partial with the custom node
// uncosted, the two after it unsized and named, in node order, and a
// warning. Before, nothing but per-node shape warnings said that the
// 2.36 M MACs were half the model's.
func TestPartialTotals(t *testing.T) {
	b := irtest.New(t, 13)
	pads := []*ir.Attribute{ir.IntsAttr("pads", 1, 1, 1, 1)}
	x := b.Input("x", ir.Float32, 1, 16, 32, 32)
	y := b.Op("Conv", pads, x, initializer(b, "w1", ir.Float32, 16, 16, 3, 3))
	custom := b.Node("Scale", []*ir.Value{y}, 1)
	custom.Domain = "com.acme"
	y = b.Op("Conv", pads, custom.Out(0), initializer(b, "w2", ir.Float32, 16, 16, 3, 3))
	y = b.Op("Relu", nil, y)
	b.Output(y)
	if _, err := ir.InferShapes(b.M, ir.InferOptions{}); err != nil {
		t.Fatal(err)
	}
	r := analyzeOn(t, b, "T4", "")
	const convMACs = 16 * 16 * 9 * 32 * 32
	if r.Totals.MACs != convMACs {
		t.Errorf("MACs %g, want %d: only the first Conv is sized", r.Totals.MACs, convMACs)
	}
	p := r.Totals.Partial
	if p == nil {
		t.Fatal("no totals.partial")
	}
	if p.UncostedNodes != 1 || p.UnsizedNodes != 2 || strings.Join(p.UnsizedNodeNames, " ") != "Conv_3 Relu_4" || p.ShareOfNodes != 0.75 {
		t.Errorf("partial %+v, want 1 uncosted, 2 unsized (Conv_3 Relu_4), share 0.75", *p)
	}
	for _, n := range r.Nodes[2:] {
		if !strings.HasPrefix(n.Note, "shape unknown") {
			t.Errorf("%s: note %q does not say its shape is unknown", n.Name, n.Note)
		}
	}
	warned := false
	for _, w := range r.Warnings {
		warned = warned || strings.HasPrefix(w, "the totals are partial: 3 of 4 nodes")
	}
	if !warned {
		t.Errorf("no partial-totals warning: %q", r.Warnings)
	}
}

// TestPartialTotalsAbsentWhenSized: a model whose every node is sized
// has no partial marker.
func TestPartialTotalsAbsentWhenSized(t *testing.T) {
	b := irtest.New(t, 13)
	x := b.Input("x", ir.Float32, 1, 16, 32, 32)
	b.Output(b.Op("Relu", nil, b.Op("Conv", nil, x, initializer(b, "w", ir.Float32, 16, 16, 3, 3))))
	b.Infer()
	if p := analyzeOn(t, b, "T4", "").Totals.Partial; p != nil {
		t.Errorf("a fully sized model has totals.partial %+v", *p)
	}
}

// TestPartialTotalsInSubgraph: a branch of an If holds the custom op and
// a Relu after it; the If, the main-graph node, is what the marker counts
// (uncosted, the worse of the two), once.
func TestPartialTotalsInSubgraph(t *testing.T) {
	b := irtest.New(t, 13)
	x := b.Input("x", ir.Float32, 4, 8)
	c := b.Input("c", ir.Bool)
	branch := func(name string, custom bool) *ir.Graph {
		g := ir.NewSubgraph(name, b.G)
		val := func(n string) *ir.Value {
			v, err := g.NewValue(n)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		in := x
		if custom {
			s := val(name + "_s")
			if err := g.AddNode(&ir.Node{Name: name + "_custom", OpType: "Scale", Domain: "com.acme", Inputs: []*ir.Value{x}, Outputs: []*ir.Value{s}}); err != nil {
				t.Fatal(err)
			}
			in = s
		}
		o := val(name + "_out")
		if err := g.AddNode(&ir.Node{Name: name + "_relu", OpType: "Relu", Inputs: []*ir.Value{in}, Outputs: []*ir.Value{o}}); err != nil {
			t.Fatal(err)
		}
		g.AddOutput(o)
		return g
	}
	y := b.Op("If", []*ir.Attribute{ir.GraphAttr("then_branch", branch("then", true)), ir.GraphAttr("else_branch", branch("else", false))}, c)
	b.Output(b.Op("Relu", nil, x), y)
	if _, err := ir.InferShapes(b.M, ir.InferOptions{}); err != nil {
		t.Fatal(err)
	}
	p := analyzeOn(t, b, "T4", "").Totals.Partial
	if p == nil || p.UncostedNodes != 1 || p.UnsizedNodes != 0 || p.ShareOfNodes != 0.5 {
		t.Errorf("partial %+v, want the If alone, uncosted: 1 of 2 nodes", p)
	}
}
