package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/onnxcost/onnxcost/web"
	"github.com/onnxcost/onnxcost/web/session"
)

// zooServer serves the page with a zoo model preloaded (`serve` of the
// file `zoo NAME -o` writes), on H100; noWasm has the server answer the
// page's calls even when the WebAssembly is embedded.
func zooServer(t *testing.T, name string, noWasm bool) *httptest.Server {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".onnx")
	if code, _, errs := runCLI(t, "zoo", name, "-o", path); code != 0 {
		t.Fatalf("zoo %s: %s", name, errs)
	}
	pre, err := readPreload(path)
	if err != nil {
		t.Fatal(err)
	}
	pre.Settings = &session.Settings{GPU: "H100-SXM5-80GB"}
	srv := httptest.NewServer(web.Handler(pre, web.Config{NoWasm: noWasm, Version: version}))
	t.Cleanup(srv.Close)
	return srv
}

// waitGraph waits until the page has laid out the graph n times.
func waitGraph(n int) chromedp.Action {
	return chromedp.WaitVisible(fmt.Sprintf(`body[data-graph="%d"] #graph svg g.node`, n))
}

// svgIDs are the ids of the graph's boxes.
func svgIDs(t *testing.T, ctx context.Context) []string {
	t.Helper()
	var ids []string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`[...document.querySelectorAll("#graph svg g.node")].map(g => g.id)`, &ids)); err != nil {
		t.Fatal(err)
	}
	return ids
}

func countPrefix(ids []string, prefix string) int {
	n := 0
	for _, id := range ids {
		if strings.HasPrefix(id, prefix) {
			n++
		}
	}
	return n
}

// TestBrowserGraphExpand drives the Graph tab on LLaMA-7B in headless
// Chromium: a click on the box of the 32 identical layers titles the
// panel with the group's name and draws layer 0's members (the other 31
// stay one box); the open group survives a reload; the breadcrumbs fold
// it again; search finds a node deep in layer 17 and shows it selected;
// focus keeps its neighbourhood; the legend speaks of the page's
// controls. The plan radio offers every --plan value.
func TestBrowserGraphExpand(t *testing.T) {
	exe, _, _ := browserFixture(t)
	srv := zooServer(t, "llama-7b", true)
	ctx := newBrowser(t, exe, 150*time.Second)
	if err := chromedp.Run(ctx, chromedp.Navigate(srv.URL+"/#gpu=H100-SXM5-80GB&tab=graph"), waitEstimates(1), waitGraph(1)); err != nil {
		t.Fatalf("loading the graph: %v", err)
	}
	shot := func(name string) {
		if dir := os.Getenv("ONNXCOST_SCREENSHOT_DIR"); dir != "" {
			var png []byte
			if err := chromedp.Run(ctx, chromedp.CaptureScreenshot(&png)); err != nil {
				t.Fatal(err)
			}
			writeShot(t, filepath.Join(dir, "onnxcost_web_"+name+".png"), png)
		}
	}
	ids := svgIDs(t, ctx)
	var rep string
	for _, id := range ids {
		if strings.HasPrefix(id, "scope:/model/layers.0") {
			rep = id
		}
	}
	if rep == "" || countPrefix(ids, "node:/model/layers.0/") > 0 {
		t.Fatalf("LLaMA-7B's layers are not folded into one box: %v", ids)
	}
	var legend string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector("#graph svg #legend").textContent`, &legend)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(legend, "--") || !strings.Contains(legend, "click a box to expand") {
		t.Errorf("the legend speaks of flags, not the page's controls: %q", legend)
	}

	// Open the layers' box: its name titles the panel; layer 0's members
	// are drawn; layers 1-31 stay one box.
	var title string
	err := chromedp.Run(ctx, chromedp.Click(fmt.Sprintf(`#graph svg g.node[id=%q]`, rep)), waitGraph(2),
		chromedp.Evaluate(`document.querySelector("#detail h3").textContent`, &title))
	if err != nil {
		t.Fatalf("opening %s: %v", rep, err)
	}
	if title != "/model/layers.0 … layers.31 ×32" {
		t.Errorf("the panel's title is %q, want the group's name", title)
	}
	ids = svgIDs(t, ctx)
	if n := countPrefix(ids, "node:/model/layers.0/") + countPrefix(ids, "scope:/model/layers.0/"); n < 4 {
		t.Errorf("opening the layers drew %d of layer 0's members: %v", n, ids)
	}
	var svg string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector("#graph svg").outerHTML`, &svg)); err != nil {
		t.Fatal(err)
	}
	for _, member := range []string{"/model/layers.0/self_attn", "/model/layers.0/mlp", "layers.1 … layers.31 ×31"} {
		if !strings.Contains(svg, member) {
			t.Errorf("the opened graph does not show %s", member)
		}
	}
	if len(ids) > 60 {
		t.Errorf("opening one layer drew %d boxes", len(ids))
	}
	shot("graph_open")

	// The open group is in the URL and survives a reload.
	var hash string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`location.hash`, &hash)); err != nil || !strings.Contains(hash, "open=repeat%3A%2Fmodel%2Flayers.0") {
		t.Errorf("the URL hash %q does not keep the open group (%v)", hash, err)
	}
	if err := chromedp.Run(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(srv.URL+"/"+hash), waitEstimates(1), waitGraph(1)); err != nil {
		t.Fatalf("reloading %s: %v", hash, err)
	}
	if n := countPrefix(svgIDs(t, ctx), "node:/model/layers.0/"); n == 0 {
		t.Errorf("after a reload layer 0 is folded again")
	}
	// The first crumb folds everything again.
	if err := chromedp.Run(ctx, chromedp.Click(`#crumbs button[data-p=""]`), waitGraph(2)); err != nil {
		t.Fatal(err)
	}
	if ids := svgIDs(t, ctx); countPrefix(ids, "node:/model/layers.0/") > 0 {
		t.Errorf("the crumb did not fold layer 0: %v", ids)
	}

	// Search: a node in layer 17 is drawn alone and selected.
	const want = "/model/layers.17/mlp/down_proj/MatMul"
	var sel string
	var crumbs string
	err = chromedp.Run(ctx,
		chromedp.Evaluate(`(() => { const i = document.querySelector("#graph-search"); i.value = "layers.17/mlp/down"; i.dispatchEvent(new Event("input")); return true })()`, nil),
		chromedp.WaitVisible(`#search-results li[data-name]`),
		chromedp.Click(fmt.Sprintf(`#search-results li[data-name=%q]`, want)),
		waitGraph(3),
		chromedp.Evaluate(`[...document.querySelectorAll("#graph svg g.node.sel")].map(g => g.id).join(",")`, &sel),
		chromedp.Evaluate(`document.querySelector("#crumbs").textContent`, &crumbs))
	if err != nil {
		t.Fatalf("searching for %s: %v", want, err)
	}
	if sel != "node:"+want {
		t.Errorf("search selected %q, want node:%s", sel, want)
	}
	if !strings.Contains(crumbs, "layers.17") || !strings.Contains(crumbs, "down_proj") {
		t.Errorf("breadcrumbs %q do not show the node's scopes", crumbs)
	}
	if ids := svgIDs(t, ctx); len(ids) > 80 {
		t.Errorf("revealing one node drew %d boxes", len(ids))
	}
	shot("graph_search")

	// Focus on its neighbourhood: it and its neighbours, the rest folded.
	if err := chromedp.Run(ctx, chromedp.Click(`#detail button[data-act="focus"]`), waitGraph(4)); err != nil {
		t.Fatal(err)
	}
	ids = svgIDs(t, ctx)
	if countPrefix(ids, "node:"+want) != 1 || countPrefix(ids, "fold:") == 0 || len(ids) > 30 {
		t.Errorf("focus on %s drew %v", want, ids)
	}
	shot("graph_focus")

	// Every plan is offered; a training step's lines are not cut.
	var plans []string
	var cut int
	err = chromedp.Run(ctx, chromedp.Evaluate(`[...document.querySelectorAll('input[name="plan"]')].map(r => r.value)`, &plans),
		setControl("#train", "on"), waitEstimates(2),
		chromedp.Evaluate(`[...document.querySelectorAll("#lines div, #train-box div")].filter(d => d.scrollWidth > d.clientWidth + 1).length`, &cut))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(plans, ","); !strings.Contains(got, "eager") || !strings.Contains(got, "inductor") || !strings.Contains(got, "onnxruntime") {
		t.Errorf("the plan radio offers %s", got)
	}
	shot("train_lines")
	if cut != 0 {
		t.Errorf("%d lines of the training step are cut off", cut)
	}
}

// TestBrowserGraphExpandLarge times opening one layer of LLaMA-70B (6,273
// nodes) in the page, in the WebAssembly when it is embedded: the draw
// call and Graphviz lay out the boxes the page shows, never the whole
// graph.
func TestBrowserGraphExpandLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("LLaMA-70B in a browser")
	}
	exe, _, _ := browserFixture(t)
	srv := zooServer(t, "llama-70b", false)
	ctx := newBrowser(t, exe, 150*time.Second)
	// The runtime's plan (TensorRT's fused kernels, 1,615 nodes) and the
	// unfused one (all 6,273).
	for _, plan := range []string{"", "unfused"} {
		var first, draw, layout, expand float64
		var transport string
		err := chromedp.Run(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(srv.URL+"/#gpu=H100-SXM5-80GB&tab=graph&plan="+plan), waitEstimates(1), waitGraph(1),
			chromedp.Evaluate(`window.onnxcostTiming.expandMs`, &first),
			chromedp.Evaluate(`window.onnxcostTiming.transport`, &transport))
		if err != nil {
			t.Fatal(err)
		}
		ids := svgIDs(t, ctx)
		rep := ""
		for _, id := range ids {
			if strings.HasPrefix(id, "scope:/model/layers.0") {
				rep = id
			}
		}
		if rep == "" {
			t.Fatalf("plan %q: no box of LLaMA-70B's layers: %v", plan, ids)
		}
		err = chromedp.Run(ctx, chromedp.Click(fmt.Sprintf(`#graph svg g.node[id=%q]`, rep)), waitGraph(2),
			chromedp.Evaluate(`window.onnxcostTiming.drawMs`, &draw),
			chromedp.Evaluate(`window.onnxcostTiming.graphMs`, &layout),
			chromedp.Evaluate(`window.onnxcostTiming.expandMs`, &expand))
		if err != nil {
			t.Fatal(err)
		}
		after := svgIDs(t, ctx)
		t.Logf("LLaMA-70B plan %q (%s): first graph %d boxes in %.0f ms; opening layer 0: %d boxes in %.0f ms (draw call %.0f ms, Graphviz %.0f ms)",
			plan, transport, len(ids), first, len(after), expand, draw, layout)
		if countPrefix(after, "node:/model/layers.0/")+countPrefix(after, "scope:/model/layers.0/") == 0 || len(after) > 60 {
			t.Errorf("plan %q: opening layer 0 drew %v", plan, after)
		}
	}
}
