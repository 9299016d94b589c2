package ir

import "testing"

// TestPositionBiasInfer: T5's RelativePositionBias at a 512-token encoder
// (32 buckets, 8 heads), its lengths known or a symbol's, and WavLM's
// GatedRelativePositionBias (12 heads of 64, D 8), padded and packed.
func TestPositionBiasInfer(t *testing.T) {
	const ms = "com.microsoft::"
	table := faInput(Float32, faShape(32, 8))
	runFAOutputs(t, "known lengths", ms+"RelativePositionBias", 1, []faIn{table, faKnown(faInts(nil, 512)), faKnown(faInts([]int64{1}, 512))},
		[]*Attribute{IntAttr("max_distance", 128), IntAttr("is_bidirectional", 1)}, []TypeInfo{{DType: Float32, Shape: faShape(1, 8, 512, 512)}})
	x := faShape("b", "s", 768)
	gated := []faIn{faInput(Float16, x), faInput(Float16, faShape(768)), faInput(Float16, faShape(1, 12, "s", "s")),
		faInput(Float16, faShape(64, 8)), faInput(Float16, faShape(8)), faInput(Float16, faShape(1, 12, 1, 1))}
	runFAOutputs(t, "gated", ms+"GatedRelativePositionBias", 1, gated, []*Attribute{IntAttr("num_heads", 12)},
		[]TypeInfo{{DType: Float16, Shape: faShape("b", 12, "s", "s")}})
	packed := append([]faIn{faInput(Float16, faShape("tokens", 768))}, gated[1:]...)
	packed = append(packed, faInput(Int32, faShape("b", "s")))
	runFAOutputs(t, "gated packed", ms+"GatedRelativePositionBias", 1, packed, []*Attribute{IntAttr("num_heads", 12)},
		[]TypeInfo{{DType: Float16, Shape: faShape("b", 12, "s", "s")}})
	runFATypeCases(t, []faTypeCase{
		{name: "table rank", op: ms + "RelativePositionBias", opset: 1, ins: []faIn{faInput(Float32, faShape(32)), faKnown(faInts(nil, 4)), faKnown(faInts(nil, 4))},
			wantErr: "bias_table has rank 1"},
		{name: "gated without heads", op: ms + "GatedRelativePositionBias", opset: 1, ins: gated, wantErr: "num_heads 0"},
		{name: "gated rel_pos rank", op: ms + "GatedRelativePositionBias", opset: 1, attrs: []*Attribute{IntAttr("num_heads", 12)},
			ins: append(append([]faIn{}, gated[:2]...), append([]faIn{faInput(Float16, faShape(12, 4, 4))}, gated[3:]...)...), wantErr: "rel_pos has rank 3"},
	})
}
