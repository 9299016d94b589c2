package generate

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/models"
	"github.com/onnxcost/onnxcost/pipeline"
)

// TestServingCurve: along the curve throughput and TPOT never fall as
// concurrency grows; each point is the stated cycle model; memory caps
// the curve at the largest concurrency that fits, which fits while one
// more does not.
func TestServingCurve(t *testing.T) {
	cfg := Config{Model: "zoo:gpt2-small", GPU: gpu(t, "T4"), Prompt: 512, Output: 512, Concurrency: []int64{64, 1, 4, 16, 64, 256}}
	res := run(t, cfg)
	sm := res.ServingModel
	if sm == nil || sm.MaxConcurrency < 16 || sm.MaxConcurrency >= 256 {
		t.Fatalf("serving model %+v: want the largest concurrency to fit between 16 and 256 (T4, 1024 positions of GPT-2 small)", sm)
	}
	var got []int64
	for _, p := range res.Serving {
		got = append(got, p.Concurrency)
	}
	want := []int64{1, 4, 16}
	if sm.MaxConcurrency >= 64 {
		want = append(want, 64)
	}
	if !slices.Equal(got, want) || !slices.Contains(sm.Capped, 256) || len(got)+len(sm.Capped) != 5 {
		t.Errorf("curve at %v, capped %v: want 1, 4, 16 (and 64 if it fits) sorted and once each, 256 capped", got, sm.Capped)
	}
	n, m := float64(cfg.Prompt), float64(cfg.Output)
	for i, p := range res.Serving {
		c := float64(p.Concurrency)
		cycle := c*sm.PrefillS + (m-1)*p.DecodeStepS
		near := func(what string, got, want float64) {
			if math.Abs(got-want) > 1e-12*math.Abs(want) {
				t.Errorf("C=%d: %s %g, want %g", p.Concurrency, what, got, want)
			}
		}
		near("tokens/s", p.OutputTokensPerS, c*m/cycle)
		near("tokens/s per GPU", p.OutputTokensPerSPerGPU, p.OutputTokensPerS)
		near("TPOT", p.TPOTS, p.DecodeStepS+c*sm.PrefillS/(m-1))
		near("TTFT", p.TTFTS, p.DecodeStepS+sm.PrefillS)
		near("e2e", p.E2ES, p.TTFTS+(m-1)*p.TPOTS)
		// GPT-2 small: 12 layers × keys and values × 768, fp32.
		near("KV cache", p.KVCacheBytes, c*(n+m)*12*2*768*4)
		if p.EnergyPerTokenJ <= 0 || p.PeakMemoryBytes > res.MemoryLimitBytes || p.USDPerMillionTokens != 0 {
			t.Errorf("C=%d: energy %g J/token, peak %g of %g, cost %g without a price", p.Concurrency, p.EnergyPerTokenJ, p.PeakMemoryBytes, res.MemoryLimitBytes, p.USDPerMillionTokens)
		}
		if i == 0 {
			continue
		}
		q := res.Serving[i-1]
		if p.OutputTokensPerS < q.OutputTokensPerS || p.TPOTS < q.TPOTS || p.DecodeStepS < q.DecodeStepS || p.EnergyPerTokenJ > q.EnergyPerTokenJ {
			t.Errorf("C=%d after C=%d: tokens/s %g after %g, TPOT %g after %g, step %g after %g, J/token %g after %g",
				p.Concurrency, q.Concurrency, p.OutputTokensPerS, q.OutputTokensPerS, p.TPOTS, q.TPOTS, p.DecodeStepS, q.DecodeStepS, p.EnergyPerTokenJ, q.EnergyPerTokenJ)
		}
	}
	// The cap: the largest concurrency fits, one more does not.
	cfg.Concurrency = []int64{sm.MaxConcurrency, sm.MaxConcurrency + 1}
	edge := run(t, cfg)
	if len(edge.Serving) != 1 || edge.Serving[0].Concurrency != sm.MaxConcurrency || !slices.Equal(edge.ServingModel.Capped, []int64{sm.MaxConcurrency + 1}) || edge.ServingModel.MaxConcurrency != sm.MaxConcurrency {
		t.Errorf("at the edge: curve %+v, serving model %+v", edge.Serving, edge.ServingModel)
	}
	// The batch run is untouched by the curve.
	cfg.Concurrency = nil
	plain := run(t, cfg)
	if plain.Serving != nil || plain.ServingModel != nil || plain.TTFTS != res.TTFTS || plain.TPOTS != res.TPOTS || plain.MaxBatch != res.MaxBatch {
		t.Errorf("without --concurrency: %+v", plain)
	}
}

// TestServingEdges: one output token (prefills alone) and two (one
// decode step, at one cache length), and every concurrency too large.
func TestServingEdges(t *testing.T) {
	one := run(t, Config{Model: "zoo:llama-tiny", Prompt: 16, Output: 1, Concurrency: []int64{1, 8}})
	for _, p := range one.Serving {
		if p.DecodeStepS != 0 || p.TPOTS != 0 || p.TTFTS != one.ServingModel.PrefillS || p.OutputTokensPerS != 1/one.ServingModel.PrefillS {
			t.Errorf("one token, C=%d: %+v", p.Concurrency, p)
		}
	}
	two := run(t, Config{Model: "zoo:llama-tiny", Prompt: 16, Output: 2, Concurrency: []int64{4}})
	if p := two.Serving[0]; p.DecodeStepS <= 0 || p.TPOTS != 4*two.ServingModel.PrefillS+p.DecodeStepS {
		t.Errorf("two tokens: %+v", p)
	}
	none := run(t, Config{Model: "zoo:llama-7b", GPU: gpu(t, "T4"), DType: "fp16", Prompt: 4096, Output: 4096, Concurrency: []int64{64, 128}})
	if len(none.Serving) != 0 || none.Serving == nil || !slices.Equal(none.ServingModel.Capped, []int64{64, 128}) || none.ServingModel.MaxConcurrency != 0 {
		t.Errorf("LLaMA-7B on a T4: curve %+v, serving model %+v; want nothing fitting", none.Serving, none.ServingModel)
	}
}

// TestServingSLO: the best point is the highest throughput meeting every
// target, the lower concurrency on a tie, or none.
func TestServingSLO(t *testing.T) {
	pts := []ServingPoint{
		{Concurrency: 1, TTFTS: 0.010, TPOTS: 0.005, OutputTokensPerS: 100},
		{Concurrency: 4, TTFTS: 0.012, TPOTS: 0.008, OutputTokensPerS: 350},
		{Concurrency: 8, TTFTS: 0.015, TPOTS: 0.012, OutputTokensPerS: 350},
		{Concurrency: 16, TTFTS: 0.030, TPOTS: 0.020, OutputTokensPerS: 600},
	}
	for _, c := range []struct {
		ttft, tpot float64
		want       int64 // 0: none
	}{
		{0.1, 0, 16},
		{0.02, 0, 4},
		{0, 0.01, 4},
		{0.1, 0.02, 16},
		{0.011, 0.1, 1},
		{0.005, 0, 0},
		{0.1, 0.001, 0},
	} {
		b := pickBest(pts, c.ttft, c.tpot)
		got := int64(0)
		if b.Point != nil {
			got = b.Point.Concurrency
		}
		if got != c.want || b.TTFTSLOS != c.ttft || b.TPOTSLOS != c.tpot {
			t.Errorf("TTFT ≤ %g, TPOT ≤ %g: picked %d (%+v), want %d", c.ttft, c.tpot, got, b, c.want)
		}
		if (got == 0) != strings.HasPrefix(b.Verdict, "no concurrency") {
			t.Errorf("verdict %q for pick %d", b.Verdict, got)
		}
	}
	res := run(t, Config{Model: "zoo:llama-tiny", Prompt: 16, Output: 8, Concurrency: []int64{1, 2}, TPOTSLOS: 1})
	if res.Best == nil || res.Best.Point == nil || res.Best.Point.Concurrency != 2 {
		t.Errorf("a loose TPOT target: best %+v, want concurrency 2", res.Best)
	}
	if run(t, Config{Model: "zoo:llama-tiny", Prompt: 16, Output: 8, Concurrency: []int64{1}}).Best != nil {
		t.Error("a best point without targets")
	}
}

// TestServingPrice: $3.60 per GPU-hour on two GPUs is $0.002 a second;
// at 1000 tokens/s a million tokens take 1000 s: $2.
func TestServingPrice(t *testing.T) {
	if got := USDPerMillionTokens(3.6, 2, 1000); math.Abs(got-2) > 1e-15 {
		t.Errorf("$3.60/GPU-hour × 2 GPUs at 1000 tokens/s: $%.17g per million tokens, want $2", got)
	}
	res := run(t, Config{Model: "zoo:llama-tiny", Prompt: 16, Output: 8, Concurrency: []int64{1, 4}, PriceUSDPerGPUHour: 2.5, GPUs: 2})
	for _, p := range res.Serving {
		want := 2.5 * 2 / 3600 * 1e6 / p.OutputTokensPerS
		if math.Abs(p.USDPerMillionTokens-want) > 1e-12*want || p.OutputTokensPerSPerGPU != p.OutputTokensPerS/2 {
			t.Errorf("C=%d: $%g per million, want $%g; %g tokens/s per GPU of %g", p.Concurrency, p.USDPerMillionTokens, want, p.OutputTokensPerSPerGPU, p.OutputTokensPerS)
		}
	}
	if res.ServingModel.PriceUSDPerGPUHour != 2.5 {
		t.Errorf("price %g", res.ServingModel.PriceUSDPerGPUHour)
	}
}

// Bad serving settings are input errors naming the model.
func TestServingBadInput(t *testing.T) {
	h100 := gpu(t, "H100")
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Concurrency: []int64{0}}, "--concurrency 0"},
		{Config{Concurrency: []int64{1}, TTFTSLOS: -1}, "--ttft-slo must be positive"},
		{Config{Concurrency: []int64{1}, TPOTSLOS: math.NaN()}, "--tpot-slo must be positive"},
		{Config{Concurrency: []int64{1}, PriceUSDPerGPUHour: -2}, "--price must be positive"},
		{Config{TPOTSLOS: 0.1}, "give --concurrency"},
	} {
		c.cfg.Model, c.cfg.GPU, c.cfg.Prompt, c.cfg.Output = "zoo:llama-tiny", h100, 4, 4
		_, err := Run(c.cfg)
		if err == nil || !pipeline.IsInputError(err) || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "zoo:llama-tiny: ") {
			t.Errorf("%+v: got %v, want an input error naming the model and %q", c.cfg, err, c.want)
		}
	}
}

// A decoder exported for batch 1 (a dynamic sequence and cache, a static
// leading 1) is rewritten to each batch the run prices: it costs what the
// same decoder with a symbolic batch costs, and the rewrite is said once,
// in words that hold for every batch.
func TestServingStaticBatch(t *testing.T) {
	export := func(batch int64) string {
		m, err := models.Llama(models.LlamaConfig{Vocab: 1000, DModel: 64, Heads: 4, KVHeads: 2, Layers: 2, FF: 172,
			Batch: batch, Seq: models.Symbolic, Decode: true, Past: models.Symbolic})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "decoder.onnx")
		if err := ir.WriteFile(path, m); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cfg := Config{GPU: gpu(t, "H100"), Batch: 4, Prompt: 20, Output: 9, Concurrency: []int64{1, 4, 16}}
	cfg.Model = export(1)
	static := run(t, cfg)
	cfg.Model = export(models.Symbolic)
	dynamic := run(t, cfg)
	if static.TTFTS != dynamic.TTFTS || static.TPOTS != dynamic.TPOTS || len(static.Serving) != len(dynamic.Serving) {
		t.Errorf("static batch: TTFT %g TPOT %g, %d serving points; symbolic: %g %g, %d", static.TTFTS, static.TPOTS, len(static.Serving), dynamic.TTFTS, dynamic.TPOTS, len(dynamic.Serving))
	}
	var warned []string
	for _, w := range static.Warnings {
		if strings.Contains(w, "static batch dim of 1") {
			warned = append(warned, w)
		}
	}
	if len(warned) != 1 || !strings.HasPrefix(warned[0], "inputs input_ids, past_key_values.0.key, past_key_values.0.value and 2 more have") || !strings.HasSuffix(warned[0], "rewrote them to each batch") {
		t.Errorf("static-batch warnings %q: want one, for every batch", warned)
	}
}
