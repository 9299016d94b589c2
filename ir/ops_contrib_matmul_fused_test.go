package ir

import (
	"strings"
	"testing"
)

// inferErrCase is a node inference must refuse: op (domain::name) over
// ins with attrs and nout outputs, the error naming want.
type inferErrCase struct {
	op    string
	ins   []faIn
	attrs []*Attribute
	nout  int
	want  string
}

func checkInferErrors(t *testing.T, cases []inferErrCase) {
	t.Helper()
	for _, c := range cases {
		if _, err := runFAOp(t, c.op, 17, c.ins, c.attrs, max(c.nout, 1)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: want an error with %q, got %v", c.op, c.want, err)
		}
	}
}

// TestFusedNBitsInfer: MatMulNBitsQkv's Q, K and V and MatMulNBitsMlp's
// gated output over A[b, s, 2048] (int4, block 32), the residual sum
// like A, and their refusals.
func TestFusedNBitsInfer(t *testing.T) {
	const ms = "com.microsoft::"
	f16 := Float16
	a := faInput(f16, faShape("b", "s", 2048))
	w := func(n int64) (faIn, faIn) { return faInput(Uint8, faShape(n, 64, 16)), faInput(f16, faShape(n*64)) }
	qb, qs := w(2048)
	kb, ks := w(512)
	norm := faInput(f16, faShape(2048))
	qkvAttrs := []*Attribute{IntAttr("K", 2048), IntAttr("Nq", 2048), IntAttr("Nkv", 512), IntAttr("block_size", 32), IntAttr("bits", 4)}
	qkv := []faIn{a, a, norm, qb, qs, faOmitted, kb, ks, faOmitted, kb, ks, faOmitted}
	runFAOutputs(t, "qkv", ms+"MatMulNBitsQkv", 17, qkv, qkvAttrs, []TypeInfo{
		{DType: f16, Shape: faShape("b", "s", 2048)}, {DType: f16, Shape: faShape("b", "s", 512)},
		{DType: f16, Shape: faShape("b", "s", 512)}, {DType: f16, Shape: faShape("b", "s", 2048)}})
	gb, gs := w(5632)
	mlpAttrs := []*Attribute{IntAttr("K", 2048), IntAttr("N", 5632), IntAttr("block_size", 32), StringAttr("activation", "silu")}
	mlp := []faIn{a, faOmitted, norm, gb, gs, faOmitted, gb, gs, faOmitted}
	runFAOutputs(t, "mlp", ms+"MatMulNBitsMlp", 17, mlp, mlpAttrs, []TypeInfo{{DType: f16, Shape: faShape("b", "s", 5632)}})
	checkInferErrors(t, []inferErrCase{
		{ms + "MatMulNBitsQkv", qkv, qkvAttrs[1:], 3, "needs positive K"},
		{ms + "MatMulNBitsQkv", append([]faIn{faInput(f16, faShape("b", "s", 1024))}, qkv[1:]...), qkvAttrs, 3, "A's last dim is 1024, K=2048"},
		{ms + "MatMulNBitsQkv", append(append([]faIn{}, qkv[:6]...), append([]faIn{qb, qs}, qkv[8:]...)...), qkvAttrs, 3, "k_B holds"},
		{ms + "MatMulNBitsMlp", mlp, append([]*Attribute{IntAttr("block_size", 24)}, mlpAttrs[:2]...), 1, "block_size=24"},
	})
}

// TestBlockScaledInfer: the NVFP4 and block-FP8 weights' products, and
// their refusals.
func TestBlockScaledInfer(t *testing.T) {
	const ms = "com.microsoft::"
	bf := BFloat16
	a := faInput(bf, faShape("m", 4096))
	scalar := faInput(Float32, faShape())
	fp4 := []faIn{a, faInput(Uint8, faShape(11008, 2048)), faInput(Uint8, faShape(11008, 256)), scalar}
	runFAOutputs(t, "fp4", ms+"MatMulBlockQuantizedFp4Weight", 17, fp4, nil, []TypeInfo{{DType: bf, Shape: faShape("m", 11008)}})
	fp8 := []faIn{a, faInput(Float8E4M3FN, faShape(11008, 4096)), faInput(Float32, faShape(11008, 32)), scalar}
	runFAOutputs(t, "fp8", ms+"MatMulBlockQuantizedFp8Weight", 17, fp8, nil, []TypeInfo{{DType: bf, Shape: faShape("m", 11008)}})
	fp4op, fp8op := ms+"MatMulBlockQuantizedFp4Weight", ms+"MatMulBlockQuantizedFp8Weight"
	checkInferErrors(t, []inferErrCase{
		{fp4op, append([]faIn{faInput(bf, faShape("m", 4000))}, fp4[1:]...), nil, 1, "A's last dim is 4000, B holds K=4096"},
		{fp4op, append(append([]faIn{}, fp4[:2]...), faInput(Uint8, faShape(11008, 128)), scalar), nil, 1, "want [N, ceil(K/block_size)] = [11008, 256]"},
		{fp4op, append([]faIn{a, faInput(Float16, faShape(11008, 2048))}, fp4[2:]...), nil, 1, "want uint8"},
		{fp8op, append([]faIn{a, faInput(Float8E4M3FN, faShape(4096))}, fp8[2:]...), nil, 1, "B has rank 1"},
	})
}

// TestMRotaryAndLinearAttentionInfer: M-RoPE passes its input's shape
// through and checks its sections; LinearAttention's output and state,
// with a state window, and the inputs its update rule needs.
func TestMRotaryAndLinearAttentionInfer(t *testing.T) {
	const ms = "com.microsoft::"
	f16 := Float16
	x := faInput(f16, faShape("b", "s", 2048))
	cache := faInput(f16, faShape(4096, 64))
	sec := IntsAttr("mrope_section", 16, 24, 24)
	rope := []faIn{x, faInput(Int64, faShape(3, "b", "s")), cache, cache}
	runFAOutputs(t, "mrope", ms+"MRotaryEmbedding", 17, rope, []*Attribute{sec}, []TypeInfo{{DType: f16, Shape: faShape("b", "s", 2048)}})
	q, v := faInput(f16, faShape("b", "t", 16*128)), faInput(f16, faShape("b", "t", 32*128))
	k := faInput(f16, faShape("b", "t", 32*128))
	g := faInput(f16, faShape("b", "t", 32))
	heads := []*Attribute{IntAttr("q_num_heads", 16), IntAttr("kv_num_heads", 32)}
	runFAOutputs(t, "linear attention", ms+"LinearAttention", 17, []faIn{q, k, v, faInput(Float32, faShape("b", 32, 128, 128)), g, g}, heads,
		[]TypeInfo{{DType: f16, Shape: faShape("b", "t", 32*128)}, {DType: Float32, Shape: faShape("b", 32, 128, 128)}})
	runFAOutputs(t, "state window", ms+"LinearAttention", 17, []faIn{q, k, v, faOmitted, g, g}, append(heads, IntAttr("state_window", 4)),
		[]TypeInfo{{DType: f16, Shape: faShape("b", "t", 32*128)}, {DType: f16, Shape: faShape(4, "b", 32, 128, 128)}})
	checkInferErrors(t, []inferErrCase{
		{ms + "MRotaryEmbedding", rope, []*Attribute{IntsAttr("mrope_section", 16, 16, 16)}, 1, "sums to 48"},
		{ms + "MRotaryEmbedding", append([]faIn{x, faInput(Int64, faShape("b", "s"))}, rope[2:]...), []*Attribute{sec}, 1, "want [3, batch, sequence]"},
		{ms + "LinearAttention", []faIn{q, k, v, faOmitted, faOmitted, g}, heads, 2, "needs its decay input"},
		{ms + "LinearAttention", []faIn{q, k, v}, append(heads, StringAttr("update_rule", "mamba")), 2, `update_rule "mamba"`},
		{ms + "LinearAttention", []faIn{q, faInput(f16, faShape("b", "t", 100)), v, faOmitted, g, g}, heads, 2, "key width 100"},
	})
}
