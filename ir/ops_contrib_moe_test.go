package ir

import "testing"

// TestMoEInfer: MoE and QMoE give the input's type and shape, over
// Mixtral's expert dims (hidden 4096, inter 14336, 8 experts) at fp16, and
// refuse what onnxruntime's moe_helper refuses where the shapes prove it.
func TestMoEInfer(t *testing.T) {
	const ms = "com.microsoft::"
	f16 := Float16
	x2, x3 := faShape("t", 4096), faShape("b", "s", 4096)
	router := faInput(f16, faShape("t", 8))
	w1, w2 := faInput(f16, faShape(8, 28672, 4096)), faInput(f16, faShape(8, 4096, 14336))
	swiglu := []*Attribute{IntAttr("k", 2), StringAttr("activation_type", "swiglu"), IntAttr("swiglu_fusion", 1)}
	moe := func(x Shape, r faIn) []faIn { return []faIn{faInput(f16, x), r, w1, faOmitted, w2} }
	runFAOutputs(t, "tokens", ms+"MoE", 1, moe(x2, router), swiglu, []TypeInfo{{DType: f16, Shape: x2}})
	runFAOutputs(t, "batch and sequence", ms+"MoE", 1, moe(x3, faInput(f16, faShape("b*s", 8))), swiglu, []TypeInfo{{DType: f16, Shape: x3}})
	q := []faIn{faInput(f16, x2), router, faInput(Uint8, faShape(8, 28672, 2048)), faInput(f16, faShape(8, 28672)), faOmitted,
		faInput(Uint8, faShape(8, 4096, 7168)), faInput(f16, faShape(8, 4096))}
	runFAOutputs(t, "qmoe 4-bit", ms+"QMoE", 1, q, swiglu, []TypeInfo{{DType: f16, Shape: x2}})
	qFloat := append([]faIn(nil), q...)
	qFloat[2] = w1
	runFATypeCases(t, []faTypeCase{
		{name: "input of rank 4", op: ms + "MoE", opset: 1, attrs: swiglu, ins: moe(faShape(1, 2, 3, 4096), router), wantErr: "rank 4"},
		{name: "router rows", op: ms + "MoE", opset: 1, attrs: swiglu, ins: moe(faShape(6, 4096), faInput(f16, faShape(5, 8))), wantErr: "5 rows for 6 tokens"},
		{name: "experts disagree", op: ms + "MoE", opset: 1, attrs: swiglu,
			ins: []faIn{faInput(f16, x2), router, faInput(f16, faShape(4, 28672, 4096)), faOmitted, w2}, wantErr: "holds 4 experts"},
		{name: "k above the experts", op: ms + "MoE", opset: 1, attrs: []*Attribute{IntAttr("k", 9)}, ins: moe(x2, router), wantErr: "k = 9"},
		{name: "integer input", op: ms + "MoE", opset: 1, ins: []faIn{faInput(Int32, x2), router, w1, faOmitted, w2}, wantErr: "input is int32"},
		{name: "3-bit experts", op: ms + "QMoE", opset: 1, attrs: []*Attribute{IntAttr("expert_weight_bits", 3)}, ins: q, wantErr: "expert_weight_bits 3"},
		{name: "float experts in QMoE", op: ms + "QMoE", opset: 1, ins: qFloat, wantErr: "want uint8"},
	})
}
