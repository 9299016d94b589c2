package cost

import (
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// TestQOrderedCounts counts a cublasLt-ordered int8 BERT FFN by hand at
// batch 2 × 16 tokens of 64: quantize (3 flops an element), the int8
// MatMul to 256 with a bias (2·32·64·256 + 32·256·(3 + 1)), Gelu between
// dequantize and quantize (2 + 5 + 3 an element), LayerNorm likewise
// (its count + 2 + 3 an element), dequantize (2 an element); the MatMul
// runs at int8, its tensors (the float bias and scales too) a byte an
// element.
func TestQOrderedCounts(t *testing.T) {
	b := msBuilder(t, 17)
	ms := func(name, op string, ins []*ir.Value, attrs ...*ir.Attribute) *ir.Value {
		return msNamed(b, name, op, 1, ins, attrs...).Out(0)
	}
	sc := initializer(b, "sc", ir.Float32)
	q := ms("q", "QuantizeWithOrder", []*ir.Value{b.Input("x", ir.Float16, 2, 16, 64), sc}, ir.IntAttr("order_input", 1), ir.IntAttr("order_output", 1))
	mm := ms("mm", "QOrderedMatMul", []*ir.Value{q, sc, initializer(b, "w", ir.Int8, 64, 256), sc, sc, initializer(b, "bias", ir.Float32, 256)},
		ir.IntAttr("order_A", 1), ir.IntAttr("order_B", 0), ir.IntAttr("order_Y", 1))
	g := ms("gelu", "QOrderedGelu", []*ir.Value{mm, sc, sc})
	ln := ms("ln", "QOrderedLayerNormalization", []*ir.Value{g, sc, initializer(b, "gamma", ir.Float16, 256), nil, sc})
	b.Output(ms("dq", "DequantizeWithOrder", []*ir.Value{ln, sc}, ir.IntAttr("to", int64(ir.Float16))))
	b.Infer()
	r := analyzeCovered(t, b, "A100")
	const el = 2 * 16 * 256
	for _, c := range []struct {
		name        string
		macs, flops float64
	}{
		{"q", 0, 3 * 2 * 16 * 64},
		{"mm", 32 * 64 * 256, 2*32*64*256 + el*4},
		{"gelu", 0, el * (2 + 5 + 3)},
		{"dq", 0, el * 2},
	} {
		nc := nodeNamed(t, r, c.name)
		if nc.MACs != c.macs || nc.FLOPs != c.flops || !(nc.TimeS > 0) {
			t.Errorf("%s: %g MACs, %g FLOPs, %g s; want %g, %g", c.name, nc.MACs, nc.FLOPs, nc.TimeS, c.macs, c.flops)
		}
	}
	// The 8-bit operands at a byte an element, the float32 bias and scales
	// at four: an integer op's float tensors are float.
	if nc := nodeNamed(t, r, "mm"); nc.BytesRead != 2*16*64+64*256+256*4+3*4 || nc.BytesWritten != el {
		t.Errorf("mm: %g B read, %g B written; want A and W at a byte an element, the float32 bias and three scales at four, Y written", nc.BytesRead, nc.BytesWritten)
	}
	// DequantizeWithOrder writes the float16 it is asked for.
	if nc := nodeNamed(t, r, "dq"); nc.BytesRead != el+4 || nc.BytesWritten != el*2 {
		t.Errorf("dq: %g B read, %g B written; want the int8 input and a float32 scale read, float16 written", nc.BytesRead, nc.BytesWritten)
	}
	if nc := nodeNamed(t, r, "ln"); !(nc.FLOPs > el*(2+3)) {
		t.Errorf("ln: %g FLOPs, want LayerNorm's count plus 5 an element", nc.FLOPs)
	}
}

// TestQOrderedAttentionCounts: int8 BERT attention at batch 2 × 32 tokens
// of 64, 4 heads of 16, counted by hand: the merged Q|K|V GEMM
// (2·32·64·192 MACs and a bias add an output), 2·4·32·32 scores at 32
// MACs each (Q·Kᵀ and P·V), the masked softmax (4 flops a score, 1 a
// row); bytes a byte an element but the float32 scales' and biases' four
// (and the int32 mask's): inputs, the GEMM's output and its transpose, V's
// transpose, the context and its transpose, the scores twice each way.
func TestQOrderedAttentionCounts(t *testing.T) {
	b := msBuilder(t, 17)
	sc := initializer(b, "sc", ir.Float32)
	w := func(name string) *ir.Value { return initializer(b, name, ir.Int8, 64, 64) }
	bias := func(name string) *ir.Value { return initializer(b, name, ir.Float32, 64) }
	n := msNamed(b, "attn", "QOrderedAttention", 1, []*ir.Value{b.Input("x", ir.Int8, 2, 32, 64), sc, sc, sc, sc, w("wq"), w("wk"), w("wv"), sc, sc, sc,
		bias("bq"), bias("bk"), bias("bv"), sc, sc, sc, b.Input("mask", ir.Int32, 2, 32)},
		ir.IntAttr("num_heads", 4), ir.IntsAttr("qkv_hidden_sizes", 64, 64, 64), ir.IntAttr("order_input", 1), ir.IntAttr("order_weight", 0), ir.IntAttr("order_output", 1))
	b.Output(n.Out(0))
	b.Infer()
	r := analyzeCovered(t, b, "A100")
	nc := nodeNamed(t, r, "attn")
	const qkv, ctx, scores = 2 * 32 * 192, 2 * 32 * 64, 2 * 4 * 32 * 32
	macs := float64(qkv*64 + scores*32)
	flops := float64(2*qkv*64+qkv) + float64(2*scores*32+4*scores+2*4*32)
	read := float64(ctx+10*4+3*64*64+3*64*4+2*32*4) + float64(2*qkv+2*ctx) + 2*scores
	written := float64(ctx) + float64(2*qkv+2*ctx) + 2*scores
	if nc.MACs != macs || nc.FLOPs != flops || nc.BytesRead != read || nc.BytesWritten != written || nc.Launches != 7 || !(nc.TimeS > 0) {
		t.Errorf("%g MACs, %g FLOPs, %g B read, %g B written, %g launches; want %g, %g, %g, %g, 7", nc.MACs, nc.FLOPs, nc.BytesRead, nc.BytesWritten, nc.Launches, macs, flops, read, written)
	}
}
