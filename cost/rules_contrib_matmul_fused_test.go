package cost

import (
	"testing"

	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/ir/irtest"
)

// fusedMatMulModel: a decoder layer's fused int4 projections over A [4,
// 256] in fp16 (block 32): MatMulNBitsQkv (skip and norm, Nq 256, Nkv
// 64) and MatMulNBitsMlp (norm, N 512, SiLU, a gate bias); an NVFP4
// linear with a bias and block-FP8 linears with and without a_scale,
// over A [8, 512].
func fusedMatMulModel(t *testing.T) *irtest.Builder {
	b := msBuilder(t, 17)
	a := b.Input("a", ir.Float16, 4, 256)
	norm := initializer(b, "norm", ir.Float16, 256)
	w := func(name string, n int64) (*ir.Value, *ir.Value) {
		return initializer(b, name+"_B", ir.Uint8, n, 8, 16), initializer(b, name+"_scales", ir.Float16, n*8)
	}
	node := func(op, name string, ins []*ir.Value, nout int, attrs ...*ir.Attribute) {
		n := b.Node(op, ins, nout, attrs...)
		n.Domain, n.Name = "com.microsoft", name
		b.Output(n.Outputs...)
	}
	qb, qs := w("q", 256)
	kb, ks := w("k", 64)
	vb, vs := w("v", 64)
	node("MatMulNBitsQkv", "qkv", []*ir.Value{a, b.Input("skip", ir.Float16, 4, 256), norm, qb, qs, nil, kb, ks, nil, vb, vs, nil}, 3,
		ir.IntAttr("K", 256), ir.IntAttr("Nq", 256), ir.IntAttr("Nkv", 64), ir.IntAttr("block_size", 32))
	gb, gs := w("gate", 512)
	ub, us := w("up", 512)
	node("MatMulNBitsMlp", "mlp", []*ir.Value{a, nil, norm, gb, gs, initializer(b, "gate_bias", ir.Float16, 512), ub, us, nil}, 1,
		ir.IntAttr("K", 256), ir.IntAttr("N", 512), ir.IntAttr("block_size", 32), ir.StringAttr("activation", "silu"))
	x := b.Input("x", ir.Float16, 8, 512)
	scalar := initializer(b, "global_scale", ir.Float32)
	node("MatMulBlockQuantizedFp4Weight", "fp4", []*ir.Value{x, initializer(b, "w4", ir.Uint8, 1024, 256), initializer(b, "w4_scale", ir.Uint8, 1024, 32),
		scalar, nil, initializer(b, "b4", ir.Float16, 1024)}, 1)
	w8 := initializer(b, "w8", ir.Float8E4M3FN, 1024, 512)
	s8 := initializer(b, "w8_scale", ir.Float32, 1024, 4)
	node("MatMulBlockQuantizedFp8Weight", "w8a16", []*ir.Value{x, w8, s8}, 1)
	node("MatMulBlockQuantizedFp8Weight", "w8a8", []*ir.Value{x, w8, s8, scalar}, 1)
	b.Infer()
	return b
}

// TestWeightOnlyFusedCounts: each op's arithmetic counted by hand, and the
// path it runs on an H100 (W8A8 at fp8, the weight-only ones at A's fp16).
func TestWeightOnlyFusedCounts(t *testing.T) {
	r := analyzeOn(t, fusedMatMulModel(t), "H100", "")
	sw, _, _ := OpCount("Swish")
	for _, c := range []struct {
		node        string
		macs, flops float64
		precision   string
	}{
		// 4 rows × K 256 × (256 + 2·64); 2 a weight to dequantize; the
		// RMS norm (4 an element, 1 a row) and the skip add (1 an element).
		{"qkv", 4 * 256 * 384, 2*4*256*384 + 2*256*384 + 4*1024 + 4 + 1024, "fp16_tensor"},
		// gate and up: 2·512 wide; the gate bias, SiLU and the product per 4·512.
		{"mlp", 4 * 256 * 1024, 2*4*256*1024 + 2*256*1024 + 4*1024 + 4 + 4*512 + (sw+1)*4*512, "fp16_tensor"},
		// NVFP4: 2 a weight (two scales), the bias.
		{"fp4", 8 * 1024 * 512, 2*8*1024*512 + 2*1024*512 + 8*1024, "fp16_tensor"},
		{"w8a16", 8 * 1024 * 512, 2*8*1024*512 + 1024*512, "fp16_tensor"},
		// A quantized (2 an element), each of 4 blocks' scale per output.
		{"w8a8", 8 * 1024 * 512, 2*8*1024*512 + 2*8*512 + 8*1024*4, "fp8_tensor"},
	} {
		nc := nodeNamed(t, r, c.node)
		if nc.MACs != c.macs || nc.FLOPs != c.flops || nc.Precision != c.precision {
			t.Errorf("%s: %g MACs (want %g), %g FLOPs (want %g), at %s (want %s)", c.node, nc.MACs, c.macs, nc.FLOPs, c.flops, nc.Precision, c.precision)
		}
	}
}

// TestLinearAttentionCounts: a gated-delta LinearAttention prefill of 2
// sequences of 16 tokens, 4 query heads and 8 KV heads (inverse GQA: 8
// output heads) of 32: per token 8 updates, 8 retrievals and 8 outputs
// of 32·32, and 15 earlier chunk tokens a head at 32 + 32; the decay and
// the output scale in flops; LinearAttentionGate's Softplus and Sigmoid.
func TestLinearAttentionCounts(t *testing.T) {
	b := msBuilder(t, 17)
	g := b.Input("g", ir.Float16, 2, 16, 8)
	la := b.Node("LinearAttention", []*ir.Value{b.Input("q", ir.Float16, 2, 16, 128), b.Input("k", ir.Float16, 2, 16, 256),
		b.Input("v", ir.Float16, 2, 16, 256), b.Input("state", ir.Float32, 2, 8, 32, 32), g, g}, 2,
		ir.IntAttr("q_num_heads", 4), ir.IntAttr("kv_num_heads", 8))
	la.Domain, la.Name = "com.microsoft", "la"
	b.Output(la.Outputs...)
	gate := b.Node("LinearAttentionGate", []*ir.Value{g, initializer(b, "dt_bias", ir.Float32, 8), initializer(b, "decay_scale", ir.Float32, 8), g}, 2)
	finishMSNode(b, gate, "gate")
	r := analyzeOn(t, b, "H100", "")
	perToken := 3*8*32*32.0 + 15*8*64
	nc := nodeNamed(t, r, "la")
	if want := 32 * perToken; nc.MACs != want || nc.FLOPs != 2*want+32*8*32+32*8*1024 || nc.Transcendentals != 32*8 {
		t.Errorf("LinearAttention: %g MACs (want %g), %g FLOPs, %g transcendentals", nc.MACs, want, nc.FLOPs, nc.Transcendentals)
	}
	if read := nodeNamed(t, r, "la").BytesRead; read < 2*8*32*32*4 {
		t.Errorf("LinearAttention reads %g B, less than its float32 state", read)
	}
	sp, _, _ := OpCount("Softplus")
	sg, _, _ := OpCount("Sigmoid")
	if got := nodeNamed(t, r, "gate").FLOPs; got != (sp+2+sg)*2*16*8 {
		t.Errorf("LinearAttentionGate: %g FLOPs, want %g", got, (sp+2+sg)*2*16*8)
	}
}
