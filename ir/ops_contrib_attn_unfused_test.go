package ir

import (
	"strings"
	"testing"
)

// decoderAttnInputs is a DecoderAttention of 16 heads of 64 over query
// [s, b, 1024], key [kv, b, 1024] and caches [b, 16, 5, 64] (omitted when
// cache is false), its four flags given as constants (nil: a graph input).
func decoderAttnInputs(key Shape, cache bool, flags [4]*bool) []faIn {
	f := Float16
	flag := func(v *bool) faIn {
		if v == nil {
			return faInput(Bool, faShape())
		}
		x := int64(0)
		if *v {
			x = 1
		}
		return faKnown(&Tensor{DType: Bool, Ints: []int64{x}, HasData: true})
	}
	cacheIn := faOmitted
	if cache {
		cacheIn = faInput(f, faShape("b", 16, 5, 64))
	}
	return []faIn{
		faInput(f, faShape("s", "b", 1024)), faInput(f, key),
		faInput(f, faShape(1024, 1024)), faInput(f, faShape(1024, 2048)), faInput(f, faShape(3072)),
		faInput(Bool, faShape("b", "kv")), cacheIn, cacheIn,
		flag(flags[0]), flag(flags[1]), flag(flags[2]), flag(flags[3]),
	}
}

// TestDecoderAttentionInfer: the new caches' length in each mode the
// flags select, a fresh symbol when they are not constants, and the
// refusals.
func TestDecoderAttentionInfer(t *testing.T) {
	const op = "com.microsoft::DecoderAttention"
	yes, no := true, false
	heads := []*Attribute{IntAttr("num_heads", 16)}
	out := TypeInfo{DType: Float16, Shape: faShape("s", "b", 1024)}
	cache := func(l any) TypeInfo { return TypeInfo{DType: Float16, Shape: faShape("b", 16, l, 64)} }
	key := faShape("kv", "b", 1024)
	for _, c := range []struct {
		name  string
		cache bool
		flags [4]*bool
		want  any
	}{
		{"self attention, no cache", false, [4]*bool{&no, &no, &no, &no}, "s"},
		{"cross attention, no cache", false, [4]*bool{&yes, &no, &no, &no}, "kv"},
		{"self attention over the cache", true, [4]*bool{&no, &yes, &yes, &no}, "5+s"},
		{"cross attention from the cache", true, [4]*bool{&yes, &yes, &yes, &no}, 5},
		{"use_past without layer state", true, [4]*bool{&no, &yes, &no, &no}, "s"},
		{"caches absent, use_past unknown", false, [4]*bool{&no, nil, nil, nil}, "s"},
	} {
		runFAOutputs(t, c.name, op, 1, decoderAttnInputs(key, c.cache, c.flags), heads, []TypeInfo{out, cache(c.want), cache(c.want)})
	}
	runFAOutputs(t, "output only", op, 1, decoderAttnInputs(key, true, [4]*bool{nil, nil, nil, nil}), heads, []TypeInfo{out})

	for _, c := range []struct {
		name  string
		key   Shape
		cache bool
		flags [4]*bool
	}{
		{"static_kv unknown, key of another length", key, false, [4]*bool{nil, &no, &no, &no}},
		{"use_past unknown with caches", faShape("s", "b", 1024), true, [4]*bool{&no, nil, &yes, &no}},
	} {
		outs, err := runFAOp(t, op, 1, decoderAttnInputs(c.key, c.cache, c.flags), heads, 3)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if l := outs[1].Shape.Dims[2]; l.IsKnown() || !strings.HasPrefix(l.Sym, "?kv_sequence_length") {
			t.Errorf("%s: cache length %s, want a fresh kv_sequence_length", c.name, l)
		}
	}

	bad := func(edit func([]faIn)) []faIn {
		ins := decoderAttnInputs(key, true, [4]*bool{&no, &no, &no, &no})
		edit(ins)
		return ins
	}
	f := Float16
	checkInferErrors(t, []inferErrCase{
		{op: op, ins: bad(func([]faIn) {}), want: "positive num_heads"},
		{op: op, ins: bad(func(in []faIn) { in[0] = faInput(f, faShape("b", 1024)) }), attrs: heads, want: "query has rank 2"},
		{op: op, ins: bad(func(in []faIn) { in[1] = faInput(f, faShape("kv", "b", 512)) }), attrs: heads, want: "key is [kv,b,512]"},
		{op: op, ins: bad(func(in []faIn) { in[2] = faInput(f, faShape(1024, 512)) }), attrs: heads, want: "q_weight is [1024,512]"},
		{op: op, ins: bad(func(in []faIn) { in[3] = faInput(f, faShape(1024, 1024)) }), attrs: heads, want: "kv_weight is [1024,1024]"},
		{op: op, ins: bad(func(in []faIn) { in[4] = faInput(f, faShape(1024)) }), attrs: heads, want: "bias has length 1024"},
		{op: op, ins: bad(func(in []faIn) { in[6] = faInput(f, faShape("b", 8, 5, 128)) }), attrs: heads, want: "key_cache is [b,8,5,128]"},
		{op: op, ins: bad(func(in []faIn) { in[9] = faInput(Int32, faShape()) }), attrs: heads, want: "use_past is int32"},
		{op: op, ins: bad(func(in []faIn) { in[8] = faInput(Bool, faShape(2)) }), attrs: heads, want: "static_kv has 2 elements"},
		{op: op, ins: bad(func(in []faIn) {}), attrs: []*Attribute{IntAttr("num_heads", 24)}, want: "not a multiple of its 24 heads"},
	})
}

// TestLongformerAttentionInfer: both weight formats, and the refusals.
func TestLongformerAttentionInfer(t *testing.T) {
	const op = "com.microsoft::LongformerAttention"
	f := Float32
	attrs := []*Attribute{IntAttr("num_heads", 12), IntAttr("window", 256)}
	x := faShape("b", 1024, 768)
	mask := faInput(f, faShape("b", 1024))
	global := faInput(Int32, faShape("b", 1024))
	merged := func() []faIn {
		w, bias := faInput(f, faShape(768, 2304)), faInput(f, faShape(2304))
		return []faIn{faInput(f, x), w, bias, mask, w, bias, global}
	}
	stacked := []faIn{faInput(f, x), faInput(f, faShape(3, 768, 768)), faInput(f, faShape(3840)), mask,
		faInput(f, faShape(3, 768, 768)), faInput(f, faShape(768)), global}
	runFAOutputs(t, "merged weights", op, 1, merged(), attrs, []TypeInfo{{DType: f, Shape: x}})
	runFAOutputs(t, "stacked weights", op, 1, stacked, attrs, []TypeInfo{{DType: f, Shape: x}})
	bad := func(edit func([]faIn)) []faIn {
		ins := merged()
		edit(ins)
		return ins
	}
	checkInferErrors(t, []inferErrCase{
		{op: op, ins: merged(), attrs: []*Attribute{IntAttr("num_heads", 12)}, want: "positive num_heads and window"},
		{op: op, ins: merged(), attrs: []*Attribute{IntAttr("num_heads", 12), IntAttr("window", 384)}, want: "not a multiple of 2·window = 768"},
		{op: op, ins: merged(), attrs: []*Attribute{IntAttr("num_heads", 10), IntAttr("window", 256)}, want: "not a multiple of its 10 heads"},
		{op: op, ins: bad(func(in []faIn) { in[0] = faInput(f, faShape(1024, 768)) }), attrs: attrs, want: "input has rank 2"},
		{op: op, ins: bad(func(in []faIn) { in[1] = faInput(f, faShape(768, 768)) }), attrs: attrs, want: "weight is [768,768]"},
		{op: op, ins: bad(func(in []faIn) { in[2] = faInput(f, faShape(768)) }), attrs: attrs, want: "bias has length 768"},
		{op: op, ins: bad(func(in []faIn) { in[5] = faInput(f, faShape(3840)) }), attrs: attrs, want: "global_bias has length 3840"},
		{op: op, ins: bad(func(in []faIn) { in[3] = faInput(f, faShape("b", 512)) }), attrs: attrs, want: "mask is [b,512]"},
		{op: op, ins: bad(func(in []faIn) { in[6] = faInput(Int64, faShape("b", 1024)) }), attrs: attrs, want: "global is int64"},
		{op: op, ins: bad(func(in []faIn) { in[0] = faInput(Int8, x) }), attrs: attrs, want: "float type"},
		{op: op, ins: func() []faIn { in := append([]faIn(nil), stacked...); in[2] = faInput(f, faShape(2304)); return in }(), attrs: attrs, want: "bias has length 2304"},
	})
}
