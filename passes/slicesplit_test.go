package passes

import (
	"strconv"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// TestFuseSliceSplit checks onnxruntime's GatherSliceToSplitFusion rule
// for Slices: rotate_half's two halves of x (x read by a third node too)
// become one Split with the numbers unchanged, in either order and with
// negative or clamped bounds; and nothing else fuses: halves that
// overlap, leave a gap or cut different axes, a step of 2, a Gather
// among the parts (onnxruntime takes it; this pass leaves such groups),
// one Slice alone.
func TestFuseSliceSplit(t *testing.T) {
	type part struct{ start, end, axis, step int64 }
	for _, c := range []struct {
		name   string
		parts  []part
		gather bool
		fuses  bool
		plain  bool
	}{
		{name: "halves", parts: []part{{0, 8, -1, 1}, {8, 16, -1, 1}}, fuses: true, plain: true},
		{name: "halves, second first", parts: []part{{8, 16, 2, 1}, {0, 8, 2, 1}}, fuses: true, plain: true},
		{name: "negative and clamped bounds", parts: []part{{0, -8, -1, 1}, {-8, 1 << 40, -1, 1}}, fuses: true},
		{name: "three parts", parts: []part{{0, 4, -1, 1}, {4, 12, -1, 1}, {12, 16, -1, 1}}, fuses: true, plain: true},
		{name: "overlap", parts: []part{{0, 9, -1, 1}, {8, 16, -1, 1}}},
		{name: "gap", parts: []part{{0, 7, -1, 1}, {8, 16, -1, 1}}},
		{name: "two axes", parts: []part{{0, 8, -1, 1}, {0, 2, 1, 1}}},
		{name: "step 2", parts: []part{{0, 8, -1, 2}, {8, 16, -1, 1}}},
		{name: "with a Gather", parts: []part{{0, 8, -1, 1}, {8, 16, -1, 1}}, gather: true},
		{name: "one slice", parts: []part{{0, 16, -1, 1}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBuilder(t)
			x := b.Input("x", ir.Float32, 2, 4, 16)
			one := func(name string, v int64) *ir.Value { return b.intsOf(name, ir.Int64, []int64{1}, []int64{v}) }
			var outs []*ir.Value
			for i, p := range c.parts {
				ins := []*ir.Value{x, one("s"+strconv.Itoa(i), p.start), one("e"+strconv.Itoa(i), p.end), one("a"+strconv.Itoa(i), p.axis)}
				if p.step != 1 {
					ins = append(ins, one("st"+strconv.Itoa(i), p.step))
				}
				outs = append(outs, b.op("Slice", nil, ins...))
			}
			outs = append(outs, b.op("Relu", nil, x))
			if c.gather {
				outs = append(outs, b.op("Gather", []*ir.Attribute{ir.IntAttr("axis", 0)}, x, one("g", 1)))
			}
			b.output(outs...)
			g := b.infer()
			before := ops(g)
			if c.fuses && c.plain {
				// The reference evaluator slices the last axis from
				// non-negative bounds only.
				checkPreserves(t, g, "fuse-slice-split-ort")
			} else if _, err := Run(g, Options{Only: []string{"fuse-slice-split-ort"}, Check: true}); err != nil {
				t.Fatal(err)
			}
			got := ops(g)
			if c.fuses {
				n := find(g, "Split")
				if n == nil || countOps(g, "Slice", "", "") != 0 || len(n.Outputs) != len(c.parts) || n.In(0) != x {
					t.Errorf("ops %q, want one Split of x into %d parts", got, len(c.parts))
				}
			} else if got != before {
				t.Errorf("fused what onnxruntime does not: %q -> %q", before, got)
			}
		})
	}
}
