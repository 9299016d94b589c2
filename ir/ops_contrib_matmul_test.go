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
