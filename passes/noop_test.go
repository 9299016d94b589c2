package passes

import (
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// TestEliminateNoopORT: x/1, x·1, 1·x, x+0, 0+x and x−0 by a one-element
// constant go (onnxruntime's NoopElimination), the graph's outputs the
// same numbers; a constant first operand of Sub or Div, another value, a
// constant of more elements or higher rank than the other operand, and a
// graph output stay.
func TestEliminateNoopORT(t *testing.T) {
	for _, c := range []struct {
		name, op  string
		value     float64
		dims      []int64
		constLeft bool
		asOutput  bool
		gone      bool
	}{
		{"x/1", "Div", 1, nil, false, false, true},
		{"x*1", "Mul", 1, []int64{1}, false, false, true},
		{"1*x", "Mul", 1, nil, true, false, true},
		{"x+0", "Add", 0, []int64{1, 1}, false, false, true},
		{"0+x", "Add", 0, nil, true, false, true},
		{"x-0", "Sub", 0, nil, false, false, true},
		{"0-x", "Sub", 0, nil, true, false, false},
		{"1/x", "Div", 1, nil, true, false, false},
		{"x*2", "Mul", 2, nil, false, false, false},
		{"x+zeros[4]", "Add", 0, []int64{4}, false, false, false},
		{"higher rank", "Mul", 1, []int64{1, 1, 1, 1}, false, false, false},
		{"graph output", "Div", 1, nil, false, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBuilder(t)
			x := b.input("x", 2, 4)
			n := int64(1)
			for _, d := range c.dims {
				n *= d
			}
			vals := make([]float64, n)
			for i := range vals {
				vals[i] = c.value
			}
			k := b.constant("k", c.dims, vals)
			ins := []*ir.Value{x, k}
			if c.constLeft {
				ins = []*ir.Value{k, x}
			}
			y := b.op(c.op, nil, ins...)
			if c.asOutput {
				b.output(y)
			} else {
				b.output(b.op("Relu", nil, y))
			}
			g := b.infer()
			if c.gone {
				checkPreservesExact(t, g, "eliminate-noop-ort")
			} else {
				runPasses(t, g, "eliminate-noop-ort")
			}
			if gone := find(g, c.op) == nil; gone != c.gone {
				t.Errorf("%s removed %v, want %v: %s", c.name, gone, c.gone, ops(g))
			}
		})
	}
}
