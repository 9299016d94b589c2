package ir

// ONNX Runtime's packing mode for BERT-like encoders
// (onnxruntime/python/tools/transformers/convert_to_packing_mode.py;
// docs/ContribOperators.md): RemovePadding drops the padded tokens after
// the embedding, the layers between run over [total_tokens, hidden]
// rows, PackedAttention and PackedMultiHeadAttention attend within each
// sequence (cumulative_sequence_length marks where each begins), and
// RestorePadding puts the rows back as [batch, sequence, hidden].
//
// The token count is the sum of sequence_token_count (the attention
// mask's row sums), a run-time value. Known values (the mask given with
// --input-data, folded through its ReduceSum) give it exactly; else
// `--dim total_tokens=N` states it; else it is batch × sequence, no
// padding at all: what the encoder costs unpacked, an upper bound, with
// a warning that names the flag.

// TotalTokensName is the binding that states RemovePadding's token count.
const TotalTokensName = "total_tokens"

func init() {
	ms := "com.microsoft"
	Register(
		&OpSchema{Domain: ms, Name: "RemovePadding", Family: FamilyData, Since: 1, MinIn: 2, MaxIn: 2, MinOut: 4, MaxOut: 4,
			Infer: inferRemovePadding,
			Doc:   "output [total_tokens, hidden], token_offset [B,S], cumulated_seq_len [B+1], max_seq_len [1]; total_tokens the real tokens' count (--dim total_tokens=N; else B·S)"},
		&OpSchema{Domain: ms, Name: "RestorePadding", Family: FamilyData, Since: 1, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1,
			Infer: inferRestorePadding, Doc: "output [B,S,hidden] from input [total_tokens, hidden] and token_offset [B,S]"},
		// PackedAttention(input, weights, bias, token_offset,
		// cumulative_sequence_length, attention_bias?): Attention over
		// packed rows.
		&OpSchema{Domain: ms, Name: "PackedAttention", Family: FamilyAttention, Since: 1, MinIn: 5, MaxIn: 6, MinOut: 1, MaxOut: 1,
			Infer: inferPackedAttention, Doc: "output [token_count, v_hidden] from input [token_count, in] and weights [in, Dq+Dk+Dv]"},
		// PackedMultiHeadAttention(query, key?, value?, bias?,
		// token_offset, cumulative_sequence_length, attention_bias?).
		&OpSchema{Domain: ms, Name: "PackedMultiHeadAttention", Family: FamilyAttention, Since: 1, MinIn: 6, MaxIn: 7, MinOut: 1, MaxOut: 1,
			Infer: inferPackedMHA, Doc: "output [token_count, v_hidden]; query [token_count, hidden] with key and value, or packed Q|K|V [token_count, num_heads, 3, head]"},
	)
}

// PackedLengths is the sequence lengths a packed op's
// cumulative_sequence_length holds ([B+1] running sums), when they are
// known: nil otherwise, or when they do not rise from 0.
func PackedLengths(cum *Value) []int64 {
	if cum == nil || cum.Const == nil || !cum.Const.HasData || len(cum.Const.Ints) < 2 {
		return nil
	}
	c := cum.Const.Ints
	if c[0] != 0 {
		return nil
	}
	lens := make([]int64, len(c)-1)
	for i := range lens {
		lens[i] = c[i+1] - c[i]
		if lens[i] < 0 {
			return nil
		}
	}
	return lens
}

func inferRemovePadding(c *InferCtx) error {
	x, cnt := c.InShape(0), c.InShape(1)
	if x.Ranked && x.Rank() != 3 {
		return c.Errorf("input has rank %d, want 3 [batch, sequence, hidden]", x.Rank())
	}
	if cnt.Ranked && cnt.Rank() != 1 {
		return c.Errorf("sequence_token_count has rank %d, want 1 [batch]", cnt.Rank())
	}
	b, s, hidden := c.Fresh("batch"), c.Fresh("sequence"), c.Fresh("hidden")
	if x.Ranked {
		b, s, hidden = x.Dims[0], x.Dims[1], x.Dims[2]
	}
	if cnt.Ranked && b.IsKnown() && cnt.Dims[0].IsKnown() && cnt.Dims[0].Value != b.Value {
		return c.Errorf("sequence_token_count has %d entries for a batch of %d", cnt.Dims[0].Value, b.Value)
	}
	tokens, lens, err := totalTokens(c, b, s)
	if err != nil {
		return err
	}
	if err := c.SetOut(0, c.InType(0), RankedShape(tokens, hidden)); err != nil {
		return err
	}
	if err := c.SetOut(1, Int32, RankedShape(b, s)); err != nil {
		return err
	}
	if lens == nil {
		if err := c.SetOut(2, Int32, RankedShape(AddDim(b, D(1)))); err != nil {
			return err
		}
		return c.SetOut(3, Int32, RankedShape(D(1)))
	}
	cum, longest := make([]int64, len(lens)+1), int64(0)
	for i, l := range lens {
		cum[i+1] = cum[i] + l
		longest = max(longest, l)
	}
	if err := setIntConst(c, 2, Int32, []int64{int64(len(cum))}, cum); err != nil {
		return err
	}
	return setIntConst(c, 3, Int32, []int64{1}, []int64{longest})
}

// setIntConst gives output i the known contents vals of integer type dt.
func setIntConst(c *InferCtx, i int, dt DType, dims, vals []int64) error {
	t := IntTensor(dims, vals)
	t.DType = dt
	return c.SetOutConst(i, t)
}

// totalTokens is RemovePadding's token count over a batch of b sequences
// of s slots, and each sequence's length when they are known.
func totalTokens(c *InferCtx, b, s Dim) (Dim, []int64, error) {
	full, fullOK := MulDim(b, s)
	if vals, ok := c.ConstInts(1); ok {
		lens, sum := make([]int64, len(vals)), int64(0)
		for i, v := range vals {
			lens[i] = max(v, 0)
			if s.IsKnown() {
				lens[i] = min(lens[i], s.Value)
			}
			sum += lens[i]
		}
		return D(sum), lens, nil
	}
	if v, ok := c.Binding(TotalTokensName); ok {
		if v < 1 {
			return Dim{}, nil, c.Errorf("--dim %s=%d: the token count must be at least 1", TotalTokensName, v)
		}
		if fullOK && full.IsKnown() && v > full.Value {
			return Dim{}, nil, c.Errorf("--dim %s=%d is more tokens than batch × sequence = %d", TotalTokensName, v, full.Value)
		}
		return D(v), nil, nil
	}
	if !fullOK || !full.IsKnown() {
		return S(TotalTokensName), nil, nil
	}
	c.Warnf("RemovePadding: the real token count is a run-time value; priced at batch × sequence = %d tokens, no padding (bind it with --dim %s=N, or give the attention mask with --input-data)",
		full.Value, TotalTokensName)
	return full, nil, nil
}

func inferRestorePadding(c *InferCtx) error {
	x, off := c.InShape(0), c.InShape(1)
	if x.Ranked && x.Rank() != 2 {
		return c.Errorf("input has rank %d, want 2 [total_tokens, hidden]", x.Rank())
	}
	if off.Ranked && off.Rank() != 2 {
		return c.Errorf("token_offset has rank %d, want 2 [batch, sequence]", off.Rank())
	}
	b, s, hidden := c.Fresh("batch"), c.Fresh("sequence"), c.Fresh("hidden")
	if off.Ranked {
		b, s = off.Dims[0], off.Dims[1]
	}
	if x.Ranked {
		hidden = x.Dims[1]
	}
	return c.SetOut(0, c.InType(0), RankedShape(b, s, hidden))
}

// packedSlots checks a packed op's token_offset ([B,S]) and
// cumulative_sequence_length ([B+1]) at slots off and cum.
func packedSlots(c *InferCtx, off, cum int) error {
	o, cs := c.InShape(off), c.InShape(cum)
	if o.Ranked && o.Rank() != 2 {
		return c.Errorf("token_offset has rank %d, want 2 [batch, sequence]", o.Rank())
	}
	if cs.Ranked && cs.Rank() != 1 {
		return c.Errorf("cumulative_sequence_length has rank %d, want 1 [batch + 1]", cs.Rank())
	}
	if o.Ranked && cs.Ranked && o.Dims[0].IsKnown() && cs.Dims[0].IsKnown() && cs.Dims[0].Value != o.Dims[0].Value+1 {
		return c.Errorf("cumulative_sequence_length has %d entries for a batch of %d (want batch + 1)", cs.Dims[0].Value, o.Dims[0].Value)
	}
	return nil
}

func inferPackedAttention(c *InferCtx) error {
	h := c.AttrInt("num_heads", 0)
	if h <= 0 {
		return c.Errorf("needs a positive num_heads, has %d", h)
	}
	if err := packedSlots(c, 3, 4); err != nil {
		return err
	}
	x, w := c.InShape(0), c.InShape(1)
	dt := c.InType(0)
	if !x.Ranked || !w.Ranked {
		return c.SetOut(0, dt, Unranked())
	}
	if x.Rank() != 2 || w.Rank() != 2 {
		return c.Errorf("input of rank %d and weights of rank %d, want 2 [token_count, in] and 2 [in, Dq+Dk+Dv]", x.Rank(), w.Rank())
	}
	dk, dv, err := projectionWidths(c, x.Dims[1], w)
	if err != nil {
		return err
	}
	if _, err := headSize(c, "key", dk, h); err != nil {
		return err
	}
	if _, err := headSize(c, "value", dv, h); err != nil {
		return err
	}
	return c.SetOut(0, dt, RankedShape(x.Dims[0], dv))
}

func inferPackedMHA(c *InferCtx) error {
	h := c.AttrInt("num_heads", 0)
	if h <= 0 {
		return c.Errorf("needs a positive num_heads, has %d", h)
	}
	if err := packedSlots(c, 4, 5); err != nil {
		return err
	}
	q := c.InShape(0)
	dt := c.InType(0)
	if !q.Ranked {
		return c.SetOut(0, dt, Unranked())
	}
	switch q.Rank() {
	case 4: // packed Q|K|V [T, N, 3, H]
		if c.HasIn(1) || c.HasIn(2) {
			return c.Errorf("query is packed Q|K|V [token_count, num_heads, 3, head] but key or value is given too")
		}
		if n, ok := knownDim(q, 1); ok && n != h {
			return c.Errorf("packed Q|K|V has %d heads, num_heads is %d", n, h)
		}
		if three, ok := knownDim(q, 2); ok && three != 3 {
			return c.Errorf("packed Q|K|V has %d parts on axis 2, want 3", three)
		}
		width, _ := MulDim(q.Dims[1], q.Dims[3])
		return c.SetOut(0, dt, RankedShape(q.Dims[0], width))
	case 2:
		if !c.HasIn(1) || !c.HasIn(2) {
			return c.Errorf("query [token_count, hidden] needs both key and value (packed K|V is not supported)")
		}
		if _, err := headSize(c, "query", q.Dims[1], h); err != nil {
			return err
		}
		v := c.InShape(2)
		if !v.Ranked {
			return c.SetOut(0, dt, Unranked())
		}
		if v.Rank() != 2 {
			return c.Errorf("value has rank %d, want 2 [token_count, v_hidden]", v.Rank())
		}
		if _, err := headSize(c, "value", v.Dims[1], h); err != nil {
			return err
		}
		return c.SetOut(0, dt, RankedShape(q.Dims[0], v.Dims[1]))
	}
	return c.Errorf("query has rank %d, want 2 [token_count, hidden] or 4 [token_count, num_heads, 3, head]", q.Rank())
}
