package cost

import (
	"testing"

	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/ir/irtest"
)

// constant adds an initializer holding known values (floats for a float
// dtype, ints otherwise) and returns its value.
func constant(b *irtest.Builder, name string, dt ir.DType, floats []float64, ints []int64) *ir.Value {
	v := b.Tensor(name, dt)
	b.G.AddInitializer(v, &ir.Tensor{Name: name, DType: dt, Floats: floats, Ints: ints, HasData: true})
	return v
}

// TestContribElementwiseCounts: a BERT layer's fused dropouts at batch 4 ×
// 128 × 768 in fp16, at inference and in training, a complex product
// over a spectrum and Gemma's rotary embedding (8 heads of 256), counted
// by hand.
func TestContribElementwiseCounts(t *testing.T) {
	const numel = 4 * 128 * 768.0
	b := msBuilder(t, 17)
	x := b.Input("x", ir.Float16, 4, 128, 768)
	res := b.Input("res", ir.Float16, 4, 128, 768)
	bias := initializer(b, "bias", ir.Float16, 768)
	ratio := constant(b, "ratio", ir.Float32, []float64{0.1}, nil)
	zero := constant(b, "zero", ir.Float32, []float64{0}, nil)
	on := constant(b, "on", ir.Bool, nil, []int64{1})
	node := func(op, name string, nout int, ins ...*ir.Value) *ir.Node {
		n := b.Node(op, ins, nout)
		n.Domain, n.Name = "com.microsoft", name
		b.Output(n.Outputs...)
		return n
	}
	node("BiasDropout", "infer", 1, x, bias, res)                     // inference: two adds
	node("BiasDropout", "train", 2, x, bias, res, ratio, on)          // training: + draw, compare, scale; bool mask
	node("BitmaskBiasDropout", "bitmask", 2, x, bias, nil, ratio, on) // no residual; bit-packed mask
	node("BitmaskBiasDropout", "ratio0", 1, x, bias, nil, zero, on)   // ratio 0 drops nothing
	node("BitmaskDropout", "view", 1, x)                              // inference, mask unused: a view
	node("BitmaskDropout", "drop", 2, x, ratio, on)
	a := b.Input("a", ir.Float32, 8, 64, 33, 2)
	node("ComplexMul", "cmul", 1, a, initializer(b, "filt", ir.Float32, 64, 33, 2))
	q := b.Input("q", ir.Float16, 2, 8, 16, 256)
	node("GemmaRotaryEmbedding", "gemma", 2, b.Input("emb", ir.Float32, 2, 16, 256), q, q, q, q)
	b.Infer()
	r := analyzeCovered(t, b, "A100")
	const spec, qn = 8 * 64 * 33 * 2.0, 2 * 8 * 16 * 256.0
	for _, c := range []struct {
		name           string
		flops, written float64
	}{
		{"infer", 2 * numel, 2 * numel},
		{"train", 5 * numel, 2*numel + numel},
		{"bitmask", 4 * numel, 2*numel + 4*numel/32},
		{"ratio0", numel, 2 * numel},
		{"view", 0, 0},
		{"drop", 3 * numel, 2*numel + 4*numel/32},
		{"cmul", 3 * spec, 4 * spec},
		{"gemma", 6 * qn, 2 * 2 * qn},
	} {
		nc := nodeNamed(t, r, c.name)
		if c.name == "gemma" && nc.Transcendentals != 2*qn {
			t.Errorf("gemma: %g transcendentals, want %g (sine and cosine per q element)", nc.Transcendentals, 2*qn)
		}
		if nc.FLOPs != c.flops || nc.BytesWritten != c.written || (c.flops > 0) != (nc.TimeS > 0) {
			t.Errorf("%s: %g FLOPs, %g B written, %g s; want %g, %g", c.name, nc.FLOPs, nc.BytesWritten, nc.TimeS, c.flops, c.written)
		}
	}
}
