package main

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/chromedp"
)

// BenchmarkPageLoad measures what a user waits for in headless Chromium:
// from navigation start to ResNet-50's report on the page, as served by
// `onnxcost serve testdata/models/resnet50.onnx --gpu T4` (the page's
// own clock, window.onnxcostTiming). Each iteration is a fresh browser
// (no cached compiled WebAssembly: a first visit); ms-wasm is when the Go
// build is up, ms-report when the report is shown. On a shared machine
// those wall times measure the other loads too, so it also reports the
// CPU time the page cost, from Chromium's own counters when the report is
// shown: cpu-ms, the page's renderer process (started for the
// navigation; compiling the WebAssembly on background threads included),
// and main-ms, its main thread (what the page itself ran).
//
//	go test ./cmd/onnxcost -run '^$' -bench PageLoad -benchtime 5x
func BenchmarkPageLoad(b *testing.B) {
	exe, _, pre := browserFixture(b)
	srv := httptest.NewServer(serveHandler(pre))
	defer srv.Close()
	var wasm, report, cpu, main float64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		ctx := newBrowser(b, exe, 120*time.Second)
		if err := chromedp.Run(ctx); err != nil { // start the browser outside the timing
			b.Fatal(err)
		}
		b.StartTimer()
		var first, ready float64
		var phases string
		err := chromedp.Run(ctx, chromedp.Navigate(srv.URL+"/"), waitEstimates(1), performance.Enable(),
			chromedp.Evaluate(`window.onnxcostTiming.firstReport`, &first),
			chromedp.Evaluate(`window.onnxcostTiming.wasmReady`, &ready),
			chromedp.Evaluate(`JSON.stringify(window.onnxcostTiming, (k, v) => typeof v === "number" ? Math.round(v) : v)`, &phases))
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		ms := metrics(ctx)
		c, m := 1000*ms["ProcessTime"], 1000*ms["ThreadTime"]
		wasm += ready
		report += first
		cpu += c
		main += m
		b.Logf("load %d: wasm up at %.0f ms, report shown at %.0f ms; renderer CPU %.0f ms, main thread %.0f ms; page marks (ms) %s", i+1, ready, first, c, m, phases)
	}
	b.ReportMetric(wasm/float64(b.N), "ms-wasm")
	b.ReportMetric(report/float64(b.N), "ms-report")
	b.ReportMetric(cpu/float64(b.N), "cpu-ms")
	b.ReportMetric(main/float64(b.N), "main-ms")
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
