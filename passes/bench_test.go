package passes

import (
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// benchGraph builds a graph of about nodes nodes: repeated residual blocks
// Conv -> BatchNormalization -> Relu -> Conv -> BatchNormalization -> Add
// -> Relu -> Identity (8 nodes each), weights not loaded.
func benchGraph(b testing.TB, nodes int) *ir.Graph {
	bl := newBuilder(b)
	x := bl.input("x", 1, 32, 16, 16)
	pad := []*ir.Attribute{ir.IntsAttr("pads", 1, 1, 1, 1), ir.IntsAttr("kernel_shape", 3, 3)}
	bn := func(y *ir.Value, k int) *ir.Value {
		p := func(s string) *ir.Value { return bl.blind(bl.g.UniqueName(s), 32) }
		return bl.op("BatchNormalization", nil, y, p("s"), p("b"), p("m"), p("v"))
	}
	for i := 0; i*8 < nodes; i++ {
		y := bl.op("Conv", pad, x, bl.blind(bl.g.UniqueName("w"), 32, 32, 3, 3))
		y = bl.op("Relu", nil, bn(y, i))
		y = bl.op("Conv", pad, y, bl.blind(bl.g.UniqueName("w"), 32, 32, 3, 3))
		y = bl.op("Add", nil, bn(y, i), x)
		x = bl.op("Identity", nil, bl.op("Relu", nil, y))
	}
	bl.output(x)
	return bl.infer()
}

// BenchmarkAllPasses10k runs the whole table on a 10,000-node graph (the
// target is well under 1 s per run).
func BenchmarkAllPasses10k(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		g := benchGraph(b, 10000)
		b.StartTimer()
		if _, err := Run(g, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestBenchGraphFuses checks what the benchmark measures: every block
// folds and fuses: 2 WinogradConv per block, and the last Identity,
// whose output is the graph output.
func TestBenchGraphFuses(t *testing.T) {
	g := benchGraph(t, 80)
	runPasses(t, g, DefaultNames()...)
	for _, n := range g.Nodes[:len(g.Nodes)-1] {
		if n.OpType != "WinogradConv" {
			t.Fatalf("left %s", ir.NodeText(n))
		}
	}
	if len(g.Nodes) != 2*10+1 {
		t.Errorf("%d nodes, want 21 (2 per block + the output Identity)", len(g.Nodes))
	}
}
