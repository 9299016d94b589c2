package passes

import (
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// TestEliminateCommonORT: two nodes of one op, attributes and inputs
// become one, a chain of them too, and equal constants count as one input
// (onnxruntime's CSE compares initializers by their bytes); other values,
// other attributes, random ops and a duplicate the graph returns stay.
func TestEliminateCommonORT(t *testing.T) {
	for _, c := range []struct {
		name  string
		build func(b *builder)
		op    string
		want  int // nodes of op left
	}{
		{"same inputs", func(b *builder) {
			x, y := b.input("x", 2, 4), b.input("y", 2, 4)
			b.output(b.op("Add", nil, b.op("Relu", nil, b.op("Sub", nil, x, y)), b.op("Tanh", nil, b.op("Sub", nil, x, y))))
		}, "Sub", 1},
		{"a chain", func(b *builder) {
			x := b.input("x", 2, 4)
			l := b.op("Sigmoid", nil, b.op("Relu", nil, x))
			r := b.op("Sigmoid", nil, b.op("Relu", nil, x))
			b.output(b.op("Add", nil, l, r))
		}, "Sigmoid", 1},
		{"equal scalars", func(b *builder) {
			x := b.input("x", 2, 4)
			b.output(b.op("Add", nil, b.op("Mul", nil, x, b.constant("two", nil, []float64{2})), b.op("Mul", nil, x, b.constant("also_two", nil, []float64{2}))))
		}, "Mul", 1},
		{"equal vectors", func(b *builder) {
			x := b.input("x", 2, 4)
			b.output(b.op("Add", nil, b.op("Mul", nil, x, b.constant("v", []int64{4}, []float64{1, 2, 3, 4})), b.op("Mul", nil, x, b.constant("also_v", []int64{4}, []float64{1, 2, 3, 4}))))
		}, "Mul", 1},
		{"other vectors", func(b *builder) {
			x := b.input("x", 2, 4)
			b.output(b.op("Add", nil, b.op("Mul", nil, x, b.constant("v", []int64{4}, []float64{1, 2, 3, 4})), b.op("Mul", nil, x, b.constant("w", []int64{4}, []float64{1, 2, 3, 5}))))
		}, "Mul", 2},
		{"other scalars", func(b *builder) {
			x := b.input("x", 2, 4)
			b.output(b.op("Add", nil, b.op("Mul", nil, x, b.constant("two", nil, []float64{2})), b.op("Mul", nil, x, b.constant("three", nil, []float64{3}))))
		}, "Mul", 2},
		{"other attributes", func(b *builder) {
			x := b.input("x", 2, 4)
			b.output(b.op("Add", nil, b.op("Softmax", []*ir.Attribute{ir.IntAttr("axis", 0)}, x), b.op("Softmax", []*ir.Attribute{ir.IntAttr("axis", 1)}, x)))
		}, "Softmax", 2},
		{"random", func(b *builder) {
			x := b.input("x", 2, 4)
			b.output(b.op("Add", nil, b.op("RandomNormalLike", nil, x), b.op("RandomNormalLike", nil, x)))
		}, "RandomNormalLike", 2},
		{"graph output", func(b *builder) {
			x := b.input("x", 2, 4)
			b.output(b.op("Relu", nil, x), b.op("Relu", nil, x))
		}, "Relu", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBuilder(t)
			c.build(b)
			g := b.infer()
			if c.want == 1 {
				checkPreservesExact(t, g, "eliminate-common-ort")
			} else {
				runPasses(t, g, "eliminate-common-ort")
			}
			n := 0
			for _, nd := range g.Nodes {
				if nd.OpType == c.op {
					n++
				}
			}
			if n != c.want {
				t.Errorf("%d %s left, want %d: %s", n, c.op, c.want, ops(g))
			}
		})
	}
}
