package train

import (
	"testing"

	"github.com/onnxcost/onnxcost/cost"
)

// TestTiedHeadTrainsOneParameter: a tied head (the file's transposed copy
// of the embedding table, ir.Model.TiedCopies) is one parameter in the
// framework: the step holds one weight, one gradient and one optimizer
// state for the pair, and updates it once; the head's weight gradient is
// still computed (autograd sums it into the table's).
func TestTiedHeadTrainsOneParameter(t *testing.T) {
	const vocab, dim, rows = 1000, 64, 8
	run := func(tied bool) (nodes [2]float64, w, grads, state, optFLOPs float64) {
		b := newBuilder(t)
		b.LM(vocab, dim, rows, tied)
		r := b.analyze(cost.Options{Train: &Options{Optimizer: "adam"}})
		m := r.Totals.Train.Memory
		return [2]float64{r.Nodes[0].Backward.FLOPs, r.Nodes[1].Backward.FLOPs}, m.WeightsBytes, m.GradientsBytes, m.OptimizerStateBytes, r.Totals.Train.OptimizerFLOPs
	}
	nu, wu, gu, su, ou := run(false)
	nt, wt, gt, st, ot := run(true)
	t.Logf("untied: backward %v, weights %g, gradients %g, state %g, optimizer %g FLOPs; tied: %v, %g, %g, %g, %g", nu, wu, gu, su, ou, nt, wt, gt, st, ot)
	const matrix = 4 * vocab * dim
	if wu != 2*matrix || wt != matrix || gt != gu/2 || st != su/2 || ot != ou/2 {
		t.Errorf("weights %g → %g bytes, gradients %g → %g, optimizer state %g → %g, optimizer FLOPs %g → %g: want the tied pair held and updated once (%d bytes of weights)", wu, wt, gu, gt, su, st, ou, ot, matrix)
	}
	if nt != nu || nt[1] == 0 {
		t.Errorf("tied: backward FLOPs %v, untied %v: want the head's weight gradient computed as before", nt, nu)
	}
}
