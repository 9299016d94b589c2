package cost

import (
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// TestRowView: softmax and LayerNorm over the last axis carry their rows
// to the time model; a reduction over the last axis is row-wise, one over
// an interior axis is not.
func TestRowView(t *testing.T) {
	b := newBuilder(t)
	c := &RuleCtx{Graph: b.g, Opset: 17}
	x := b.input("x", 4, 8, 32768)
	sm := &ir.Node{OpType: "Softmax", Inputs: []*ir.Value{x}, Outputs: []*ir.Value{b.val("y", ir.Float32, 4, 8, 32768)}}
	e, err := normRule(sm, c)
	if err != nil || e.Rows != 32 || e.RowLen != 32768 || e.RowPasses != 3 {
		t.Errorf("softmax rows %d×%d passes %g (%v), want 32×32768, 3", e.Rows, e.RowLen, e.RowPasses, err)
	}
	ln := &ir.Node{OpType: "LayerNormalization", Inputs: []*ir.Value{x}, Outputs: []*ir.Value{b.val("z", ir.Float32, 4, 8, 32768)}}
	if e, _ := normRule(ln, c); e.Rows != 32 || e.RowPasses != 2 {
		t.Errorf("layer norm rows %d passes %g, want 32, 2", e.Rows, e.RowPasses)
	}
	last := &ir.Node{OpType: "ReduceMean", Inputs: []*ir.Value{x}, Outputs: []*ir.Value{b.val("m", ir.Float32, 4, 8, 1)},
		Attrs: []*ir.Attribute{ir.IntsAttr("axes", -1)}}
	if e, _ := reductionRule(last, c); e.Rows != 32 || e.RowLen != 32768 || e.RowPasses != 1 {
		t.Errorf("ReduceMean(-1) rows %d×%d passes %g, want 32×32768, 1", e.Rows, e.RowLen, e.RowPasses)
	}
	mid := &ir.Node{OpType: "ReduceSum", Inputs: []*ir.Value{x}, Outputs: []*ir.Value{b.val("s", ir.Float32, 4, 1, 32768)},
		Attrs: []*ir.Attribute{ir.IntsAttr("axes", 1)}}
	if e, _ := reductionRule(mid, c); e.Rows != 0 {
		t.Errorf("ReduceSum(1) is a column reduction, got rows %d", e.Rows)
	}
}
