package ir

// ONNX Runtime's com.microsoft attention family, as LLM and BERT exports
// (onnxruntime-genai's builder, the transformers optimizer) write it:
// GroupQueryAttention, MultiHeadAttention, Attention (input projection
// with packed Q|K|V weights, then attention) and RotaryEmbedding. Shapes
// follow docs/ContribOperators.md of onnxruntime.
//
// The KV cache: with past and present sharing one buffer (onnxruntime's
// past_present_share_buffer, what serving runs) present_key and
// present_value are past_key and past_value updated in place, so the
// schemas name those pairs in InPlacePairs; peak memory then counts the
// cache once. A shared buffer has the past's shape (its length is the
// maximum sequence length), which is how a graph shows it.

func init() {
	Register(
		&OpSchema{Domain: "com.microsoft", Name: "GroupQueryAttention", Family: FamilyAttention, Since: 1, MinIn: 7, MaxIn: 16, MinOut: 1, MaxOut: 4,
			Traits: InPlace, InPlacePairs: [][2]int{{1, 3}, {2, 4}}, Infer: inferGroupQueryAttention,
			Doc: "output [B,S,H·d]; present_key/value [B,kvH,T,d] with T = max(past, total_sequence_length) when that is known, else past+S; output_qk [B,H,S,T]"},
		&OpSchema{Domain: "com.microsoft", Name: "MultiHeadAttention", Family: FamilyAttention, Since: 1, MinIn: 1, MaxIn: 10, MinOut: 1, MaxOut: 4,
			Traits: InPlace, InPlacePairs: [][2]int{{1, 6}, {2, 7}}, Infer: inferMultiHeadAttention,
			Doc: "output [B,S,v_hidden]; present_key/value [B,H,past+L,d] ([B,H,max,d] with past_sequence_length: a shared buffer); qk [B,H,S,T]"},
		&OpSchema{Domain: "com.microsoft", Name: "Attention", Family: FamilyAttention, Since: 1, MinIn: 2, MaxIn: 7, MinOut: 1, MaxOut: 2,
			Traits: InPlace, InPlacePairs: [][2]int{{1, 4}}, Infer: inferMSAttention,
			Doc: "output [B,S,v_hidden]; present [2,B,H,past+S,d] (past's shape with past_present_share_buffer)"},
		// QAttention(input, weight, bias, input_scale, weight_scale,
		// mask_index?, input_zero_point?, weight_zero_point?, past?):
		// onnxruntime's dynamic quantizer's form of Attention.
		&OpSchema{Domain: "com.microsoft", Name: "QAttention", Family: FamilyAttention, Since: 1, MinIn: 5, MaxIn: 9, MinOut: 1, MaxOut: 2,
			Traits: InPlace, InPlacePairs: [][2]int{{1, 8}}, Infer: inferQAttention,
			Doc: "Attention over an 8-bit input and weight (quantize_dynamic's int8 BERT): output [B,S,v_hidden] and present typed like bias (float or float16)"},
		// SparseAttention(query, key?, value?, past_key, past_value,
		// block_row_indices, block_col_indices, total_sequence_length,
		// key_total_sequence_lengths, cos_cache?, sin_cache?): Phi-3-small's
		// block-sparse attention over a shared KV buffer.
		&OpSchema{Domain: "com.microsoft", Name: "SparseAttention", Family: FamilyAttention, Since: 1, MinIn: 9, MaxIn: 11, MinOut: 3, MaxOut: 3,
			Traits: InPlace, InPlacePairs: [][2]int{{1, 3}, {2, 4}}, Infer: inferSparseAttention,
			Doc: "output [B,S,H·d]; present_key/value the past buffers' shapes (updated in place); query packed Q|K|V when key is omitted"},
		// DecoderMaskedMultiHeadAttention(query, key?, value?, mask_index?,
		// attention_bias?, past_key?, past_value?, past_sequence_length?,
		// beam_width?, cache_indirection?, bias?): onnxruntime's one-token
		// decoding kernel (GPT-2 and Whisper under BeamSearch), the slots of
		// MultiHeadAttention in another order.
		&OpSchema{Domain: "com.microsoft", Name: "DecoderMaskedMultiHeadAttention", Family: FamilyAttention, Since: 1, MinIn: 1, MaxIn: 11, MinOut: 1, MaxOut: 4,
			Traits: InPlace, InPlacePairs: [][2]int{{1, 5}, {2, 6}}, Infer: inferDecoderMaskedMHA,
			Doc: "MultiHeadAttention's outputs for one query token: output [B,1,v_hidden]; present_key/value [B,H,past+1,d], or the past's buffer with past_present_share_buffer; qk [B,H,1,T]"},
		// DecoderMaskedSelfAttention(input, weights, bias, mask_index?, past,
		// attention_bias?, past_sequence_length, beam_width?,
		// cache_indirection?): Attention's first seven slots.
		&OpSchema{Domain: "com.microsoft", Name: "DecoderMaskedSelfAttention", Family: FamilyAttention, Since: 1, MinIn: 3, MaxIn: 9, MinOut: 1, MaxOut: 2,
			Traits: InPlace, InPlacePairs: [][2]int{{1, 4}}, Infer: inferMSAttention,
			Doc: "Attention's outputs for one input token: output [B,1,v_hidden]; present [2,B,H,past+1,d] (past's shape with past_present_share_buffer)"},
		&OpSchema{Domain: "com.microsoft", Name: "RotaryEmbedding", Family: FamilyElementwise, Since: 1, MinIn: 4, MaxIn: 4, MinOut: 1, MaxOut: 1,
			Infer: inferMSRotaryEmbedding, Doc: "output like input: [B,S,hidden] or [B,H,S,head]; inputs input, position_ids, cos_cache, sin_cache"},
		// MRotaryEmbedding(input, position_ids [3, B, S], cos_cache,
		// sin_cache): Qwen-VL's multimodal RoPE, three position streams
		// over sections of the rotary half.
		&OpSchema{Domain: "com.microsoft", Name: "MRotaryEmbedding", Family: FamilyElementwise, Since: 1, MinIn: 4, MaxIn: 4, MinOut: 1, MaxOut: 1,
			Infer: inferMRotaryEmbedding, Doc: "RotaryEmbedding over temporal, height and width position streams (mrope_section); output like input"},
	)
}

// setUnranked gives every output an unknown shape: output 0 and the last
// (scores) of dtype dt, the caches of cacheDT.
func setAttnUnranked(c *InferCtx, dt, cacheDT DType) error {
	for i := range c.Node.Outputs {
		t := dt
		if i == 1 || i == 2 {
			t = cacheDT
		}
		if err := c.SetOut(i, t, Unranked()); err != nil {
			return err
		}
	}
	return nil
}

// cacheType is the dtype of the cache input at slot i, else dt: a
// quantized cache (int8, uint8, float8) keeps its own type in present.
func cacheType(c *InferCtx, i int, dt DType) DType {
	if t := c.InType(i); c.HasIn(i) && t != Undefined {
		return t
	}
	return dt
}

// headSize is width/heads, refusing a known width that heads do not
// divide.
func headSize(c *InferCtx, what string, width Dim, heads int64) (Dim, error) {
	if width.IsKnown() && width.Value%heads != 0 {
		return Dim{}, c.Errorf("%s width %d is not a multiple of its %d heads", what, width.Value, heads)
	}
	return DivDim(width, D(heads), false), nil
}

// cacheLen is the present length after kvLen new keys are appended to
// the rank-4 past cache at slot past (kvLen when there is none). shared
// says past and present are one buffer of the past's length.
func cacheLen(c *InferCtx, past int, kvLen Dim, shared bool) (Dim, error) {
	p := c.InShape(past)
	if !c.HasIn(past) || !p.Ranked {
		if c.HasIn(past) {
			return c.Fresh("total_sequence_length"), nil
		}
		return kvLen, nil
	}
	if p.Rank() != 4 {
		return Dim{}, c.Errorf("past cache of rank %d, want 4 [B, heads, length, head]", p.Rank())
	}
	if shared {
		return p.Dims[2], nil
	}
	return AddDim(p.Dims[2], kvLen), nil
}

// declaresShared reports whether the file declares present_key (output
// 1) with the length of the past cache at slot past: one buffer, updated
// in place, as a graph exported for past_present_share_buffer states it.
func declaresShared(c *InferCtx, past int) bool {
	o, p := c.Out(1), c.InShape(past)
	if o == nil || o.Declared == nil || !c.HasIn(past) || !p.Ranked || p.Rank() != 4 {
		return false
	}
	ds := o.Declared.Shape
	return ds.Ranked && ds.Rank() == 4 && ds.Dims[2] == p.Dims[2]
}

// setPresent sets present_key, present_value (outputs 1, 2) and the
// scores output (slot qk) once the cache length total is known.
func setPresent(c *InferCtx, b, kvHeads, total, dk, dv Dim, kDT, vDT DType, qk int, sq Dim, qHeads Dim, qkDT DType) error {
	if err := c.SetOut(1, kDT, RankedShape(b, kvHeads, total, dk)); err != nil {
		return err
	}
	if err := c.SetOut(2, vDT, RankedShape(b, kvHeads, total, dv)); err != nil {
		return err
	}
	return c.SetOut(qk, qkDT, RankedShape(b, qHeads, sq, total))
}

// inferGroupQueryAttention: query [B,S,H·d] (or packed Q|K|V
// [B,S,(H+2·kvH)·d] when key and value are omitted), key/value
// [B,L,kvH·d], past_key/past_value [B,kvH,P,d]. present holds
// max(P, total_sequence_length) rows when the total is a known constant
// (onnxruntime's rule: a shared buffer keeps its length), P when the file
// declares present with past's length, else P+L.
func inferGroupQueryAttention(c *InferCtx) error {
	h, kvh := c.AttrInt("num_heads", 0), c.AttrInt("kv_num_heads", 0)
	if h <= 0 || kvh <= 0 {
		return c.Errorf("needs positive num_heads and kv_num_heads, have %d and %d", h, kvh)
	}
	if h%kvh != 0 {
		return c.Errorf("num_heads %d is not a multiple of kv_num_heads %d", h, kvh)
	}
	dt := c.InType(0)
	kDT, vDT := cacheType(c, 3, dt), cacheType(c, 4, dt)
	q := c.InShape(0)
	if !q.Ranked {
		return setAttnUnranked(c, dt, kDT)
	}
	if q.Rank() != 3 {
		return c.Errorf("query of rank %d, want 3 [B, S, hidden]", q.Rank())
	}
	b, s := q.Dims[0], q.Dims[1]
	packed := !c.HasIn(1)
	heads := h
	if packed {
		heads = h + 2*kvh
	}
	d, err := headSize(c, "query", q.Dims[2], heads)
	if err != nil {
		return err
	}
	hidden, _ := MulDim(D(h), d)
	if err := c.SetOut(0, dt, RankedShape(b, s, hidden)); err != nil {
		return err
	}
	kvLen := s
	if k := c.InShape(1); !packed && k.Ranked {
		if k.Rank() != 3 {
			return c.Errorf("key of rank %d, want 3 [B, L, kv_hidden]", k.Rank())
		}
		if _, err := headSize(c, "key", k.Dims[2], kvh); err != nil {
			return err
		}
		kvLen = k.Dims[1]
	}
	total, err := cacheLen(c, 3, kvLen, declaresShared(c, 3))
	if err != nil {
		return err
	}
	if t, ok := c.ConstInts(6); ok && len(t) == 1 && t[0] > 0 {
		if p := c.InShape(3); c.HasIn(3) && p.Ranked && p.Dims[2].IsKnown() {
			total = D(max(p.Dims[2].Value, t[0]))
		} else if !c.HasIn(3) {
			total = D(t[0])
		}
	}
	if p := c.InShape(3); c.AttrInt("sliding_window_cache", 0) == 1 && c.HasIn(3) && p.Ranked && p.Rank() == 4 {
		// A window-sized cache: present has the past's capacity, the
		// op evicting within it.
		total = p.Dims[2]
	}
	return setPresent(c, b, D(kvh), total, cacheWidth(c, d, kDT), cacheWidth(c, d, vDT), kDT, vDT, 3, s, D(h), dt)
}

// cacheWidth is the stored last dim of a GroupQueryAttention cache of
// head size d and type dt: a 4-bit cache (kv_cache_bit_width 4) packs two
// values a uint8, so it holds ceil(d/2).
func cacheWidth(c *InferCtx, d Dim, dt DType) Dim {
	if c.AttrInt("kv_cache_bit_width", 0) == 4 && dt == Uint8 {
		return DivDim(d, D(2), true)
	}
	return d
}

// inferMultiHeadAttention: query [B,S,H·d] or packed Q|K|V [B,S,H,3,d];
// key [B,L,H·d], packed K|V [B,L,H,2,d], or a cache [B,H,L,d] used as
// it is (cross attention); value [B,L,H·dv] or [B,H,L,dv]. With the
// past_sequence_length input the caches share one buffer, so present
// has past's length.
func inferMultiHeadAttention(c *InferCtx) error {
	h := c.AttrInt("num_heads", 0)
	if h <= 0 {
		return c.Errorf("needs a positive num_heads, has %d", h)
	}
	dt := c.InType(0)
	q, k, v := c.InShape(0), c.InShape(1), c.InShape(2)
	if !q.Ranked || (c.HasIn(1) && !k.Ranked) || (c.HasIn(2) && !v.Ranked) {
		return setAttnUnranked(c, dt, dt)
	}
	var b, s, d Dim
	switch q.Rank() {
	case 3:
		b, s = q.Dims[0], q.Dims[1]
		var err error
		if d, err = headSize(c, "query", q.Dims[2], h); err != nil {
			return err
		}
	case 5:
		b, s, d = q.Dims[0], q.Dims[1], q.Dims[4]
	default:
		return c.Errorf("query of rank %d, want 3 [B, S, hidden] or 5 [B, S, H, 3, d]", q.Rank())
	}
	kvLen, dv := s, d
	switch {
	case !c.HasIn(1):
	case k.Rank() == 3 || k.Rank() == 5:
		kvLen = k.Dims[1]
		if k.Rank() == 5 {
			dv = k.Dims[4]
		}
	case k.Rank() == 4:
		kvLen = k.Dims[2]
	default:
		return c.Errorf("key of rank %d, want 3, 4 or 5", k.Rank())
	}
	if c.HasIn(2) {
		switch v.Rank() {
		case 3:
			var err error
			if dv, err = headSize(c, "value", v.Dims[2], h); err != nil {
				return err
			}
		case 4:
			dv = v.Dims[3]
		default:
			return c.Errorf("value of rank %d, want 3 or 4", v.Rank())
		}
	}
	vHidden, _ := MulDim(D(h), dv)
	if err := c.SetOut(0, dt, RankedShape(b, s, vHidden)); err != nil {
		return err
	}
	total, err := cacheLen(c, 6, kvLen, c.HasIn(8) || declaresShared(c, 6))
	if err != nil {
		return err
	}
	return setPresent(c, b, D(h), total, d, dv, dt, dt, 3, s, D(h), dt)
}

// inferMSAttention: input [B,S,in] times weights [in, Dq+Dk+Dv]
// (qkv_hidden_sizes, else three equal thirds) gives Q, K, V; output
// [B,S,Dv]; present [2,B,H,P+S,Dk/H], or past's shape when
// past_present_share_buffer is set.
func inferMSAttention(c *InferCtx) error { return msAttentionShapes(c, c.InType(0)) }

// inferQAttention: Attention's shapes over the slots it shares with it
// (input, weight, bias, mask_index, past), the outputs typed like bias:
// the 8-bit projection is dequantized before attention runs in float.
func inferQAttention(c *InferCtx) error {
	for _, in := range []struct {
		slot int
		name string
	}{{0, "input"}, {1, "weight"}} {
		if t := c.InType(in.slot); t != Undefined && t != Int8 && t != Uint8 {
			return c.Errorf("%s is %s, want int8 or uint8", in.name, t)
		}
	}
	dt := c.InType(2)
	switch dt {
	case Undefined:
		dt = Float32
	case Float32, Float16:
	default:
		return c.Errorf("bias is %s, want float or float16", dt)
	}
	return c.withInputs([]*Value{c.In(0), c.In(1), c.In(2), c.In(5), c.In(8)}, func(v *InferCtx) error {
		return msAttentionShapes(v, dt)
	})
}

// msAttentionShapes is inferMSAttention with the outputs' dtype dt.
func msAttentionShapes(c *InferCtx, dt DType) error {
	h := c.AttrInt("num_heads", 0)
	if h <= 0 {
		return c.Errorf("needs a positive num_heads, has %d", h)
	}
	x, w := c.InShape(0), c.InShape(1)
	if !x.Ranked || !w.Ranked {
		return setAttnUnranked(c, dt, dt)
	}
	if x.Rank() != 3 || w.Rank() != 2 {
		return c.Errorf("input of rank %d and weights of rank %d, want 3 [B, S, in] and 2 [in, Dq+Dk+Dv]", x.Rank(), w.Rank())
	}
	dk, dv, err := projectionWidths(c, x.Dims[2], w)
	if err != nil {
		return err
	}
	b, s := x.Dims[0], x.Dims[1]
	if err := c.SetOut(0, dt, RankedShape(b, s, dv)); err != nil {
		return err
	}
	head, err := headSize(c, "key", dk, h)
	if err != nil {
		return err
	}
	present := RankedShape(D(2), b, D(h), s, head)
	if p := c.InShape(4); c.HasIn(4) && p.Ranked {
		if p.Rank() != 5 {
			return c.Errorf("past of rank %d, want 5 [2, B, H, past, d]", p.Rank())
		}
		present = p.Clone()
		if c.AttrInt("past_present_share_buffer", 0) == 0 {
			present.Dims[3] = AddDim(p.Dims[3], s)
		}
	} else if c.HasIn(4) {
		present = Unranked()
	}
	return c.SetOut(1, dt, present)
}

// projectionWidths is the Attention family's Q|K|V split of weights w
// ([in, Dq+Dk+Dv], checked against the input width in): Dk and Dv from
// qkv_hidden_sizes, else three equal parts.
func projectionWidths(c *InferCtx, in Dim, w Shape) (dk, dv Dim, err error) {
	if in.IsKnown() && w.Dims[0].IsKnown() && in.Value != w.Dims[0].Value {
		return Dim{}, Dim{}, c.Errorf("input width %d but weights have %d rows", in.Value, w.Dims[0].Value)
	}
	if sizes, ok := c.AttrInts("qkv_hidden_sizes"); ok {
		if len(sizes) != 3 || sizes[0] != sizes[1] || sizes[0] <= 0 || sizes[2] <= 0 {
			return Dim{}, Dim{}, c.Errorf("qkv_hidden_sizes %v: want three positive sizes with Q and K equal", sizes)
		}
		if w.Dims[1].IsKnown() && w.Dims[1].Value != sizes[0]+sizes[1]+sizes[2] {
			return Dim{}, Dim{}, c.Errorf("weights width %d is not qkv_hidden_sizes %v summed", w.Dims[1].Value, sizes)
		}
		return D(sizes[1]), D(sizes[2]), nil
	}
	if w.Dims[1].IsKnown() && w.Dims[1].Value%3 != 0 {
		return Dim{}, Dim{}, c.Errorf("weights width %d is not three equal parts and qkv_hidden_sizes is not given", w.Dims[1].Value)
	}
	third := DivDim(w.Dims[1], D(3), false)
	return third, third, nil
}

// decoderMaskedMHASlots maps MultiHeadAttention's input slots to
// DecoderMaskedMultiHeadAttention's: query, key, value, bias,
// key_padding_mask (its mask_index), attention_bias, past_key,
// past_value, past_sequence_length, cache_indirection.
var decoderMaskedMHASlots = []int{0, 1, 2, 10, 3, 4, 5, 6, 7, 9}

// DecoderMaskedMHAInputs is n's inputs (a DecoderMaskedMultiHeadAttention)
// in MultiHeadAttention's order.
func DecoderMaskedMHAInputs(n *Node) []*Value {
	ins := make([]*Value, len(decoderMaskedMHASlots))
	for i, slot := range decoderMaskedMHASlots {
		ins[i] = n.In(slot)
	}
	return ins
}

// inferDecoderMaskedMHA is inferMultiHeadAttention over the slots the two
// ops share.
func inferDecoderMaskedMHA(c *InferCtx) error {
	return c.withInputs(DecoderMaskedMHAInputs(c.Node), inferMultiHeadAttention)
}

// inferSparseAttention refuses heads that do not group, a block size
// outside 16, 32, 64, 128 and a query that is not [B, S, hidden]; the
// output is [B, S, H·d] (d the query's width over its heads, counting
// K and V's when packed) and the present caches are the past buffers.
func inferSparseAttention(c *InferCtx) error {
	h, kvh := c.AttrInt("num_heads", 0), c.AttrInt("kv_num_heads", 0)
	if h <= 0 || kvh <= 0 || h%kvh != 0 {
		return c.Errorf("needs positive num_heads a multiple of kv_num_heads, have %d and %d", h, kvh)
	}
	switch bs := c.AttrInt("sparse_block_size", 0); bs {
	case 16, 32, 64, 128:
	default:
		return c.Errorf("sparse_block_size %d, want 16, 32, 64 or 128", bs)
	}
	dt := c.InType(0)
	q := c.InShape(0)
	out := Unranked()
	if q.Ranked {
		if q.Rank() != 3 {
			return c.Errorf("query of rank %d, want 3 [B, S, hidden]", q.Rank())
		}
		heads := h
		if !c.HasIn(1) {
			heads = h + 2*kvh
		}
		d, err := headSize(c, "query", q.Dims[2], heads)
		if err != nil {
			return err
		}
		hidden, _ := MulDim(D(h), d)
		out = RankedShape(q.Dims[0], q.Dims[1], hidden)
	}
	if err := c.SetOut(0, dt, out); err != nil {
		return err
	}
	for i, past := range []int{3, 4} {
		if p := c.InShape(past); p.Ranked && p.Rank() != 4 {
			return c.Errorf("past cache of rank %d, want 4 [B, kv_heads, max_length, head]", p.Rank())
		}
		if err := c.SetOut(1+i, cacheType(c, past, dt), c.InShape(past).Clone()); err != nil {
			return err
		}
	}
	return nil
}

// inferMSRotaryEmbedding: the rotation keeps the input's type and shape.
// A 3-D input without num_heads takes the head size from the cos cache.
func inferMSRotaryEmbedding(c *InferCtx) error {
	if x := c.InShape(0); x.Ranked && x.Rank() != 3 && x.Rank() != 4 {
		return c.Errorf("input of rank %d, want 3 or 4", x.Rank())
	}
	if rot := c.AttrInt("rotary_embedding_dim", 0); rot < 0 || rot%2 != 0 {
		return c.Errorf("rotary_embedding_dim %d must be even and not negative", rot)
	}
	return c.PassThrough(0, 0)
}

// inferMRotaryEmbedding is RotaryEmbedding's rule with M-RoPE's
// position_ids [3, B, S] and its three sections, which together are the
// rotary half (the cos cache's width when it is known).
func inferMRotaryEmbedding(c *InferCtx) error {
	sec, ok := c.AttrInts("mrope_section")
	if !ok || len(sec) != 3 || sec[0] < 0 || sec[1] < 0 || sec[2] < 0 {
		return c.Errorf("mrope_section %v: want three non-negative sizes", sec)
	}
	if p := c.InShape(1); p.Ranked && (p.Rank() != 3 || (p.Dims[0].IsKnown() && p.Dims[0].Value != 3)) {
		return c.Errorf("position_ids %s, want [3, batch, sequence] (temporal, height, width)", p)
	}
	if half, known := knownDim(c.InShape(2), 1); known && c.InShape(2).Rank() == 2 && sec[0]+sec[1]+sec[2] != half {
		return c.Errorf("mrope_section %v sums to %d, the cos cache holds %d of the rotary half", sec, sec[0]+sec[1]+sec[2], half)
	}
	return inferMSRotaryEmbedding(c)
}
