package cost

import (
	"math"
	"testing"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/ir/irtest"
)

// msAttnCost costs a com.microsoft node over typed values, costed by its rule
// without a graph run.
func msAttnCost(t *testing.T, b *irtest.Builder, op string, ins, outs []*ir.Value, attrs ...*ir.Attribute) NodeEstimate {
	t.Helper()
	n := &ir.Node{Name: op, OpType: op, Domain: msDomain, Inputs: ins, Outputs: outs, Attrs: attrs}
	e, err := LookupRule(msDomain, op)(n, &RuleCtx{Graph: b.G})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// attnInt32Const is a known int32 scalar (total_sequence_length).
func attnInt32Const(b *irtest.Builder, name string, v int64) *ir.Value {
	return constant(b, name, ir.Int32, nil, []int64{v})
}

// checkAttnCounts compares an estimate with the arithmetic written out.
func checkAttnCounts(t *testing.T, name string, e NodeEstimate, macs, flops, trans, read, written float64) {
	t.Helper()
	for _, c := range []struct {
		what      string
		got, want float64
	}{
		{"macs", e.MACs, macs}, {"flops", e.FLOPs, flops}, {"transcendentals", e.Transcendentals, trans},
		{"bytes read", e.BytesRead, read}, {"bytes written", e.BytesWritten, written},
	} {
		if c.got != c.want {
			t.Errorf("%s: %s = %v, want %v", name, c.what, c.got, c.want)
		}
	}
}

// TestGQALlama3Decode: one LLaMA-3-8B decode step, B = 1, S = 1, H = 32,
// kvH = 8, d = 128, fp16, 1023 tokens cached: the new token attends to
// 1024 keys.
func TestGQALlama3Decode(t *testing.T) {
	const (
		h, kvh, d   = 32, 8, 128
		past, total = 1023, 1024
		f16         = 2
	)
	heads := []*ir.Attribute{ir.IntAttr("num_heads", h), ir.IntAttr("kv_num_heads", kvh)}
	// scores = B·H·Sq·Skv; macs = scores·(d+dv): Q·Kᵀ and P·V.
	const scores = 1 * h * 1 * total
	const macs = scores * (d + d)
	// flops = 2·macs (= 4·B·H·Sq·Skv·d) + softmax: 4 per score + 1 per row (B·H·Sq rows).
	const flops = 2*macs + 4*scores + 1*h*1
	// Q [1,1,4096] and the new K, V [1,1,1024] (kvH·d wide, not H·d),
	// seqlens_k and total_sequence_length (int32), and the 1023 cached
	// rows of each of K and V [1,8,·,128].
	const read = h*d*f16 + 2*kvh*d*f16 + 4 + 4 + 2*kvh*past*d*f16
	build := func(pastLen, presentLen int64, tot *ir.Value, b *irtest.Builder) []*ir.Value {
		q := b.Tensor("q", ir.Float16, 1, 1, h*d)
		k, v := b.Tensor("k", ir.Float16, 1, 1, kvh*d), b.Tensor("v", ir.Float16, 1, 1, kvh*d)
		pk, pv := b.Tensor("pk", ir.Float16, 1, kvh, pastLen, d), b.Tensor("pv", ir.Float16, 1, kvh, pastLen, d)
		return []*ir.Value{q, k, v, pk, pv, b.Tensor("seqlens", ir.Int32, 1), tot}
	}
	outs := func(b *irtest.Builder, presentLen int64) []*ir.Value {
		return []*ir.Value{b.Tensor("o", ir.Float16, 1, 1, h*d),
			b.Tensor("prk", ir.Float16, 1, kvh, presentLen, d), b.Tensor("prv", ir.Float16, 1, kvh, presentLen, d)}
	}

	// past and present separate (total unknown until run time): present
	// [1,8,1024,128] of K and V written whole.
	b := irtest.New(t, 17)
	e := msAttnCost(t, b, "GroupQueryAttention", build(past, total, b.Tensor("total", ir.Int32), b), outs(b, total), heads...)
	checkAttnCounts(t, "separate buffers", e, macs, flops, scores, read, h*d*f16+2*kvh*total*d*f16)
	if e.M != 1 || e.N != d || e.K != 2*total || e.Batch != h {
		t.Errorf("GEMM view %d×%d×%d batch %d, want 1×%d×%d batch %d", e.M, e.N, e.K, e.Batch, d, 2*total, h)
	}

	// One shared buffer of 4096 rows (past_present_share_buffer), the
	// total a known 1024: the same keys attended and rows read, and only
	// the new row of K and V written.
	b = irtest.New(t, 17)
	e = msAttnCost(t, b, "GroupQueryAttention", build(4096, 4096, attnInt32Const(b, "total", total), b), outs(b, 4096), heads...)
	checkAttnCounts(t, "shared buffer", e, macs, flops, scores, read, h*d*f16+2*kvh*1*d*f16)
	// The decode view: one CTA per (sequence, KV head), each walking the
	// 1024 keys attended.
	if want := (perf.AttnDecode{Heads: kvh, Keys: total, HeadDim: d}); e.Decode != want {
		t.Errorf("decode view %+v, want %+v", e.Decode, want)
	}
}

// TestGQAPackedRotaryWindow: a prefill with packed Q|K|V, rotary inside
// the kernel and a local window. B = 2, S = 16, H = 4, kvH = 2, d = 8,
// fp16, an empty past, W = 3.
func TestGQAPackedRotaryWindow(t *testing.T) {
	const (
		bs, s, h, kvh, d, w = 2, 16, 4, 2, 8, 3
		f16                 = 2
	)
	b := irtest.New(t, 17)
	q := b.Tensor("qkv", ir.Float16, bs, s, (h+2*kvh)*d)
	pk, pv := b.Tensor("pk", ir.Float16, bs, kvh, 0, d), b.Tensor("pv", ir.Float16, bs, kvh, 0, d)
	cos, sin := b.Tensor("cos", ir.Float16, 64, d/2), b.Tensor("sin", ir.Float16, 64, d/2)
	ins := []*ir.Value{q, nil, nil, pk, pv, b.Tensor("seqlens", ir.Int32, bs), b.Tensor("total", ir.Int32), cos, sin}
	outs := []*ir.Value{b.Tensor("o", ir.Float16, bs, s, h*d), b.Tensor("prk", ir.Float16, bs, kvh, s, d), b.Tensor("prv", ir.Float16, bs, kvh, s, d)}
	e := msAttnCost(t, b, "GroupQueryAttention", ins, outs, ir.IntAttr("num_heads", h), ir.IntAttr("kv_num_heads", kvh),
		ir.IntAttr("do_rotary", 1), ir.IntAttr("local_window_size", w))
	// Each query sees W+1 = 4 keys.
	const rows = bs * h * s
	const scores = rows * (w + 1)
	const macs = scores * 2 * d
	// rotary: 3 flops per channel of Q (H heads) and the new K (kvH heads).
	const flops = 2*macs + 4*scores + rows + 3*d*(bs*s*h+bs*s*kvh)
	// packed Q|K|V, seqlens_k, total, and of each cache the rows of the
	// B·S tokens (d/2 each); the past is empty.
	const read = bs*s*(h+2*kvh)*d*f16 + bs*4 + 4 + 2*bs*s*(d/2)*f16
	const written = bs*s*h*d*f16 + 2*bs*kvh*s*d*f16
	checkAttnCounts(t, "packed, rotary, window", e, macs, flops, scores, read, written)
	if e.Decode != (perf.AttnDecode{}) {
		t.Errorf("a 16-token prefill has a decode view %+v: its kernel tiles the queries", e.Decode)
	}
}

// TestMHAWithPast: a GPT-2 decode step, B = 1, S = 1, H = 12, d = 64,
// fp32, 127 tokens cached, with the projection bias.
func TestMHAWithPast(t *testing.T) {
	const (
		h, d, past = 12, 64, 127
		f32        = 4
		hidden     = h * d
	)
	b := irtest.New(t, 17)
	x := func(name string) *ir.Value { return b.Tensor(name, ir.Float32, 1, 1, hidden) }
	pk, pv := b.Tensor("pk", ir.Float32, 1, h, past, d), b.Tensor("pv", ir.Float32, 1, h, past, d)
	ins := []*ir.Value{x("q"), x("k"), x("v"), b.Tensor("bias", ir.Float32, 3*hidden), nil, nil, pk, pv}
	outs := []*ir.Value{x("o"), b.Tensor("prk", ir.Float32, 1, h, past+1, d), b.Tensor("prv", ir.Float32, 1, h, past+1, d)}
	e := msAttnCost(t, b, "MultiHeadAttention", ins, outs, ir.IntAttr("num_heads", h))
	const scores = h * (past + 1)
	const macs = scores * 2 * d
	// + the bias: one add per projected Q, K and V element.
	const flops = 2*macs + 4*scores + h + 3*hidden
	// Q, K, V and the bias read; the bias pass's Q, K and V written and
	// read back; the past read, the output and the present written.
	const read = 3*hidden*f32 + 3*hidden*f32 + 3*hidden*f32 + 2*h*past*d*f32
	const written = 3*hidden*f32 + hidden*f32 + 2*h*(past+1)*d*f32
	checkAttnCounts(t, "gpt-2 decode", e, macs, flops, scores, read, written)
	// No key/value grouping: a CTA per (sequence, head).
	if want := (perf.AttnDecode{Heads: h, Keys: past + 1, HeadDim: d}); e.Decode != want {
		t.Errorf("decode view %+v, want %+v", e.Decode, want)
	}
}

// TestMHACrossBias: cross attention over an encoder's keys and values
// given as [B,H,L,d] (BNSH) with the projection bias, B = 1, S = 4,
// L = 32, H = 8, d = 64, fp16: onnxruntime adds the bias to the query
// only (PrepareQkv_MHA_Cross: "no bias for key and value when they are in
// BNSH format"), so the bias adds one flop per query element, and its
// pass reads and writes the query alone.
func TestMHACrossBias(t *testing.T) {
	const (
		s, l, h, d = 4, 32, 8, 64
		hidden     = h * d
		f16        = 2
	)
	run := func(bias bool) NodeEstimate {
		b := irtest.New(t, 17)
		q := b.Tensor("q", ir.Float16, 1, s, hidden)
		k, v := b.Tensor("k", ir.Float16, 1, h, l, d), b.Tensor("v", ir.Float16, 1, h, l, d)
		var bv *ir.Value
		if bias {
			bv = b.Tensor("bias", ir.Float16, 3*hidden)
		}
		return msAttnCost(t, b, "MultiHeadAttention", []*ir.Value{q, k, v, bv}, []*ir.Value{b.Tensor("o", ir.Float16, 1, s, hidden)}, ir.IntAttr("num_heads", h))
	}
	plain, biased := run(false), run(true)
	if got := biased.FLOPs - plain.FLOPs; got != s*hidden {
		t.Errorf("the bias adds %g FLOPs, want one per query element (%d)", got, s*hidden)
	}
	// The bias read, and the query's bias pass: read and written.
	if dr, dw := biased.BytesRead-plain.BytesRead, biased.BytesWritten-plain.BytesWritten; dr != (3*hidden+s*hidden)*f16 || dw != s*hidden*f16 || biased.Launches != plain.Launches+1 {
		t.Errorf("the bias adds %g B read, %g written, %g launches; want %d, %d, 1", dr, dw, biased.Launches-plain.Launches, (3*hidden+s*hidden)*f16, s*hidden*f16)
	}
}

// TestMSAttentionBert: BERT-base self-attention, B = 1, S = 128,
// hidden 768, 12 heads, fp16: the Q|K|V projection, the pass that adds
// its bias and lays Q, K and V out, and the attention.
func TestMSAttentionBert(t *testing.T) {
	const (
		s, hidden, h = 128, 768, 12
		f16          = 2
	)
	b := irtest.New(t, 17)
	ins := []*ir.Value{b.Tensor("x", ir.Float16, 1, s, hidden), b.Tensor("w", ir.Float16, hidden, 3*hidden),
		b.Tensor("bias", ir.Float16, 3*hidden), b.Tensor("mask", ir.Int32, 1)}
	e := msAttnCost(t, b, "Attention", ins, []*ir.Value{b.Tensor("o", ir.Float16, 1, s, hidden)}, ir.IntAttr("num_heads", h))
	const projMACs = s * hidden * 3 * hidden
	const projFLOPs = 2*projMACs + s*3*hidden // + the bias
	const scores = h * s * s
	const attMACs = scores * 2 * (hidden / h)
	const attFLOPs = 2*attMACs + 4*scores + h*s
	// projection: x, weights, bias read, Q|K|V written; layout: Q|K|V
	// read and written; attention: Q|K|V and the mask index read back,
	// the output written.
	const qkv = s * 3 * hidden * f16
	const read = s*hidden*f16 + hidden*3*hidden*f16 + 3*hidden*f16 + 2*qkv + 4
	const written = 2*qkv + s*hidden*f16
	checkAttnCounts(t, "bert", e, projMACs+attMACs, projFLOPs+attFLOPs, scores, read, written)
	if e.Launches != 3 || e.M != s || e.N != 3*hidden || e.K != hidden {
		t.Errorf("launches %v, GEMM view %d×%d×%d; want 3, the projection's %d×%d×%d", e.Launches, e.M, e.N, e.K, s, 3*hidden, hidden)
	}
}

// TestMSRotaryEmbedding: a decode step, X [1,1,4096] fp16, caches
// [4096, 64] and no num_heads: heads of 2·64 = 128, all rotated.
func TestMSRotaryEmbedding(t *testing.T) {
	b := irtest.New(t, 17)
	x := b.Tensor("x", ir.Float16, 1, 1, 4096)
	ins := []*ir.Value{x, b.Tensor("pos", ir.Int64, 1, 1), b.Tensor("cos", ir.Float16, 4096, 64), b.Tensor("sin", ir.Float16, 4096, 64)}
	e := msAttnCost(t, b, "RotaryEmbedding", ins, []*ir.Value{b.Tensor("y", ir.Float16, 1, 1, 4096)}, ir.IntAttr("num_heads", 0))
	// 3 flops per element; X, position_ids and one cache row (64) of each read.
	checkAttnCounts(t, "rope", e, 0, 3*4096, 0, 4096*2+8+2*64*2, 4096*2)
}

// TestPeakMemoryGQASharedCache: a decode step whose present_key and
// present_value are the past_key and past_value buffers (4096 rows each):
// the cache is counted once, not as past and present. When something
// reads past_key afterwards, present_key needs a buffer of its own.
func TestPeakMemoryGQASharedCache(t *testing.T) {
	const (
		h, kvh, d = 4, 2, 16
		rows      = 4096
		cache     = kvh * rows * d // elements of one of K, V
		f32       = 4
	)
	for _, c := range []struct {
		name      string
		readAfter bool
		want      float64
	}{
		// At the node: q (64), k, v (32 each), seqlens (int32, 1), the two
		// caches, and the output (64).
		{"cache counted once", false, (h*d+2*kvh*d+2*cache+h*d)*f32 + 4},
		// At the Relu: both caches, present_key, the Relu's output, the
		// attention output and the caller's q, k, v and seqlens.
		{"past read afterwards", true, (4*cache+h*d+h*d+2*kvh*d)*f32 + 4},
	} {
		b := newBuilder(t)
		b.M.Opsets = append(b.M.Opsets, ir.OpsetImport{Domain: msDomain, Version: 1})
		q, k, v := b.Input("q", 1, 1, h*d), b.Input("k", 1, 1, kvh*d), b.Input("v", 1, 1, kvh*d)
		pk, pv := b.Input("past_key", 1, kvh, rows, d), b.Input("past_value", 1, kvh, rows, d)
		seqlens := b.Val("seqlens", ir.Int32, 1)
		b.G.AddInput(seqlens)
		total := b.Val("total", ir.Int32)
		b.G.AddInitializer(total, &ir.Tensor{Name: "total", DType: ir.Int32, Ints: []int64{100}, HasData: true})
		o := b.Val("o", ir.Float32, 1, 1, h*d)
		prk, prv := b.Val("present_key", ir.Float32, 1, kvh, rows, d), b.Val("present_value", ir.Float32, 1, kvh, rows, d)
		for _, out := range []*ir.Value{o, prk, prv} {
			b.G.AddOutput(out)
		}
		n := b.Node("GroupQueryAttention", []*ir.Value{q, k, v, pk, pv, seqlens, total}, []*ir.Value{o, prk, prv},
			ir.IntAttr("num_heads", h), ir.IntAttr("kv_num_heads", kvh))
		n.Domain = msDomain
		if c.readAfter {
			r := b.Val("r", ir.Float32, 1, kvh, rows, d)
			b.G.AddOutput(r)
			b.Node("Relu", []*ir.Value{pk}, []*ir.Value{r})
		}
		rep := b.analyze(Options{})
		if got := rep.Totals.PeakActivationBytes; got != c.want {
			t.Errorf("%s: peak activations = %v B, want %v B", c.name, got, c.want)
		}
	}
}

// TestSimplifiedLayerNormCosts: the RMS norms onnxruntime's exports use,
// in a graph through Analyze, count their arithmetic and traffic. x, skip
// [2, 4, 8] fp32, scale [8]: 64 elements in 8 rows.
func TestSimplifiedLayerNormCosts(t *testing.T) {
	for _, c := range []struct {
		domain, op     string
		skip           bool
		flops, read    float64
		trans, written float64
	}{
		// 4 flops per element (square, mean, scale, multiply) + 1 per row; an rsqrt per row.
		{"", "SimplifiedLayerNormalization", false, 4*64 + 8, (64 + 8) * 4, 8, 64 * 4},
		{msDomain, "SimplifiedLayerNormalization", false, 4*64 + 8, (64 + 8) * 4, 8, 64 * 4},
		// + the residual add per element.
		{msDomain, "SkipSimplifiedLayerNormalization", true, 5*64 + 8, (64 + 64 + 8) * 4, 8, 64 * 4},
	} {
		b := newBuilder(t)
		b.M.Opsets = append(b.M.Opsets, ir.OpsetImport{Domain: msDomain, Version: 1})
		ins := []*ir.Value{b.Input("x", 2, 4, 8)}
		if c.skip {
			ins = append(ins, b.Input("skip", 2, 4, 8))
		}
		ins = append(ins, b.Weight("scale", 8))
		y := b.Val("y", ir.Float32, 2, 4, 8)
		b.G.AddOutput(y)
		b.Node(c.op, ins, []*ir.Value{y}).Domain = c.domain
		n := nodeByOp(t, b.analyze(Options{}), c.op)
		if n.FLOPs != c.flops || n.Transcendentals != c.trans || n.BytesRead != c.read || n.BytesWritten != c.written {
			t.Errorf("%s %s: flops %v, transcendentals %v, read %v, written %v; want %v, %v, %v, %v",
				c.domain, c.op, n.FLOPs, n.Transcendentals, n.BytesRead, n.BytesWritten, c.flops, c.trans, c.read, c.written)
		}
	}
}

// TestAttention23Past: ONNX's own Attention (opset 23) for a LLaMA-3
// decode step, [B, H, L, d] inputs, B = 1, H = 32, kvH = 8, d = 128,
// 1023 tokens in past_key and past_value: the new query attends to the
// past's keys and its own, 1024 in all.
func TestAttention23Past(t *testing.T) {
	const h, kvh, d, past = 32, 8, 128, 1023
	b := irtest.New(t, 23)
	q := b.Tensor("q", ir.Float16, 1, h, 1, d)
	k, v := b.Tensor("k", ir.Float16, 1, kvh, 1, d), b.Tensor("v", ir.Float16, 1, kvh, 1, d)
	pk, pv := b.Tensor("pk", ir.Float16, 1, kvh, past, d), b.Tensor("pv", ir.Float16, 1, kvh, past, d)
	outs := []*ir.Value{b.Tensor("y", ir.Float16, 1, h, 1, d),
		b.Tensor("prk", ir.Float16, 1, kvh, past+1, d), b.Tensor("prv", ir.Float16, 1, kvh, past+1, d)}
	n := &ir.Node{Name: "attn", OpType: "Attention", Inputs: []*ir.Value{q, k, v, nil, pk, pv}, Outputs: outs}
	e, err := LookupRule("", "Attention")(n, &RuleCtx{Graph: b.G})
	if err != nil {
		t.Fatal(err)
	}
	const scores = h * (past + 1)
	if e.MACs != scores*2*d {
		t.Errorf("macs %v, want %v (B·H·Lq·Lk·(dk+dv), Lk = past + new)", e.MACs, scores*2*d)
	}
	if want := (perf.AttnDecode{Heads: kvh, Keys: past + 1, HeadDim: d}); e.Decode != want {
		t.Errorf("decode view %+v, want %+v", e.Decode, want)
	}
}

// TestSparseAttentionPhi3Small: a Phi-3-small decode step (32 heads, 8
// KV heads, d = 128, 64-token blocks) over a shared 8192-row buffer, 4096
// tokens in: a block layout of 20 non-zero blocks a row on average (2,560
// over 128 rows) bounds each query to 1,280 keys, so the step costs what
// GroupQueryAttention with a 1,279-key window before it does, plus the
// CSR indices, and well under the dense step. A constant layout is
// counted: 5 blocks set over 3 rows (-1 pads) is 106 keys.
func TestSparseAttentionPhi3Small(t *testing.T) {
	const h, kvh, d = 32, 8, 128
	heads := []*ir.Attribute{ir.IntAttr("num_heads", h), ir.IntAttr("kv_num_heads", kvh)}
	cache := func(b *irtest.Builder) []*ir.Value {
		return []*ir.Value{b.Tensor("q", ir.Float16, 1, 1, h*d), b.Tensor("k", ir.Float16, 1, 1, kvh*d), b.Tensor("v", ir.Float16, 1, 1, kvh*d),
			b.Tensor("pk", ir.Float16, 1, kvh, 8192, d), b.Tensor("pv", ir.Float16, 1, kvh, 8192, d)}
	}
	outs := func(b *irtest.Builder) []*ir.Value {
		return []*ir.Value{b.Tensor("o", ir.Float16, 1, 1, h*d), b.Tensor("prk", ir.Float16, 1, kvh, 8192, d), b.Tensor("prv", ir.Float16, 1, kvh, 8192, d)}
	}
	b := irtest.New(t, 17)
	sparseIns := append(cache(b), b.Tensor("rows", ir.Int32, 1, 129), b.Tensor("cols", ir.Int32, 1, 2560),
		attnInt32Const(b, "total", 4097), b.Tensor("lens", ir.Int32, 1))
	sparse := msAttnCost(t, b, "SparseAttention", sparseIns, outs(b), append(heads, ir.IntAttr("sparse_block_size", 64))...)
	b = irtest.New(t, 17)
	gqaIns := append(cache(b), b.Tensor("lens", ir.Int32, 1), attnInt32Const(b, "total", 4097))
	window := msAttnCost(t, b, "GroupQueryAttention", gqaIns, outs(b), append(heads, ir.IntAttr("local_window_size", 1279))...)
	b = irtest.New(t, 17)
	dense := msAttnCost(t, b, "GroupQueryAttention", append(cache(b), b.Tensor("lens", ir.Int32, 1), attnInt32Const(b, "total", 4097)), outs(b), heads...)
	indices := 129*4.0 + 2560*4
	if sparse.MACs != window.MACs || sparse.MACs != h*1280*2*d || sparse.BytesRead != window.BytesRead+indices || !(sparse.MACs < dense.MACs/3) {
		t.Errorf("sparse %g MACs, %g B; windowed GQA %g MACs, %g B; dense %g MACs", sparse.MACs, sparse.BytesRead, window.MACs, window.BytesRead, dense.MACs)
	}
	b = irtest.New(t, 17)
	cols := b.Tensor("cols", ir.Int32, 1, 6)
	b.G.AddInitializer(cols, &ir.Tensor{Name: "cols", DType: ir.Int32, Dims: []int64{1, 6}, Ints: []int64{0, 0, 1, 1, 2, -1}, HasData: true})
	small := msAttnCost(t, b, "SparseAttention", append(cache(b), b.Tensor("rows", ir.Int32, 1, 4), cols, attnInt32Const(b, "total", 4097),
		b.Tensor("lens", ir.Int32, 1)), outs(b), append(heads, ir.IntAttr("sparse_block_size", 64))...)
	if keys := small.MACs / (h * 2 * d); math.Abs(keys-5.0/3*64) > 1 {
		t.Errorf("constant layout: %.1f keys a query, want %.1f", keys, 5.0/3*64)
	}
}

// TestDecoderMaskedAttention: GPT-2's one-token step over a shared
// 1024-row cache (past_sequence_length 511: 512 keys attended) costs, as
// DecoderMaskedMultiHeadAttention, what MultiHeadAttention's attention
// kernel over the same slots does plus the beam_width scalar (the
// decoder-masked kernel adds the bias itself, where MultiHeadAttention
// adds it in a pass of its own: Q, K and V read and written once more, a
// launch), and as DecoderMaskedSelfAttention what Attention does.
func TestDecoderMaskedAttention(t *testing.T) {
	h := []*ir.Attribute{ir.IntAttr("num_heads", 12), ir.IntAttr("past_present_share_buffer", 1)}
	mha := func(op string) NodeEstimate {
		b := irtest.New(t, 17)
		tok := func(name string) *ir.Value { return b.Tensor(name, ir.Float16, 1, 1, 768) }
		pk, pv := b.Tensor("pk", ir.Float16, 1, 12, 1024, 64), b.Tensor("pv", ir.Float16, 1, 12, 1024, 64)
		q, k, v, mask, past, bias := tok("q"), tok("k"), tok("v"), b.Tensor("mask", ir.Int32, 1, 1024), attnInt32Const(b, "past", 511), b.Tensor("bias", ir.Float16, 2304)
		outs := []*ir.Value{tok("o"), b.Tensor("prk", ir.Float16, 1, 12, 1024, 64), b.Tensor("prv", ir.Float16, 1, 12, 1024, 64)}
		if op == "MultiHeadAttention" {
			return msAttnCost(t, b, op, []*ir.Value{q, k, v, bias, mask, nil, pk, pv, past}, outs, h...)
		}
		return msAttnCost(t, b, op, []*ir.Value{q, k, v, mask, nil, pk, pv, past, b.Tensor("beam", ir.Int32, 1), nil, bias}, outs, h...)
	}
	dm, m := mha("DecoderMaskedMultiHeadAttention"), mha("MultiHeadAttention")
	const pass = 3 * 768 * 2 // the bias pass's Q, K and V (fp16)
	if dm.MACs != m.MACs || dm.MACs != 12*512*128 || dm.BytesRead != m.BytesRead-pass+4 || dm.BytesWritten != m.BytesWritten-pass || dm.Launches != m.Launches-1 {
		t.Errorf("DecoderMaskedMultiHeadAttention %g MACs, %g B read, %g written, %g launches; MultiHeadAttention %g, %g, %g, %g",
			dm.MACs, dm.BytesRead, dm.BytesWritten, dm.Launches, m.MACs, m.BytesRead, m.BytesWritten, m.Launches)
	}
	self := func(op string) NodeEstimate {
		b := irtest.New(t, 17)
		ins := []*ir.Value{b.Tensor("x", ir.Float16, 1, 1, 768), b.Tensor("w", ir.Float16, 768, 2304), b.Tensor("bias", ir.Float16, 2304),
			b.Tensor("mask", ir.Int32, 1, 1024), b.Tensor("past", ir.Float16, 2, 1, 12, 1024, 64), nil, attnInt32Const(b, "plen", 511)}
		return msAttnCost(t, b, op, ins, []*ir.Value{b.Tensor("o", ir.Float16, 1, 1, 768), b.Tensor("present", ir.Float16, 2, 1, 12, 1024, 64)}, h...)
	}
	ds, a := self("DecoderMaskedSelfAttention"), self("Attention")
	if ds.MACs != a.MACs || ds.BytesRead != a.BytesRead || ds.Launches != a.Launches {
		t.Errorf("DecoderMaskedSelfAttention %g MACs, %g B; Attention %g, %g", ds.MACs, ds.BytesRead, a.MACs, a.BytesRead)
	}
}

// TestGQAInt4Cache: a decode step over a 4-bit KV cache (kv_cache_bit_width
// 4: two values a uint8, [1, 8, P, 64] for head 128) reads the past and
// writes the present at half a byte a value, a quarter of fp16's bytes:
// 1023 rows read, 1024 written (separate buffers), of K and V.
func TestGQAInt4Cache(t *testing.T) {
	const h, kvh, d, past = 32, 8, 128, 1023
	b := msBuilder(t, 17)
	pk, pv := b.Input("pk", ir.Uint8, 1, kvh, past, d/2), b.Input("pv", ir.Uint8, 1, kvh, past, d/2)
	n := b.Node("GroupQueryAttention", []*ir.Value{b.Input("q", ir.Float16, 1, 1, h*d), b.Input("k", ir.Float16, 1, 1, kvh*d),
		b.Input("v", ir.Float16, 1, 1, kvh*d), pk, pv, b.Input("seqlens", ir.Int32, 1), b.Input("total", ir.Int32),
		nil, nil, nil, nil, nil, initializer(b, "k_scale", ir.Float32, 1), initializer(b, "v_scale", ir.Float32, 1)}, 3,
		ir.IntAttr("num_heads", h), ir.IntAttr("kv_num_heads", kvh), ir.IntAttr("kv_cache_bit_width", 4),
		ir.StringAttr("k_quant_type", "PER_TENSOR"), ir.StringAttr("v_quant_type", "PER_TENSOR"))
	nc := nodeNamed(t, analyzeOn(t, finishMSNode(b, n, "gqa"), "H100", ""), "gqa")
	const row = kvh * d / 2 // bytes of one position of K (or V)
	if want := float64(h*d*2 + 2*(past+1)*row); nc.BytesWritten != want {
		t.Errorf("written %g B, want the output and the packed present %g", nc.BytesWritten, want)
	}
	if min := float64(2 * past * row); nc.BytesRead < min || nc.BytesRead > min+float64(h*d*2+2*kvh*d*2+64) {
		t.Errorf("read %g B, want the packed past (%g) and the new rows", nc.BytesRead, min)
	}
}
