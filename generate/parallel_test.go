package generate

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// kvShare: ⌈heads/GPUs⌉ of the heads per GPU, the whole cache without a
// head count or on one GPU.
func TestKVShare(t *testing.T) {
	for _, c := range []struct {
		heads int64
		gpus  int
		want  float64
	}{
		{32, 0, 1}, {32, 1, 1}, {32, 2, 0.5}, {32, 4, 0.25}, {32, 3, 11.0 / 32},
		{8, 8, 1.0 / 8}, {2, 4, 0.5}, {1, 8, 1}, {0, 4, 1},
	} {
		if got := kvShare(c.heads, c.gpus); got != c.want {
			t.Errorf("kvShare(%d heads, %d GPUs) = %g, want %g", c.heads, c.gpus, got, c.want)
		}
	}
}

// cacheHeads reads the heads beside the cache length in the layouts
// exports use, and none from a rank-3 cache.
func TestCacheHeads(t *testing.T) {
	p, b := ir.S("past"), ir.S("batch")
	for _, c := range []struct {
		dims []ir.Dim
		want int64
	}{
		{[]ir.Dim{b, ir.D(8), p, ir.D(128)}, 8},
		{[]ir.Dim{ir.D(4), ir.D(8), p, ir.D(128)}, 8},
		{[]ir.Dim{b, p, ir.D(8), ir.D(128)}, 8},
		{[]ir.Dim{ir.D(2), b, ir.D(12), p, ir.D(64)}, 12},
		{[]ir.Dim{b, ir.S("heads"), p, ir.D(64)}, 0},
		{[]ir.Dim{ir.D(96), p, ir.D(64)}, 0},
	} {
		in := &ir.Value{Name: "past_key", Declared: &ir.TypeInfo{Shape: ir.Shape{Ranked: true, Dims: c.dims}}}
		if got := cacheHeads(in, "past"); got != c.want {
			t.Errorf("%v: %d heads, want %d", c.dims, got, c.want)
		}
	}
}

// Under tensor parallelism each GPU holds its heads' part of the cache:
// on LLaMA-7B (32 KV heads) half at 2 GPUs and a quarter at 4. The
// largest batch is then the room left after the GPU's weights and fixed
// activations over each sequence's per-GPU cache and replicated
// activations: the cache part of a sequence's memory is divided by TP,
// against a whole cache on every GPU.
func TestKVCacheSplit(t *testing.T) {
	base := Config{Model: "zoo:llama-7b", GPU: gpu(t, "H100"), DType: "fp16", Batch: 1, Prompt: 512, Output: 128}
	one := run(t, base)
	if one.KVHeads != 32 || one.KVCacheBytesPerGPU != one.KVCacheBytes || one.KVCacheSharding != "" {
		t.Errorf("one GPU: %d heads, %g of %g B per GPU, sharding %q", one.KVHeads, one.KVCacheBytesPerGPU, one.KVCacheBytes, one.KVCacheSharding)
	}
	// 32 layers × key and value × 32 heads × 128 × 640 positions, fp16.
	kvSeq := float64(32 * 2 * 32 * 128 * 640 * 2)
	if one.KVCacheBytes != kvSeq {
		t.Fatalf("KV cache %g B, want %g", one.KVCacheBytes, kvSeq)
	}
	for _, tp := range []int{2, 4} {
		cfg := base
		cfg.GPUs = tp
		res := run(t, cfg)
		share := 1 / float64(tp)
		if res.KVHeads != 32 || res.KVCacheBytes != kvSeq || res.KVCacheBytesPerGPU != kvSeq*share {
			t.Errorf("TP=%d: %d heads, cache %g B, %g B per GPU; want 32, %g, %g", tp, res.KVHeads, res.KVCacheBytes, res.KVCacheBytesPerGPU, kvSeq, kvSeq*share)
		}
		if !strings.Contains(res.KVCacheSharding, "split by heads") {
			t.Errorf("TP=%d: sharding %q", tp, res.KVCacheSharding)
		}
		// The peak's other part, weights/TP and the replicated
		// activations, is linear in the batch: o0 + o1·b.
		r, err := newRunner(cfg)
		if err != nil {
			t.Fatal(err)
		}
		other := func(b int64) float64 {
			p, kv, err := r.memory(b, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			return p - kv*share
		}
		o1 := other(2) - other(1)
		o0 := other(1) - o1
		room := res.MemoryLimitBytes - o0
		want := math.Floor(room / (o1 + kvSeq*share))
		whole := math.Floor(room / (o1 + kvSeq))
		t.Logf("TP=%d: weights and fixed %.4g GB, activations %.4g MB and cache %.4g MB per sequence per GPU: batch %d, %g by the arithmetic, %g with the whole cache on each GPU",
			tp, o0/1e9, o1/1e6, kvSeq*share/1e6, res.MaxBatch, want, whole)
		if math.Abs(float64(res.MaxBatch)-want) > 1 {
			t.Errorf("TP=%d: max batch %d, want ⌊(usable − weights/TP − fixed) / per-sequence⌋ = %g", tp, res.MaxBatch, want)
		}
		// The whole cache on every GPU, as before the split, gives the
		// arithmetic's batch with the whole cache per sequence; the split
		// divides the cache part of the per-sequence memory by TP.
		whole1 := *r
		whole1.kvShare = 1
		p1, _, err := whole1.memory(1, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		old, err := whole1.maxBatch(&Result{MemoryLimitBytes: res.MemoryLimitBytes, Batch: 1, PeakMemoryBytes: p1})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(float64(old)-whole) > 1 || res.MaxBatch <= old {
			t.Errorf("TP=%d: max batch %d with the cache split, %d whole (arithmetic %g)", tp, res.MaxBatch, old, whole)
		}
		// The peak at batch 1 holds the per-GPU part of the cache.
		if got := res.PeakMemoryBytes - res.KVCacheBytesPerGPU; math.Abs(got-other(1)) > 1 {
			t.Errorf("TP=%d: peak %g − per-GPU cache %g = %g, want %g", tp, res.PeakMemoryBytes, res.KVCacheBytesPerGPU, got, other(1))
		}
		var text bytes.Buffer
		if err := WriteText(&text, res); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"KV cache per GPU", "KV cache split by heads over"} {
			if !strings.Contains(text.String(), want) {
				t.Errorf("TP=%d: text lacks %q:\n%s", tp, want, text.String())
			}
		}
	}
	var text bytes.Buffer
	if err := WriteText(&text, one); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "per GPU") || strings.Contains(text.String(), "split by heads") {
		t.Errorf("one GPU: text names a split:\n%s", text.String())
	}
}

// With fewer KV heads than GPUs each holds one whole head: LLaMA-tiny's 2
// KV heads over 4 GPUs leave half the cache on each, in the serving curve
// too.
func TestKVCacheFewHeads(t *testing.T) {
	res := run(t, Config{Model: "zoo:llama-tiny", Prompt: 16, Output: 8, GPUs: 4, Concurrency: []int64{1, 8}})
	if res.KVHeads != 2 || res.KVCacheBytesPerGPU != res.KVCacheBytes/2 || !strings.Contains(res.KVCacheSharding, "one whole head each") {
		t.Errorf("%d heads, %g of %g B per GPU, %q", res.KVHeads, res.KVCacheBytesPerGPU, res.KVCacheBytes, res.KVCacheSharding)
	}
	for _, p := range res.Serving {
		if p.KVCacheBytesPerGPU != p.KVCacheBytes/2 || p.KVCacheBytes != float64(p.Concurrency)*res.ServingModel.KVCacheBytesPerRequest {
			t.Errorf("C=%d: cache %g B, %g per GPU", p.Concurrency, p.KVCacheBytes, p.KVCacheBytesPerGPU)
		}
	}
	var text bytes.Buffer
	if err := WriteText(&text, res); err != nil || !strings.Contains(text.String(), "KV per GPU") {
		t.Errorf("text (%v) lacks the per-GPU cache column:\n%s", err, text.String())
	}
}
