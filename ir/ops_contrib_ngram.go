package ir

// onnxruntime's n-gram ops: NGramHashMapping and its packed twin
// VarlenNGramHashMapping (the Engram conditional memory's hash ids, 2026:
// for each n-gram order 2..max_ngram_size, n_head_per_ngram hashes of a
// token and its n−1 predecessors), and NGramRepeatBlock (generation's
// no-repeat-n-gram ban on the next token's scores). Shapes follow
// docs/ContribOperators.md.

func init() {
	ms := "com.microsoft"
	Register(
		// NGramHashMapping(input_ids [B, S], multipliers, vocab_sizes,
		// past_ids?, head_offsets?, eos_token_id?, segment_ids?) ->
		// hash_ids [B, S, H], present_ids? [B, n−1]
		&OpSchema{Domain: ms, Name: "NGramHashMapping", Family: FamilyElementwise, Since: 1, MinIn: 3, MaxIn: 7, MinOut: 1, MaxOut: 2,
			Infer: inferNGramHashMapping, Doc: "ONNX Runtime contrib op: Engram n-gram hash ids [B, S, (max_ngram_size−1)·n_head_per_ngram]; present_ids [B, max_ngram_size−1]"},
		// VarlenNGramHashMapping(input_ids [T], multipliers, vocab_sizes,
		// cumulative_sequence_length [B+1], past_ids?, head_offsets?,
		// eos_token_id?, segment_ids?, past_segment_ids?) -> hash_ids
		// [T, H], present_ids? [B, n−1], present_segment_ids? [B, n−1]
		&OpSchema{Domain: ms, Name: "VarlenNGramHashMapping", Family: FamilyElementwise, Since: 1, MinIn: 4, MaxIn: 9, MinOut: 1, MaxOut: 3,
			Infer: inferVarlenNGramHashMapping, Doc: "ONNX Runtime contrib op: NGramHashMapping over packed token-major sequences: hash_ids [T, (max_ngram_size−1)·n_head_per_ngram]"},
		// NGramRepeatBlock(input_ids [B, S], scores [B, V]) -> scores_out
		&OpSchema{Domain: ms, Name: "NGramRepeatBlock", Family: FamilyData, Since: 1, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1,
			Infer: inferNGramRepeatBlock, Doc: "ONNX Runtime contrib op: scores with -inf at every token that would repeat an n-gram of input_ids; like scores"},
	)
}

// ngramHeads is an n-gram hash op's output heads, (max_ngram_size − 1) ·
// n_head_per_ngram, and its history length max_ngram_size − 1, refusing
// a max_ngram_size under 2, a head count under 1 and tables that do not
// fit them (checkNGramTables).
func ngramHeads(c *InferCtx) (heads, history int64, err error) {
	n, h := c.AttrInt("max_ngram_size", 0), c.AttrInt("n_head_per_ngram", 0)
	if n < 2 || h < 1 || n > 1<<20 || h > 1<<20 {
		return 0, 0, c.Errorf("max_ngram_size %d (at least 2) and n_head_per_ngram %d (at least 1)", n, h)
	}
	heads, history = (n-1)*h, n-1
	return heads, history, checkNGramTables(c, heads, history)
}

// checkNGramTables refuses ids, multipliers or vocabulary sizes that are
// not int32/int64 and tables shorter than the op needs.
func checkNGramTables(c *InferCtx, heads, history int64) error {
	for i, name := range []string{"input_ids", "multipliers", "vocab_sizes"} {
		if err := needInt(c, i, name, Int32, Int64); err != nil {
			return err
		}
	}
	if n, ok := c.InShape(1).NumElements(); ok && n < history+1 {
		return c.Errorf("multipliers has %d elements, fewer than max_ngram_size %d", n, history+1)
	}
	if n, ok := c.InShape(2).NumElements(); ok && n != heads {
		return c.Errorf("vocab_sizes has %d elements, want (max_ngram_size−1)·n_head_per_ngram = %d", n, heads)
	}
	return nil
}

// inferNGramHashMapping refuses input_ids not [B, S] and past_ids not
// [B, max_ngram_size − 1].
func inferNGramHashMapping(c *InferCtx) error {
	heads, history, err := ngramHeads(c)
	if err != nil {
		return err
	}
	ids := c.InShape(0)
	if !ids.Ranked {
		return c.SetOut(0, c.InType(0), Unranked())
	}
	if ids.Rank() != 2 {
		return c.Errorf("input_ids has rank %d, want 2 [batch, sequence]", ids.Rank())
	}
	b := ids.Dims[0]
	if err := checkDims(c, 3, "past_ids", b, D(history)); err != nil {
		return err
	}
	if err := checkDims(c, 6, "segment_ids", b, ids.Dims[1]); err != nil {
		return err
	}
	if err := c.SetOut(0, c.InType(0), RankedShape(b, ids.Dims[1], D(heads))); err != nil {
		return err
	}
	return c.SetOut(1, c.InType(0), RankedShape(b, D(history)))
}

// inferVarlenNGramHashMapping refuses input_ids not 1-D, a
// cumulative_sequence_length not 1-D int32 and histories not [B,
// max_ngram_size − 1], B being one less than cumulative_sequence_length's
// length.
func inferVarlenNGramHashMapping(c *InferCtx) error {
	heads, history, err := ngramHeads(c)
	if err != nil {
		return err
	}
	ids := c.InShape(0)
	if ids.Ranked && ids.Rank() != 1 {
		return c.Errorf("input_ids has rank %d, want 1 [total_tokens]", ids.Rank())
	}
	b, err := packedBatch(c, 3)
	if err != nil {
		return err
	}
	for _, in := range []struct {
		slot int
		name string
	}{{4, "past_ids"}, {8, "past_segment_ids"}} {
		if err := checkDims(c, in.slot, in.name, b, D(history)); err != nil {
			return err
		}
	}
	tokens := c.Fresh("total_tokens")
	if ids.Ranked {
		tokens = ids.Dims[0]
	}
	if err := c.SetOut(0, c.InType(0), RankedShape(tokens, D(heads))); err != nil {
		return err
	}
	if err := c.SetOut(1, c.InType(0), RankedShape(b, D(history))); err != nil {
		return err
	}
	return c.SetOut(2, Int32, RankedShape(b, D(history)))
}

// packedBatch is the sequences a packed op holds: one less than its
// int32 cumulative_sequence_length's length (input slot), a fresh symbol
// when that is not known.
func packedBatch(c *InferCtx, slot int) (Dim, error) {
	if err := needInt(c, slot, "cumulative_sequence_length", Int32); err != nil {
		return Dim{}, err
	}
	cu := c.InShape(slot)
	if !cu.Ranked {
		return c.Fresh("batch"), nil
	}
	if cu.Rank() != 1 {
		return Dim{}, c.Errorf("cumulative_sequence_length has rank %d, want 1 [batch + 1]", cu.Rank())
	}
	if cu.Dims[0].IsKnown() && cu.Dims[0].Value < 1 {
		return Dim{}, c.Errorf("cumulative_sequence_length is empty; it holds batch + 1 offsets")
	}
	return SubDim(cu.Dims[0], D(1)), nil
}

// inferNGramRepeatBlock refuses ngram_size under 1, input_ids not
// [B, S] int64 and scores not [B, V]; scores_out is like scores.
func inferNGramRepeatBlock(c *InferCtx) error {
	if n := c.AttrInt("ngram_size", 0); n < 1 {
		return c.Errorf("ngram_size %d, want at least 1", n)
	}
	if err := needInt(c, 0, "input_ids", Int64); err != nil {
		return err
	}
	ids := c.InShape(0)
	if ids.Ranked && ids.Rank() != 2 {
		return c.Errorf("input_ids has rank %d, want 2 [batch, sequence]", ids.Rank())
	}
	b := Dim{}
	if ids.Ranked {
		b = ids.Dims[0]
	}
	if err := checkDims(c, 1, "scores", b, Dim{}); err != nil {
		return err
	}
	return c.PassThrough(0, 1)
}
