package cost

import (
	"fmt"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// TestRowView: softmax and LayerNorm over the last axis carry their rows
// to the time model; a reduction over the last axis is row-wise, one over
// an interior axis is not.
func TestRowView(t *testing.T) {
	b := newBuilder(t)
	c := &RuleCtx{Graph: b.G, Opset: 17}
	x := b.Input("x", 4, 8, 32768)
	sm := &ir.Node{OpType: "Softmax", Inputs: []*ir.Value{x}, Outputs: []*ir.Value{b.Val("y", ir.Float32, 4, 8, 32768)}}
	e, err := normRule(sm, c)
	if err != nil || e.Rows != 32 || e.RowLen != 32768 || e.RowPasses != 3 {
		t.Errorf("softmax rows %d×%d passes %g (%v), want 32×32768, 3", e.Rows, e.RowLen, e.RowPasses, err)
	}
	ln := &ir.Node{OpType: "LayerNormalization", Inputs: []*ir.Value{x}, Outputs: []*ir.Value{b.Val("z", ir.Float32, 4, 8, 32768)}}
	if e, _ := normRule(ln, c); e.Rows != 32 || e.RowPasses != 2 {
		t.Errorf("layer norm rows %d passes %g, want 32, 2", e.Rows, e.RowPasses)
	}
	last := &ir.Node{OpType: "ReduceMean", Inputs: []*ir.Value{x}, Outputs: []*ir.Value{b.Val("m", ir.Float32, 4, 8, 1)},
		Attrs: []*ir.Attribute{ir.IntsAttr("axes", -1)}}
	if e, _ := reductionRule(last, c); e.Rows != 32 || e.RowLen != 32768 || e.RowPasses != 1 {
		t.Errorf("ReduceMean(-1) rows %d×%d passes %g, want 32×32768, 1", e.Rows, e.RowLen, e.RowPasses)
	}
	mid := &ir.Node{OpType: "ReduceSum", Inputs: []*ir.Value{x}, Outputs: []*ir.Value{b.Val("s", ir.Float32, 4, 1, 32768)},
		Attrs: []*ir.Attribute{ir.IntsAttr("axes", 1)}}
	if e, _ := reductionRule(mid, c); e.Rows != 0 {
		t.Errorf("ReduceSum(1) is a column reduction, got rows %d", e.Rows)
	}
}

// TestRowInSample: a row that lies within one entry of the leading axis
// (normalised from axis 1 on, a group or instance norm, a reduction over
// trailing axes that leaves the leading one) keeps its length at any
// batch, so a calibration may key it by that length (kernelShape); one
// that crosses the leading axis (axis 0, a reduction over every axis) is
// lengthened by a batch, even where batch 1 gives the same length.
func TestRowInSample(t *testing.T) {
	b := newBuilder(t)
	c := &RuleCtx{Graph: b.G, Opset: 17}
	x := b.Input("x", 1, 8, 64)
	outs := 0
	shaped := func(out []int64, op string, attrs ...*ir.Attribute) *ir.Node {
		outs++
		y := b.Val(fmt.Sprintf("y%d", outs), ir.Float32, out...)
		return &ir.Node{OpType: op, Inputs: []*ir.Value{x}, Outputs: []*ir.Value{y}, Attrs: attrs}
	}
	node := func(op string, attrs ...*ir.Attribute) *ir.Node { return shaped([]int64{1, 8, 64}, op, attrs...) }
	for _, tc := range []struct {
		name string
		n    *ir.Node
		rule Rule
		want bool
	}{
		{"Softmax(-1)", node("Softmax"), normRule, true},
		{"Softmax(0)", node("Softmax", ir.IntAttr("axis", 0)), normRule, false},
		{"LayerNormalization(-1)", node("LayerNormalization"), normRule, true},
		{"LayerNormalization(0)", node("LayerNormalization", ir.IntAttr("axis", 0)), normRule, false},
		{"GroupNormalization", node("GroupNormalization", ir.IntAttr("num_groups", 2)), normRule, true},
		{"MeanVarianceNormalization", node("MeanVarianceNormalization"), normRule, false},
		{"ReduceMean(-1)", shaped([]int64{1, 8, 1}, "ReduceMean", ir.IntsAttr("axes", -1)), reductionRule, true},
		{"ReduceMean(all)", shaped([]int64{1, 1, 1}, "ReduceMean"), reductionRule, false},
		{"ReduceSum(0,1,2)", shaped([]int64{1, 1, 1}, "ReduceSum", ir.IntsAttr("axes", 0, 1, 2)), reductionRule, false},
	} {
		e, err := tc.rule(tc.n, c)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if e.RowLen == 0 {
			t.Fatalf("%s: no row view", tc.name)
		}
		if e.RowInSample != tc.want {
			t.Errorf("%s: RowInSample %v, want %v (rows %d × %d)", tc.name, e.RowInSample, tc.want, e.Rows, e.RowLen)
		}
	}
}
