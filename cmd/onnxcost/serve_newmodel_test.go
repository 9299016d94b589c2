package main

import (
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/onnxcost/onnxcost/web"
	"github.com/onnxcost/onnxcost/web/session"
)

// TestBrowserNewModelRedrawsTabs: a model opened on the page under the
// same settings as the last one redraws the tab shown (the roofline,
// fused against unfused, the generation), which each skip a redraw for
// settings they have drawn: the key they keep must name the model too.
func TestBrowserNewModelRedrawsTabs(t *testing.T) {
	exe, _, _ := browserFixture(t)
	// SetUploadFiles wants absolute paths.
	models, err := filepath.Abs(filepath.Join(repoRoot, "testdata", "models"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tab, first, second, box string
	}{
		{"compare", "resnet50.onnx", "alexnet.onnx", "#compare"},
		{"roofline", "resnet50.onnx", "alexnet.onnx", "#roofline"},
		{"generate", "contrib/llama_int4_gqa.onnx", "contrib/llama_int4_fused.onnx", "#tab-generate"},
	} {
		pre, err := readPreload(filepath.Join(models, c.first))
		if err != nil {
			t.Fatal(err)
		}
		pre.Settings = &session.Settings{GPU: "A100-SXM4-80GB"}
		srv := httptest.NewServer(web.Handler(pre, web.Config{NoWasm: true, Version: version}))
		ctx := newBrowser(t, exe, 40*time.Second)
		ready := map[string]string{"compare": "#compare table", "roofline": "#roofline svg", "generate": "#gen-cards .card"}[c.tab]
		var before, after string
		err = chromedp.Run(ctx, chromedp.Navigate(srv.URL+"/#tab="+c.tab), waitEstimates(1), chromedp.WaitVisible(ready),
			chromedp.Evaluate(`document.querySelector("`+c.box+`").textContent`, &before))
		if err == nil {
			// A second Run: the poll's expression holds before's text.
			err = chromedp.Run(ctx, chromedp.SetUploadFiles("#file", []string{filepath.Join(models, c.second)}), waitEstimates(2),
				chromedp.Poll(`document.querySelector("`+c.box+`").textContent !== `+jsQuote(before), nil, chromedp.WithPollingTimeout(20*time.Second)),
				chromedp.Evaluate(`document.querySelector("`+c.box+`").textContent`, &after))
		}
		srv.Close()
		if err != nil {
			t.Errorf("%s tab: %s then %s: %v (still %.80q)", c.tab, c.first, c.second, err, before)
		}
	}
}
