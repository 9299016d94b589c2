package passes

import (
	"math"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

func TestCleanupIdentityDropout(t *testing.T) {
	b := newBuilder(t)
	x := b.input("x", 2, 3)
	y := b.op("Identity", nil, x)
	y = b.op("Relu", nil, y)
	y = b.op("Dropout", nil, y)
	b.output(b.op("Sigmoid", nil, y))
	g := b.infer()
	checkPreserves(t, g, "cleanup")
	if got := ops(g); got != "Relu Sigmoid" {
		t.Errorf("ops %q, want Relu Sigmoid", got)
	}
}

func TestCleanupGuards(t *testing.T) {
	for name, c := range map[string]struct {
		build func(b *builder)
		ops   string // what cleanup must leave
	}{
		"identity output is a graph output": {func(b *builder) {
			b.output(b.op("Identity", nil, b.op("Relu", nil, b.input("x", 2))))
		}, "Relu Identity"},
		"dropout mask used": {func(b *builder) {
			d := b.node("Dropout", []*ir.Value{b.input("x", 2)}, 2)
			b.output(d.Out(0), d.Out(1))
		}, "Dropout"},
		"dropout in training mode": {func(b *builder) {
			x := b.input("x", 2)
			tm := b.value("tm")
			b.g.AddInitializer(tm, &ir.Tensor{DType: ir.Bool, Ints: []int64{1}, HasData: true})
			b.output(b.op("Relu", nil, b.op("Dropout", nil, x, b.constant("ratio", nil, []float64{0.5}), tm)))
		}, "Dropout Relu"},
	} {
		t.Run(name, func(t *testing.T) {
			b := newBuilder(t)
			c.build(b)
			if got := ops(b.run("cleanup")); got != c.ops {
				t.Errorf("ops %q, want %q", got, c.ops)
			}
		})
	}
}

// Reshape(x, Concat(Shape(x)[0], -1)) with a known batch: the shape
// arithmetic folds to one Constant (not an initializer: folded values are
// not parameters) and the Reshape reads it.
func TestCleanupFoldsShapeArithmetic(t *testing.T) {
	b := newBuilder(t)
	x := b.input("x", 2, 3, 4)
	sh := b.op("Shape", nil, x)
	idx := b.value("idx")
	b.g.AddInitializer(idx, ir.IntTensor(nil, []int64{0}))
	d0 := b.op("Gather", []*ir.Attribute{ir.IntAttr("axis", 0)}, sh, idx)
	ax := b.value("axes")
	b.g.AddInitializer(ax, ir.IntTensor([]int64{1}, []int64{0}))
	d0 = b.op("Unsqueeze", nil, d0, ax)
	minus := b.value("minus1")
	b.g.AddInitializer(minus, ir.IntTensor([]int64{1}, []int64{-1}))
	shape := b.op("Concat", []*ir.Attribute{ir.IntAttr("axis", 0)}, d0, minus)
	b.output(b.op("Reshape", nil, x, shape))
	g := b.infer()
	checkPreserves(t, g, "cleanup")
	if ops(g) != "Constant Reshape" {
		t.Fatalf("ops %q, want Constant Reshape", ops(g))
	}
	s := g.Nodes[1].In(1)
	if s.IsInitializer || s.Producer != g.Nodes[0] || len(s.Const.Ints) != 2 || s.Const.Ints[0] != 2 || s.Const.Ints[1] != -1 {
		t.Errorf("shape input %+v, want a Constant's output [2 -1]", s.Const)
	}
	// idx, axes and minus1 were read only by the folded nodes.
	if len(g.Initializers) != 0 {
		t.Errorf("%d initializers left, want none", len(g.Initializers))
	}
}

// TestCleanupWholeExpandSlice: an Expand to its input's own shape and a
// Slice of all of its input are their input (no runtime runs a kernel for
// them); a broadcasting Expand, a partial Slice and a reversing one stay.
// Under cleanup-ort a Slice goes only when its bounds are 0 and INT64_MAX
// (onnxruntime's EliminateSlice), not when it covers its input by shape.
func TestCleanupWholeExpandSlice(t *testing.T) {
	ints := func(b *builder, name string, vals ...int64) *ir.Value {
		v := b.value(name)
		b.g.AddInitializer(v, ir.IntTensor([]int64{int64(len(vals))}, vals))
		return v
	}
	no := false
	for _, c := range []struct {
		name string
		op   string
		ins  func(b *builder, x *ir.Value) []*ir.Value
		gone bool
		// ort is whether cleanup-ort removes it too (gone unless said).
		ort *bool
	}{
		{"expand to own shape", "Expand", func(b *builder, x *ir.Value) []*ir.Value { return []*ir.Value{x, ints(b, "shape", 2, 4)} }, true, nil},
		{"expand of ones", "Expand", func(b *builder, x *ir.Value) []*ir.Value { return []*ir.Value{x, ints(b, "shape", 1, 1)} }, true, nil},
		{"broadcasting expand", "Expand", func(b *builder, x *ir.Value) []*ir.Value { return []*ir.Value{x, ints(b, "shape", 3, 2, 4)} }, false, nil},
		{"whole slice", "Slice", func(b *builder, x *ir.Value) []*ir.Value {
			return []*ir.Value{x, ints(b, "starts", 0), ints(b, "ends", 1<<62), ints(b, "axes", 1)}
		}, true, &no},
		{"whole slice to INT64_MAX", "Slice", func(b *builder, x *ir.Value) []*ir.Value {
			return []*ir.Value{x, ints(b, "starts", 0), ints(b, "ends", math.MaxInt64), ints(b, "axes", 1)}
		}, true, nil},
		{"whole slice to its dim", "Slice", func(b *builder, x *ir.Value) []*ir.Value {
			return []*ir.Value{x, ints(b, "starts", 0, 0), ints(b, "ends", 2, 4), ints(b, "axes", 0, 1)}
		}, true, &no},
		{"partial slice", "Slice", func(b *builder, x *ir.Value) []*ir.Value {
			return []*ir.Value{x, ints(b, "starts", 1), ints(b, "ends", 1<<62), ints(b, "axes", 1)}
		}, false, nil},
		{"reversing slice", "Slice", func(b *builder, x *ir.Value) []*ir.Value {
			return []*ir.Value{x, ints(b, "starts", -1), ints(b, "ends", -(1 << 62)), ints(b, "axes", 1), ints(b, "steps", -1)}
		}, false, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBuilder(t)
			x := b.input("x", 2, 4)
			b.output(b.op("Relu", nil, b.op(c.op, nil, c.ins(b, x)...)))
			g := b.infer()
			runPasses(t, g, "cleanup")
			if gone := find(g, c.op) == nil; gone != c.gone {
				t.Errorf("%s removed %v, want %v: %s", c.name, gone, c.gone, ops(g))
			}
		})
		t.Run(c.name+"/ort", func(t *testing.T) {
			b := newBuilder(t)
			x := b.input("x", 2, 4)
			b.output(b.op("Relu", nil, b.op(c.op, nil, c.ins(b, x)...)))
			g := b.infer()
			runPasses(t, g, "cleanup-ort")
			want := c.gone
			if c.ort != nil {
				want = *c.ort
			}
			if gone := find(g, c.op) == nil; gone != want {
				t.Errorf("%s removed %v under cleanup-ort, want %v: %s", c.name, gone, want, ops(g))
			}
		})
	}
}
