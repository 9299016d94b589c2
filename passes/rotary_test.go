package passes

import (
	"math"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// sliceLast is Slice over the last axis with step 1 (the only form the
// tests build): [start, end), negative indices from the end, clamped.
func sliceLast(t *tensor, start, end float64) *tensor {
	d := t.dims[len(t.dims)-1]
	clamp := func(v float64) int {
		if v < 0 {
			v += float64(d)
		}
		return int(math.Max(0, math.Min(v, float64(d))))
	}
	s, e := clamp(start), clamp(end)
	dims := append(append([]int(nil), t.dims[:len(t.dims)-1]...), e-s)
	out := newTensor(dims...)
	for row, k := 0, 0; row < t.len()/d; row++ {
		for j := s; j < e; j++ {
			out.data[k] = t.data[row*d+j]
			k++
		}
	}
	return out
}

// concatLast concatenates two tensors along the last axis.
func concatLast(a, b *tensor) *tensor {
	da, db := a.dims[len(a.dims)-1], b.dims[len(b.dims)-1]
	dims := append(append([]int(nil), a.dims[:len(a.dims)-1]...), da+db)
	out := newTensor(dims...)
	for row, k := 0, 0; row < a.len()/da; row++ {
		for j := 0; j < da; j++ {
			out.data[k] = a.data[row*da+j]
			k++
		}
		for j := 0; j < db; j++ {
			out.data[k] = b.data[row*db+j]
			k++
		}
	}
	return out
}

// rotaryOpts vary the hand-built rotate_half.
type rotaryOpts struct {
	swapHalves bool  // Concat(Neg(x1), x2): not rotate_half
	offHalf    bool  // slices at d/4: not halves
	catAxis    int64 // Concat axis (default -1)
	rOutput    bool  // the rotated tensor is also a graph output
}

// buildRotary builds apply_rotary_pos_emb's export over q [1,2,4,8] with
// cos/sin tables [4,8] broadcast over batch and heads.
func buildRotary(b *builder, o rotaryOpts) *ir.Value {
	x := b.input("q", 1, 2, 4, 8)
	cos, sin := b.weight("cos", 4, 8), b.weight("sin", 4, 8)
	axes, one := b.int64s("axes", -1), b.int64s("step", 1)
	h := int64(4)
	if o.offHalf {
		h = 2
	}
	x1 := b.op("Slice", nil, x, b.int64s("s0", 0), b.int64s("e0", h), axes, one)
	x2 := b.op("Slice", nil, x, b.int64s("s1", h), b.int64s("e1", math.MaxInt64), axes, one)
	first, second := x2, x1
	if o.swapHalves {
		first, second = x1, x2
	}
	axis := o.catAxis
	if axis == 0 {
		axis = -1
	}
	r := b.op("Concat", []*ir.Attribute{ir.IntAttr("axis", axis)}, b.op("Neg", nil, first), second)
	y := b.op("Add", nil, b.op("Mul", nil, x, cos), b.op("Mul", nil, r, sin))
	b.output(y)
	if o.rOutput {
		b.output(r)
	}
	return y
}

func TestRotaryFuses(t *testing.T) {
	b := newBuilder(t)
	y := buildRotary(b, rotaryOpts{})
	g := b.infer()
	checkPreserves(t, g, "fuse-rotary")
	n := expectOne(t, g, ir.OpFusedRotary, 7)
	if n.Out(0) != y || len(n.Inputs) != 3 || n.In(0).Name != "q" || n.In(1).Name != "cos" || n.In(2).Name != "sin" {
		t.Errorf("Rotary reads %v writes %v", n.Inputs, n.Outputs)
	}
}

func TestRotaryGuards(t *testing.T) {
	expectDeclines(t, "fuse-rotary", ir.OpFusedRotary, guardCases(buildRotary, map[string]rotaryOpts{
		"halves in the wrong order":   {swapHalves: true},
		"slices are not halves":       {offHalf: true},
		"rotated tensor is an output": {rOutput: true},
	}))
}
