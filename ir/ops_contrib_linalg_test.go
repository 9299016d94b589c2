package ir

import "testing"

// TestInverseAndIsAllFiniteInfer: a batch of 4×4 inverses and an
// all-finite check over two gradients, and their refusals.
func TestInverseAndIsAllFiniteInfer(t *testing.T) {
	const ms = "com.microsoft::"
	m := faShape("b", 4, 4)
	runFAOutputs(t, "inverse", ms+"Inverse", 1, []faIn{faInput(Float32, m)}, nil, []TypeInfo{{DType: Float32, Shape: m}})
	runFAOutputs(t, "is all finite", ms+"IsAllFinite", 1, []faIn{faInput(Float16, faShape(8, 16)), faInput(Float32, faShape(3))}, nil,
		[]TypeInfo{{DType: Bool, Shape: faShape()}})
	checkInferErrors(t, []inferErrCase{
		{op: ms + "Inverse", ins: []faIn{faInput(Float32, faShape(4))}, want: "rank 1"},
		{op: ms + "Inverse", ins: []faIn{faInput(Float32, faShape(2, 4, 3))}, want: "4×3"},
		{op: ms + "Inverse", ins: []faIn{faInput(Int32, faShape(4, 4))}, want: "float type"},
		{op: ms + "IsAllFinite", ins: []faIn{faInput(Float32, faShape(4))}, attrs: []*Attribute{IntAttr("isinf_only", 1), IntAttr("isnan_only", 1)}, want: "at most one"},
		{op: ms + "IsAllFinite", ins: []faIn{faInput(Float32, faShape(4)), faInput(Int64, faShape(2))}, want: "float type"},
	})
}
