package passes

import (
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// TestFuseBiasSoftmax checks onnxruntime's BiasSoftmaxFusion rule: a mask
// Add read only by a last-axis Softmax becomes one Softmax(x, mask), with
// the numbers unchanged, for BERT's inner-broadcast mask ([B, 1, 1, L]),
// GPT-2's outer-broadcast causal mask ([1, 1, L, L]) and a mask of the
// scores' own shape, either operand order; and nothing else fuses: a
// softmax over another axis, a mask that broadcasts along the softmax
// axis, an Add with a second reader, a bf16 pair.
func TestFuseBiasSoftmax(t *testing.T) {
	type tc struct {
		name   string
		mask   []int64
		swap   bool
		axis   int64
		reader bool // the Add's sum is read elsewhere too
		dtype  ir.DType
		fuses  bool
	}
	for _, c := range []tc{
		{name: "inner", mask: []int64{attnB, 1, 1, attnL}, axis: -1, dtype: ir.Float32, fuses: true},
		{name: "inner, mask first", mask: []int64{attnB, 1, 1, attnL}, swap: true, axis: -1, dtype: ir.Float32, fuses: true},
		{name: "outer", mask: []int64{1, 1, attnL, attnL}, axis: 3, dtype: ir.Float32, fuses: true},
		{name: "outer, lower rank", mask: []int64{attnL, attnL}, axis: -1, dtype: ir.Float32, fuses: true},
		{name: "same shape", mask: []int64{attnB, attnH, attnL, attnL}, axis: -1, dtype: ir.Float32, fuses: true},
		{name: "fp16", mask: []int64{attnB, 1, 1, attnL}, axis: -1, dtype: ir.Float16, fuses: true},
		{name: "axis 2", mask: []int64{attnB, 1, 1, attnL}, axis: 2},
		{name: "mask broadcast on the softmax axis", mask: []int64{attnB, 1, attnL, 1}, axis: -1, dtype: ir.Float32},
		{name: "mixed broadcast", mask: []int64{1, attnH, 1, attnL}, axis: -1, dtype: ir.Float32},
		{name: "sum read twice", mask: []int64{attnB, 1, 1, attnL}, axis: -1, reader: true, dtype: ir.Float32},
		{name: "bf16", mask: []int64{attnB, 1, 1, attnL}, axis: -1, dtype: ir.BFloat16},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBuilder(t)
			if c.dtype == 0 {
				c.dtype = ir.Float32
			}
			s := b.Input("scores", c.dtype, attnB, attnH, attnL, attnL)
			m := b.Input("mask", c.dtype, c.mask...)
			x, y := s, m
			if c.swap {
				x, y = m, s
			}
			sum := b.op("Add", nil, x, y)
			b.output(b.op("Softmax", []*ir.Attribute{ir.IntAttr("axis", c.axis)}, sum))
			if c.reader {
				b.output(b.op("Relu", nil, sum))
			}
			g := b.infer()
			before := ops(g)
			if c.fuses && c.dtype == ir.Float32 {
				checkPreserves(t, g, "fuse-bias-softmax")
			} else if _, err := Run(g, Options{Only: []string{"fuse-bias-softmax"}, Check: true}); err != nil {
				t.Fatal(err)
			}
			got := ops(g)
			switch {
			case c.fuses && got != "onnxcost.Softmax":
				t.Errorf("ops %q, want one onnxcost.Softmax", got)
			case c.fuses:
				n := g.Nodes[0]
				if len(n.Inputs) != 2 || n.In(0) != s || n.In(1) != m {
					t.Errorf("fused inputs %v, want (scores, mask)", n.Inputs)
				}
			case got != before:
				t.Errorf("fused what onnxruntime does not: %q -> %q", before, got)
			}
		})
	}
}
