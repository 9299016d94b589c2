package cost

import (
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/ir/irtest"
)

// boolConst is a constant bool scalar.
func boolConst(b *irtest.Builder, name string, v bool) *ir.Value {
	x := int64(0)
	if v {
		x = 1
	}
	return constant(b, name, ir.Bool, nil, []int64{x})
}

// TestDecoderAttentionCounts: fp16 DecoderAttention of 4 heads of 64 at
// batch 2, counted by hand in two modes: cross attention of 3 queries over
// a 7-long key (K|V projected from key, new caches written) and a decode
// step of self attention over a 5-long cache.
//
// Cross: projections 3·2·256·256 + 7·2·256·512 MACs, bias 3·2·256 +
// 7·2·512 flops; attention 2·4·3·7 = 168 scores, 168·2·64 MACs, softmax
// 4·168 + 24 flops. Bytes (2 each): the projections read query 3,072,
// q_weight 131,072, bias 1,536, kv_weight 262,144, key 7,168 and their
// outputs back (3,072 + 14,336), write them twice (6,144 + 28,672); the
// attention reads Q twice and the context once (transposes, Q·Kᵀ: 9,216),
// K|V for its transpose, memcpy and the GEMMs (3 × 14,336), the mask (14)
// and the scores twice (672), and writes the Q transpose, the context and
// the output (3 × 3,072), K|V's transpose (14,336), the new caches
// (14,336) and the scores twice (672). Launches: 4 projections, 2
// transposes of Q and the context, K|V's transpose, 2 cache copies, Q·Kᵀ,
// softmax, P·V.
func TestDecoderAttentionCounts(t *testing.T) {
	b := msBuilder(t, 17)
	f := ir.Float16
	query := b.Input("query", f, 3, 2, 256)
	key := b.Input("key", f, 7, 2, 256)
	qw, kvw, bias := initializer(b, "qw", f, 256, 256), initializer(b, "kvw", f, 256, 512), initializer(b, "bias", f, 768)
	mask := b.Input("mask", ir.Bool, 2, 7)
	flags := func(p string, v ...bool) []*ir.Value {
		var out []*ir.Value
		for i, x := range v {
			out = append(out, boolConst(b, p+string(rune('a'+i)), x))
		}
		return out
	}
	heads := []*ir.Attribute{ir.IntAttr("num_heads", 4)}
	cross := msNamed(b, "cross", "DecoderAttention", 3, append([]*ir.Value{query, key, qw, kvw, bias, mask, nil, nil}, flags("x", true, false, true, false)...), heads...)
	step := b.Input("step", f, 1, 2, 256)
	kc, vc := b.Input("kc", f, 2, 4, 5, 64), b.Input("vc", f, 2, 4, 5, 64)
	self := msNamed(b, "self", "DecoderAttention", 3, append([]*ir.Value{step, step, qw, kvw, bias, nil, kc, vc}, flags("s", false, true, true, false)...), heads...)
	b.Output(cross.Outputs...)
	b.Output(self.Outputs...)
	b.Infer()
	r := analyzeCovered(t, b, "A100")
	nc := nodeNamed(t, r, "cross")
	want := struct{ macs, flops, read, wr, launches float64 }{
		3*2*256*256 + 7*2*256*512 + 168*128,
		2*(3*2*256*256+7*2*256*512+168*128) + 3*2*256 + 7*2*512 + 4*168 + 24,
		422400 + 52910, 34816 + 38560, 12,
	}
	if nc.MACs != want.macs || nc.FLOPs != want.flops || nc.BytesRead != want.read || nc.BytesWritten != want.wr || nc.Launches != want.launches || !(nc.TimeS > 0) {
		t.Errorf("cross: %g MACs, %g FLOPs, %g B read, %g B written, %g launches, %g s; want %+v", nc.MACs, nc.FLOPs, nc.BytesRead, nc.BytesWritten, nc.Launches, nc.TimeS, want)
	}
	if !strings.Contains(nc.Note, "over 7 keys") || !strings.Contains(nc.Note, "host") {
		t.Errorf("cross note %q", nc.Note)
	}
	// The decode step attends the 5 cached keys and its own: 6. Launches:
	// the cross case's, and the two concatenations after the caches.
	nc = nodeNamed(t, r, "self")
	if macs := float64(1*2*256*256 + 1*2*256*512 + 2*4*1*6*128); nc.MACs != macs || nc.Launches != 14 {
		t.Errorf("self: %g MACs, %g launches; want %g, 14", nc.MACs, nc.Launches, macs)
	}
}

// TestDecoderAttentionUnknownFlags: with use_past a graph input and caches
// given, the new caches' length is not known; the node is marked partial,
// never priced as if it had no work.
func TestDecoderAttentionUnknownFlags(t *testing.T) {
	b := msBuilder(t, 17)
	f := ir.Float16
	step := b.Input("step", f, 1, 2, 256)
	qw, kvw, bias := initializer(b, "qw", f, 256, 256), initializer(b, "kvw", f, 256, 512), initializer(b, "bias", f, 768)
	kc, vc := b.Input("kc", f, 2, 4, 5, 64), b.Input("vc", f, 2, 4, 5, 64)
	usePast := b.Input("use_past", ir.Bool)
	n := b.Node("DecoderAttention", []*ir.Value{step, step, qw, kvw, bias, nil, kc, vc,
		boolConst(b, "a", false), usePast, boolConst(b, "c", true), boolConst(b, "d", false)}, 3, ir.IntAttr("num_heads", 4))
	n.Domain = "com.microsoft"
	b.Output(n.Outputs...)
	b.Infer()
	r := analyzeOn(t, b, "A100", "")
	if r.Totals.Partial == nil {
		t.Errorf("unknown use_past: totals not marked partial")
	}
}

// TestLongformerAttentionCounts: LongformerAttention at batch 1 over 1024
// tokens of 768 (12 heads of 64), window 256, one global token counted in
// a constant mask, fp32, counted by hand: both Q|K|V projections
// (1024·768·2304 MACs each); local scores (3·1024 − 2·256)·256 = 655,360
// and global 2·1024·1 a head, 12 heads: 7,888,896 scores, 128 MACs each;
// softmax 4 a score and 1 a row (12·1025 rows); the biases added by the
// transposes (2·1024·2304). Launches: the two projections, the index (a
// kernel and a partition per sequence), two bias-add transposes, Q·Kᵀ and
// P·V as three local and two global GEMMs each, the softmax.
func TestLongformerAttentionCounts(t *testing.T) {
	b := msBuilder(t, 17)
	f := ir.Float32
	x := b.Input("x", f, 1, 1024, 768)
	w, bias := initializer(b, "w", f, 768, 2304), initializer(b, "b", f, 2304)
	gw, gb := initializer(b, "gw", f, 768, 2304), initializer(b, "gb", f, 2304)
	mask := b.Input("mask", f, 1, 1024)
	flags := make([]int64, 1024)
	flags[0] = 1
	global := b.Tensor("global", ir.Int32, 1, 1024)
	b.G.AddInitializer(global, &ir.Tensor{Name: "global", DType: ir.Int32, Dims: []int64{1, 1024}, Ints: flags, HasData: true})
	attrs := []*ir.Attribute{ir.IntAttr("num_heads", 12), ir.IntAttr("window", 256)}
	n := msNamed(b, "longformer", "LongformerAttention", 1, []*ir.Value{x, w, bias, mask, gw, gb, global}, attrs...)
	flagIn := b.Input("flags", ir.Int32, 1, 1024)
	m := msNamed(b, "assumed", "LongformerAttention", 1, []*ir.Value{x, w, bias, mask, gw, gb, flagIn}, attrs...)
	b.Output(n.Out(0), m.Out(0))
	b.Infer()
	r := analyzeCovered(t, b, "A100")
	scores := 12.0 * (655360 + 2048)
	macs := 2*1024*768*2304 + scores*128
	flops := 2*macs + 4*scores + 12*1025 + 2*1024*2304
	for _, name := range []string{"longformer", "assumed"} {
		nc := nodeNamed(t, r, name)
		if nc.MACs != macs || nc.FLOPs != flops || nc.Launches != 17 || !(nc.TimeS > 0) {
			t.Errorf("%s: %g MACs, %g FLOPs, %g launches; want %g, %g, 17", name, nc.MACs, nc.FLOPs, nc.Launches, macs, flops)
		}
	}
	// Bytes: the weights, the global flags, the GEMMs' input reads and
	// outputs (two Q|K|V projections), the biases and mask, the
	// bias-add transposes (each reads and writes a Q|K|V and Q·Kᵀ and P·V
	// read it once), the 7,888,896 scores written and read twice, the
	// output.
	if nc := nodeNamed(t, r, "longformer"); nc.BytesRead != 121333760 || nc.BytesWritten != 104005632 {
		t.Errorf("longformer: %g B read, %g B written; want 121333760, 104005632", nc.BytesRead, nc.BytesWritten)
	}
	if note := nodeNamed(t, r, "assumed").Note; !strings.Contains(note, "assumed") {
		t.Errorf("a global mask given as an input should say its token count is assumed: %q", note)
	}
	if note := nodeNamed(t, r, "longformer").Note; !strings.Contains(note, "counted") {
		t.Errorf("a constant global mask should say its tokens were counted: %q", note)
	}
}

// TestQOrderedLongformerCounts: the int8 form of the Longformer layer
// above (one global token counted, merged weights) has the same MACs;
// its projection GEMMs run at int8 and carry the biases (2·1024·2304
// flops), its attention runs in fp16 between a dequantize of each
// projection (2 flops an element) and a quantize of the output (3), one
// launch more; the attention is priced on the fp16 path.
func TestQOrderedLongformerCounts(t *testing.T) {
	b := msBuilder(t, 17)
	f, i8 := ir.Float32, ir.Int8
	sc := initializer(b, "sc", f)
	w, bias := initializer(b, "w", i8, 768, 2304), initializer(b, "b", f, 2304)
	flags := make([]int64, 1024)
	flags[0] = 1
	global := b.Tensor("global", ir.Int32, 1, 1024)
	b.G.AddInitializer(global, &ir.Tensor{Name: "global", DType: ir.Int32, Dims: []int64{1, 1024}, Ints: flags, HasData: true})
	n := msNamed(b, "q", "QOrderedLongformerAttention", 1, []*ir.Value{b.Input("x", i8, 1, 1024, 768), sc, w, sc, bias, sc, sc,
		b.Input("mask", ir.Float16, 1, 1024), w, sc, bias, sc, global, sc},
		ir.IntAttr("num_heads", 12), ir.IntAttr("window", 256), ir.IntAttr("order_input", 1), ir.IntAttr("order_weight", 0),
		ir.IntAttr("order_global_weight", 0), ir.IntAttr("order_output", 1))
	b.Output(n.Out(0))
	b.Infer()
	r := analyzeCovered(t, b, "A100")
	scores := 12.0 * (655360 + 2048)
	macs := 2*1024*768*2304 + scores*128
	flops := 2*macs + 4*scores + 12*1025 + 2*1024*2304 + 2*2*1024*2304 + 3*1024*768
	nc := nodeNamed(t, r, "q")
	if nc.MACs != macs || nc.FLOPs != flops || nc.Launches != 18 || !(nc.TimeS > 0) {
		t.Errorf("%g MACs, %g FLOPs, %g launches; want %g, %g, 18", nc.MACs, nc.FLOPs, nc.Launches, macs, flops)
	}
	if !strings.Contains(nc.Note, "fp16") {
		t.Errorf("note %q does not name the attention's fp16 path", nc.Note)
	}
}
