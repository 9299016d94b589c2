package report

import (
	"math"
	"reflect"
	"testing"
)

// covNode is a one-kernel node reading ins and writing outs, taking timeS.
func covNode(name, domain, op string, timeS float64, ins, outs []string) NodeCost {
	n := NodeCost{Name: name, Domain: domain, OpType: op, Launches: 1}
	n.TimeS = timeS
	for _, in := range ins {
		n.Inputs = append(n.Inputs, TensorInfo{Name: in})
	}
	for _, o := range outs {
		n.Outputs = append(n.Outputs, TensorInfo{Name: o})
	}
	return n
}

// TestUnfusedFusable pins every rule of UnfusedFusable on a plan whose
// answer is known by hand: each node's time is a distinct power of two,
// so the counted time names exactly the nodes counted.
func TestUnfusedFusable(t *testing.T) {
	view := covNode("view", "", "Reshape", 0, []string{"x"}, []string{"xv"})
	view.Launches = 0 // a view runs no kernel: never counted
	nodes := []NodeCost{
		covNode("q", "", "QuantizeLinear", 1, []string{"in"}, []string{"q"}),   // Q of the model input: a real conversion
		covNode("dq", "", "DequantizeLinear", 2, []string{"q"}, []string{"x"}), // counted: read by the conv
		view, // launches 0
		covNode("conv", "onnxcost", "FusedConv", 4, []string{"x"}, []string{"c"}),       // anchor
		covNode("relu", "", "Relu", 8, []string{"c"}, []string{"r"}),                    // counted: after conv
		covNode("pool", "", "MaxPool", 16, []string{"r"}, []string{"p"}),                // not a candidate
		covNode("sig", "", "Sigmoid", 32, []string{"p"}, []string{"s"}),                 // lone: pool then reduce
		covNode("red", "", "ReduceMean", 64, []string{"s"}, []string{"m"}),              // not a candidate
		covNode("tr", "", "Transpose", 128, []string{"m"}, []string{"t"}),               // layout next to gemm: counted
		covNode("mm", "", "MatMul", 256, []string{"t", "w"}, []string{"g"}),             // anchor
		covNode("ln", "", "LayerNormalization", 512, []string{"g"}, []string{"l"}),      // norm next to GEMM only: not counted
		covNode("tr2", "", "Transpose", 1024, []string{"l"}, []string{"t2"}),            // layout not next to an anchor
		covNode("add", "", "Add", 2048, []string{"t2", "y"}, []string{"a"}),             // counted: next to norm
		covNode("ln2", "", "LayerNormalization", 4096, []string{"a"}, []string{"o"}),    // counted: next to Add
		covNode("mm2", "", "MatMul", 8192, []string{"o2", "w"}, []string{"g2"}),         // anchor
		covNode("q2", "", "QuantizeLinear", 16384, []string{"g2"}, []string{"g2q"}),     // counted: Q of a GEMM's output
		covNode("dq2", "", "DequantizeLinear", 32768, []string{"g2q"}, []string{"out"}), // DQ of the model output: real
	}
	var total float64
	for _, n := range nodes {
		total += n.TimeS
	}
	r := &Report{Nodes: nodes}
	r.Totals.TimeS = total
	got := UnfusedFusable(r)
	const want = 2 + 8 + 128 + 2048 + 4096 + 16384
	if got.TimeS != want || got.Nodes != 6 || got.Launches != 6 {
		t.Fatalf("UnfusedFusable = %.0f s over %d nodes (%g launches), want %d s over 6", got.TimeS, got.Nodes, got.Launches, want)
	}
	if math.Abs(got.TimeShare-want/total) > 1e-15 {
		t.Errorf("TimeShare = %g, want %g", got.TimeShare, want/total)
	}
	wantOps := map[string]int{"QuantizeLinear": 1, "DequantizeLinear": 1, "Relu": 1, "Transpose": 1, "Add": 1, "LayerNormalization": 1}
	if !reflect.DeepEqual(got.Ops, wantOps) {
		t.Errorf("Ops = %v, want %v", got.Ops, wantOps)
	}
}

// TestUnfusedFusableSoftmaxAndEmpty: a softmax between two GEMMs is
// attention left unfused (counted); a plan with no time has share 0, not NaN.
func TestUnfusedFusableSoftmaxAndEmpty(t *testing.T) {
	r := &Report{Nodes: []NodeCost{
		covNode("qk", "", "MatMul", 1, []string{"q", "k"}, []string{"s"}),
		covNode("sm", "", "Softmax", 2, []string{"s"}, []string{"p"}),
		covNode("pv", "", "MatMul", 4, []string{"p", "v"}, []string{"o"}),
	}}
	r.Totals.TimeS = 7
	if got := UnfusedFusable(r); got.TimeS != 2 || got.Nodes != 1 {
		t.Errorf("softmax between GEMMs: %+v, want 2 s, 1 node", got)
	}
	if got := UnfusedFusable(&Report{}); got.TimeShare != 0 || got.Nodes != 0 {
		t.Errorf("empty plan: %+v", got)
	}
}
