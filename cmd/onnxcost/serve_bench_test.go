package main

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/chromedp"
	"github.com/onnxcost/onnxcost/web"
)

// BenchmarkPageLoad measures what a user waits for in headless Chromium:
// from navigation start to ResNet-50's report on the page, as served by
// `onnxcost serve testdata/models/resnet50.onnx --gpu T4` (the page's
// own clock, window.onnxcostTiming): ms-wasm is when the Go build is up,
// ms-report when the report is shown. first-visit starts a fresh browser
// each time (nothing cached); repeat-visit reloads a page the browser has
// shown once, which revalidates the files (serve's ETags) and reuses the
// WebAssembly Chromium compiled. On a shared machine wall times measure
// the other loads too, so it also reports cpu-ms, the CPU time of the
// page's renderer process until the report is shown (Chromium's
// ProcessTime; compiling the WebAssembly on background threads included).
//
//	go test ./cmd/onnxcost -run '^$' -bench PageLoad -benchtime 3x
func BenchmarkPageLoad(b *testing.B) {
	exe, _, pre := browserFixture(b)
	srv := httptest.NewServer(web.Handler(pre, web.Config{Version: version}))
	defer srv.Close()
	b.Run("first-visit", func(b *testing.B) { benchLoads(b, exe, srv.URL+"/", false) })
	b.Run("repeat-visit", func(b *testing.B) { benchLoads(b, exe, srv.URL+"/", true) })
}

func benchLoads(b *testing.B, exe, url string, repeat bool) {
	var wasm, report, cpu float64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		ctx := newBrowser(b, exe, 120*time.Second)
		load := chromedp.Navigate(url)
		if err := chromedp.Run(ctx); err != nil { // start the browser outside the timing
			b.Fatal(err)
		}
		var cpu0 float64
		if repeat {
			if err := chromedp.Run(ctx, chromedp.Navigate(url), waitEstimates(1), performance.Enable()); err != nil {
				b.Fatal(err)
			}
			cpu0 = metrics(ctx)["ProcessTime"]
			load = chromedp.Reload()
		}
		b.StartTimer()
		var first, ready float64
		var phases string
		err := chromedp.Run(ctx, load, waitEstimates(1), performance.Enable(),
			chromedp.Evaluate(`window.onnxcostTiming.firstReport`, &first),
			chromedp.Evaluate(`window.onnxcostTiming.wasmReady`, &ready),
			chromedp.Evaluate(`JSON.stringify(window.onnxcostTiming, (k, v) => typeof v === "number" ? Math.round(v) : v)`, &phases))
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		c := 1000 * (metrics(ctx)["ProcessTime"] - cpu0)
		wasm += ready
		report += first
		cpu += c
		b.Logf("load %d: wasm up at %.0f ms, report shown at %.0f ms; renderer CPU %.0f ms; page marks (ms) %s", i+1, ready, first, c, phases)
	}
	b.ReportMetric(wasm/float64(b.N), "ms-wasm")
	b.ReportMetric(report/float64(b.N), "ms-report")
	b.ReportMetric(cpu/float64(b.N), "cpu-ms")
}

// metrics are the page's Chromium performance counters by name (times
// in seconds).
func metrics(ctx context.Context) map[string]float64 {
	var ms []*performance.Metric
	_ = chromedp.Run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		var err error
		ms, err = performance.GetMetrics().Do(ctx)
		return err
	}))
	out := map[string]float64{}
	for _, m := range ms {
		out[m.Name] = m.Value
	}
	return out
}
