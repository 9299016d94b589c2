package ir

import (
	"strings"
	"testing"
)

const ms = "com.microsoft::"

// LLaMA-3-8B shaped GroupQueryAttention as onnxruntime-genai writes it:
// H = 32, kvH = 8, d = 128.
func TestGroupQueryAttentionInfer(t *testing.T) {
	f16 := Float16
	heads := []*Attribute{IntAttr("num_heads", 32), IntAttr("kv_num_heads", 8)}
	q := faShape("b", "s", 4096)
	kv := faShape("b", "s", 1024)
	past := faShape("b", 8, "past", 128)
	seqlens, total := faInput(Int32, faShape("b")), faInput(Int32, faShape())
	gqa := func(q, k, v, pk, pv faIn, tot faIn) []faIn {
		return []faIn{q, k, v, pk, pv, seqlens, tot}
	}
	present := faShape("b", 8, "past+s", 128)
	runFAOutputs(t, "separate q, k, v", ms+"GroupQueryAttention", 17,
		gqa(faInput(f16, q), faInput(f16, kv), faInput(f16, kv), faInput(f16, past), faInput(f16, past), total), heads,
		[]TypeInfo{{DType: f16, Shape: q}, {DType: f16, Shape: present}, {DType: f16, Shape: present}, {DType: f16, Shape: faShape("b", 32, "s", "past+s")}})
	// Packed Q|K|V: (32 + 2·8)·128 = 6144 wide.
	runFAOutputs(t, "packed qkv", ms+"GroupQueryAttention", 17,
		gqa(faInput(f16, faShape("b", "s", 6144)), faOmitted, faOmitted, faInput(f16, past), faInput(f16, past), total), heads,
		[]TypeInfo{{DType: f16, Shape: q}, {DType: f16, Shape: present}, {DType: f16, Shape: present}})
	// A decode step with a known total: past 1023 + 1 new = 1024 rows.
	dec := gqa(faInput(f16, faShape(1, 1, 4096)), faInput(f16, faShape(1, 1, 1024)), faInput(f16, faShape(1, 1, 1024)),
		faInput(f16, faShape(1, 8, 1023, 128)), faInput(f16, faShape(1, 8, 1023, 128)), faKnown(&Tensor{DType: Int32, Ints: []int64{1024}, HasData: true}))
	runFAOutputs(t, "decode, known total", ms+"GroupQueryAttention", 17, dec, heads,
		[]TypeInfo{{DType: f16, Shape: faShape(1, 1, 4096)}, {DType: f16, Shape: faShape(1, 8, 1024, 128)}, {DType: f16, Shape: faShape(1, 8, 1024, 128)}})
	// A shared buffer of the maximum length keeps its length.
	shared := gqa(faInput(f16, faShape(1, 1, 4096)), faInput(f16, faShape(1, 1, 1024)), faInput(f16, faShape(1, 1, 1024)),
		faInput(f16, faShape(1, 8, 4096, 128)), faInput(f16, faShape(1, 8, 4096, 128)), faKnown(&Tensor{DType: Int32, Ints: []int64{1024}, HasData: true}))
	runFAOutputs(t, "shared buffer", ms+"GroupQueryAttention", 17, shared, heads,
		[]TypeInfo{{DType: f16, Shape: faShape(1, 1, 4096)}, {DType: f16, Shape: faShape(1, 8, 4096, 128)}, {DType: f16, Shape: faShape(1, 8, 4096, 128)}})
	// An int8 cache keeps its type in present.
	runFAOutputs(t, "int8 cache", ms+"GroupQueryAttention", 17,
		gqa(faInput(f16, q), faInput(f16, kv), faInput(f16, kv), faInput(Int8, past), faInput(Int8, past), total), heads,
		[]TypeInfo{{DType: f16, Shape: q}, {DType: Int8, Shape: present}, {DType: Int8, Shape: present}})
	// A 4-bit cache packs two values a byte: 64 bytes a row of head 128.
	packed := faShape("b", 8, "past", 64)
	runFAOutputs(t, "int4 cache", ms+"GroupQueryAttention", 17,
		gqa(faInput(f16, q), faInput(f16, kv), faInput(f16, kv), faInput(Uint8, packed), faInput(Uint8, packed), total),
		append(heads, IntAttr("kv_cache_bit_width", 4)),
		[]TypeInfo{{DType: f16, Shape: q}, {DType: Uint8, Shape: faShape("b", 8, "past+s", 64)}, {DType: Uint8, Shape: faShape("b", 8, "past+s", 64)}})
	// A window-sized cache (sliding_window_cache) keeps its capacity.
	window := faShape("b", 8, 4096, 128)
	runFAOutputs(t, "sliding window cache", ms+"GroupQueryAttention", 17,
		gqa(faInput(f16, q), faInput(f16, kv), faInput(f16, kv), faInput(f16, window), faInput(f16, window), total),
		append(heads, IntAttr("sliding_window_cache", 1), IntAttr("local_window_size", 4096)),
		[]TypeInfo{{DType: f16, Shape: q}, {DType: f16, Shape: window}, {DType: f16, Shape: window}})
	ok := gqa(faInput(f16, q), faInput(f16, kv), faInput(f16, kv), faInput(f16, past), faInput(f16, past), total)
	runFATypeCases(t, []faTypeCase{
		{name: "gqa without heads", op: ms + "GroupQueryAttention", opset: 17, ins: ok, wantErr: "num_heads"},
		{name: "gqa heads not grouped", op: ms + "GroupQueryAttention", opset: 17, ins: ok,
			attrs: []*Attribute{IntAttr("num_heads", 32), IntAttr("kv_num_heads", 5)}, wantErr: "not a multiple of kv_num_heads"},
		{name: "gqa query not split by heads", op: ms + "GroupQueryAttention", opset: 17, attrs: heads,
			ins: gqa(faInput(f16, faShape("b", "s", 4001)), faInput(f16, kv), faInput(f16, kv), faInput(f16, past), faInput(f16, past), total), wantErr: "query width 4001"},
		{name: "gqa 4-D query", op: ms + "GroupQueryAttention", opset: 17, attrs: heads,
			ins: gqa(faInput(f16, faShape(1, 32, 1, 128)), faInput(f16, kv), faInput(f16, kv), faInput(f16, past), faInput(f16, past), total), wantErr: "rank 4"},
		{name: "gqa 3-D past", op: ms + "GroupQueryAttention", opset: 17, attrs: heads,
			ins: gqa(faInput(f16, q), faInput(f16, kv), faInput(f16, kv), faInput(f16, faShape(1, 8, 128)), faInput(f16, past), total), wantErr: "past cache of rank 3"},
		{name: "gqa unranked query", op: ms + "GroupQueryAttention", opset: 17, attrs: heads,
			ins: gqa(faInput(f16, Unranked()), faInput(f16, kv), faInput(f16, kv), faInput(f16, past), faInput(f16, past), total), wantDT: f16, want: Unranked()},
	})
}

func TestMultiHeadAttentionInfer(t *testing.T) {
	f32 := Float32
	h := []*Attribute{IntAttr("num_heads", 12)}
	x := faShape("b", "s", 768)
	past := faShape("b", 12, "p", 64)
	runFAOutputs(t, "self attention", ms+"MultiHeadAttention", 1,
		[]faIn{faInput(f32, x), faInput(f32, x), faInput(f32, x)}, h, []TypeInfo{{DType: f32, Shape: x}})
	// GPT-2 decoding with a cache: present [b, 12, p+s, 64].
	withPast := []faIn{faInput(f32, x), faInput(f32, x), faInput(f32, x), faInput(f32, faShape(2304)), faOmitted, faOmitted,
		faInput(f32, past), faInput(f32, past)}
	present := faShape("b", 12, "p+s", 64)
	runFAOutputs(t, "with past", ms+"MultiHeadAttention", 1, withPast, h,
		[]TypeInfo{{DType: f32, Shape: x}, {DType: f32, Shape: present}, {DType: f32, Shape: present}, {DType: f32, Shape: faShape("b", 12, "s", "p+s")}})
	// past_sequence_length given: one buffer of past's length.
	runFAOutputs(t, "shared buffer", ms+"MultiHeadAttention", 1, append(withPast, faInput(Int32, faShape(1))), h,
		[]TypeInfo{{DType: f32, Shape: x}, {DType: f32, Shape: past}, {DType: f32, Shape: past}})
	runFAOutputs(t, "packed qkv", ms+"MultiHeadAttention", 1,
		[]faIn{faInput(f32, faShape("b", "s", 12, 3, 64))}, h, []TypeInfo{{DType: f32, Shape: x}})
	runFAOutputs(t, "packed kv, cross", ms+"MultiHeadAttention", 1,
		[]faIn{faInput(f32, x), faInput(f32, faShape("b", "l", 12, 2, 64))}, h, []TypeInfo{{DType: f32, Shape: x}})
	runFAOutputs(t, "cached cross keys", ms+"MultiHeadAttention", 1,
		[]faIn{faInput(f32, x), faInput(f32, faShape("b", 12, "l", 64)), faInput(f32, faShape("b", 12, "l", 64))}, h, []TypeInfo{{DType: f32, Shape: x}})
	runFATypeCases(t, []faTypeCase{
		{name: "mha without heads", op: ms + "MultiHeadAttention", opset: 1, ins: []faIn{faInput(f32, x)}, wantErr: "num_heads"},
		{name: "mha hidden not split", op: ms + "MultiHeadAttention", opset: 1, attrs: []*Attribute{IntAttr("num_heads", 5)},
			ins: []faIn{faInput(f32, x), faInput(f32, x), faInput(f32, x)}, wantErr: "query width 768"},
		{name: "mha 2-D query", op: ms + "MultiHeadAttention", opset: 1, attrs: h, ins: []faIn{faInput(f32, faShape(4, 768))}, wantErr: "rank 2"},
	})
}

// BERT-base: hidden 768, 12 heads, Q|K|V weights [768, 2304].
func TestMSAttentionInfer(t *testing.T) {
	f16 := Float16
	h := []*Attribute{IntAttr("num_heads", 12)}
	x := faShape("b", 128, 768)
	w, bias := faInput(f16, faShape(768, 2304)), faInput(f16, faShape(2304))
	runFAOutputs(t, "bert", ms+"Attention", 1, []faIn{faInput(f16, x), w, bias, faInput(Int32, faShape("b"))}, h,
		[]TypeInfo{{DType: f16, Shape: x}})
	past := faShape(2, "b", 12, "p", 64)
	runFAOutputs(t, "gpt-2 past", ms+"Attention", 1, []faIn{faInput(f16, faShape("b", 1, 768)), w, bias, faOmitted, faInput(f16, past)}, h,
		[]TypeInfo{{DType: f16, Shape: faShape("b", 1, 768)}, {DType: f16, Shape: faShape(2, "b", 12, "p+1", 64)}})
	runFAOutputs(t, "shared buffer", ms+"Attention", 1, []faIn{faInput(f16, faShape("b", 1, 768)), w, bias, faOmitted, faInput(f16, past)},
		[]*Attribute{IntAttr("num_heads", 12), IntAttr("past_present_share_buffer", 1)},
		[]TypeInfo{{DType: f16, Shape: faShape("b", 1, 768)}, {DType: f16, Shape: past}})
	runFAOutputs(t, "qkv_hidden_sizes", ms+"Attention", 1, []faIn{faInput(f16, x), faInput(f16, faShape(768, 2048)), faInput(f16, faShape(2048))},
		[]*Attribute{IntAttr("num_heads", 8), IntsAttr("qkv_hidden_sizes", 768, 768, 512)}, []TypeInfo{{DType: f16, Shape: faShape("b", 128, 512)}})
	runFATypeCases(t, []faTypeCase{
		{name: "ms attention rows disagree", op: ms + "Attention", opset: 1, attrs: h, ins: []faIn{faInput(f16, x), faInput(f16, faShape(512, 2304))}, wantErr: "768 but weights have 512"},
		{name: "ms attention uneven thirds", op: ms + "Attention", opset: 1, attrs: h, ins: []faIn{faInput(f16, x), faInput(f16, faShape(768, 2300))}, wantErr: "three equal parts"},
		{name: "ms attention sizes not the weights'", op: ms + "Attention", opset: 1, attrs: append([]*Attribute{IntsAttr("qkv_hidden_sizes", 768, 768, 768)}, h...),
			ins: []faIn{faInput(f16, x), faInput(f16, faShape(768, 2048))}, wantErr: "not qkv_hidden_sizes [768 768 768] summed"},
		{name: "ms attention without heads", op: ms + "Attention", opset: 1, ins: []faIn{faInput(f16, x), w}, wantErr: "num_heads"},
	})
}

func TestMSRotaryEmbeddingInfer(t *testing.T) {
	f16 := Float16
	x3 := faShape("b", "s", 4096)
	ins := func(x Shape) []faIn {
		return []faIn{faInput(f16, x), faInput(Int64, faShape("b", "s")), faInput(f16, faShape(8192, 64)), faInput(f16, faShape(8192, 64))}
	}
	runFAOutputs(t, "3-D", ms+"RotaryEmbedding", 1, ins(x3), nil, []TypeInfo{{DType: f16, Shape: x3}})
	runFAOutputs(t, "4-D", ms+"RotaryEmbedding", 1, ins(faShape("b", 32, "s", 128)), nil, []TypeInfo{{DType: f16, Shape: faShape("b", 32, "s", 128)}})
	runFATypeCases(t, []faTypeCase{
		{name: "ms rope rank 2", op: ms + "RotaryEmbedding", opset: 1, ins: ins(faShape(4, 8)), wantErr: "rank 2"},
		{name: "ms rope odd dim", op: ms + "RotaryEmbedding", opset: 1, ins: ins(x3), attrs: []*Attribute{IntAttr("rotary_embedding_dim", 63)}, wantErr: "even"},
	})
}

// TestInPlaceIO: the default pair, the attention caches' pairs, and none
// for an op without the trait.
func TestInPlaceIO(t *testing.T) {
	for _, c := range []struct {
		domain, op string
		want       [][2]int
	}{
		{"", "ScatterND", [][2]int{{0, 0}}},
		{"com.microsoft", "GroupQueryAttention", [][2]int{{1, 3}, {2, 4}}},
		{"com.microsoft", "MultiHeadAttention", [][2]int{{1, 6}, {2, 7}}},
		{"com.microsoft", "Attention", [][2]int{{1, 4}}},
		{"com.microsoft", "QAttention", [][2]int{{1, 8}}},
		{"", "Relu", nil},
		{"", "Attention", nil},
	} {
		got := LookupOp(c.domain, c.op).InPlaceIO()
		if len(got) != len(c.want) {
			t.Errorf("%s %s: pairs %v, want %v", c.domain, c.op, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s %s: pairs %v, want %v", c.domain, c.op, got, c.want)
			}
		}
	}
	if (*OpSchema)(nil).InPlaceIO() != nil {
		t.Error("a missing schema has in-place pairs")
	}
}

// TestGroupQueryAttentionDeclaredShared: a file that declares present_key
// with past_key's length (one buffer of the maximum length, as exported
// for past_present_share_buffer) gets present of that length, not
// past+S, so the pair can share the buffer.
func TestGroupQueryAttentionDeclaredShared(t *testing.T) {
	g := NewGraph("test")
	val := func(name string, dt DType, s Shape, in bool) *Value {
		v, err := g.NewValue(name)
		if err != nil {
			t.Fatal(err)
		}
		v.Declared = &TypeInfo{Kind: TensorValue, DType: dt, Shape: s}
		if in {
			g.AddInput(v)
		} else {
			g.AddOutput(v)
		}
		return v
	}
	cache := faShape("b", 8, "max_length", 128)
	n := &Node{Name: "gqa", OpType: "GroupQueryAttention", Domain: "com.microsoft",
		Attrs: []*Attribute{IntAttr("num_heads", 32), IntAttr("kv_num_heads", 8)}}
	n.Inputs = []*Value{val("q", Float16, faShape("b", 1, 4096), true), val("k", Float16, faShape("b", 1, 1024), true),
		val("v", Float16, faShape("b", 1, 1024), true), val("past_key", Float16, cache, true), val("past_value", Float16, cache, true),
		val("seqlens_k", Int32, faShape("b"), true), val("total", Int32, faShape(), true)}
	n.Outputs = []*Value{val("o", Float16, faShape("b", 1, 4096), false), val("present_key", Float16, cache, false),
		val("present_value", Float16, cache, false)}
	if err := g.AddNode(n); err != nil {
		t.Fatal(err)
	}
	m := &Model{Graph: g, Opsets: []OpsetImport{{Version: 17}, {Domain: "com.microsoft", Version: 1}}}
	if _, err := InferShapes(m, InferOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, o := range n.Outputs[1:] {
		if !o.Shape.Equal(cache) {
			t.Errorf("%s: %s, want %s", o.Name, o.Shape, cache)
		}
	}
}

// QAttention as quantize_dynamic writes it for BERT-base: uint8 input,
// int8 weights, float bias and scales, mask_index, zero points.
func TestQAttentionInfer(t *testing.T) {
	h := []*Attribute{IntAttr("num_heads", 12)}
	x := faShape("b", 128, 768)
	scalar := faInput(Float32, faShape())
	ins := func(in, w, bias DType) []faIn {
		return []faIn{faInput(in, x), faInput(w, faShape(768, 2304)), faInput(bias, faShape(2304)), scalar, scalar,
			faInput(Int32, faShape("b")), faInput(in, faShape()), faInput(w, faShape())}
	}
	runFAOutputs(t, "bert", ms+"QAttention", 1, ins(Uint8, Int8, Float32), h, []TypeInfo{{DType: Float32, Shape: x}})
	runFAOutputs(t, "fp16", ms+"QAttention", 1, ins(Int8, Int8, Float16), h, []TypeInfo{{DType: Float16, Shape: x}})
	past := faShape(2, "b", 12, "p", 64)
	withPast := append(ins(Uint8, Int8, Float32), faInput(Float32, past))
	withPast[0] = faInput(Uint8, faShape("b", 1, 768))
	runFAOutputs(t, "gpt-2 past", ms+"QAttention", 1, withPast, h,
		[]TypeInfo{{DType: Float32, Shape: faShape("b", 1, 768)}, {DType: Float32, Shape: faShape(2, "b", 12, "p+1", 64)}})
	runFATypeCases(t, []faTypeCase{
		{name: "float input", op: ms + "QAttention", opset: 1, attrs: h, ins: ins(Float32, Int8, Float32), wantErr: "input is float32"},
		{name: "float weight", op: ms + "QAttention", opset: 1, attrs: h, ins: ins(Uint8, Float32, Float32), wantErr: "weight is float32"},
		{name: "int bias", op: ms + "QAttention", opset: 1, attrs: h, ins: ins(Uint8, Int8, Int32), wantErr: "bias is int32"},
		{name: "rows disagree", op: ms + "QAttention", opset: 1, attrs: h,
			ins: append([]faIn{faInput(Uint8, x), faInput(Int8, faShape(512, 2304))}, ins(Uint8, Int8, Float32)[2:]...), wantErr: "768 but weights have 512"},
		{name: "without heads", op: ms + "QAttention", opset: 1, ins: ins(Uint8, Int8, Float32), wantErr: "num_heads"},
	})
}

// SparseAttention as Phi-3-small's ONNX export writes it: 32 heads, 8 KV
// heads, head 128, 64-token blocks, an 8192-row shared cache; packed
// Q|K|V too.
func TestSparseAttentionInfer(t *testing.T) {
	f16 := Float16
	attrs := []*Attribute{IntAttr("num_heads", 32), IntAttr("kv_num_heads", 8), IntAttr("sparse_block_size", 64)}
	cache := faShape("b", 8, 8192, 128)
	csr := []faIn{faInput(Int32, faShape(1, 129)), faInput(Int32, faShape(1, 2560)), faInput(Int32, faShape(1)), faInput(Int32, faShape("b"))}
	ins := func(q faIn, k, v faIn) []faIn {
		return append([]faIn{q, k, v, faInput(f16, cache), faInput(f16, cache)}, csr...)
	}
	kv := faInput(f16, faShape("b", "s", 1024))
	want := []TypeInfo{{DType: f16, Shape: faShape("b", "s", 4096)}, {DType: f16, Shape: cache}, {DType: f16, Shape: cache}}
	runFAOutputs(t, "separate", ms+"SparseAttention", 1, ins(faInput(f16, faShape("b", "s", 4096)), kv, kv), attrs, want)
	runFAOutputs(t, "packed", ms+"SparseAttention", 1, ins(faInput(f16, faShape("b", "s", 6144)), faOmitted, faOmitted), attrs, want)
	q := faInput(f16, faShape("b", "s", 4096))
	for _, c := range []struct {
		name    string
		attrs   []*Attribute
		wantErr string
	}{
		{"block size", []*Attribute{IntAttr("num_heads", 32), IntAttr("kv_num_heads", 8), IntAttr("sparse_block_size", 48)}, "sparse_block_size 48"},
		{"heads", []*Attribute{IntAttr("num_heads", 30), IntAttr("kv_num_heads", 8), IntAttr("sparse_block_size", 64)}, "multiple of kv_num_heads"},
	} {
		if _, err := runFAOp(t, ms+"SparseAttention", 1, ins(q, kv, kv), c.attrs, 3); err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.wantErr)
		}
	}
}

// The one-token decoding ops of GPT-2 (12 heads of 64, a 1024-row shared
// cache) and Whisper's cross attention (8 heads over 1500 encoder rows).
func TestDecoderMaskedAttentionInfer(t *testing.T) {
	f16 := Float16
	h := []*Attribute{IntAttr("num_heads", 12), IntAttr("past_present_share_buffer", 1)}
	tok := faShape("b", 1, 768)
	cache := faShape("b", 12, 1024, 64)
	scalar := faInput(Int32, faShape(1))
	// query, key, value, mask_index, attention_bias, past_key, past_value,
	// past_sequence_length, beam_width, cache_indirection, bias.
	self := []faIn{faInput(f16, tok), faInput(f16, tok), faInput(f16, tok), faInput(Int32, faShape("b", 1024)), faOmitted,
		faInput(f16, cache), faInput(f16, cache), scalar, scalar, faInput(Int32, faShape("b", 4, 1024)), faInput(f16, faShape(2304))}
	runFAOutputs(t, "gpt-2 self", ms+"DecoderMaskedMultiHeadAttention", 1, self, h,
		[]TypeInfo{{DType: f16, Shape: tok}, {DType: f16, Shape: cache}, {DType: f16, Shape: cache}})
	enc := faShape("b", 8, 1500, 64)
	runFAOutputs(t, "whisper cross", ms+"DecoderMaskedMultiHeadAttention", 1,
		[]faIn{faInput(f16, faShape("b", 1, 512)), faInput(f16, enc), faInput(f16, enc)}, []*Attribute{IntAttr("num_heads", 8)},
		[]TypeInfo{{DType: f16, Shape: faShape("b", 1, 512)}})
	past := faShape(2, "b", 12, 1024, 64)
	runFAOutputs(t, "gpt-2 self, packed projection", ms+"DecoderMaskedSelfAttention", 1,
		[]faIn{faInput(f16, tok), faInput(f16, faShape(768, 2304)), faInput(f16, faShape(2304)), faInput(Int32, faShape("b", 1024)),
			faInput(f16, past), faOmitted, scalar}, h, []TypeInfo{{DType: f16, Shape: tok}, {DType: f16, Shape: past}})
}
