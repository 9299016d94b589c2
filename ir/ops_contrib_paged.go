package ir

// ONNX Runtime's PagedAttention (com.microsoft; docs/ContribOperators.md):
// continuous batching's attention, the tokens of every sequence packed
// [num_tokens, hidden] and the K/V cache in blocks [num_blocks,
// block_size, kv_num_heads, head_size] that a block table maps each
// sequence to, updated in place.

func init() {
	Register(
		// PagedAttention(query, key?, value?, key_cache, value_cache?,
		// cumulative_sequence_length, past_seqlens, block_table,
		// cos_cache?, sin_cache?, slot_mapping?, head_sink?,
		// q_norm_weight?, k_norm_weight?, k_scale?, v_scale?,
		// attention_metadata?) -> output, key_cache_out?, value_cache_out?
		&OpSchema{Domain: "com.microsoft", Name: "PagedAttention", Family: FamilyAttention, Since: 1, MinIn: 8, MaxIn: 17, MinOut: 1, MaxOut: 3,
			Infer: inferPagedAttention,
			Doc:   "ONNX Runtime contrib op: attention over a block-paged KV cache; output [num_tokens, num_heads·v_head_size]"},
	)
}

// PagedHeadSize is a PagedAttention's query/key head size and value head
// size, from its query width (packed Q|K|V when key is absent) and the
// LATENT layout's v_head_size; ok is false when the shapes do not say.
func PagedHeadSize(n *Node) (d, dv int64, ok bool) {
	h, kvh := n.AttrInt("num_heads", 0), n.AttrInt("kv_num_heads", 0)
	q := n.In(0)
	if q == nil || h <= 0 || kvh <= 0 {
		return 0, 0, false
	}
	width, known := knownDim(q.Shape, 1)
	if !known || q.Shape.Rank() != 2 {
		return 0, 0, false
	}
	heads := h
	if n.In(1) == nil && n.AttrString("kv_cache_layout", "SEPARATE") != "LATENT" {
		heads = h + 2*kvh // packed Q|K|V
	}
	if width%heads != 0 {
		return 0, 0, false
	}
	d = width / heads
	dv = d
	if v := n.AttrInt("v_head_size", 0); v > 0 {
		dv = v
	}
	return d, dv, true
}

func inferPagedAttention(c *InferCtx) error {
	n := c.Node
	h, kvh := c.AttrInt("num_heads", 0), c.AttrInt("kv_num_heads", 0)
	if h <= 0 || kvh <= 0 {
		return c.Errorf("num_heads %d and kv_num_heads %d, want both positive", h, kvh)
	}
	q, cache, table := c.InShape(0), c.InShape(3), c.InShape(7)
	if q.Ranked && q.Rank() != 2 {
		return c.Errorf("query has rank %d, want 2 [num_tokens, hidden]", q.Rank())
	}
	if cache.Ranked && cache.Rank() != 4 {
		return c.Errorf("key_cache has rank %d, want 4 [num_blocks, block_size, kv_num_heads, head_size]", cache.Rank())
	}
	if table.Ranked && table.Rank() != 2 {
		return c.Errorf("block_table has rank %d, want 2 [batch_size, max_blocks_per_sequence]", table.Rank())
	}
	tokens, width := c.Fresh("num_tokens"), c.Fresh("hidden")
	if q.Ranked {
		tokens = q.Dims[0]
		if _, dv, ok := PagedHeadSize(n); ok {
			width = D(h * dv)
		} else if w, known := knownDim(q, 1); known {
			return c.Errorf("query width %d does not split into num_heads %d (and 2·kv_num_heads %d when packed)", w, h, kvh)
		}
	}
	if err := c.SetOut(0, c.InType(0), Shape{Ranked: true, Dims: []Dim{tokens, width}}); err != nil {
		return err
	}
	for i, slot := range []int{3, 4} {
		if c.Out(i+1) != nil {
			if c.In(slot) == nil {
				return c.Errorf("output %d aliases a cache input that is absent", i+1)
			}
			if err := c.PassThrough(i+1, slot); err != nil {
				return err
			}
		}
	}
	return nil
}
