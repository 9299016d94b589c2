package ir

import "testing"

// TestNGramOpsInfer: Engram's n-gram hashes (max order 3, 4 heads an
// order: 8 hash heads, 2 tokens of history) plain and packed,
// NGramRepeatBlock and the packed causal convolution, and their refusals.
func TestNGramOpsInfer(t *testing.T) {
	const ms = "com.microsoft::"
	attrs := []*Attribute{IntAttr("max_ngram_size", 3), IntAttr("n_head_per_ngram", 4), IntAttr("pad_id", 0)}
	ids := faInput(Int64, faShape("b", "s"))
	mult, vocab := faInput(Int64, faShape(3)), faInput(Int64, faShape(8))
	runFAOutputs(t, "hash ids", ms+"NGramHashMapping", 1, []faIn{ids, mult, vocab, faInput(Int64, faShape("b", 2))}, attrs,
		[]TypeInfo{{DType: Int64, Shape: faShape("b", "s", 8)}, {DType: Int64, Shape: faShape("b", 2)}})
	cu := faInput(Int32, faShape(5))
	runFAOutputs(t, "packed hash ids", ms+"VarlenNGramHashMapping", 1, []faIn{faInput(Int32, faShape("t")), faInput(Int32, faShape(3)), faInput(Int32, faShape(8)), cu}, attrs,
		[]TypeInfo{{DType: Int32, Shape: faShape("t", 8)}, {DType: Int32, Shape: faShape(4, 2)}, {DType: Int32, Shape: faShape(4, 2)}})
	scores := faInput(Float32, faShape("b", 50257))
	runFAOutputs(t, "no repeat", ms+"NGramRepeatBlock", 1, []faIn{ids, scores}, []*Attribute{IntAttr("ngram_size", 3)},
		[]TypeInfo{{DType: Float32, Shape: faShape("b", 50257)}})
	f16 := Float16
	x, w := faInput(f16, faShape("t", 1024)), faInput(f16, faShape(1024, 1, 4))
	state := faInput(f16, faShape(4, 1024, 3))
	runFAOutputs(t, "packed causal conv", ms+"VarlenCausalConvWithState", 1, []faIn{x, w, cu, faOmitted, state}, nil,
		[]TypeInfo{{DType: f16, Shape: faShape("t", 1024)}, {DType: f16, Shape: faShape(4, 1024, 3)}})
	runFAOutputs(t, "packed causal conv, state updates", ms+"VarlenCausalConvWithState", 1,
		[]faIn{x, w, cu, faInput(f16, faShape(1024)), faInput(f16, faShape(4, 1024, 6)), faInput(Int32, faShape(4))},
		[]*Attribute{IntAttr("dilation", 2), IntAttr("state_update_capacity", 2)},
		[]TypeInfo{{DType: f16, Shape: faShape("t", 1024)}, {DType: f16, Shape: faShape(4, 1024, 6)}, {DType: f16, Shape: faShape(4, 2, 1024)}})
	checkInferErrors(t, []inferErrCase{
		{op: ms + "NGramHashMapping", ins: []faIn{ids, mult, vocab}, attrs: []*Attribute{IntAttr("max_ngram_size", 1), IntAttr("n_head_per_ngram", 4)}, want: "max_ngram_size 1"},
		{op: ms + "NGramHashMapping", ins: []faIn{ids, faInput(Int64, faShape(2)), vocab}, attrs: attrs, want: "multipliers has 2 elements"},
		{op: ms + "NGramHashMapping", ins: []faIn{ids, mult, faInput(Int64, faShape(6))}, attrs: attrs, want: "vocab_sizes has 6 elements"},
		{op: ms + "NGramHashMapping", ins: []faIn{faInput(Int64, faShape("s")), mult, vocab}, attrs: attrs, want: "input_ids has rank 1"},
		{op: ms + "NGramHashMapping", ins: []faIn{ids, mult, vocab, faInput(Int64, faShape("b", 3))}, attrs: attrs, want: "past_ids is [b,3]"},
		{op: ms + "NGramHashMapping", ins: []faIn{faInput(Float32, faShape(2, 5)), mult, vocab}, attrs: attrs, want: "input_ids is float32"},
		{op: ms + "VarlenNGramHashMapping", ins: []faIn{ids, mult, vocab, cu}, attrs: attrs, want: "input_ids has rank 2"},
		{op: ms + "VarlenNGramHashMapping", ins: []faIn{faInput(Int64, faShape("t")), mult, vocab, faInput(Int64, faShape(5))}, attrs: attrs, want: "cumulative_sequence_length is int64"},
		{op: ms + "VarlenNGramHashMapping", ins: []faIn{faInput(Int64, faShape("t")), mult, vocab, cu, faInput(Int64, faShape(3, 2))}, attrs: attrs, want: "past_ids is [3,2]"},
		{op: ms + "NGramRepeatBlock", ins: []faIn{ids, scores}, want: "ngram_size 0"},
		{op: ms + "NGramRepeatBlock", ins: []faIn{faInput(Int64, faShape(2, 7)), faInput(Float32, faShape(3, 100))}, attrs: []*Attribute{IntAttr("ngram_size", 3)}, want: "scores is [3,100]"},
		{op: ms + "VarlenCausalConvWithState", ins: []faIn{x, w, cu, faOmitted, faInput(f16, faShape(4, 1024, 2))}, nout: 2, want: "initial_state is [4,1024,2]"},
		{op: ms + "VarlenCausalConvWithState", ins: []faIn{x, faInput(f16, faShape(512, 1, 4)), cu, faOmitted, state}, nout: 2, want: "weight is [512,1,4]"},
		{op: ms + "VarlenCausalConvWithState", ins: []faIn{x, w, cu, faOmitted, state}, attrs: []*Attribute{IntAttr("state_update_capacity", 2)}, nout: 2, want: "capture_count is needed"},
		{op: ms + "VarlenCausalConvWithState", ins: []faIn{x, w, cu, faOmitted, state}, attrs: []*Attribute{IntAttr("state_update_capacity", 9)}, nout: 2, want: "0 to 8"},
		{op: ms + "VarlenCausalConvWithState", ins: []faIn{faInput(f16, faShape(2, "t", 1024)), w, cu, faOmitted, state}, nout: 2, want: "input has rank 3"},
	})
}
