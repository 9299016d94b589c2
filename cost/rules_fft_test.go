package cost

import (
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// TestRealFFTCounts: Rfft over [2, 3, 16] is 54 one-sided bins of 16-point
// transforms, 5·log2(16) flops each, and Irfft back the same; over the
// last two axes of [2, 8, 16], 144 bins of a 128-point signal.
func TestRealFFTCounts(t *testing.T) {
	b := msBuilder(t, 17)
	x := b.Input("x", ir.Float32, 2, 3, 16)
	spec := msNode(b, "Rfft", nil, x)
	spec.Producer.Name = "rfft"
	back := msNode(b, "Irfft", nil, spec)
	back.Producer.Name = "irfft"
	x2 := msNode(b, "Rfft", []*ir.Attribute{ir.IntAttr("signal_ndim", 2)}, b.Input("x2", ir.Float32, 2, 8, 16))
	x2.Producer.Name = "rfft2"
	b.Output(back, x2)
	b.Infer()
	r := analyzeOn(t, b, "A100", "")
	for name, want := range map[string]float64{"rfft": 54 * 5 * 4, "irfft": 54 * 5 * 4, "rfft2": 144 * 5 * 7} {
		if got := nodeNamed(t, r, name).FLOPs; got != want {
			t.Errorf("%s: %g FLOPs, want %g", name, got, want)
		}
	}
}
