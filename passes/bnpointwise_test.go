package passes

import (
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// TestBNPointwise checks the inductor plan's batch norm: the BN becomes
// its per-channel scale and shift (numbers unchanged), and the plan runs
// the convolution and then one pointwise kernel for bias, BN and ReLU.
func TestBNPointwise(t *testing.T) {
	build := func() *ir.Graph {
		b := newBuilder(t)
		x := b.input("x", 2, 3, 6, 6)
		y := b.op("Conv", nil, x, b.weight("w", 4, 3, 3, 3), b.weight("cb", 4))
		pos := func(name string) *ir.Value { // a positive variance
			return b.constant(name, []int64{4}, []float64{0.5, 1, 1.5, 2})
		}
		y = b.op("BatchNormalization", nil, y, b.weight("gamma", 4), b.weight("beta", 4), b.weight("mean", 4), pos("var"))
		b.output(b.op("Relu", nil, y))
		return b.infer()
	}
	g := build()
	checkPreserves(t, g, "bn-pointwise")
	if got, want := ops(g), "Conv Mul Add Relu"; got != want {
		t.Fatalf("bn-pointwise: ops %q, want %q", got, want)
	}
	g = build()
	p, err := LookupPlan("inductor")
	if err != nil {
		t.Fatal(err)
	}
	opt, _ := p.Options(Options{})
	if _, err := Run(g, opt); err != nil {
		t.Fatal(err)
	}
	if got, want := ops(g), "Conv onnxcost.FusedElementwise"; got != want {
		t.Errorf("inductor plan: ops %q, want %q", got, want)
	}
}
