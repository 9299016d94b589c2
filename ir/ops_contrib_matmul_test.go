package ir

import "testing"

// TestFusedMatMulTypes checks FusedMatMul's shapes against the outputs
// onnxruntime 1.23.2 (CPU) gave for the same attributes (each case's
// values also matched numpy's matmul of the moved and transposed operands).
func TestFusedMatMulTypes(t *testing.T) {
	const op = "com.microsoft::FusedMatMul"
	f32 := Float32
	in := func(dims ...any) faIn { return faInput(f32, faShape(dims...)) }
	runFATypeCases(t, []faTypeCase{
		{name: "transB", op: op, opset: 17, ins: []faIn{in(2, 3, 4, 5), in(2, 3, 6, 5)}, attrs: []*Attribute{IntAttr("transB", 1)},
			wantDT: f32, want: faShape(2, 3, 4, 6)},
		{name: "transA", op: op, opset: 17, ins: []faIn{in(2, 3, 5, 4), in(2, 3, 5, 6)}, attrs: []*Attribute{IntAttr("transA", 1)},
			wantDT: f32, want: faShape(2, 3, 4, 6)},
		{name: "transBatchA moves the first axis before the last", op: op, opset: 17, ins: []faIn{in(4, 2, 3, 5), in(2, 3, 5, 6)},
			attrs: []*Attribute{IntAttr("transBatchA", 1)}, wantDT: f32, want: faShape(2, 3, 4, 6)},
		{name: "transBatchA then transA", op: op, opset: 17, ins: []faIn{in(5, 2, 3, 4), in(2, 3, 5, 6)},
			attrs: []*Attribute{IntAttr("transBatchA", 1), IntAttr("transA", 1)}, wantDT: f32, want: faShape(2, 3, 4, 6)},
		{name: "transBatchB", op: op, opset: 17, ins: []faIn{in(2, 3, 4, 5), in(5, 2, 3, 6)}, attrs: []*Attribute{IntAttr("transBatchB", 1)},
			wantDT: f32, want: faShape(2, 3, 4, 6)},
		{name: "alpha, rank 2", op: op, opset: 17, ins: []faIn{in(4, 5), in(5, 6)}, attrs: []*Attribute{FloatAttr("alpha", 0.5)},
			wantDT: f32, want: faShape(4, 6)},
		{name: "broadcast weight, transB", op: op, opset: 17, ins: []faIn{in(7, 4, 5), in(6, 5)}, attrs: []*Attribute{IntAttr("transB", 1)},
			wantDT: f32, want: faShape(7, 4, 6)},
		{name: "symbolic batch", op: op, opset: 17, ins: []faIn{in("b", 12, 128, 64), in("b", 12, 128, 64)}, attrs: []*Attribute{IntAttr("transB", 1)},
			wantDT: f32, want: faShape("b", 12, 128, 128)},
		{name: "inner dims differ after the transpose", op: op, opset: 17, ins: []faIn{in(4, 5), in(6, 5)}, wantErr: "inner dims"},
	})
}

// TestBiasSoftmaxTypes: the output is data's; the axis must be in range.
func TestBiasSoftmaxTypes(t *testing.T) {
	const op = "com.microsoft::BiasSoftmax"
	f16 := Float16
	runFATypeCases(t, []faTypeCase{
		{name: "BERT mask", op: op, opset: 17, ins: []faIn{faInput(f16, faShape("b", 12, 128, 128)), faInput(f16, faShape("b", 1, 1, 128))},
			attrs: []*Attribute{IntAttr("axis", 3), IntAttr("is_inner_broadcast", 1)}, wantDT: f16, want: faShape("b", 12, 128, 128)},
		{name: "axis out of range", op: op, opset: 17, ins: []faIn{faInput(f16, faShape(2, 3)), faInput(f16, faShape(3))},
			attrs: []*Attribute{IntAttr("axis", 4), IntAttr("is_inner_broadcast", 0)}, wantErr: "axis"},
	})
}

// TestORTOptimizerOpTypes: the ops onnxruntime's level-extended fusions
// write take their float op's shape (testdata/models/ortsaved holds them as
// onnxruntime saves them; calib/profile's TestORTSavedGraphProfile checks
// that graph against onnxruntime's own run).
func TestORTOptimizerOpTypes(t *testing.T) {
	f32, u8, i8 := Float32, Uint8, Int8
	x := faInput(f32, faShape("N", 8, 32, 32))
	w := faInput(f32, faShape(16, 8, 3, 3))
	relu := StringAttr("activation", "Relu")
	runFATypeCases(t, []faTypeCase{
		{name: "FusedConv with a residual", op: "com.microsoft::FusedConv", opset: 13,
			ins:   []faIn{x, w, faInput(f32, faShape(16)), faInput(f32, faShape("N", 16, 16, 16))},
			attrs: []*Attribute{relu, IntsAttr("pads", 1, 1, 1, 1), IntsAttr("strides", 2, 2)}, wantDT: f32, want: faShape("N", 16, 16, 16)},
		{name: "FusedConv leaky", op: "com.microsoft::FusedConv", opset: 13, ins: []faIn{x, w},
			attrs: []*Attribute{StringAttr("activation", "LeakyRelu"), {Name: "activation_params", Type: AttrFloats, Floats: []float64{0.1}}}, wantDT: f32, want: faShape("N", 16, 30, 30)},
		{name: "FusedGemm", op: "com.microsoft::FusedGemm", opset: 13,
			ins:   []faIn{faInput(f32, faShape("N", 16)), faInput(f32, faShape(64, 16)), faInput(f32, faShape(64))},
			attrs: []*Attribute{relu, IntAttr("transB", 1)}, wantDT: f32, want: faShape("N", 64)},
		{name: "MatMulIntegerToFloat takes a_scale's type", op: "com.microsoft::MatMulIntegerToFloat", opset: 13,
			ins:    []faIn{faInput(u8, faShape("B", 128, 768)), faInput(i8, faShape(768, 3072)), faInput(Float16, faShape()), faInput(Float16, faShape(3072))},
			wantDT: Float16, want: faShape("B", 128, 3072)},
		{name: "DynamicQuantizeMatMul takes A's type", op: "com.microsoft::DynamicQuantizeMatMul", opset: 13,
			ins:    []faIn{faInput(f32, faShape(2, 64)), faInput(u8, faShape(64, 10)), faInput(f32, faShape()), faInput(u8, faShape()), faInput(f32, faShape(10))},
			wantDT: f32, want: faShape(2, 10)},

		{name: "MatMulIntegerToFloat inner dims", op: "com.microsoft::MatMulIntegerToFloat", opset: 13,
			ins: []faIn{faInput(u8, faShape(4, 768)), faInput(i8, faShape(512, 10)), faInput(f32, faShape()), faInput(f32, faShape())}, wantErr: "768"},
	})
}

// TestGemmFloat8Infer: GemmFloat8's [M, N] under transA/transB, of the
// dtype attribute's type (float unless set), its two operands of
// different float8 types; a K mismatch refused.
func TestGemmFloat8Infer(t *testing.T) {
	const op = "com.microsoft::GemmFloat8"
	a, bt := faInput(Float8E4M3FN, faShape("m", 64)), faInput(Float8E5M2, faShape(32, 64))
	runFAOutputs(t, "transB, default float", op, 1, []faIn{a, bt}, []*Attribute{IntAttr("transB", 1)}, []TypeInfo{{DType: Float32, Shape: faShape("m", 32)}})
	runFAOutputs(t, "transA, bf16 out", op, 1, []faIn{faInput(Float8E4M3FN, faShape(64, "m")), faInput(Float8E4M3FN, faShape(64, 32))},
		[]*Attribute{IntAttr("transA", 1), IntAttr("dtype", int64(BFloat16))}, []TypeInfo{{DType: BFloat16, Shape: faShape("m", 32)}})
	runFATypeCases(t, []faTypeCase{
		{name: "inner dims", op: op, opset: 1, ins: []faIn{a, bt}, wantErr: "inner dim 64 and B's 32"},
		{name: "integer out", op: op, opset: 1, ins: []faIn{a, bt}, attrs: []*Attribute{IntAttr("transB", 1), IntAttr("dtype", int64(Int32))}, wantErr: "not a float type"},
	})
}
