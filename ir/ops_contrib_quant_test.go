package ir

import "testing"

// nbitsAttrs are the attributes onnxruntime-genai's builder writes on a
// MatMulNBits node.
func nbitsAttrs(k, n, bits, blockSize int64) []*Attribute {
	return []*Attribute{IntAttr("K", k), IntAttr("N", n), IntAttr("bits", bits), IntAttr("block_size", blockSize), IntAttr("accuracy_level", 4)}
}

func TestMatMulNBitsTypes(t *testing.T) {
	const ms = "com.microsoft::MatMulNBits"
	f16, u8 := Float16, Uint8
	// LLaMA-7B q_proj, int4, block 32: B [4096, 4096/32, 32·4/8] = [4096, 128, 16].
	b4 := faInput(u8, faShape(4096, 128, 16))
	s4 := faInput(f16, faShape(4096*128))
	attrs := nbitsAttrs(4096, 4096, 4, 32)
	runFATypeCases(t, []faTypeCase{
		{name: "decode step", op: ms, opset: 17, ins: []faIn{faInput(f16, faShape("batch", 1, 4096)), b4, s4}, attrs: attrs,
			wantDT: f16, want: faShape("batch", 1, 4096)},
		{name: "prefill symbolic seq", op: ms, opset: 17, ins: []faIn{faInput(f16, faShape(1, "seq", 4096)), b4, s4}, attrs: attrs,
			wantDT: f16, want: faShape(1, "seq", 4096)},
		{name: "2-D scales, packed zero points, bias", op: ms, opset: 17,
			ins:   []faIn{faInput(Float32, faShape(8, 4096)), b4, faInput(Float32, faShape(4096, 128)), faInput(u8, faShape(4096, 64)), faOmitted, faInput(Float32, faShape(4096))},
			attrs: attrs, wantDT: Float32, want: faShape(8, 4096)},
		// N=11008 (the MLP's up projection), int8, block 128: B [11008, 32, 128].
		{name: "int8 block 128 N from attribute", op: ms, opset: 17,
			ins:   []faIn{faInput(BFloat16, faShape(2, 3, 4096)), faInput(u8, faShape(11008, 32, 128)), faInput(BFloat16, faShape(11008, 32))},
			attrs: nbitsAttrs(4096, 11008, 8, 128), wantDT: BFloat16, want: faShape(2, 3, 11008)},
		// K=100 is not a multiple of 32: ceil(100/32) = 4 blocks.
		{name: "ragged last block", op: ms, opset: 17,
			ins:   []faIn{faInput(f16, faShape(1, 100)), faInput(u8, faShape(64, 4, 16)), faInput(f16, faShape(64*4))},
			attrs: nbitsAttrs(100, 64, 4, 32), wantDT: f16, want: faShape(1, 64)},
		{name: "1-D A", op: ms, opset: 17, ins: []faIn{faInput(f16, faShape(4096)), b4, s4}, attrs: attrs, wantDT: f16, want: faShape(4096)},
		{name: "no N attribute: B's first dim", op: ms, opset: 17, ins: []faIn{faInput(f16, faShape(1, 4096)), b4, s4},
			attrs: []*Attribute{IntAttr("K", 4096), IntAttr("block_size", 32)}, wantDT: f16, want: faShape(1, 4096)},
		{name: "unranked A", op: ms, opset: 17, ins: []faIn{faInput(f16, Unranked()), b4, s4}, attrs: attrs, wantDT: f16, want: Unranked()},

		{name: "K disagrees with A", op: ms, opset: 17, ins: []faIn{faInput(f16, faShape(1, 4000)), b4, s4}, attrs: attrs, wantErr: "K=4096"},
		{name: "B too small for int8", op: ms, opset: 17, ins: []faIn{faInput(f16, faShape(1, 4096)), b4, s4}, attrs: nbitsAttrs(4096, 4096, 8, 32), wantErr: "B holds"},
		{name: "scales count", op: ms, opset: 17, ins: []faIn{faInput(f16, faShape(1, 4096)), b4, faInput(f16, faShape(4096, 64))}, attrs: attrs, wantErr: "scales have"},
		{name: "bits 1", op: ms, opset: 17, ins: []faIn{faInput(f16, faShape(1, 4096)), b4, s4}, attrs: nbitsAttrs(4096, 4096, 1, 32), wantErr: "bits=1"},
		{name: "block 24", op: ms, opset: 17, ins: []faIn{faInput(f16, faShape(1, 4096)), b4, s4}, attrs: nbitsAttrs(4096, 4096, 4, 24), wantErr: "block_size=24"},
		{name: "scalar A", op: ms, opset: 17, ins: []faIn{faInput(f16, faShape()), b4, s4}, attrs: []*Attribute{IntAttr("N", 4096)}, wantErr: "rank"},
	})
}

func TestGatherBlockQuantizedTypes(t *testing.T) {
	const gbq = "com.microsoft::GatherBlockQuantized"
	f16, u8 := Float16, Uint8
	ids := faInput(Int64, faShape("batch", "seq"))
	// A 32000×4096 embedding table, uint8-packed int4: [32000, 2048] bytes,
	// scales [32000, 4096/32].
	table := faInput(u8, faShape(32000, 2048))
	scales := faInput(f16, faShape(32000, 128))
	attrs := []*Attribute{IntAttr("bits", 4), IntAttr("block_size", 32), IntAttr("gather_axis", 0), IntAttr("quantize_axis", 1)}
	runFATypeCases(t, []faTypeCase{
		{name: "uint8 int4 embedding unpacks the last dim", op: gbq, opset: 17, ins: []faIn{table, ids, scales}, attrs: attrs,
			wantDT: f16, want: faShape("batch", "seq", 4096)},
		{name: "uint8 int8 keeps the last dim", op: gbq, opset: 17, ins: []faIn{faInput(u8, faShape(32000, 4096)), ids, scales, faInput(u8, faShape(32000, 128))},
			attrs: []*Attribute{IntAttr("bits", 8), IntAttr("block_size", 32)}, wantDT: f16, want: faShape("batch", "seq", 4096)},
		{name: "int4 data counts elements", op: gbq, opset: 17, ins: []faIn{faInput(Int4, faShape(32000, 4096)), ids, faInput(Float32, faShape(32000, 32))},
			wantDT: Float32, want: faShape("batch", "seq", 4096)},
		{name: "int4 gathered on axis 1", op: gbq, opset: 17, ins: []faIn{faInput(Uint4, faShape(64, 1024)), faInput(Int32, faShape(3)), faInput(f16, faShape(1, 1024))},
			attrs: []*Attribute{IntAttr("gather_axis", 1), IntAttr("quantize_axis", 0), IntAttr("block_size", 64)}, wantDT: f16, want: faShape(64, 3)},
		{name: "scalar index", op: gbq, opset: 17, ins: []faIn{table, faInput(Int64, faShape()), scales}, attrs: attrs, wantDT: f16, want: faShape(4096)},

		{name: "uint8 on axis 1", op: gbq, opset: 17, ins: []faIn{table, ids, scales}, attrs: []*Attribute{IntAttr("gather_axis", 1)}, wantErr: "axis 0"},
		{name: "bits 3", op: gbq, opset: 17, ins: []faIn{table, ids, scales}, attrs: []*Attribute{IntAttr("bits", 3)}, wantErr: "bits=3"},
		{name: "block 100", op: gbq, opset: 17, ins: []faIn{table, ids, scales}, attrs: []*Attribute{IntAttr("block_size", 100)}, wantErr: "block_size=100"},
		{name: "axis out of range", op: gbq, opset: 17, ins: []faIn{faInput(Int4, faShape(8, 8)), ids, scales}, attrs: []*Attribute{IntAttr("gather_axis", 2)}, wantErr: "out of range"},
	})
}

// TestDequantizeLinearBlocked: opset 21's blocked DequantizeLinear (an
// int4 weight with one scale per 32 values along axis 0) keeps the input's
// shape and takes the scale's dtype.
func TestDequantizeLinearBlockedQuant(t *testing.T) {
	runFATypeCases(t, []faTypeCase{
		{name: "int4 blocked", op: "DequantizeLinear", opset: 21,
			ins:   []faIn{faInput(Int4, faShape(4096, 11008)), faInput(Float16, faShape(128, 11008)), faInput(Int4, faShape(128, 11008))},
			attrs: []*Attribute{IntAttr("axis", 0), IntAttr("block_size", 32)}, wantDT: Float16, want: faShape(4096, 11008)},
		{name: "uint4 blocked no zero point", op: "DequantizeLinear", opset: 21,
			ins:   []faIn{faInput(Uint4, faShape(64, 256)), faInput(Float32, faShape(64, 2))},
			attrs: []*Attribute{IntAttr("axis", 1), IntAttr("block_size", 128)}, wantDT: Float32, want: faShape(64, 256)},
	})
}

// TestNBitsLayout: the packed sizes the cost rule reads B by.
func TestNBitsLayout(t *testing.T) {
	for _, tc := range []struct {
		k, bits, bs, blocks, blob int64
		ok                        bool
	}{
		{4096, 4, 32, 128, 16, true},    // 4096/32 blocks of 32·4/8 bytes
		{4096, 8, 128, 32, 128, true},   // 4096/128 blocks of 128 bytes
		{100, 4, 32, 4, 16, true},       // ceil(100/32) = 4
		{4096, 3, 64, 64, 24, true},     // 64·3/8 = 24
		{4096, 2, 16, 256, 4, true},     // 16·2/8 = 4
		{0, 4, 32, 0, 0, false},         // no K
		{4096, 9, 32, 0, 0, false},      // bits past 8
		{4096, 4, 0, 0, 0, false},       // no block size
		{4096, 4, 1 << 60, 0, 0, false}, // absurd block size: refused, not wrapped
	} {
		blocks, blob, ok := NBitsLayout(tc.k, tc.bits, tc.bs)
		if ok != tc.ok || blocks != tc.blocks || blob != tc.blob {
			t.Errorf("NBitsLayout(%d, %d, %d) = %d, %d, %v; want %d, %d, %v", tc.k, tc.bits, tc.bs, blocks, blob, ok, tc.blocks, tc.blob, tc.ok)
		}
	}
}

func TestMatMulBnb4Types(t *testing.T) {
	const op = "com.microsoft::MatMulBnb4"
	kn := []*Attribute{IntAttr("K", 4096), IntAttr("N", 11008), IntAttr("block_size", 64), IntAttr("quant_type", 1)}
	ins := func(a Shape) []faIn {
		return []faIn{faInput(Float16, a), faInput(Uint8, faShape(4096*11008/2)), faInput(Float16, faShape(4096*11008/64))}
	}
	runFAOutputs(t, "transB", op, 1, ins(faShape("b", "s", 4096)), kn, []TypeInfo{{DType: Float16, Shape: faShape("b", "s", 11008)}})
	runFAOutputs(t, "no transB", op, 1, ins(faShape("b", 11008)), append(kn, IntAttr("transB", 0)), []TypeInfo{{DType: Float16, Shape: faShape("b", 4096)}})
	runFATypeCases(t, []faTypeCase{
		{name: "no K", op: op, opset: 1, attrs: []*Attribute{IntAttr("N", 8)}, ins: ins(faShape(1, 4096)), wantErr: "K and N"},
		{name: "inner size", op: op, opset: 1, attrs: kn, ins: ins(faShape(1, 4000)), wantErr: "last dim is 4000"},
	})
}
