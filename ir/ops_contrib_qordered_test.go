package ir

import "testing"

// TestQOrderedInfer: the cublasLt-ordered int8 ops' shapes and types, and
// their refusals.
func TestQOrderedInfer(t *testing.T) {
	const ms = "com.microsoft::"
	x := faShape("b", 128, 768)
	sc := faInput(Float32, faShape())
	runFAOutputs(t, "quantize with order", ms+"QuantizeWithOrder", 1, []faIn{faInput(Float16, x), sc}, nil, []TypeInfo{{DType: Int8, Shape: x}})
	runFAOutputs(t, "dequantize with order", ms+"DequantizeWithOrder", 1, []faIn{faInput(Int8, x), sc}, []*Attribute{IntAttr("to", int64(Float16))},
		[]TypeInfo{{DType: Float16, Shape: x}})
	runFAOutputs(t, "matmul", ms+"QOrderedMatMul", 1, []faIn{faInput(Int8, x), sc, faInput(Int8, faShape(768, 3072)), sc, sc, faInput(Float32, faShape(3072))}, nil,
		[]TypeInfo{{DType: Int8, Shape: faShape("b", 128, 3072)}})
	runFAOutputs(t, "gelu", ms+"QOrderedGelu", 1, []faIn{faInput(Int8, x), sc, sc}, nil, []TypeInfo{{DType: Int8, Shape: x}})
	runFAOutputs(t, "layer norm", ms+"QOrderedLayerNormalization", 1, []faIn{faInput(Int8, x), sc, faInput(Float16, faShape(768)), faOmitted, sc}, nil,
		[]TypeInfo{{DType: Int8, Shape: x}})
	lw := faInput(Int8, faShape(768, 2304))
	lb := faInput(Float32, faShape(2304))
	longformer := func(x faIn) []faIn {
		return []faIn{x, sc, lw, sc, lb, sc, sc, faInput(Float16, faShape("b", 1024)), lw, sc, lb, sc, faInput(Int32, faShape("b", 1024)), sc}
	}
	lattrs := []*Attribute{IntAttr("num_heads", 12), IntAttr("window", 256)}
	runFAOutputs(t, "longformer", ms+"QOrderedLongformerAttention", 1, longformer(faInput(Int8, faShape("b", 1024, 768))), lattrs,
		[]TypeInfo{{DType: Int8, Shape: faShape("b", 1024, 768)}})
	i8 := func(dims ...any) faIn { return faInput(Int8, faShape(dims...)) }
	attn := func(x, wk faIn) []faIn {
		return []faIn{x, sc, sc, sc, sc, i8(768, 768), wk, i8(768, 768), sc, sc, sc, lb, lb, lb, sc, sc, sc, faInput(Int32, faShape("b", 128))}
	}
	runFAOutputs(t, "attention", ms+"QOrderedAttention", 1, attn(i8("b", 128, 768), i8(768, 768)), []*Attribute{IntAttr("num_heads", 12)},
		[]TypeInfo{{DType: Int8, Shape: faShape("b", 128, 768)}})
	checkInferErrors(t, []inferErrCase{
		{op: ms + "QOrderedAttention", ins: attn(i8("b", 128, 768), i8(512, 768)), attrs: []*Attribute{IntAttr("num_heads", 12)}, want: "K_weight is [512,768]"},
		{op: ms + "QOrderedAttention", ins: attn(i8("b", 128, 768), i8(768, 768)), attrs: []*Attribute{IntAttr("num_heads", 10)}, want: "not a multiple of its 10 heads"},
		{op: ms + "QOrderedAttention", ins: append(attn(i8("b", 128, 768), i8(768, 768)), i8(2, "b", 12, 4, 64)), attrs: []*Attribute{IntAttr("num_heads", 12)}, want: "no past state"},
		{op: ms + "QOrderedLongformerAttention", ins: longformer(faInput(Float16, faShape("b", 1024, 768))), attrs: lattrs, want: "input is float16"},
		{op: ms + "QOrderedLongformerAttention", ins: longformer(faInput(Int8, faShape("b", 1000, 768))), attrs: lattrs, want: "not a multiple of 2·window"},
		{op: ms + "QuantizeWithOrder", ins: []faIn{faInput(Int8, x), sc}, want: "float type"},
		{op: ms + "DequantizeWithOrder", ins: []faIn{faInput(Int8, x), sc}, attrs: []*Attribute{IntAttr("to", int64(Int32))}, want: "float or float16"},
		{op: ms + "DequantizeWithOrder", ins: []faIn{faInput(Uint8, x), sc}, want: "input is uint8"},
		{op: ms + "QOrderedMatMul", ins: []faIn{faInput(Int8, x), sc, faInput(Int8, faShape(512, 3072)), sc, sc}, want: "768"},
		{op: ms + "QOrderedMatMul", ins: []faIn{faInput(Int8, x), sc, faInput(Uint8, faShape(768, 3072)), sc, sc}, want: "B is uint8"},
		{op: ms + "QOrderedGelu", ins: []faIn{faInput(Float32, x), sc, sc}, want: "X is float32"},
	})
}
