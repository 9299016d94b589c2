package passes

import (
	"testing"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
)

// buildChain builds Sigmoid(Mul(Relu(Add(x, b)), s)) over x [rows, cols]
// with a per-column bias b and a scalar s, returning the Relu output and
// the chain output.
func buildChain(bld *builder, rows, cols int64) (relu, y *ir.Value) {
	x := bld.input("x", rows, cols)
	relu = bld.op("Relu", nil, bld.op("Add", nil, x, bld.weight("bias", cols)))
	y = bld.op("Sigmoid", nil, bld.op("Mul", nil, relu, bld.scalar("s", 0.5)))
	return relu, y
}

func TestElementwiseChainFuses(t *testing.T) {
	const rows, cols = 16, 32
	b := newBuilder(t)
	_, y := buildChain(b, rows, cols)
	b.output(y)
	g := b.run("fuse-elementwise")
	n := expectOne(t, g, "FusedElementwise", 4) // Add Relu Mul Sigmoid
	if n.Out(0) != y || len(n.Inputs) != 3 {
		t.Fatalf("FusedElementwise reads %d inputs writes %v; want (x, bias, s) -> %s", len(n.Inputs), n.Outputs, y.Name)
	}
	for i, name := range []string{"x", "bias", "s"} {
		if n.In(i).Name != name {
			t.Errorf("input %d is %s, want %s", i, n.In(i).Name, name)
		}
	}
	// Idempotent: a second run finds nothing to do.
	if changed, err := fuseElementwise(g); err != nil || changed {
		t.Errorf("second run changed=%v err=%v", changed, err)
	}

	// Cost: the sum of the parts' FLOPs; bytes only at the boundary.
	gpu, err := hwdb.Lookup("A100-SXM4-80GB")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := cost.Analyze(g, b.M, gpu, cost.Options{DType: "fp32"})
	if err != nil {
		t.Fatal(err)
	}
	nc := rep.Nodes[0]
	const elems = rows * cols
	const sigmoidFLOPs = 3                                   // exp, add, divide (cost/rules_elementwise.go)
	wantFLOPs := float64(elems * (1 + 1 + 1 + sigmoidFLOPs)) // Add, Relu, Mul, Sigmoid per element
	wantRead := float64(4 * (elems + cols + 1))              // x, bias, s in fp32
	wantWritten := float64(4 * elems)                        // y only
	if nc.FLOPs != wantFLOPs || nc.Transcendentals != elems || nc.BytesRead != wantRead || nc.BytesWritten != wantWritten || nc.Launches != 1 {
		t.Errorf("cost flops %g trans %g read %g written %g launches %g; want %g, %d, %g, %g, 1",
			nc.FLOPs, nc.Transcendentals, nc.BytesRead, nc.BytesWritten, nc.Launches, wantFLOPs, elems, wantRead, wantWritten)
	}
}

func TestElementwiseChainGuards(t *testing.T) {
	t.Run("intermediate read twice", func(t *testing.T) {
		b := newBuilder(t)
		relu, y := buildChain(b, 4, 8)
		b.output(y, b.op("Exp", nil, relu))
		g := b.run("fuse-elementwise")
		// Relu's output has two readers: {Add, Relu} | {Mul, Sigmoid} | {Exp}.
		ns := fusedNodes(g, "FusedElementwise")
		if len(ns) != 2 {
			t.Fatalf("%d FusedElementwise, want 2 (the chain split at the shared value)", len(ns))
		}
		for _, n := range ns {
			if len(n.FusedFrom) != 2 {
				t.Errorf("group %v, want 2 nodes", n.FusedFrom)
			}
		}
		if ns[0].Out(0) != relu {
			t.Errorf("first group writes %s, want the shared Relu output", ns[0].Out(0).Name)
		}
	})
	t.Run("intermediate is a graph output", func(t *testing.T) {
		b := newBuilder(t)
		relu, y := buildChain(b, 4, 8)
		b.output(y, relu)
		g := b.run("fuse-elementwise")
		for _, n := range fusedNodes(g, "FusedElementwise") {
			for _, name := range n.FusedFrom {
				if name == relu.Producer.Name && n.Out(0) != relu {
					t.Errorf("Relu %q fused into a group writing %s; its output must stay visible", name, n.Out(0).Name)
				}
			}
		}
		if !g.IsGraphOutput(relu) || relu.Producer == nil {
			t.Errorf("graph output %s lost its producer", relu.Name)
		}
	})
	t.Run("integer chain", func(t *testing.T) {
		b := newBuilder(t)
		x := b.input("x", 4, 8)
		x.DType, x.Declared.DType = ir.Int32, ir.Int32
		b.output(b.op("Mul", nil, b.op("Add", nil, x, x), x))
		g := b.run("fuse-elementwise")
		expectNone(t, g, "FusedElementwise")
	})
	t.Run("non-elementwise in between", func(t *testing.T) {
		b := newBuilder(t)
		x := b.input("x", 4, 8)
		r := b.op("Relu", nil, x)
		red := b.op("ReduceSum", []*ir.Attribute{ir.IntAttr("keepdims", 1)}, r, b.int64s("axes", 1))
		b.output(b.op("Exp", nil, red))
		g := b.run("fuse-elementwise")
		expectNone(t, g, "FusedElementwise")
	})
}

// TestElementwiseSideInputOnce: a value read by two nodes of the group
// (x in Mul(x, Sigmoid(x))) is one input of the fused node, read once.
func TestElementwiseSideInputOnce(t *testing.T) {
	b := newBuilder(t)
	x := b.input("x", 4, 8)
	y := b.op("Mul", nil, x, b.op("Sigmoid", nil, x))
	b.output(y)
	g := b.run("fuse-elementwise")
	n := expectOne(t, g, "FusedElementwise", 2)
	if len(n.Inputs) != 1 || n.In(0) != x {
		t.Errorf("inputs %d, want x once", len(n.Inputs))
	}
}
