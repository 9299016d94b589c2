package models

import (
	"cmp"
	"fmt"
	"strconv"

	"github.com/onnxcost/onnxcost/internal/detmath"
	"github.com/onnxcost/onnxcost/ir"
)

// GPTConfig is a GPT-2-style decoder: learned token and position
// embeddings, pre-LN blocks (LayerNorm, causal attention with one packed
// QKV projection, tanh-GELU MLP of width 4·d), final LayerNorm and an LM
// head tied to the token embedding. The zero value is GPT-2 small.
type GPTConfig struct {
	Vocab     int64 // default 50257
	Positions int64 // learned positions (n_positions); default 1024
	DModel    int64 // default 768
	Heads     int64 // default 12
	Layers    int   // default 12
	Seq       int64 // default 1024; Symbolic = "seq"
	Batch     int64 // default 1; Symbolic = "batch"
	// Untied gives the LM head its own [d,vocab] weight (MatMul) instead
	// of reusing the token embedding (Gemm with transB).
	Untied bool
	// Decode and Past are as in LlamaConfig: one generation step over a
	// key/value cache of Past positions ([batch, heads, Past, head_dim]).
	Decode bool
	Past   int64
}

// GPT-2's published sizes.
var (
	GPT2Small  = GPTConfig{DModel: 768, Heads: 12, Layers: 12}
	GPT2Medium = GPTConfig{DModel: 1024, Heads: 16, Layers: 24}
	GPT2Large  = GPTConfig{DModel: 1280, Heads: 20, Layers: 36}
	GPT2XL     = GPTConfig{DModel: 1600, Heads: 25, Layers: 48}
)

func (c *GPTConfig) defaults() {
	c.Vocab = cmp.Or(c.Vocab, 50257)
	c.Positions = cmp.Or(c.Positions, 1024)
	c.DModel = cmp.Or(c.DModel, 768)
	c.Heads = cmp.Or(c.Heads, 12)
	c.Seq = cmp.Or(c.Seq, 1024)
	c.Batch = cmp.Or(c.Batch, 1)
	if c.Layers == 0 {
		c.Layers = 12
	}
}

// GPT builds the decoder; input "input_ids" [batch,seq] int64, output
// "logits" [batch,seq,vocab].
func GPT(c GPTConfig) (*ir.Model, error) {
	c.defaults()
	if c.Vocab <= 0 || c.Positions <= 0 || c.DModel <= 0 || c.Heads <= 0 || c.Layers <= 0 || c.DModel%c.Heads != 0 {
		return nil, fmt.Errorf("gpt: vocab, positions, d_model, heads and layers must be > 0 and heads must divide d_model")
	}
	if err := checkDims(c.Batch, c.Seq); err != nil {
		return nil, fmt.Errorf("gpt: %v", err)
	}
	if c.Seq > c.Positions {
		return nil, fmt.Errorf("gpt: seq %d exceeds the %d learned positions", c.Seq, c.Positions)
	}
	if c.Decode && c.Past < 0 && c.Past != Symbolic {
		return nil, fmt.Errorf("gpt: decode needs past >= 0 (cached positions; 0 is an empty cache, a prompt's step), or %d for a symbolic past_sequence_length", Symbolic)
	}
	if c.Decode && c.Past > 0 && c.Seq > 0 && c.Past+c.Seq > c.Positions {
		return nil, fmt.Errorf("gpt: past %d + seq %d exceeds the %d learned positions", c.Past, c.Seq, c.Positions)
	}
	b := newBuilder("gpt")
	d, hd := c.DModel, c.DModel/c.Heads
	ids := b.input("input_ids", ir.Int64, dim(c.Batch, "batch"), dim(c.Seq, "seq"))
	seq := b.seqLen("", ids)
	var pasts [][2]*ir.Value
	var mask, positions *ir.Value
	if c.Decode {
		var start *ir.Value
		pasts, start = b.pastKV("", c.Layers, dimsKV(c.Batch, c.Heads, c.Past, hd))
		positions = b.op("", "Range", []*ir.Value{start, b.op("", "Add", []*ir.Value{start, seq}), b.scalarInt("", 1)})
		mask = b.offsetCausalMask("", seq, start)
	} else {
		positions = b.positions("", seq)
		mask = b.causalMask("", seq)
	}
	wte := b.weight("wte.weight", c.Vocab, d)
	tok := b.op("/wte", "Gather", []*ir.Value{wte, ids})
	pos := b.op("/wpe", "Gather", []*ir.Value{b.weight("wpe.weight", c.Positions, d), positions})
	x := b.op("", "Add", []*ir.Value{tok, pos})
	for l := 0; b.err == nil && l < c.Layers; l++ {
		scope := "/h." + strconv.Itoa(l)
		prefix := "h." + strconv.Itoa(l)
		h := b.layerNorm(scope+"/ln_1", prefix+".ln_1", x, d, 1e-5)
		qkv := b.linear(scope+"/attn/c_attn", prefix+".attn.c_attn", h, d, 3*d, true)
		parts := b.opN(scope+"/attn", "Split", 3, []*ir.Value{qkv, b.ints(scope+"/attn", d, d, d)}, ir.IntAttr("axis", 2))
		var a *ir.Value
		if c.Decode {
			a = b.mhaCached(scope+"/attn", parts[0], parts[1], parts[2], mask, c.Heads, d, pasts[l], l)
		} else {
			a = b.mha(scope+"/attn", parts[0], parts[1], parts[2], mask, c.Heads, d)
		}
		a = b.linear(scope+"/attn/c_proj", prefix+".attn.c_proj", a, d, d, true)
		x = b.op(scope, "Add", []*ir.Value{x, a})
		h = b.layerNorm(scope+"/ln_2", prefix+".ln_2", x, d, 1e-5)
		h = b.linear(scope+"/c_fc", prefix+".c_fc", h, d, 4*d, true)
		h = b.geluTanh(scope, h)
		h = b.linear(scope+"/c_proj", prefix+".c_proj", h, 4*d, d, true)
		x = b.op(scope, "Add", []*ir.Value{x, h})
	}
	x = b.layerNorm("/ln_f", "ln_f", x, d, 1e-5)
	var logits *ir.Value
	if c.Untied {
		logits = b.linear("/lm_head", "lm_head", x, d, c.Vocab, false)
	} else {
		logits = b.tiedHead("/lm_head", x, wte, c.Vocab, d)
	}
	b.output(logits, "logits")
	return b.finish()
}

// tiedHead multiplies [b,s,d] by the transposed embedding [vocab,d]
// without copying it: flatten the tokens, Gemm with transB, and reshape to
// [b,s,vocab] (the leading dims taken from x's shape, so they may be
// symbolic).
func (b *builder) tiedHead(scope string, x, emb *ir.Value, vocab, d int64) *ir.Value {
	flat := b.op(scope, "Reshape", []*ir.Value{x, b.ints(scope, -1, d)})
	y := b.op(scope, "Gemm", []*ir.Value{flat, emb}, aFloat("alpha", 1), aFloat("beta", 1), ir.IntAttr("transB", 1))
	lead := b.op(scope, "Slice", []*ir.Value{b.op(scope, "Shape", []*ir.Value{x}), b.ints(scope, 0), b.ints(scope, 2), b.ints(scope, 0)})
	shape := b.op(scope, "Concat", []*ir.Value{lead, b.ints(scope, vocab)}, ir.IntAttr("axis", 0))
	return b.op(scope, "Reshape", []*ir.Value{y, shape})
}

// LlamaConfig is a LLaMA-style decoder: RMSNorm, rotary position
// embedding, grouped-query attention (KVHeads key/value heads shared by
// Heads/KVHeads query heads each), SwiGLU MLP, untied LM head. The zero
// value is LLaMA-2 7B.
type LlamaConfig struct {
	Vocab     int64   // default 32000
	DModel    int64   // default 4096
	Heads     int64   // default 32
	KVHeads   int64   // default Heads (plain multi-head attention)
	Layers    int     // default 32
	FF        int64   // SwiGLU hidden width; default 11008
	Seq       int64   // default 2048; Symbolic = "seq"
	Batch     int64   // default 1; Symbolic = "batch"
	Eps       float64 // RMSNorm epsilon; default 1e-5
	RopeTheta float64 // rotary base; default 10000
	// Decode builds one generation step with a key/value cache: per
	// layer, inputs past_key_values.L.key/.value [batch, kv_heads, Past,
	// head_dim] are concatenated with the Seq new tokens' keys and values
	// (outputs present.L.key/.value), the new tokens attend to all
	// Past+Seq positions, and rotary positions start at Past. Seq is then
	// the number of new tokens (1 for a plain decode step).
	Decode bool
	Past   int64 // cached positions; Symbolic = "past_sequence_length"
}

// LLaMA-2's published sizes, and a tiny one for tests.
var (
	Llama7B    = LlamaConfig{DModel: 4096, Heads: 32, KVHeads: 32, Layers: 32, FF: 11008}
	Llama13B   = LlamaConfig{DModel: 5120, Heads: 40, KVHeads: 40, Layers: 40, FF: 13824}
	Llama70B   = LlamaConfig{DModel: 8192, Heads: 64, KVHeads: 8, Layers: 80, FF: 28672}
	LlamaTiny  = LlamaConfig{Vocab: 1000, DModel: 64, Heads: 4, KVHeads: 2, Layers: 2, FF: 172, Seq: 16}
	llamaNames = map[string]LlamaConfig{"tiny": LlamaTiny, "7b": Llama7B, "13b": Llama13B, "70b": Llama70B}
)

func (c *LlamaConfig) defaults() {
	c.Vocab = cmp.Or(c.Vocab, 32000)
	c.DModel = cmp.Or(c.DModel, 4096)
	c.Heads = cmp.Or(c.Heads, 32)
	c.KVHeads = cmp.Or(c.KVHeads, c.Heads)
	c.FF = cmp.Or(c.FF, 11008)
	c.Seq = cmp.Or(c.Seq, 2048)
	c.Batch = cmp.Or(c.Batch, 1)
	if c.Layers == 0 {
		c.Layers = 32
	}
	if c.Eps == 0 {
		c.Eps = 1e-5
	}
	if c.RopeTheta == 0 {
		c.RopeTheta = 10000
	}
}

// Llama builds the decoder; input "input_ids" [batch,seq] int64, output
// "logits" [batch,seq,vocab].
func Llama(c LlamaConfig) (*ir.Model, error) {
	c.defaults()
	switch {
	case c.Vocab <= 0 || c.DModel <= 0 || c.Heads <= 0 || c.KVHeads <= 0 || c.Layers <= 0 || c.FF <= 0:
		return nil, fmt.Errorf("llama: vocab, d_model, heads, kv_heads, layers and ff must be > 0")
	case c.DModel%c.Heads != 0 || (c.DModel/c.Heads)%2 != 0:
		return nil, fmt.Errorf("llama: heads must divide d_model into an even head size (rotary pairs)")
	case c.Heads%c.KVHeads != 0:
		return nil, fmt.Errorf("llama: kv_heads %d must divide heads %d", c.KVHeads, c.Heads)
	}
	if err := checkDims(c.Batch, c.Seq); err != nil {
		return nil, fmt.Errorf("llama: %v", err)
	}
	if c.Decode && c.Past < 0 && c.Past != Symbolic {
		return nil, fmt.Errorf("llama: decode needs past >= 0 (cached positions; 0 is an empty cache, a prompt's step), or %d for a symbolic past_sequence_length", Symbolic)
	}
	b := newBuilder("llama")
	d, hd := c.DModel, c.DModel/c.Heads
	ids := b.input("input_ids", ir.Int64, dim(c.Batch, "batch"), dim(c.Seq, "seq"))
	seq := b.seqLen("/model", ids)
	x := b.op("/model/embed_tokens", "Gather", []*ir.Value{b.weight("model.embed_tokens.weight", c.Vocab, d), ids})
	var pasts [][2]*ir.Value
	var mask, start *ir.Value
	if c.Decode {
		pasts, start = b.pastKV("/model", c.Layers, dimsKV(c.Batch, c.KVHeads, c.Past, hd))
		mask = b.offsetCausalMask("/model", seq, start)
	} else {
		mask = b.causalMask("/model", seq)
	}
	cos, sin := b.rotaryTablesFrom("/model/rotary_emb", start, seq, hd, c.RopeTheta)
	for l := 0; b.err == nil && l < c.Layers; l++ {
		scope := "/model/layers." + strconv.Itoa(l)
		prefix := "model.layers." + strconv.Itoa(l)
		h := b.rmsNorm(scope+"/input_layernorm", prefix+".input_layernorm", x, d, c.Eps)
		var past [2]*ir.Value
		if c.Decode {
			past = pasts[l]
		}
		a := b.gqa(scope+"/self_attn", prefix+".self_attn", h, mask, cos, sin, c, past, l)
		x = b.op(scope, "Add", []*ir.Value{x, a})
		h = b.rmsNorm(scope+"/post_attention_layernorm", prefix+".post_attention_layernorm", x, d, c.Eps)
		h = b.swiGLU(scope+"/mlp", prefix+".mlp", h, d, c.FF)
		x = b.op(scope, "Add", []*ir.Value{x, h})
	}
	x = b.rmsNorm("/model/norm", "model.norm", x, d, c.Eps)
	b.output(b.linear("/lm_head", "lm_head", x, d, c.Vocab, false), "logits")
	return b.finish()
}

// rotaryTablesFrom computes cos and sin of pos·θ^(-2i/hd), [seq,1,hd] (the
// frequencies repeated for both halves, as HF's rotate_half layout
// wants) for positions start … start+seq−1
// (start nil: 0), as a decode step after start cached positions needs.
func (b *builder) rotaryTablesFrom(scope string, start, seq *ir.Value, hd int64, theta float64) (cos, sin *ir.Value) {
	inv := make([]float64, hd/2)
	for i := range inv {
		inv[i] = 1 / detmath.Pow(theta, float64(2*i)/float64(hd))
	}
	positions := b.positions(scope, seq)
	if start != nil {
		end := b.op(scope, "Add", []*ir.Value{start, seq})
		positions = b.op(scope, "Range", []*ir.Value{start, end, b.scalarInt(scope, 1)})
	}
	pos := b.op(scope, "Cast", []*ir.Value{positions}, ir.IntAttr("to", int64(ir.Float32)))
	pos = b.op(scope, "Unsqueeze", []*ir.Value{pos, b.ints(scope, 1)})
	freqs := b.op(scope, "Mul", []*ir.Value{pos, b.floats(scope, inv)})
	emb := b.op(scope, "Concat", []*ir.Value{freqs, freqs}, ir.IntAttr("axis", -1))
	emb = b.op(scope, "Unsqueeze", []*ir.Value{emb, b.ints(scope, 1)})
	return b.op(scope, "Cos", []*ir.Value{emb}), b.op(scope, "Sin", []*ir.Value{emb})
}

// rope applies the rotary embedding to x [b,s,heads,hd]:
// x·cos + rotate_half(x)·sin, rotate_half(x) = concat(−x₂, x₁).
func (b *builder) rope(scope string, x, cos, sin *ir.Value, hd int64) *ir.Value {
	half := hd / 2
	x1 := b.op(scope, "Slice", []*ir.Value{x, b.ints(scope, 0), b.ints(scope, half), b.ints(scope, -1)})
	x2 := b.op(scope, "Slice", []*ir.Value{x, b.ints(scope, half), b.ints(scope, hd), b.ints(scope, -1)})
	rot := b.op(scope, "Concat", []*ir.Value{b.op(scope, "Neg", []*ir.Value{x2}), x1}, ir.IntAttr("axis", -1))
	return b.op(scope, "Add", []*ir.Value{
		b.op(scope, "Mul", []*ir.Value{x, cos}),
		b.op(scope, "Mul", []*ir.Value{rot, sin}),
	})
}

// gqa is LLaMA attention. With as many key/value heads as query heads it
// is ordinary 4-D multi-head attention. With fewer, the query heads are
// grouped as [b, kv_heads, group, s, hd] and the keys and values get a
// broadcast axis [b, kv_heads, 1, ·, ·], so MatMul shares each key/value
// head with its group without materialising repeat_kv copies; the MACs
// are the same as attention over the repeated heads.
func (b *builder) gqa(scope, prefix string, x, mask, cos, sin *ir.Value, c LlamaConfig, past [2]*ir.Value, layer int) *ir.Value {
	d, hd := c.DModel, c.DModel/c.Heads
	q := b.linear(scope+"/q_proj", prefix+".q_proj", x, d, c.Heads*hd, false)
	k := b.linear(scope+"/k_proj", prefix+".k_proj", x, d, c.KVHeads*hd, false)
	v := b.linear(scope+"/v_proj", prefix+".v_proj", x, d, c.KVHeads*hd, false)
	q = b.rope(scope, b.splitHeads(scope, q, c.Heads, hd), cos, sin, hd)
	k = b.rope(scope, b.splitHeads(scope, k, c.KVHeads, hd), cos, sin, hd)
	v = b.splitHeads(scope, v, c.KVHeads, hd)
	// Keys transposed for q·kᵀ and values as [b, kv_heads, positions, hd].
	// With a cache, the new positions are appended to the past ones first
	// (and returned as present); without one the graph is as exported.
	var kT, vh *ir.Value
	if past[0] != nil {
		kh := b.op(scope, "Transpose", []*ir.Value{k}, ir.IntsAttr("perm", 0, 2, 1, 3))
		vh = b.op(scope, "Transpose", []*ir.Value{v}, ir.IntsAttr("perm", 0, 2, 1, 3))
		kh = b.op(scope, "Concat", []*ir.Value{past[0], kh}, ir.IntAttr("axis", 2))
		vh = b.op(scope, "Concat", []*ir.Value{past[1], vh}, ir.IntAttr("axis", 2))
		kh = b.output(kh, "present."+strconv.Itoa(layer)+".key")
		vh = b.output(vh, "present."+strconv.Itoa(layer)+".value")
		kT = b.op(scope, "Transpose", []*ir.Value{kh}, ir.IntsAttr("perm", 0, 1, 3, 2))
	} else {
		kT = b.op(scope, "Transpose", []*ir.Value{k}, ir.IntsAttr("perm", 0, 2, 3, 1))
		vh = b.op(scope, "Transpose", []*ir.Value{v}, ir.IntsAttr("perm", 0, 2, 1, 3))
	}
	var y *ir.Value
	if group := c.Heads / c.KVHeads; group == 1 {
		qh := b.op(scope, "Transpose", []*ir.Value{q}, ir.IntsAttr("perm", 0, 2, 1, 3))
		y = b.attend(scope, qh, kT, vh, mask, hd)
		y = b.op(scope, "Transpose", []*ir.Value{y}, ir.IntsAttr("perm", 0, 2, 1, 3))
	} else {
		qg := b.op(scope, "Reshape", []*ir.Value{q, b.ints(scope, 0, 0, c.KVHeads, group, hd)})
		qg = b.op(scope, "Transpose", []*ir.Value{qg}, ir.IntsAttr("perm", 0, 2, 3, 1, 4))
		kT = b.op(scope, "Unsqueeze", []*ir.Value{kT, b.ints(scope, 2)})
		vh = b.op(scope, "Unsqueeze", []*ir.Value{vh, b.ints(scope, 2)})
		y = b.attend(scope, qg, kT, vh, mask, hd)
		y = b.op(scope, "Transpose", []*ir.Value{y}, ir.IntsAttr("perm", 0, 3, 1, 2, 4))
	}
	y = b.op(scope, "Reshape", []*ir.Value{y, b.ints(scope, 0, 0, d)})
	return b.linear(scope+"/o_proj", prefix+".o_proj", y, d, d, false)
}

// swiGLU is LLaMA's MLP: down(silu(gate(x)) · up(x)).
func (b *builder) swiGLU(scope, prefix string, x *ir.Value, d, ff int64) *ir.Value {
	g := b.linear(scope+"/gate_proj", prefix+".gate_proj", x, d, ff, false)
	u := b.linear(scope+"/up_proj", prefix+".up_proj", x, d, ff, false)
	h := b.op(scope, "Mul", []*ir.Value{b.silu(scope+"/act_fn", g), u})
	return b.linear(scope+"/down_proj", prefix+".down_proj", h, ff, d, false)
}

// pastKV adds the key/value cache inputs of a decode step, one pair per
// layer named as Hugging Face exports them (past_key_values.L.key and
// .value, each of dims), and returns them with the cached length (dim 2
// of the first key, read at run time) where the new positions start.
func (b *builder) pastKV(scope string, layers int, dims []ir.Dim) (pasts [][2]*ir.Value, start *ir.Value) {
	for l := 0; l < layers; l++ {
		pasts = append(pasts, [2]*ir.Value{
			b.input("past_key_values."+strconv.Itoa(l)+".key", ir.Float32, dims...),
			b.input("past_key_values."+strconv.Itoa(l)+".value", ir.Float32, dims...),
		})
	}
	start = b.op(scope, "Gather", []*ir.Value{b.op(scope, "Shape", []*ir.Value{pasts[0][0]}), b.scalarInt(scope, 2)}, ir.IntAttr("axis", 0))
	return pasts, start
}

// dimsKV is the shape of a cached key or value: [batch, kv_heads, past,
// head_dim], batch and past symbolic when Symbolic; past may be 0.
func dimsKV(batch, kvHeads, past, hd int64) []ir.Dim {
	p := dim(past, "past_sequence_length")
	if past == 0 {
		// An empty cache (the prompt's step) is a real length, not "unset".
		p = ir.D(0)
	}
	return []ir.Dim{dim(batch, "batch"), ir.D(kvHeads), p, ir.D(hd)}
}

// offsetCausalMask is causalMask for seq new tokens after start cached
// ones: [1,1,s,start+s], token i sees positions ≤ start+i
// (Trilu upper with k = start+1).
func (b *builder) offsetCausalMask(scope string, seq, start *ir.Value) *ir.Value {
	total := b.op(scope, "Add", []*ir.Value{start, seq})
	s1 := b.op(scope, "Unsqueeze", []*ir.Value{seq, b.ints(scope, 0)})
	t1 := b.op(scope, "Unsqueeze", []*ir.Value{total, b.ints(scope, 0)})
	shape := b.op(scope, "Concat", []*ir.Value{b.ints(scope, 1, 1), s1, t1}, ir.IntAttr("axis", 0))
	fill := ir.FloatTensor(ir.Float32, []int64{1}, []float64{negInf})
	full := b.op(scope, "ConstantOfShape", []*ir.Value{shape}, &ir.Attribute{Name: "value", Type: ir.AttrTensor, T: fill})
	k := b.op(scope, "Add", []*ir.Value{start, b.scalarInt(scope, 1)})
	return b.op(scope, "Trilu", []*ir.Value{full, k}, ir.IntAttr("upper", 1))
}

// mhaCached is mha with a key/value cache: the new keys and values
// ([b,heads,s,hd]) are appended to past (present.L.key/.value) and the
// queries attend to every cached and new position.
func (b *builder) mhaCached(scope string, q, k, v, mask *ir.Value, heads, d int64, past [2]*ir.Value, layer int) *ir.Value {
	hd := d / heads
	qh := b.splitHeads(scope, q, heads, hd, 0, 2, 1, 3)
	kh := b.splitHeads(scope, k, heads, hd, 0, 2, 1, 3)
	vh := b.splitHeads(scope, v, heads, hd, 0, 2, 1, 3)
	kh = b.output(b.op(scope, "Concat", []*ir.Value{past[0], kh}, ir.IntAttr("axis", 2)), "present."+strconv.Itoa(layer)+".key")
	vh = b.output(b.op(scope, "Concat", []*ir.Value{past[1], vh}, ir.IntAttr("axis", 2)), "present."+strconv.Itoa(layer)+".value")
	kT := b.op(scope, "Transpose", []*ir.Value{kh}, ir.IntsAttr("perm", 0, 1, 3, 2))
	y := b.attend(scope, qh, kT, vh, mask, hd)
	y = b.op(scope, "Transpose", []*ir.Value{y}, ir.IntsAttr("perm", 0, 2, 1, 3))
	return b.op(scope, "Reshape", []*ir.Value{y, b.ints(scope, 0, 0, d)})
}
