package ir

// ONNX Runtime's position-bias ops (com.microsoft RelativePositionBias,
// GatedRelativePositionBias; docs/ContribOperators.md): what its
// transformers optimizer writes for T5's bucketed relative position bias
// and WavLM's gated one, each an attention bias [batch or 1, heads,
// query length, key length] for the attention op after it.

func init() {
	ms := "com.microsoft"
	Register(
		// RelativePositionBias(bias_table [buckets, heads], query_length,
		// key_length) -> [1, heads, query_length, key_length]
		&OpSchema{Domain: ms, Name: "RelativePositionBias", Family: FamilyData, Since: 1, MinIn: 3, MaxIn: 3, MinOut: 1, MaxOut: 1,
			Infer: inferRelativePositionBias,
			Doc:   "ONNX Runtime contrib op: T5's bucketed relative position bias, [1, heads, query_length, key_length]"},
		// GatedRelativePositionBias(query_layer, query_bias, rel_pos,
		// weight, bias, eco_a, token_offset?) -> [batch, heads, seq, seq]
		&OpSchema{Domain: ms, Name: "GatedRelativePositionBias", Family: FamilyGEMM, Since: 1, MinIn: 6, MaxIn: 7, MinOut: 1, MaxOut: 1,
			Infer: inferGatedRelativePositionBias,
			Doc:   "ONNX Runtime contrib op: WavLM's gated relative position bias, [batch, heads, seq_len, seq_len]"},
	)
}

// lengthInput is input i read as one length: a scalar or one-element
// integer tensor, known or symbolic; a fresh symbol otherwise.
func lengthInput(c *InferCtx, i int, hint string) Dim {
	if ds, ok := inDimList(c, i); ok && len(ds) == 1 {
		return ds[0]
	}
	return c.Fresh(hint)
}

func inferRelativePositionBias(c *InferCtx) error {
	table := c.InShape(0)
	if table.Ranked && table.Rank() != 2 {
		return c.Errorf("bias_table has rank %d, want 2 [num_buckets, num_heads]", table.Rank())
	}
	heads := c.Fresh("heads")
	if table.Ranked {
		heads = table.Dims[1]
	}
	q, k := lengthInput(c, 1, "query_length"), lengthInput(c, 2, "key_length")
	return c.SetOut(0, c.InType(0), Shape{Ranked: true, Dims: []Dim{D(1), heads, q, k}})
}

func inferGatedRelativePositionBias(c *InferCtx) error {
	heads := c.AttrInt("num_heads", 0)
	if heads <= 0 {
		return c.Errorf("num_heads %d, want a positive count", heads)
	}
	x, rel := c.InShape(0), c.InShape(2)
	if x.Ranked && x.Rank() != 2 && x.Rank() != 3 {
		return c.Errorf("query_layer has rank %d, want 3 [batch, seq_len, hidden] or 2 [token_count, hidden]", x.Rank())
	}
	if rel.Ranked && rel.Rank() != 4 {
		return c.Errorf("rel_pos has rank %d, want 4 [1, num_heads, seq_len, seq_len]", rel.Rank())
	}
	batch, seq := c.Fresh("batch"), c.Fresh("seq_len")
	if x.Ranked && x.Rank() == 3 {
		batch, seq = x.Dims[0], x.Dims[1]
	} else if off := c.InShape(6); off.Ranked && off.Rank() == 2 {
		batch, seq = off.Dims[0], off.Dims[1] // packed: token_offset [batch, seq_len]
	}
	if rel.Ranked {
		seq = rel.Dims[2]
	}
	return c.SetOut(0, c.InType(0), Shape{Ranked: true, Dims: []Dim{batch, D(heads), seq, seq}})
}
