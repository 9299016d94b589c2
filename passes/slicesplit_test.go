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
// along another axis among the parts, one Slice alone (Gathers along the
// same axis: TestFuseGatherSplit).
func TestFuseSliceSplit(t *testing.T) {
	type part struct{ start, end, axis, step int64 }
	for _, c := range []struct {
		name   string
		parts  []part
		gather bool
		fuses  bool
	}{
		{name: "halves", parts: []part{{0, 8, -1, 1}, {8, 16, -1, 1}}, fuses: true},
		{name: "halves, second first", parts: []part{{8, 16, 2, 1}, {0, 8, 2, 1}}, fuses: true},
		{name: "negative and clamped bounds", parts: []part{{0, -8, -1, 1}, {-8, 1 << 40, -1, 1}}, fuses: true},
		{name: "three parts", parts: []part{{0, 4, -1, 1}, {4, 12, -1, 1}, {12, 16, -1, 1}}, fuses: true},
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
			before, got := runSplitFusion(t, g, c.fuses)
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

// TestFuseGatherSplit: one-index Gathers (x[i] of a scalar index, or of a
// one-element index that keeps the axis) and Slices that together cover
// one axis of x are one Split, the scalar ones squeezed by views, with
// the numbers unchanged: qkv.unbind(0), as torchvision's Swin exports it
// (onnxruntime 1.23.2's graph of Swin-T has no Gather there; the plan had
// 36); an index missing, a second axis or a non-constant index leave the
// Gathers as they are.
func TestFuseGatherSplit(t *testing.T) {
	type part struct {
		gather     bool
		index      int64
		scalar     bool
		start, end int64
		axis       int64
	}
	for _, c := range []struct {
		name  string
		parts []part
		fuses bool
	}{
		{name: "unbind(0) of three", parts: []part{{gather: true, index: 0, scalar: true}, {gather: true, index: 1, scalar: true}, {gather: true, index: 2, scalar: true}}, fuses: true},
		{name: "negative index, a one-element index", parts: []part{{gather: true, index: -3, scalar: true}, {gather: true, index: 1}, {gather: true, index: 2, scalar: true}}, fuses: true},
		{name: "a gather and a slice", parts: []part{{gather: true, index: 0, scalar: true}, {start: 1, end: 3}}, fuses: true},
		{name: "an index missing", parts: []part{{gather: true, index: 0, scalar: true}, {gather: true, index: 2, scalar: true}}},
		{name: "a slice along another axis", parts: []part{{gather: true, index: 0, scalar: true}, {start: 0, end: 4, axis: 1}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBuilder(t)
			x := b.Input("x", ir.Float32, 3, 4, 16)
			var outs []*ir.Value
			for i, p := range c.parts {
				s := strconv.Itoa(i)
				if p.gather {
					var dims []int64 // a scalar index
					if !p.scalar {
						dims = []int64{1}
					}
					idx := b.intsOf("i"+s, ir.Int64, dims, []int64{p.index})
					outs = append(outs, b.op("Gather", []*ir.Attribute{ir.IntAttr("axis", 0)}, x, idx))
					continue
				}
				one := func(name string, v int64) *ir.Value { return b.intsOf(name+s, ir.Int64, []int64{1}, []int64{v}) }
				outs = append(outs, b.op("Slice", nil, x, one("s", p.start), one("e", p.end), one("a", p.axis)))
			}
			b.output(outs...)
			g := b.infer()
			before, got := runSplitFusion(t, g, c.fuses)
			if c.fuses {
				n := find(g, "Split")
				if n == nil || countOps(g, "Gather", "", "") != 0 || countOps(g, "Slice", "", "") != 0 || len(n.Outputs) != len(c.parts) || n.In(0) != x {
					t.Errorf("ops %q, want one Split of x into %d parts (and Squeeze views)", got, len(c.parts))
				}
			} else if got != before {
				t.Errorf("fused what onnxruntime does not: %q -> %q", before, got)
			}
		})
	}
}

// TestFuseSliceSplitSessionShape: Slices of a tensor whose shape
// onnxruntime did not know when it built its graph (ir.Graph.Session: a
// dynamic-batch ViT's qkv, reshaped to a shape computed at run time) stay
// Slices, as in onnxruntime 1.23.2's graph of that ViT-B/16 (36 of them).
func TestFuseSliceSplitSessionShape(t *testing.T) {
	b := newBuilder(t)
	x := b.Input("x", ir.Float32, 2, 4, 16)
	one := func(name string, v int64) *ir.Value { return b.intsOf(name, ir.Int64, []int64{1}, []int64{v}) }
	y := b.op("Relu", nil, x)
	b.output(b.op("Slice", nil, y, one("s0", 0), one("e0", 8), one("a0", -1)),
		b.op("Slice", nil, y, one("s1", 8), one("e1", 16), one("a1", -1)))
	g := b.infer()
	g.Session = &ir.Session{Shapes: map[*ir.Value]ir.Shape{y: {}}} // unranked to onnxruntime
	before := ops(g)
	if _, err := Run(g, Options{Only: []string{"fuse-slice-split-ort"}, Check: true}); err != nil {
		t.Fatal(err)
	}
	if got := ops(g); got != before {
		t.Errorf("fused Slices onnxruntime saw no shape for: %q -> %q", before, got)
	}
}

// runSplitFusion runs fuse-slice-split-ort on g, checking that the numbers
// do not change when it fuses, and returns g's ops before and after.
func runSplitFusion(t *testing.T, g *ir.Graph, fuses bool) (before, after string) {
	t.Helper()
	before = ops(g)
	if fuses {
		checkPreserves(t, g, "fuse-slice-split-ort")
	} else if _, err := Run(g, Options{Only: []string{"fuse-slice-split-ort"}, Check: true}); err != nil {
		t.Fatal(err)
	}
	return before, ops(g)
}
