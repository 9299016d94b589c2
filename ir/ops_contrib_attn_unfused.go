package ir

// onnxruntime's two older attention ops whose CUDA kernels keep the
// attention scores in DRAM: DecoderAttention (fairseq/BART-style decoder
// attention over (sequence, batch, hidden) tensors, with its mode given by
// four bool inputs at run time) and LongformerAttention (a sliding window
// of W keys on each side plus a few global tokens). Shapes follow
// docs/ContribOperators.md and the CUDA kernels' input checks
// (decoder_attention.cc, longformer_attention_base.h).

func init() {
	Register(
		// DecoderAttention(query, key, q_weight, kv_weight, bias,
		// key_padding_mask?, key_cache?, value_cache?, static_kv, use_past,
		// has_layer_state, has_key_padding_mask) -> output, new_key_cache?,
		// new_value_cache?
		&OpSchema{Domain: "com.microsoft", Name: "DecoderAttention", Family: FamilyAttention, Since: 1, MinIn: 12, MaxIn: 12, MinOut: 1, MaxOut: 3,
			Infer: inferDecoderAttention,
			Doc:   "ONNX Runtime contrib op: output like query [S, B, hidden]; new key/value caches [B, heads, L, head] with L = S (self), key's length (cross) or the cache's length (+ S for self attention) when use_past and has_layer_state are set"},
		// LongformerAttention(input, weight, bias, mask, global_weight,
		// global_bias, global) -> output
		&OpSchema{Domain: "com.microsoft", Name: "LongformerAttention", Family: FamilyAttention, Since: 1, MinIn: 7, MaxIn: 7, MinOut: 1, MaxOut: 1,
			Infer: inferLongformerAttention,
			Doc:   "ONNX Runtime contrib op: sliding-window (W keys each side) plus global-token self attention with its Q|K|V projections; output like input [B, S, hidden]"},
	)
}

// DecoderAttentionMode is what a DecoderAttention node computes, as far as
// its bool inputs are constants: Cross (static_kv: keys from the key
// input or the cache) and Cached (use_past and has_layer_state: the key
// and value caches are read). Known is false when a flag that matters is
// not a constant: with no cache input Cached is false whatever use_past
// says (the kernel needs the caches to read them), and without a cache
// self and cross attention over keys as long as the queries do the same
// work, so Cross is then false.
type DecoderAttentionMode struct {
	Cross, Cached, Known bool
}

// DecoderAttentionModeOf reads n's static_kv, use_past and
// has_layer_state inputs (slots 8-10).
func DecoderAttentionModeOf(n *Node) DecoderAttentionMode {
	flag := func(i int) (bool, bool) {
		v, ok := ConstScalarInt(n.In(i))
		return v != 0, ok
	}
	cross, crossOK := flag(8)
	usePast, pastOK := flag(9)
	state, stateOK := flag(10)
	m := DecoderAttentionMode{Cross: cross, Known: true}
	switch {
	case n.In(6) == nil || n.In(7) == nil || (pastOK && !usePast) || (stateOK && !state):
		m.Cached = false
	case pastOK && stateOK:
		m.Cached = true
	default:
		m.Known = false
	}
	if !crossOK {
		q, k := shapeOf(n.In(0)), shapeOf(n.In(1))
		sameLen := q.Ranked && k.Ranked && q.Rank() == 3 && k.Rank() == 3 && q.Dims[0].IsKnown() && q.Dims[0] == k.Dims[0]
		if m.Cached || !sameLen {
			m.Known = false
		}
		m.Cross = false
	}
	return m
}

// DecoderKeys is where the keys a DecoderAttention of known mode attends
// come from, and which of them it projects.
type DecoderKeys int

const (
	// KeysQuery: self attention, the query's rows projected to K|V.
	KeysQuery DecoderKeys = iota
	// KeysKey: cross attention, the key input's rows projected to K|V.
	KeysKey
	// KeysCache: cross attention over the caches; nothing projected.
	KeysCache
	// KeysCacheAndQuery: cached self attention, the caches' keys followed
	// by the query's rows, which are projected.
	KeysCacheAndQuery
)

// Keys is m's DecoderKeys (m.Known must hold): the one reading of the
// flags that shape inference (the caches' new length) and the cost rule
// (the rows projected, the keys attended) share.
func (m DecoderAttentionMode) Keys() DecoderKeys {
	switch {
	case m.Cached && m.Cross:
		return KeysCache
	case m.Cached:
		return KeysCacheAndQuery
	case m.Cross:
		return KeysKey
	}
	return KeysQuery
}

// shapeOf is v's shape, unranked for an absent value.
func shapeOf(v *Value) Shape {
	if v == nil {
		return Unranked()
	}
	return v.Shape
}

// inferDecoderAttention refuses query or key not [length, B, hidden] with
// one B and hidden, weights not [hidden, hidden] and [hidden, 2·hidden], a
// bias not [3·hidden], flags that are not bool and caches not [B, heads,
// length, head]; the new caches' length is a fresh symbol when the flags
// that set it are not constants.
func inferDecoderAttention(c *InferCtx) error {
	if err := needFloat(c, 0, "query"); err != nil {
		return err
	}
	h := c.AttrInt("num_heads", 0)
	if h <= 0 {
		return c.Errorf("needs a positive num_heads, has %d", h)
	}
	for i, name := range []string{"static_kv", "use_past", "has_layer_state", "has_key_padding_mask"} {
		if t := c.InType(8 + i); t != Undefined && t != Bool {
			return c.Errorf("%s is %s, want bool", name, t)
		}
		if n, ok := c.InShape(8 + i).NumElements(); ok && n != 1 {
			return c.Errorf("%s has %d elements, want one bool", name, n)
		}
	}
	q, k := c.InShape(0), c.InShape(1)
	if !q.Ranked {
		return setAttnUnranked(c, c.InType(0), c.InType(0))
	}
	if q.Rank() != 3 {
		return c.Errorf("query has rank %d, want 3 [sequence, batch, hidden]", q.Rank())
	}
	seq, b, hidden := q.Dims[0], q.Dims[1], q.Dims[2]
	if err := checkDims(c, 1, "key", Dim{}, b, hidden); err != nil {
		return err
	}
	if err := checkDims(c, 2, "q_weight", hidden, hidden); err != nil {
		return err
	}
	two, _ := MulDim(D(2), hidden)
	three, _ := MulDim(D(3), hidden)
	if err := checkDims(c, 3, "kv_weight", hidden, two); err != nil {
		return err
	}
	if err := checkVector(c, 4, "bias", three); err != nil {
		return err
	}
	head, err := headSize(c, "hidden", hidden, h)
	if err != nil {
		return err
	}
	for i, name := range []string{"key_cache", "value_cache"} {
		if err := checkDims(c, 6+i, name, b, D(h), Dim{}, head); err != nil {
			return err
		}
	}
	if err := c.SetOut(0, c.InType(0), q.Clone()); err != nil {
		return err
	}
	if c.Out(1) == nil && c.Out(2) == nil {
		return nil
	}
	length := decoderKVLength(c, seq, k)
	cache := RankedShape(b, D(h), length, head)
	for i := 1; i <= 2; i++ {
		if err := c.SetOut(i, c.InType(0), cache.Clone()); err != nil {
			return err
		}
	}
	return nil
}

// decoderKVLength is the length of the keys a DecoderAttention attends
// (its new caches'): the queries' seq for self attention, key's for cross
// attention, the cache's (plus seq for self attention) when the caches
// are read.
func decoderKVLength(c *InferCtx, seq Dim, key Shape) Dim {
	m := DecoderAttentionModeOf(c.Node)
	if !m.Known {
		return c.Fresh("kv_sequence_length")
	}
	cacheLen := func() Dim {
		if s := c.InShape(6); s.Ranked && s.Rank() == 4 {
			return s.Dims[2]
		}
		return c.Fresh("cache_sequence_length")
	}
	switch m.Keys() {
	case KeysCache:
		return cacheLen()
	case KeysCacheAndQuery:
		return AddDim(cacheLen(), seq)
	case KeysKey:
		if key.Ranked && key.Rank() == 3 {
			return key.Dims[0]
		}
		return c.Fresh("kv_sequence_length")
	}
	return seq
}

// inferLongformerAttention refuses an input not [B, S, hidden], a
// sequence not a multiple of 2·window, weights in neither of the kernel's
// two formats (merged [hidden, 3·hidden] with a 3·hidden bias and global
// bias; or stacked [3, hidden, hidden] with a 5·hidden bias and a hidden
// global bias) and masks not [B, S]; the output is like the input.
func inferLongformerAttention(c *InferCtx) error {
	if err := needFloat(c, 0, "input"); err != nil {
		return err
	}
	return longformerShapes(c)
}

// longformerShapes is inferLongformerAttention's checks and output over
// its seven slots, whatever the input's type (QOrderedLongformerAttention
// runs it on its int8 tensors).
func longformerShapes(c *InferCtx) error {
	h, w := c.AttrInt("num_heads", 0), c.AttrInt("window", 0)
	if h <= 0 || w <= 0 {
		return c.Errorf("needs a positive num_heads and window, has %d and %d", h, w)
	}
	x := c.InShape(0)
	if !x.Ranked {
		return c.SetOut(0, c.InType(0), Unranked())
	}
	if x.Rank() != 3 {
		return c.Errorf("input has rank %d, want 3 [batch, sequence, hidden]", x.Rank())
	}
	b, s, hidden := x.Dims[0], x.Dims[1], x.Dims[2]
	if s.IsKnown() && s.Value%(2*w) != 0 {
		return c.Errorf("sequence length %d is not a multiple of 2·window = %d", s.Value, 2*w)
	}
	if _, err := headSize(c, "hidden", hidden, h); err != nil {
		return err
	}
	three, _ := MulDim(D(3), hidden)
	five, _ := MulDim(D(5), hidden)
	bias, globalBias := three, three
	if ws := c.InShape(1); ws.Ranked && ws.Rank() == 3 {
		bias, globalBias = five, hidden
		for _, in := range []struct {
			slot int
			name string
		}{{1, "weight"}, {4, "global_weight"}} {
			if err := checkDims(c, in.slot, in.name, D(3), hidden, hidden); err != nil {
				return err
			}
		}
	} else {
		for _, in := range []struct {
			slot int
			name string
		}{{1, "weight"}, {4, "global_weight"}} {
			if err := checkDims(c, in.slot, in.name, hidden, three); err != nil {
				return err
			}
		}
	}
	if err := checkVector(c, 2, "bias", bias); err != nil {
		return err
	}
	if err := checkVector(c, 5, "global_bias", globalBias); err != nil {
		return err
	}
	for _, in := range []struct {
		slot int
		name string
	}{{3, "mask"}, {6, "global"}} {
		if err := checkDims(c, in.slot, in.name, b, s); err != nil {
			return err
		}
	}
	if t := c.InType(6); t != Undefined && t != Int32 {
		return c.Errorf("global is %s, want int32", t)
	}
	return c.PassThrough(0, 0)
}
