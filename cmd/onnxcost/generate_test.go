package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/generate"
)

// TestGenerate: text and JSON (which follows generate.schema.json and
// says what the text says), and bad input exits 2 with one line naming
// the model.
func TestGenerate(t *testing.T) {
	args := []string{"generate", "zoo:llama-tiny", "--gpu", "H100", "--prompt", "32", "--output", "16", "--batch", "4"}
	res := generateBoth(t, args, "time to first token", "time per output token", "end to end", "output tokens/s", "KV cache", "peak memory", "largest batch that fits", "least-squares line")
	// llama-tiny: 2 layers × (key + value) × 2 kv heads × 16, fp32, 48
	// positions, 4 sequences.
	if res.Batch != 4 || res.Prompt != 32 || res.Output != 16 || res.KVCacheBytes != 4*48*2*2*2*16*4 || !res.Fits {
		t.Errorf("result %+v", res)
	}
	if want := res.TTFTS + 15*res.TPOTS; res.E2ES != want {
		t.Errorf("e2e %g, want %g", res.E2ES, want)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"generate", "zoo:resnet50", "--gpu", "H100", "--prompt", "4", "--output", "4"}, "zoo:resnet50: not a decoder"},
		{[]string{"generate", "zoo:llama-tiny", "--gpu", "H100", "--prompt", "0", "--output", "4"}, "zoo:llama-tiny: --prompt"},
		{[]string{"generate", "zoo:llama-tiny", "--gpu", "H100", "--prompt", "4"}, "--output M, the tokens generated per sequence, is required"},
		{[]string{"generate", "zoo:llama-tiny", "--gpu", "H100", "--output", "4"}, "--prompt N, the prompt's tokens per sequence, is required"},
		{[]string{"generate", "zoo:llama-tiny", "--gpu", "H100", "--prompt", "4", "--output", "0"}, "zoo:llama-tiny: --output"},
		{[]string{"generate", "zoo:llama-tiny", "--gpu", "H100", "--prompt", "4", "--output", "4", "--format", "csv"}, "--format"},
	} {
		code, _, errs := runCLI(t, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", c.args, code, errs, c.want)
		}
	}
}

// TestGenerateGPUs: with --gpus the KV cache is split by heads; the JSON
// keeps the whole cache and adds one GPU's part, and the text states the
// rule.
func TestGenerateGPUs(t *testing.T) {
	args := []string{"generate", "zoo:llama-tiny", "--gpu", "H100", "--prompt", "32", "--output", "16", "--batch", "4", "--gpus", "2"}
	res := generateBoth(t, args, "KV cache per GPU", "1 of the 2 KV heads on each of 2 GPUs", "KV cache split by heads over 2 GPUs")
	if whole := float64(4 * 48 * 2 * 2 * 2 * 16 * 4); res.KVCacheBytes != whole || res.KVCacheBytesPerGPU != whole/2 || res.KVHeads != 2 || res.GPUs != 2 {
		t.Errorf("cache %g B, %g per GPU, %d heads over %d GPUs", res.KVCacheBytes, res.KVCacheBytesPerGPU, res.KVHeads, res.GPUs)
	}
}

// TestGenerateServing: --concurrency adds the serving curve to the text
// and the JSON (which follows the schema), --tpot-slo picks a point, and
// a bad list, an SLO or price ≤ 0, or an SLO without a curve exits 2.
func TestGenerateServing(t *testing.T) {
	args := []string{"generate", "zoo:llama-tiny", "--gpu", "H100", "--prompt", "32", "--output", "16", "--concurrency", "1..8,12", "--tpot-slo", "1", "--price", "3"}
	res := generateBoth(t, args, "serving at steady state: 32 + 16 tokens per request", "concurrency", "$/M tokens", "model: continuous batching", "not modelled: scheduling policy", "best: concurrency 12 meets TPOT ≤ 1.00 s")
	var cs []int64
	for _, p := range res.Serving {
		cs = append(cs, p.Concurrency)
		if p.USDPerMillionTokens != generate.USDPerMillionTokens(3, 1, p.OutputTokensPerS) {
			t.Errorf("C=%d: $%g per million tokens", p.Concurrency, p.USDPerMillionTokens)
		}
	}
	if fmt.Sprint(cs) != "[1 2 4 8 12]" || res.Best == nil || res.Best.Point == nil || res.Best.Point.Concurrency != 12 || res.ServingModel.PriceUSDPerGPUHour != 3 {
		t.Errorf("curve at %v, best %+v, serving model %+v", cs, res.Best, res.ServingModel)
	}
	base := []string{"generate", "zoo:llama-tiny", "--gpu", "H100", "--prompt", "4", "--output", "4"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--concurrency", "1..6"}, "--concurrency: range"},
		{[]string{"--concurrency", "0,4"}, "--concurrency"},
		{[]string{"--concurrency", "4", "--ttft-slo", "0"}, "--ttft-slo must be > 0"},
		{[]string{"--concurrency", "4", "--tpot-slo", "-0.1"}, "--tpot-slo must be > 0"},
		{[]string{"--concurrency", "4", "--price", "0"}, "--price must be > 0"},
		{[]string{"--tpot-slo", "0.1"}, "zoo:llama-tiny: --tpot-slo applies to the serving curve"},
	} {
		code, _, errs := runCLI(t, append(base, c.args...)...)
		if code != 2 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", c.args, code, errs, c.want)
		}
	}
}

// generateBoth runs generate with args as text, which must hold every
// phrase of want, and as JSON, which must follow generate's schema; it
// returns the JSON result.
func generateBoth(t *testing.T, args []string, want ...string) generate.Result {
	t.Helper()
	code, out, errs := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("text lacks %q:\n%s", w, out)
		}
	}
	var res generate.Result
	js := runJSON(t, &res, append(args, "--format", "json")...)
	var inst any
	if err := json.Unmarshal([]byte(js), &inst); err != nil {
		t.Fatal(err)
	}
	if err := resolveSchema(t, generate.Schema).Validate(inst); err != nil {
		t.Errorf("JSON does not match generate/generate.schema.json: %v", err)
	}
	return res
}

// TestGenerateAutocastRuntime: with no --runtime, a generation under
// torch.autocast (a -amp dtype) is priced in PyTorch eager, as report
// prices the same call, not under the model's TensorRT; a named runtime
// still wins.
func TestGenerateAutocastRuntime(t *testing.T) {
	base := []string{"generate", "zoo:llama-tiny", "--gpu", "A100", "--prompt", "32", "--output", "4", "--format", "json"}
	var amp, named, plain, trt generate.Result
	runJSON(t, &amp, append(base, "--dtype", "fp16-amp")...)
	runJSON(t, &named, append(base, "--dtype", "fp16-amp", "--runtime", "pytorch")...)
	runJSON(t, &plain, append(base, "--dtype", "fp16")...)
	runJSON(t, &trt, append(base, "--dtype", "fp16-amp", "--runtime", "tensorrt")...)
	if amp.Runtime != "pytorch" || amp.TTFTS != named.TTFTS || amp.TPOTS != named.TPOTS {
		t.Errorf("fp16-amp: runtime %s, TTFT %g TPOT %g; --runtime pytorch: TTFT %g TPOT %g", amp.Runtime, amp.TTFTS, amp.TPOTS, named.TTFTS, named.TPOTS)
	}
	if plain.Runtime != "tensorrt" || trt.Runtime != "tensorrt" {
		t.Errorf("fp16 without --runtime priced under %s, fp16-amp with --runtime tensorrt under %s; want tensorrt for both", plain.Runtime, trt.Runtime)
	}
	var rep struct {
		Runtime struct{ Name string } `json:"runtime"`
	}
	runJSON(t, &rep, "report", "zoo:llama-tiny", "--gpu", "A100", "--dtype", "fp16-amp", "--format", "json")
	if rep.Runtime.Name != amp.Runtime {
		t.Errorf("report --dtype fp16-amp prices under %s, generate under %s", rep.Runtime.Name, amp.Runtime)
	}
}
