package ir

import "testing"

// runOutputs checks the dtype and shape of every output of one node.
func runFAOutputs(t *testing.T, name, op string, opset int64, ins []faIn, attrs []*Attribute, want []TypeInfo) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		outs, err := runFAOp(t, op, opset, ins, attrs, len(want))
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range want {
			if o := outs[i]; o.DType != w.DType || !o.Shape.Equal(w.Shape) {
				t.Errorf("output %d: got %s%s, want %s%s", i, o.DType, o.Shape, w.DType, w.Shape)
			}
		}
	})
}

func TestNormTypes(t *testing.T) {
	f32, f16 := Float32, Float16
	x := faShape("N", 64, 56, 56)
	c := faShape(64)
	bnIns := []faIn{faInput(f16, x), faInput(f16, c), faInput(f16, c), faInput(f32, c), faInput(f32, c)}
	// Inference-mode BN: one output like X.
	runFAOutputs(t, "bn inference", "BatchNormalization", 15, bnIns, nil, []TypeInfo{{DType: f16, Shape: x}})
	// Training mode (opset 15): running mean/var typed like the mean input (T2).
	runFAOutputs(t, "bn training", "BatchNormalization", 15, bnIns, []*Attribute{IntAttr("training_mode", 1)},
		[]TypeInfo{{DType: f16, Shape: x}, {DType: f32, Shape: c}, {DType: f32, Shape: c}})
	// Opset 9: five outputs, statistics shaped [C].
	bn9 := []faIn{faInput(f32, x), faInput(f32, c), faInput(f32, c), faInput(f32, c), faInput(f32, c)}
	runFAOutputs(t, "bn opset 9 five outputs", "BatchNormalization", 9, bn9, nil,
		[]TypeInfo{{DType: f32, Shape: x}, {DType: f32, Shape: c}, {DType: f32, Shape: c}, {DType: f32, Shape: c}, {DType: f32, Shape: c}})
	runFAOutputs(t, "instance norm", "InstanceNormalization", 6, []faIn{faInput(f32, x), faInput(f32, c), faInput(f32, c)}, nil, []TypeInfo{{DType: f32, Shape: x}})
	runFAOutputs(t, "group norm", "GroupNormalization", 18, []faIn{faInput(f32, x), faInput(f32, faShape(8)), faInput(f32, faShape(8))}, []*Attribute{IntAttr("num_groups", 8)}, []TypeInfo{{DType: f32, Shape: x}})
	// LayerNormalization over the last axis: statistics [b, s, 1] in stash_type (float32).
	bsh := faShape("b", "s", 768)
	runFAOutputs(t, "layer norm", "LayerNormalization", 17, []faIn{faInput(f16, bsh), faInput(f16, faShape(768)), faInput(f16, faShape(768))}, nil,
		[]TypeInfo{{DType: f16, Shape: bsh}, {DType: f32, Shape: faShape("b", "s", 1)}, {DType: f32, Shape: faShape("b", "s", 1)}})
	runFAOutputs(t, "layer norm axis 1", "LayerNormalization", 17, []faIn{faInput(f32, bsh), faInput(f32, faShape("s", 768))}, []*Attribute{IntAttr("axis", 1)},
		[]TypeInfo{{DType: f32, Shape: bsh}, {DType: f32, Shape: faShape("b", 1, 1)}})
	runFAOutputs(t, "lp norm", "LpNormalization", 1, []faIn{faInput(f32, x)}, []*Attribute{IntAttr("axis", 1)}, []TypeInfo{{DType: f32, Shape: x}})
	runFAOutputs(t, "mvn", "MeanVarianceNormalization", 13, []faIn{faInput(f32, x)}, nil, []TypeInfo{{DType: f32, Shape: x}})
	runFAOutputs(t, "lrn", "LRN", 13, []faIn{faInput(f32, x)}, []*Attribute{IntAttr("size", 5)}, []TypeInfo{{DType: f32, Shape: x}})
	// Dropout's mask: the data type before opset 10, bool after.
	runFAOutputs(t, "dropout 7 mask", "Dropout", 7, []faIn{faInput(f32, x)}, nil, []TypeInfo{{DType: f32, Shape: x}, {DType: f32, Shape: x}})
	runFAOutputs(t, "dropout 13 mask", "Dropout", 13, []faIn{faInput(f16, x), faInput(f32, faShape()), faInput(Bool, faShape())}, nil,
		[]TypeInfo{{DType: f16, Shape: x}, {DType: Bool, Shape: x}})
	// ONNX Runtime fused norms.
	runFAOutputs(t, "skip layer norm", "com.microsoft::SkipLayerNormalization", 17,
		[]faIn{faInput(f16, bsh), faInput(f16, bsh), faInput(f16, faShape(768)), faInput(f16, faShape(768)), faInput(f16, faShape(768))}, nil,
		[]TypeInfo{{DType: f16, Shape: bsh}, {DType: f32, Shape: faShape("b", "s", 1)}, {DType: f32, Shape: faShape("b", "s", 1)}, {DType: f16, Shape: bsh}})
	runFAOutputs(t, "simplified layer norm", "com.microsoft::SimplifiedLayerNormalization", 17,
		[]faIn{faInput(f16, bsh), faInput(f16, faShape(768))}, nil, []TypeInfo{{DType: f16, Shape: bsh}, {DType: f32, Shape: faShape("b", "s", 1)}})
	runFAOutputs(t, "simplified layer norm default domain", "SimplifiedLayerNormalization", 17,
		[]faIn{faInput(f16, bsh), faInput(f16, faShape(768))}, nil, []TypeInfo{{DType: f16, Shape: bsh}})

	runFATypeCases(t, []faTypeCase{
		{name: "layer norm bad axis", op: "LayerNormalization", opset: 17, ins: []faIn{faInput(f32, faShape(2, 3)), faInput(f32, faShape(3))}, attrs: []*Attribute{IntAttr("axis", 2)}, wantErr: "axis 2 out of range"},
	})
}

func TestQuantTypes(t *testing.T) {
	f32 := Float32
	x := faShape("N", 16)
	runFATypeCases(t, []faTypeCase{
		{name: "quantize default uint8", op: "QuantizeLinear", opset: 13, ins: []faIn{faInput(f32, x), faInput(f32, faShape())}, wantDT: Uint8, want: x},
		{name: "quantize int8 zero point", op: "QuantizeLinear", opset: 13, ins: []faIn{faInput(f32, x), faInput(f32, faShape()), faInput(Int8, faShape())}, wantDT: Int8, want: x},
		{name: "quantize output_dtype", op: "QuantizeLinear", opset: 21, ins: []faIn{faInput(f32, x), faInput(f32, faShape())}, attrs: []*Attribute{IntAttr("output_dtype", int64(Float8E4M3FN))}, wantDT: Float8E4M3FN, want: x},
		{name: "dequantize scale type", op: "DequantizeLinear", opset: 19, ins: []faIn{faInput(Int8, x), faInput(Float16, faShape())}, wantDT: Float16, want: x},
		{name: "dequantize opset 10", op: "DequantizeLinear", opset: 10, ins: []faIn{faInput(Uint8, x), faInput(f32, faShape()), faInput(Uint8, faShape())}, wantDT: f32, want: x},
	})
	runFAOutputs(t, "dynamic quantize", "DynamicQuantizeLinear", 11, []faIn{faInput(f32, x)}, nil,
		[]TypeInfo{{DType: Uint8, Shape: x}, {DType: f32, Shape: faShape()}, {DType: Uint8, Shape: faShape()}})
}

func TestRandomTypes(t *testing.T) {
	f32 := Float32
	runFATypeCases(t, []faTypeCase{
		{name: "random normal", op: "RandomNormal", opset: 1, attrs: []*Attribute{IntsAttr("shape", 2, 3)}, wantDT: f32, want: faShape(2, 3)},
		{name: "random uniform dtype", op: "RandomUniform", opset: 1, attrs: []*Attribute{IntsAttr("shape", 4), IntAttr("dtype", int64(Float64))}, wantDT: Float64, want: faShape(4)},
		{name: "random no shape", op: "RandomUniform", opset: 1, wantErr: "shape"},
		{name: "uniform like", op: "RandomUniformLike", opset: 1, ins: []faIn{faInput(Float16, faShape("b", 3))}, wantDT: Float16, want: faShape("b", 3)},
		{name: "normal like dtype", op: "RandomNormalLike", opset: 1, ins: []faIn{faInput(Int64, faShape(3))}, attrs: []*Attribute{IntAttr("dtype", int64(f32))}, wantDT: f32, want: faShape(3)},
		{name: "bernoulli", op: "Bernoulli", opset: 15, ins: []faIn{faInput(Float64, faShape(3, 4))}, wantDT: Float64, want: faShape(3, 4)},
		{name: "eyelike", op: "EyeLike", opset: 9, ins: []faIn{faInput(Int32, faShape(3, 4))}, attrs: []*Attribute{IntAttr("k", 1)}, wantDT: Int32, want: faShape(3, 4)},
		{name: "eyelike rank 3", op: "EyeLike", opset: 9, ins: []faIn{faInput(f32, faShape(1, 3, 4))}, wantErr: "rank 3"},
		{name: "multinomial", op: "Multinomial", opset: 7, ins: []faIn{faInput(f32, faShape("b", 10))}, attrs: []*Attribute{IntAttr("sample_size", 5)}, wantDT: Int32, want: faShape("b", 5)},
	})
}
