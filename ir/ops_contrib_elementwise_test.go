package ir

import "testing"

// TestContribElementwiseInfer: onnxruntime's fused dropouts at a BERT
// layer's width and its complex products around an FFT, and their
// refusals.
func TestContribElementwiseInfer(t *testing.T) {
	const ms = "com.microsoft::"
	f16 := Float16
	x := faShape("b", 128, 768)
	bias := faInput(f16, faShape(768))
	ratio := faInput(Float32, faShape())
	train := faInput(Bool, faShape())
	runFAOutputs(t, "bias dropout", ms+"BiasDropout", 1, []faIn{faInput(f16, x), bias, faInput(f16, x), ratio, train}, nil,
		[]TypeInfo{{DType: f16, Shape: x}, {DType: Bool, Shape: x}})
	runFAOutputs(t, "bias dropout, bias of data's shape", ms+"BiasDropout", 1, []faIn{faInput(f16, faShape(4, 8)), faInput(f16, faShape(4, 8))}, nil,
		[]TypeInfo{{DType: f16, Shape: faShape(4, 8)}})
	// 4·128·768 = 393,216 elements, 12,288 uint32s; 33 elements need 2.
	runFAOutputs(t, "bitmask bias dropout", ms+"BitmaskBiasDropout", 1, []faIn{faInput(f16, faShape(4, 128, 768)), bias}, nil,
		[]TypeInfo{{DType: f16, Shape: faShape(4, 128, 768)}, {DType: Uint32, Shape: faShape(12288)}})
	runFAOutputs(t, "bitmask dropout, partial word", ms+"BitmaskDropout", 1, []faIn{faInput(Float32, faShape(3, 11)), ratio, train}, nil,
		[]TypeInfo{{DType: Float32, Shape: faShape(3, 11)}, {DType: Uint32, Shape: faShape(2)}})
	outs, err := runFAOp(t, ms+"BitmaskDropout", 1, []faIn{faInput(f16, x)}, nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	if d := outs[1].Shape.Dims; len(d) != 1 || d[0].IsKnown() {
		t.Errorf("bitmask of a symbolic batch: %s, want one symbolic dim", outs[1].Shape)
	}
	spec := faShape("b", 64, 33, 2)
	runFAOutputs(t, "complex mul", ms+"ComplexMul", 1, []faIn{faInput(Float32, spec), faInput(Float32, faShape(64, 33, 2))}, nil,
		[]TypeInfo{{DType: Float32, Shape: spec}})
	runFAOutputs(t, "complex mul conj", ms+"ComplexMulConj", 1, []faIn{faInput(f16, spec), faInput(f16, spec)}, nil,
		[]TypeInfo{{DType: f16, Shape: spec}})
	qs := faShape("b", 8, "s", 256)
	emb := faInput(Float32, faShape("b", "s", 256))
	runFAOutputs(t, "gemma rotary", ms+"GemmaRotaryEmbedding", 1, []faIn{emb, faInput(f16, qs), faInput(f16, qs), faInput(f16, qs), faInput(f16, qs)}, nil,
		[]TypeInfo{{DType: f16, Shape: qs}, {DType: f16, Shape: qs}})
	q4 := faInput(f16, faShape(2, 8, 16, 256))
	checkInferErrors(t, []inferErrCase{
		{op: ms + "GemmaRotaryEmbedding", ins: []faIn{faInput(Float32, faShape(2, 16)), q4, q4, q4, q4}, nout: 2, want: "emb has rank 2"},
		{op: ms + "GemmaRotaryEmbedding", ins: []faIn{faInput(Float32, faShape(2, 16, 256)), q4, q4, faInput(f16, faShape(2, 4, 16, 256)), q4}, nout: 2, want: "k is [2,4,16,256]"},
		{op: ms + "GemmaRotaryEmbedding", ins: []faIn{faInput(Float32, faShape(2, 16, 128)), q4, q4, q4, q4}, nout: 2, want: "emb must be q's"},
		{op: ms + "GemmaRotaryEmbedding", ins: []faIn{faInput(Float32, faShape(2, 16, 256)), faInput(f16, faShape(2, 16, 256)), q4, q4, q4}, nout: 2, want: "q has rank 3"},
		{op: ms + "BiasDropout", ins: []faIn{faInput(f16, faShape(4, 8)), faInput(f16, faShape(4))}, want: "last axis (8)"},
		{op: ms + "BitmaskBiasDropout", ins: []faIn{faInput(f16, faShape(4, 8)), faInput(f16, faShape(8)), faInput(f16, faShape(2, 8))}, want: "residual is [2,8]"},
		{op: ms + "BiasDropout", ins: []faIn{faInput(Int32, faShape(4, 8)), faInput(Int32, faShape(8))}, want: "float type"},
		{op: ms + "BiasDropout", ins: []faIn{faInput(f16, faShape()), faInput(f16, faShape(1))}, want: "scalar"},
		{op: ms + "BitmaskDropout", ins: []faIn{faInput(Int64, faShape(4))}, want: "float type"},
		{op: ms + "ComplexMul", ins: []faIn{faInput(Float32, faShape(4, 3)), faInput(Float32, faShape(4, 2))}, want: "A's last axis is 3"},
		{op: ms + "ComplexMulConj", ins: []faIn{faInput(Float32, faShape(4, 2)), faInput(Float32, faShape())}, want: "B is a scalar"},
		{op: ms + "ComplexMul", ins: []faIn{faInput(Float32, faShape(4, 2)), faInput(Float32, faShape(3, 2))}, want: "broadcast"},
	})
}
