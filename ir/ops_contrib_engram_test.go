package ir

import "testing"

// TestEngramGateAndExpandDimsInfer: an Engram gate over 4
// hyper-connections of 1024 and ExpandDims at a positive and a negative
// axis, and their refusals.
func TestEngramGateAndExpandDimsInfer(t *testing.T) {
	const ms = "com.microsoft::"
	f16 := Float16
	kq := faShape("b", "s", 4, 1024)
	v := faInput(f16, faShape("b", "s", 1024))
	sc := faInput(f16, faShape(4, 1024))
	runFAOutputs(t, "engram gate", ms+"EngramGate", 1, []faIn{faInput(f16, kq), faInput(f16, kq), v, sc, sc, sc}, nil,
		[]TypeInfo{{DType: f16, Shape: kq}, {DType: f16, Shape: kq}})
	runFAOutputs(t, "engram gate, one output", ms+"EngramGate", 1, []faIn{faInput(f16, kq), faInput(f16, kq), v, sc, sc}, nil,
		[]TypeInfo{{DType: f16, Shape: kq}})
	axis := func(a int64) faIn { return faKnown(&Tensor{DType: Int32, Ints: []int64{a}, HasData: true}) }
	x := faInput(Float32, faShape("n", 3, 5))
	runFAOutputs(t, "expand dims", ms+"ExpandDims", 1, []faIn{x, axis(1)}, nil, []TypeInfo{{DType: Float32, Shape: faShape("n", 1, 3, 5)}})
	runFAOutputs(t, "expand dims, negative axis", ms+"ExpandDims", 1, []faIn{x, axis(-1)}, nil, []TypeInfo{{DType: Float32, Shape: faShape("n", 3, 5, 1)}})
	k4 := faInput(f16, faShape(2, 8, 4, 64))
	v4 := faInput(f16, faShape(2, 8, 64))
	s4 := faInput(f16, faShape(4, 64))
	checkInferErrors(t, []inferErrCase{
		{op: ms + "EngramGate", ins: []faIn{faInput(f16, faShape(2, 8, 64)), k4, v4, s4, s4}, want: "key has rank 3"},
		{op: ms + "EngramGate", ins: []faIn{k4, faInput(f16, faShape(2, 8, 2, 64)), v4, s4, s4}, want: "query is [2,8,2,64]"},
		{op: ms + "EngramGate", ins: []faIn{k4, k4, faInput(f16, faShape(2, 8, 32)), s4, s4}, want: "value is [2,8,32]"},
		{op: ms + "EngramGate", ins: []faIn{k4, k4, v4, s4, faInput(f16, faShape(64))}, want: "query_norm_scale is [64]"},
		{op: ms + "EngramGate", ins: []faIn{k4, k4, v4, s4, s4}, nout: 2, want: "needs conv_norm_scale"},
		{op: ms + "EngramGate", ins: []faIn{faInput(Int8, faShape(2, 8, 4, 64)), k4, v4, s4, s4}, want: "float type"},
		{op: ms + "ExpandDims", ins: []faIn{x, faInput(Int32, faShape(2))}, want: "one integer"},
		{op: ms + "ExpandDims", ins: []faIn{x, axis(4)}, want: "out of range"},
	})
}
