package ir

import "testing"

// bertEmbedIns are EmbedLayerNormalization's inputs as onnxruntime's
// transformers optimizer writes them for BERT-base: int32 ids [B, S], the
// fp32 word [30522, 768], position [512, 768] and segment [2, 768]
// tables, gamma and beta [768], and the int32 mask [B, S].
func bertEmbedIns(dt DType) []faIn {
	ids := faInput(Int32, faShape("batch", "seq"))
	return []faIn{ids, ids, faInput(dt, faShape(30522, 768)), faInput(dt, faShape(512, 768)), faInput(dt, faShape(2, 768)),
		faInput(dt, faShape(768)), faInput(dt, faShape(768)), ids}
}

func TestEmbedLayerNormOutputs(t *testing.T) {
	const op = "com.microsoft::EmbedLayerNormalization"
	bsh := faShape("batch", "seq", 768)
	runFAOutputs(t, "bert fp32, three outputs", op, 17, bertEmbedIns(Float32), []*Attribute{FloatAttr("epsilon", 1e-12)},
		[]TypeInfo{{DType: Float32, Shape: bsh}, {DType: Int32, Shape: faShape("batch")}, {DType: Float32, Shape: bsh}})
	runFAOutputs(t, "fp16 tables give an fp16 output", op, 17, bertEmbedIns(Float16), nil,
		[]TypeInfo{{DType: Float16, Shape: bsh}, {DType: Int32, Shape: faShape("batch")}})
	// DistilBERT: no segment ids or table, no mask; position_ids [1, S].
	ids := faInput(Int32, faShape(4, 128))
	distil := []faIn{ids, faOmitted, faInput(Float32, faShape(30522, 768)), faInput(Float32, faShape(512, 768)), faOmitted,
		faInput(Float32, faShape(768)), faInput(Float32, faShape(768)), faOmitted, faInput(Int32, faShape(1, 128))}
	runFAOutputs(t, "distilbert without segments", op, 17, distil, nil, []TypeInfo{{DType: Float32, Shape: faShape(4, 128, 768)}})
	// A symbolic table width takes the width from gamma.
	symbolic := bertEmbedIns(Float32)
	symbolic[2] = faInput(Float32, faShape("vocab", "hidden"))
	symbolic[3] = faInput(Float32, faShape(512, "hidden"))
	symbolic[4] = faInput(Float32, faShape(2, "hidden"))
	runFAOutputs(t, "width from gamma", op, 17, symbolic, nil, []TypeInfo{{DType: Float32, Shape: bsh}})
	unranked := bertEmbedIns(Float32)
	unranked[0] = faInput(Int32, Unranked())
	unranked[1], unranked[7] = faOmitted, faOmitted
	runFAOutputs(t, "unranked ids", op, 17, unranked, nil, []TypeInfo{{DType: Float32, Shape: Unranked()}})
}

func TestEmbedLayerNormRefusals(t *testing.T) {
	const op = "com.microsoft::EmbedLayerNormalization"
	with := func(slot int, in faIn) []faIn {
		ins := bertEmbedIns(Float32)
		ins[slot] = in
		return ins
	}
	runFATypeCases(t, []faTypeCase{
		{name: "ids of rank 3", op: op, opset: 17, ins: with(0, faInput(Int32, faShape(1, 2, 3))), wantErr: "input_ids has rank 3"},
		{name: "segment ids of another length", op: op, opset: 17,
			ins: append([]faIn{faInput(Int32, faShape(2, 128)), faInput(Int32, faShape(2, 64))}, bertEmbedIns(Float32)[2:7]...), wantErr: "one shape"},
		{name: "mask of rank 1", op: op, opset: 17, ins: with(7, faInput(Int32, faShape(8))), wantErr: "mask has rank 1"},
		{name: "position table narrower", op: op, opset: 17, ins: with(3, faInput(Float32, faShape(512, 512))), wantErr: "position_embedding is 512 wide"},
		{name: "segment table wider", op: op, opset: 17, ins: with(4, faInput(Float32, faShape(2, 1024))), wantErr: "segment_embedding is 1024 wide"},
		{name: "word table of rank 1", op: op, opset: 17, ins: with(2, faInput(Float32, faShape(768))), wantErr: "word_embedding has rank 1"},
		{name: "gamma of the wrong width", op: op, opset: 17, ins: with(5, faInput(Float32, faShape(1024))), wantErr: "gamma has 1024 entries"},
		{name: "beta of rank 2", op: op, opset: 17, ins: with(6, faInput(Float32, faShape(1, 768))), wantErr: "beta has rank 2"},
		{name: "position ids longer than the sequence", op: op, opset: 17,
			ins: append(append([]faIn{faInput(Int32, faShape(1, 128)), faOmitted}, bertEmbedIns(Float32)[2:7]...), faOmitted, faInput(Int32, faShape(1, 256))), wantErr: "position_ids cover 256"},
		{name: "too few inputs", op: op, opset: 17, ins: bertEmbedIns(Float32)[:6], wantErr: "input"},
	})
}

// qbertEmbedIns is bertEmbedIns as onnxruntime's dynamic quantizer writes
// it for QEmbedLayerNormalization: 8-bit tables, gamma and beta, then
// their five scales and five zero points.
func qbertEmbedIns(table DType) []faIn {
	ins := bertEmbedIns(Float32)
	for slot := embedWord; slot <= embedBeta; slot++ {
		ins[slot].dt = table
	}
	for range 5 {
		ins = append(ins, faInput(Float32, faShape()))
	}
	for range 5 {
		ins = append(ins, faInput(table, faShape()))
	}
	return ins
}

func TestQEmbedLayerNorm(t *testing.T) {
	const op = "com.microsoft::QEmbedLayerNormalization"
	bsh := faShape("batch", "seq", 768)
	for _, dt := range []DType{Uint8, Int8} {
		runFAOutputs(t, "bert "+dt.String(), op, 17, qbertEmbedIns(dt), nil,
			[]TypeInfo{{DType: Float32, Shape: bsh}, {DType: Int32, Shape: faShape("batch")}})
	}
	with := func(slot int, in faIn) []faIn {
		ins := qbertEmbedIns(Uint8)
		ins[slot] = in
		return ins
	}
	runFATypeCases(t, []faTypeCase{
		{name: "float word table", op: op, opset: 17, ins: with(embedWord, faInput(Float32, faShape(30522, 768))), wantErr: "word_embedding_quant is float32"},
		{name: "float gamma", op: op, opset: 17, ins: with(embedGamma, faInput(Float32, faShape(768))), wantErr: "gamma_quant is float32"},
		{name: "gamma of the wrong width", op: op, opset: 17, ins: with(embedGamma, faInput(Uint8, faShape(1024))), wantErr: "gamma has 1024 entries"},
		{name: "mask of rank 1", op: op, opset: 17, ins: with(embedMask, faInput(Int32, faShape(8))), wantErr: "mask has rank 1"},
		{name: "no zero points", op: op, opset: 17, ins: qbertEmbedIns(Uint8)[:13], wantErr: "input"},
	})
}
