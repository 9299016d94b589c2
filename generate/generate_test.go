package generate

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/models"
	"github.com/onnxcost/onnxcost/pipeline"
)

func gpu(t *testing.T, name string) *hwdb.GPU {
	t.Helper()
	g, err := hwdb.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func run(t *testing.T, cfg Config) *Result {
	t.Helper()
	if cfg.GPU == nil {
		cfg.GPU = gpu(t, "H100")
	}
	res, err := Run(cfg)
	if err != nil {
		t.Fatalf("%s: %v", cfg.Model, err)
	}
	return res
}

// The prompt's step grows with the prompt, a decode step with the cache
// it reads, and the totals are the stated formulas.
func TestMonotone(t *testing.T) {
	const model = "zoo:gpt2-small?layers=2"
	var prev *Result
	for _, n := range []int64{8, 64, 256} {
		res := run(t, Config{Model: model, DType: "fp16", Batch: 8, Prompt: n, Output: 4})
		if prev != nil && res.TTFTS <= prev.TTFTS {
			t.Errorf("prompt %d: TTFT %g not above prompt %d's %g", n, res.TTFTS, prev.Prompt, prev.TTFTS)
		}
		prev = res
	}
	short := run(t, Config{Model: model, DType: "fp16", Batch: 8, Prompt: 64, Output: 16})
	long := run(t, Config{Model: model, DType: "fp16", Batch: 8, Prompt: 64, Output: 700})
	if long.TPOTS <= short.TPOTS || long.LastStepS <= long.FirstStepS {
		t.Errorf("TPOT %g (output 700) not above %g (output 16), or last step %g not above first %g", long.TPOTS, short.TPOTS, long.LastStepS, long.FirstStepS)
	}
	if long.KVCacheBytes <= short.KVCacheBytes || long.PeakMemoryBytes <= short.PeakMemoryBytes {
		t.Errorf("cache %g / peak %g at 764 positions not above %g / %g at 80", long.KVCacheBytes, long.PeakMemoryBytes, short.KVCacheBytes, short.PeakMemoryBytes)
	}
	for _, r := range []*Result{short, long} {
		if want := r.TTFTS + float64(r.Output-1)*r.TPOTS; r.E2ES != want {
			t.Errorf("e2e %g, want TTFT + (M-1)·TPOT = %g", r.E2ES, want)
		}
		if want := float64(r.Batch*r.Output) / r.E2ES; r.OutputTokensPerS != want {
			t.Errorf("tokens/s %g, want B·M/e2e = %g", r.OutputTokensPerS, want)
		}
	}
	// GPT-2 small: 12 heads × 64 = 768 keys and values per layer and
	// position, 2 layers, fp16: 2·2·768·2 B per position and sequence.
	if want := float64(8*(64+16)) * 2 * 2 * 768 * 2; short.KVCacheBytes != want {
		t.Errorf("KV cache %g B, want 8 sequences × 80 positions × 6144 B = %g", short.KVCacheBytes, want)
	}
}

// TestDecodeStepGrowsWithCache: a decode step never gets cheaper as its
// KV cache grows, nor as its batch doubles. The cases are ones a sweep of
// two decoders and a fixture × 10 GPUs × fp32/fp16 × three runtimes ×
// batch 1-256 found falling while an L2 write-back was charged to the
// kernel whose traffic evicted the dirty lines (28 steps getting cheaper
// as the cache grew; GPT-2 on an RTX 4090 at fp32, eager, 0.35% cheaper
// from batch 64 to 128): which kernel paid, a memory-bound one or one that
// hid it, shifted with the cache and the batch. Now the writer pays.
func TestDecodeStepGrowsWithCache(t *testing.T) {
	for _, c := range []struct {
		gpu, dtype, runtime string
		batch               int64
	}{
		{"RTX-4090", "fp32", "pytorch", 64},
		{"L4", "fp16", "tensorrt", 16},
		{"L40S", "fp16", "graph", 8},
		{"L40S", "fp32", "pytorch", 128},
		{"B200", "fp16", "graph", 32},
	} {
		rt, err := hwdb.LookupRuntime(c.runtime)
		if err != nil {
			t.Fatal(err)
		}
		name := c.gpu + " " + c.dtype + " " + c.runtime
		cfg := Config{Model: "zoo:gpt2-small", GPU: gpu(t, c.gpu), Runtime: rt, DType: c.dtype, Batch: c.batch, Prompt: 128, Output: 8}
		res := run(t, cfg)
		if res.Fit.SlopeS < 0 {
			t.Errorf("%s batch %d: a decode step gets %.3g s cheaper per cached token", name, c.batch, -res.Fit.SlopeS)
		}
		cfg.Batch *= 2
		if twice := run(t, cfg); twice.FirstStepS < res.FirstStepS {
			t.Errorf("%s: the decode step takes %.6g s at batch %d, %.6g s at %d", name, twice.FirstStepS, cfg.Batch, res.FirstStepS, c.batch)
		}
	}
}

// TestApproximation: the line through a few decode steps, summed over
// every step, against the sum of every step costed. The bound is 1%; on
// these cases the sum of the line is within 0.5%.
func TestApproximation(t *testing.T) {
	for _, cfg := range []Config{
		{Model: "zoo:gpt2-small?layers=2", DType: "fp16", Batch: 32, Prompt: 64, Output: 160},
		{Model: "zoo:llama-tiny", Batch: 64, Prompt: 8, Output: 120},
	} {
		fit := run(t, cfg)
		cfg.Exact = true
		all := run(t, cfg)
		if fit.Fit.Method != "linear" || len(fit.Fit.Points) != Points || all.Fit.Method != "exact" || len(all.Fit.Points) != int(cfg.Output-1) {
			t.Fatalf("%s: methods %s (%d points) and %s (%d points)", cfg.Model, fit.Fit.Method, len(fit.Fit.Points), all.Fit.Method, len(all.Fit.Points))
		}
		rel := math.Abs(fit.TPOTS/all.TPOTS - 1)
		t.Logf("%s: TPOT %.6g fitted, %.6g summed: %.3g%% apart; largest residual %.3g%%", cfg.Model, fit.TPOTS, all.TPOTS, 100*rel, 100*fit.Fit.MaxRelResidual)
		if rel > 0.01 {
			t.Errorf("%s: the fitted TPOT %g is %.2g%% from the sum of every step %g", cfg.Model, fit.TPOTS, 100*rel, all.TPOTS)
		}
		if fit.FirstStepS != all.FirstStepS || fit.LastStepS != all.LastStepS || fit.TTFTS != all.TTFTS {
			t.Errorf("%s: first/last/TTFT are costed steps and must agree: %g/%g/%g vs %g/%g/%g", cfg.Model, fit.FirstStepS, fit.LastStepS, fit.TTFTS, all.FirstStepS, all.LastStepS, all.TTFTS)
		}
		if !strings.Contains(fit.Approximation, "linear") {
			t.Errorf("approximation not stated: %q", fit.Approximation)
		}
	}
}

// The largest batch that fits: it fits, one more does not.
func TestMaxBatch(t *testing.T) {
	cfg := Config{Model: "zoo:gpt2-small", GPU: gpu(t, "T4"), Batch: 4, Prompt: 512, Output: 512}
	res := run(t, cfg)
	r, err := newRunner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.MaxBatch < 1 || res.MaxBatch >= maxBatchLimit {
		t.Fatalf("max batch %d", res.MaxBatch)
	}
	at, _, err := r.memory(res.MaxBatch, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	above, _, err := r.memory(res.MaxBatch+1, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if at > res.MemoryLimitBytes || above <= res.MemoryLimitBytes {
		t.Errorf("batch %d peaks at %g, %d at %g; limit %g", res.MaxBatch, at, res.MaxBatch+1, above, res.MemoryLimitBytes)
	}
}

// An ONNX export with Optimum's names (batch_size, sequence_length,
// past_sequence_length) is bound as the zoo decoder it was written from.
func TestExport(t *testing.T) {
	m, err := models.Llama(models.LlamaConfig{Vocab: 1000, DModel: 64, Heads: 4, KVHeads: 2, Layers: 2, FF: 172,
		Batch: models.Symbolic, Seq: models.Symbolic, Decode: true, Past: models.Symbolic})
	if err != nil {
		t.Fatal(err)
	}
	rename := map[string]string{"batch": "batch_size", "seq": "sequence_length"}
	for _, vs := range [][]*ir.Value{m.Graph.Inputs, m.Graph.Outputs} {
		for _, v := range vs {
			if v.Declared == nil {
				continue
			}
			for i, d := range v.Declared.Shape.Dims {
				if to, ok := rename[d.Sym]; ok {
					v.Declared.Shape.Dims[i] = ir.S(to)
				}
			}
		}
	}
	path := filepath.Join(t.TempDir(), "decoder.onnx")
	if err := ir.WriteFile(path, m); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Model: path, Batch: 4, Prompt: 20, Output: 9}
	file := run(t, cfg)
	cfg.Model = "zoo:llama-tiny"
	zoo := run(t, cfg)
	if file.CacheDim != "past_sequence_length" || file.CacheInputs != 4 {
		t.Errorf("cache %s over %d inputs, want past_sequence_length over 4", file.CacheDim, file.CacheInputs)
	}
	if file.TTFTS != zoo.TTFTS || file.TPOTS != zoo.TPOTS || file.KVCacheBytes != zoo.KVCacheBytes {
		t.Errorf("export: TTFT %g TPOT %g KV %g; zoo: %g %g %g", file.TTFTS, file.TPOTS, file.KVCacheBytes, zoo.TTFTS, zoo.TPOTS, zoo.KVCacheBytes)
	}
}

// Bad input is an input error naming the model.
func TestBadInput(t *testing.T) {
	h100 := gpu(t, "H100")
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Model: "zoo:resnet50", Prompt: 4, Output: 4}, "not a decoder"},
		{Config{Model: "zoo:llama-tiny", Prompt: 0, Output: 4}, "--prompt"},
		{Config{Model: "zoo:llama-tiny", Prompt: 4, Output: 0}, "--output"},
		{Config{Model: "zoo:llama-tiny?seq=4", Prompt: 4, Output: 2, DType: "fp12"}, "fp12"},
		{Config{Model: "zoo:llama-tiny?batch=2", Batch: 3, Prompt: 4, Output: 2}, "conflicts"},
	} {
		c.cfg.GPU = h100
		_, err := Run(c.cfg)
		if err == nil || !pipeline.IsInputError(err) || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), strings.SplitN(c.cfg.Model, "?", 2)[0]) {
			t.Errorf("%+v: got %v, want an input error naming the model and %q", c.cfg, err, c.want)
		}
	}
	// A graph with no cache input.
	m, err := models.Llama(models.LlamaTiny)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "nocache.onnx")
	if err := ir.WriteFile(path, m); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(Config{Model: path, GPU: h100, Prompt: 4, Output: 4}); err == nil || !pipeline.IsInputError(err) || !strings.Contains(err.Error(), "no key/value cache") {
		t.Errorf("no cache input: %v", err)
	}
	// A model that holds its own generation loop is sent to report.
	beam := filepath.Join("..", "testdata", "models", "generation", "gpt2_beam.onnx")
	if _, err := Run(Config{Model: beam, GPU: h100, Prompt: 8, Output: 6}); err == nil || !pipeline.IsInputError(err) ||
		!strings.Contains(err.Error(), "own generation loop (com.microsoft BeamSearch") || !strings.Contains(err.Error(), "--dim max_length=N") {
		t.Errorf("BeamSearch model: %v", err)
	}
}

// The zoo's past=0 is an empty cache; costed in place, the prompt's
// step on it reads and writes its new keys and values once, while as
// exported (the default, whose numbers report keeps) a decode step's
// Concat copies the whole cache.
func TestAppendInPlace(t *testing.T) {
	h100 := gpu(t, "H100")
	l, err := pipeline.Load("zoo:llama-tiny?decode=1&past=0&seq=5", pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range l.Model.Graph.Outputs {
		if strings.HasPrefix(o.Name, "present.") && !o.Shape.Dims[2].Is(5) {
			t.Errorf("%s: %s, want 5 positions", o.Name, o.Shape)
		}
	}
	l, err = pipeline.Load("zoo:llama-tiny?decode=1&past=1000", pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := l.Model.Graph
	if n := cost.CacheAppends(g); n != 4 {
		t.Fatalf("%d cache appends, want 4 (2 layers × key, value)", n)
	}
	copied, err := cost.Analyze(g, l.Model, h100, cost.Options{})
	if err != nil {
		t.Fatal(err)
	}
	appended, err := cost.Analyze(g, l.Model, h100, cost.Options{AppendKVCache: true})
	if err != nil {
		t.Fatal(err)
	}
	// A cached key or value: [1, 2 kv heads, positions, 16], fp32.
	const perPos = 2 * 16 * 4
	for i, nc := range copied.Nodes {
		if nc.OpType != "Concat" || !strings.HasPrefix(nc.Outputs[0].Name, "present.") {
			continue
		}
		a := appended.Nodes[i]
		if want := float64(1000+1+1001) * perPos; nc.BytesRead+nc.BytesWritten != want {
			t.Errorf("%s as exported: %g B, want past and new read, 1001 positions written = %g", nc.Name, nc.BytesRead+nc.BytesWritten, want)
		}
		if want := float64(2) * perPos; a.BytesRead+a.BytesWritten != want {
			t.Errorf("%s appended: %g B, want the new position read and written = %g", nc.Name, a.BytesRead+a.BytesWritten, want)
		}
	}
	// The time falls; the peak, held here by the attention's transposed
	// copy of the keys (as large as the cache), may rise only by the
	// cache allocated one position longer from the start.
	if appended.Totals.TimeS >= copied.Totals.TimeS || appended.Totals.PeakMemoryBytes > copied.Totals.PeakMemoryBytes+4*perPos {
		t.Errorf("in place: %g s, peak %g B; as exported %g s, %g B", appended.Totals.TimeS, appended.Totals.PeakMemoryBytes, copied.Totals.TimeS, copied.Totals.PeakMemoryBytes)
	}
	kv, err := cost.CacheBytes(g, "fp16")
	if err != nil || kv != 4*1001*perPos/2 {
		t.Errorf("cache bytes %g (%v), want 4 tensors × 1001 positions × 64 B", kv, err)
	}
}

// TestIntervals: TTFT, TPOT and end-to-end carry 80% intervals that hold
// the estimates, the end-to-end one the sum of the others bound by bound
// (the steps' errors move together), and a single output token has no
// TPOT interval.
func TestIntervals(t *testing.T) {
	for _, cfg := range []Config{
		{Model: "zoo:llama-tiny", Batch: 2, Prompt: 16, Output: 40, Concurrency: []int64{1, 8}},
		{Model: "zoo:llama-tiny", Prompt: 16, Output: 6, Exact: true},
		{Model: "zoo:llama-tiny", Prompt: 4, Output: 1, Concurrency: []int64{2}},
	} {
		res := run(t, cfg)
		check := func(what string, v float64, iv []float64) {
			if len(iv) != 2 || !(iv[0] <= v && v <= iv[1]) || !(iv[0] < iv[1]) {
				t.Errorf("output %d: %s %g, interval %v: want lo ≤ estimate ≤ hi, lo < hi", cfg.Output, what, v, iv)
			}
		}
		check("TTFT", res.TTFTS, res.TTFTIntervalS)
		check("E2E", res.E2ES, res.E2EIntervalS)
		for _, p := range res.Serving {
			check("serving TTFT", p.TTFTS, p.TTFTIntervalS)
			check("serving E2E", p.E2ES, p.E2EIntervalS)
			if cfg.Output > 1 {
				check("serving TPOT", p.TPOTS, p.TPOTIntervalS)
			} else if p.TPOTIntervalS != nil {
				t.Errorf("one output token: serving TPOT interval %v, want none", p.TPOTIntervalS)
			}
		}
		if cfg.Output == 1 {
			if res.TPOTIntervalS != nil || !slices.Equal(res.E2EIntervalS, res.TTFTIntervalS) {
				t.Errorf("one output token: TPOT interval %v (want none), E2E %v (want TTFT's %v)", res.TPOTIntervalS, res.E2EIntervalS, res.TTFTIntervalS)
			}
			continue
		}
		check("TPOT", res.TPOTS, res.TPOTIntervalS)
		k := float64(cfg.Output - 1)
		for i := range 2 {
			if want := res.TTFTIntervalS[i] + k*res.TPOTIntervalS[i]; math.Abs(res.E2EIntervalS[i]-want) > 1e-8*want {
				t.Errorf("output %d: E2E bound %d %g, want TTFT's + %g × TPOT's = %g", cfg.Output, i, res.E2EIntervalS[i], k, want)
			}
		}
	}
}

// TestCUDAGraphPromptStep: under onnxruntime-cudagraph the prompt's step
// runs node by node, as onnxruntime-iobinding prices it (onnxruntime-genai
// captures the decode steps only), and the decode steps replay: the same
// TTFT as the bound runtime, a shorter TPOT, and a warning that says so.
func TestCUDAGraphPromptStep(t *testing.T) {
	price := func(name string) *Result {
		rt, err := hwdb.LookupRuntime(name)
		if err != nil {
			t.Fatal(err)
		}
		return run(t, Config{Model: filepath.Join("..", "testdata", "models", "contrib", "llama_fp16_gqa.onnx"), GPU: gpu(t, "A100"), Runtime: rt, Batch: 1, Prompt: 64, Output: 8})
	}
	bound, replay := price("onnxruntime-iobinding"), price("onnxruntime-cudagraph")
	if replay.TTFTS != bound.TTFTS {
		t.Errorf("TTFT %.6g s under onnxruntime-cudagraph, %.6g s under onnxruntime-iobinding: want the prompt's step node by node, the same", replay.TTFTS, bound.TTFTS)
	}
	if !(replay.TPOTS < bound.TPOTS) {
		t.Errorf("TPOT %.6g s replayed, %.6g s node by node: want the replay faster", replay.TPOTS, bound.TPOTS)
	}
	if !slices.ContainsFunc(replay.Warnings, func(w string) bool { return strings.Contains(w, "the prompt's step runs node by node") }) {
		t.Errorf("warnings %q: want the prompt's step said to run node by node", replay.Warnings)
	}
}

// TestModelRuntime: with no runtime named, an onnxruntime-genai decoder
// (contrib operators, a key/value cache) is priced as onnxruntime-genai
// runs it, its cache bound on the device, and the result says why; a zoo
// decoder keeps the default runtime.
func TestModelRuntime(t *testing.T) {
	r := run(t, Config{Model: filepath.Join("..", "testdata", "models", "contrib", "llama_int4_gqa.onnx"), GPU: gpu(t, "A100"), Batch: 1, Prompt: 64, Output: 8})
	if r.Runtime != "onnxruntime-iobinding" || r.Plan != "onnxruntime" {
		t.Errorf("runtime %s, plan %s: want onnxruntime-iobinding and its plan, onnxruntime", r.Runtime, r.Plan)
	}
	if !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "its key/value cache bound on the device") }) {
		t.Errorf("warnings %q: want the default runtime explained", r.Warnings)
	}
	z := run(t, Config{Model: "zoo:llama-tiny", GPU: gpu(t, "A100"), Batch: 1, Prompt: 64, Output: 8})
	if z.Runtime != hwdb.DefaultRuntime {
		t.Errorf("zoo decoder priced under %s, want %s", z.Runtime, hwdb.DefaultRuntime)
	}
}

// TestModelBytes: a run on the model's bytes (Config.Data, the browser's
// way) is the run on its file, field for field, and a zoo-looking name
// with bytes is the bytes' model, not the zoo's.
func TestModelBytes(t *testing.T) {
	p := filepath.Join("..", "testdata", "models", "contrib", "llama_int4_gqa.onnx")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Model: p, GPU: gpu(t, "A100"), Batch: 2, Prompt: 64, Output: 8, Concurrency: []int64{1, 4}}
	file := run(t, cfg)
	cfg.Data = data
	mem := run(t, cfg)
	a, _ := json.Marshal(file)
	b, _ := json.Marshal(mem)
	if string(a) != string(b) {
		t.Errorf("bytes and file differ:\n%s\n%s", a, b)
	}
	cfg.Model = "zoo:llama-tiny"
	if z := run(t, cfg); z.Runtime != file.Runtime || z.KVCacheBytes != file.KVCacheBytes {
		t.Errorf("bytes named zoo:llama-tiny priced as %s with a %g-byte cache: not the bytes' model", z.Runtime, z.KVCacheBytes)
	}
}
