package ir

import (
	"strings"
	"testing"
)

// TestContribIntegerInfer: MatMulInteger16, MulInteger, ReduceSumInteger
// and QLinearReduceMean, and their refusals.
func TestContribIntegerInfer(t *testing.T) {
	const ms = "com.microsoft::"
	a16, b16 := faInput(Int16, faShape("n", 4, 64)), faInput(Int16, faShape(64, 32))
	runFAOutputs(t, "matmul int16", ms+"MatMulInteger16", 1, []faIn{a16, b16}, nil, []TypeInfo{{DType: Int32, Shape: faShape("n", 4, 32)}})
	runFAOutputs(t, "matmul uint16", ms+"MatMulInteger16", 1, []faIn{faInput(Uint16, faShape(4, 64)), faInput(Uint16, faShape(64, 32))}, nil,
		[]TypeInfo{{DType: Uint32, Shape: faShape(4, 32)}})
	a8, zp := faInput(Uint8, faShape("n", 1, 16)), faInput(Uint8, faShape())
	runFAOutputs(t, "mul integer", ms+"MulInteger", 1, []faIn{a8, zp, faInput(Uint8, faShape(8, 16)), zp}, nil,
		[]TypeInfo{{DType: Int32, Shape: faShape("n", 8, 16)}})
	runFAOutputs(t, "mul integer, no zero points", ms+"MulInteger", 1, []faIn{a8, faOmitted, a8}, nil,
		[]TypeInfo{{DType: Int32, Shape: faShape("n", 1, 16)}})
	x8 := faShape("n", 12, 64)
	axes := []*Attribute{IntsAttr("axes", -1), IntAttr("keepdims", 0)}
	runFAOutputs(t, "reduce sum integer", ms+"ReduceSumInteger", 1, []faIn{faInput(Int8, x8)}, axes, []TypeInfo{{DType: Int32, Shape: faShape("n", 12)}})
	runFAOutputs(t, "reduce sum integer, uint8, all axes", ms+"ReduceSumInteger", 1, []faIn{faInput(Uint8, x8)}, nil, []TypeInfo{{DType: Uint32, Shape: faShape(1, 1, 1)}})
	sc := faInput(Float32, faShape())
	runFAOutputs(t, "qlinear reduce mean", ms+"QLinearReduceMean", 1, []faIn{faInput(Uint8, x8), sc, zp, sc, zp},
		[]*Attribute{IntsAttr("axes", 1), IntAttr("keepdims", 1)}, []TypeInfo{{DType: Uint8, Shape: faShape("n", 1, 64)}})
	checkInferErrors(t, []inferErrCase{
		{op: ms + "MatMulInteger16", ins: []faIn{faInput(Int8, faShape(4, 64)), b16}, want: "A is int8"},
		{op: ms + "MatMulInteger16", ins: []faIn{a16, faInput(Int16, faShape(32, 32))}, want: "64"},
		{op: ms + "MulInteger", ins: []faIn{faInput(Float32, faShape(4)), faOmitted, a8}, want: "A is float32"},
		{op: ms + "MulInteger", ins: []faIn{faInput(Int8, faShape(4)), faOmitted, faInput(Uint8, faShape(4))}, want: "one type"},
		{op: ms + "MulInteger", ins: []faIn{a8, faInput(Uint8, faShape(2)), a8}, want: "must be a scalar"},
		{op: ms + "MulInteger", ins: []faIn{a8, faOmitted, faInput(Uint8, faShape(3, 7))}, want: "broadcast"},
		{op: ms + "ReduceSumInteger", ins: []faIn{faInput(Float32, x8)}, want: "data is float32"},
		{op: ms + "ReduceSumInteger", ins: []faIn{faInput(Int8, x8)}, attrs: []*Attribute{IntsAttr("axes", 3)}, want: "out of range"},
		{op: ms + "QLinearReduceMean", ins: []faIn{faInput(Uint8, x8), faInput(Float16, faShape()), zp, sc}, want: "float16"},
		{op: ms + "QLinearReduceMean", ins: []faIn{faInput(Uint8, x8), sc, zp, faInput(Float32, faShape(2))}, want: "must be a scalar"},
	})
}

// TestContribTensorInfer: com.microsoft Range without delta, Unique,
// UnfoldTensor and TorchEmbedding, and their refusals.
func TestContribTensorInfer(t *testing.T) {
	const ms = "com.microsoft::"
	scalar := func(dt DType, v int64) faIn { return faKnown(&Tensor{DType: dt, Ints: []int64{v}, HasData: true}) }
	runFAOutputs(t, "range without delta", ms+"Range", 1, []faIn{scalar(Int64, 2), scalar(Int64, 9)}, nil, []TypeInfo{{DType: Int64, Shape: faShape(7)}})
	runFAOutputs(t, "range with delta", ms+"Range", 1, []faIn{scalar(Int64, 0), scalar(Int64, 9), scalar(Int64, 3)}, nil, []TypeInfo{{DType: Int64, Shape: faShape(3)}})
	vals := faKnown(&Tensor{DType: Int64, Dims: []int64{6}, Ints: []int64{2, 1, 1, 3, 4, 3}, HasData: true})
	runFAOutputs(t, "unique of constants", ms+"Unique", 1, []faIn{vals}, nil,
		[]TypeInfo{{DType: Int64, Shape: faShape(4)}, {DType: Int64, Shape: faShape(6)}, {DType: Int64, Shape: faShape(4)}})
	outs, err := runFAOp(t, ms+"Unique", 1, []faIn{faInput(Float32, faShape("n"))}, nil, 3)
	if err != nil {
		t.Fatal(err)
	}
	if u := outs[0].Shape.Dims[0]; u.IsKnown() || !strings.HasPrefix(u.Sym, "?unique") || !outs[1].Shape.Equal(faShape("n")) || !outs[2].Shape.Equal(outs[0].Shape) {
		t.Errorf("unique of an input: %s, %s, %s; want [?unique], [n], [?unique]", outs[0].Shape, outs[1].Shape, outs[2].Shape)
	}
	unfold := []*Attribute{IntAttr("dim", 1), IntAttr("size", 4), IntAttr("step", 2)}
	runFAOutputs(t, "unfold", ms+"UnfoldTensor", 1, []faIn{faInput(Float16, faShape("b", 10, 3))}, unfold, []TypeInfo{{DType: Float16, Shape: faShape("b", 4, 3, 4)}})
	runFAOutputs(t, "unfold the last dim", ms+"UnfoldTensor", 1, []faIn{faInput(Float32, faShape(2, 16))}, []*Attribute{IntAttr("size", 16)},
		[]TypeInfo{{DType: Float32, Shape: faShape(2, 1, 16)}})
	w := faInput(Float32, faShape(30522, 768))
	runFAOutputs(t, "torch embedding", ms+"TorchEmbedding", 1, []faIn{w, faInput(Int64, faShape("b", "s")), scalar(Int64, 0)}, nil,
		[]TypeInfo{{DType: Float32, Shape: faShape("b", "s", 768)}})
	checkInferErrors(t, []inferErrCase{
		{op: ms + "Unique", ins: []faIn{faInput(Float32, faShape(2, 3))}, nout: 3, want: "must be 1-D"},
		{op: ms + "UnfoldTensor", ins: []faIn{faInput(Float32, faShape(2, 3))}, attrs: []*Attribute{IntAttr("size", 4)}, want: "fewer than the window size 4"},
		{op: ms + "UnfoldTensor", ins: []faIn{faInput(Float32, faShape(2, 3))}, attrs: []*Attribute{IntAttr("size", 2), IntAttr("step", 0)}, want: "must be positive"},
		{op: ms + "UnfoldTensor", ins: []faIn{faInput(Float32, faShape(2, 3))}, attrs: []*Attribute{IntAttr("size", 2), IntAttr("dim", 2)}, want: "out of range"},
		{op: ms + "TorchEmbedding", ins: []faIn{faInput(Float32, faShape(8)), faInput(Int64, faShape(2))}, want: "weight has rank 1"},
		{op: ms + "TorchEmbedding", ins: []faIn{w, faInput(Float32, faShape(2))}, want: "must be integers"},
	})
}
