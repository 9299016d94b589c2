package main

import (
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/onnxcost/onnxcost/generate"
	"github.com/onnxcost/onnxcost/web"
	"github.com/onnxcost/onnxcost/web/session"
)

// TestBrowserGenerate: a decoder opened on the page (in WebAssembly
// when built) offers a Generation
// tab whose figures are `generate --format json`'s for the same flags,
// exactly, as the prompt and output lengths and the batch change; its
// lengths are kept in the URL; a CNN has no such tab.
func TestBrowserGenerate(t *testing.T) {
	exe, cnn, _ := browserFixture(t)
	model := filepath.Join(repoRoot, "testdata", "models", "contrib", "llama_int4_gqa.onnx")
	pre, err := readPreload(model)
	if err != nil {
		t.Fatal(err)
	}
	pre.Settings = &session.Settings{GPU: "A100-SXM4-80GB"}
	// The WebAssembly when the binary embeds it (CI builds it first), as
	// a user's page runs; else serve's answers.
	srv := httptest.NewServer(web.Handler(pre, web.Config{Version: version}))
	defer srv.Close()
	ctx := newBrowser(t, exe, 150*time.Second)
	if err := chromedp.Run(ctx, chromedp.Navigate(srv.URL+"/#tab=generate"), waitEstimates(1),
		chromedp.WaitVisible(`#gen-cards .card[data-gen="ttft_s"]`)); err != nil {
		t.Fatalf("loading the page on its Generation tab: %v", err)
	}
	// The card's number for each field of generate's JSON.
	fields := map[string]func(*generate.Result) float64{
		"ttft_s": func(r *generate.Result) float64 { return r.TTFTS }, "tpot_s": func(r *generate.Result) float64 { return r.TPOTS },
		"e2e_s": func(r *generate.Result) float64 { return r.E2ES }, "output_tokens_per_s": func(r *generate.Result) float64 { return r.OutputTokensPerS },
		"kv_cache_bytes":    func(r *generate.Result) float64 { return r.KVCacheBytes },
		"peak_memory_bytes": func(r *generate.Result) float64 { return r.PeakMemoryBytes },
		"max_batch":         func(r *generate.Result) float64 { return float64(r.MaxBatch) },
	}
	check := func(what string, args ...string) {
		t.Helper()
		var raw map[string]string
		if err := chromedp.Run(ctx, chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll("#gen-cards [data-gen]")].map(e => [e.dataset.gen, e.dataset.value]))`, &raw)); err != nil {
			t.Fatal(err)
		}
		var cli generate.Result
		runJSON(t, &cli, append([]string{"generate", model, "--gpu", "A100-SXM4-80GB", "--format", "json"}, args...)...)
		for k, f := range fields {
			got, err := strconv.ParseFloat(raw[k], 64)
			if want := f(&cli); err != nil || got != want {
				t.Errorf("%s: %s on the page %q, generate %v", what, k, raw[k], want)
			}
		}
	}
	check("the defaults", "--prompt", "512", "--output", "128")
	steps := []struct {
		sel, value string
		args       []string
	}{
		{"#gen-prompt", "64", []string{"--prompt", "64", "--output", "128"}},
		{"#gen-output", "16", []string{"--prompt", "64", "--output", "16"}},
		{"#gen-concurrency", "1..8", []string{"--prompt", "64", "--output", "16", "--concurrency", "1..8"}},
		{"#gen-tpot-slo", "0.0006", []string{"--prompt", "64", "--output", "16", "--concurrency", "1..8", "--tpot-slo", "0.0006"}},
		{"#gen-price", "2.5", []string{"--prompt", "64", "--output", "16", "--concurrency", "1..8", "--tpot-slo", "0.0006", "--price", "2.5"}},
	}
	for _, st := range steps {
		var before string
		_ = chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector("#gen-cards").dataset.key`, &before))
		if err := chromedp.Run(ctx, setControl(st.sel, st.value),
			chromedp.Poll(`document.querySelector("#gen-cards").dataset.key !== `+jsQuote(before), nil)); err != nil {
			t.Fatalf("setting %s to %s: %v", st.sel, st.value, err)
		}
		check(st.sel+"="+st.value, st.args...)
	}
	// The batch is the page's: the report and the generation re-priced.
	if err := chromedp.Run(ctx, setControl("#batch", "4"), waitEstimates(2),
		chromedp.WaitVisible(`#gen-cards[data-key*='"batch":4']`)); err != nil {
		t.Fatal(err)
	}
	check("batch 4", "--prompt", "64", "--output", "16", "--concurrency", "1..8", "--tpot-slo", "0.0006", "--price", "2.5", "--batch", "4")
	// The serving curve is generate's text, table and all.
	var shown string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector("#gen-text").textContent`, &shown)); err != nil {
		t.Fatal(err)
	}
	_, text, _ := runCLI(t, "generate", model, "--gpu", "A100-SXM4-80GB", "--prompt", "64", "--output", "16", "--concurrency", "1..8",
		"--tpot-slo", "0.0006", "--price", "2.5", "--batch", "4")
	// serve names the preloaded model by its base name: it sends no paths.
	text = strings.ReplaceAll(text, model, filepath.Base(model))
	if !strings.Contains(shown, "serving at steady state") || !strings.Contains(shown, "best: ") || !strings.HasSuffix(shown, text) {
		t.Errorf("the page's generation text is not generate's:\n%s\n---\n%s", shown, text)
	}
	var hash string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`location.hash`, &hash)); err != nil {
		t.Fatal(err)
	}
	for _, kv := range []string{"prompt=64", "output=16", "concurrency=1..8", "tpot_slo=0.0006", "price=2.5", "tab=generate"} {
		if !strings.Contains(hash, kv) {
			t.Errorf("the URL hash %q does not record %s", hash, kv)
		}
	}

	// A CNN is no decoder: no Generation tab.
	cpre, err := readPreload(cnn)
	if err != nil {
		t.Fatal(err)
	}
	cpre.Settings = &session.Settings{GPU: "T4"}
	csrv := httptest.NewServer(web.Handler(cpre, web.Config{NoWasm: true, Version: version}))
	defer csrv.Close()
	var hidden bool
	if err := chromedp.Run(ctx, chromedp.Navigate(csrv.URL+"/#tab=generate"), waitEstimates(1),
		chromedp.Evaluate(`document.querySelector("#generate-tab").hidden && document.querySelector("#tab-generate").hidden`, &hidden)); err != nil {
		t.Fatal(err)
	}
	if !hidden {
		t.Error("a CNN's page offers a Generation tab")
	}
}
