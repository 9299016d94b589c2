package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/web"
	"github.com/onnxcost/onnxcost/web/session"
)

// chromium finds a Chromium to drive, or "" (the browser test skips).
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// pageTotals reads the totals the page shows: every [data-total] element
// carries the JSON number it displays, exactly.
func pageTotals(ctx context.Context) (map[string]float64, error) {
	var raw map[string]string
	err := chromedp.Run(ctx, chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll("[data-total]")].map(e => [e.dataset.total, e.dataset.value]))`, &raw))
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for k, v := range raw {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, fmt.Errorf("total %s: %q is not a number", k, v)
		}
		out[k] = f
	}
	return out, nil
}

// cliTotals is `report --format json`'s totals for the same settings.
func cliTotals(t *testing.T, args ...string) report.Totals {
	t.Helper()
	return cliReport(t, args...).Totals
}

// cliReport is `report --format json` for the settings.
func cliReport(t *testing.T, args ...string) *report.Report {
	t.Helper()
	var r report.Report
	runJSON(t, &r, append([]string{"report", "--format", "json"}, args...)...)
	// serve names the preloaded model by its base name: it sends no paths.
	r.Model = filepath.Base(r.Model)
	return &r
}

// sameTotals compares the page's totals with the CLI's, exactly.
func sameTotals(t *testing.T, what string, page map[string]float64, cli report.Totals) {
	t.Helper()
	want := map[string]float64{
		"time_s": cli.TimeS, "flops": cli.FLOPs, "macs": cli.MACs, "bytes": cli.BytesRead + cli.BytesWritten,
		"bytes_read": cli.BytesRead, "bytes_written": cli.BytesWritten, "launches": cli.Launches,
		"peak_memory_bytes": cli.PeakMemoryBytes, "energy_j": cli.EnergyJ, "params": cli.Params,
		"nodes": float64(cli.Nodes), "transcendentals": cli.Transcendentals, "param_bytes": cli.ParamBytes,
		"peak_activation_bytes": cli.PeakActivationBytes, "gemm_conv_time_share": cli.GEMMConvTimeShare,
	}
	for k, w := range want {
		g, ok := page[k]
		if !ok {
			t.Errorf("%s: the page shows no %s", what, k)
		} else if g != w {
			t.Errorf("%s: %s on the page %v, CLI %v", what, k, g, w)
		}
	}
}

// jsQuote is s as a JavaScript string literal.
func jsQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// waitEstimates waits until the page has rendered n reports.
func waitEstimates(n int) chromedp.Action {
	return chromedp.WaitVisible(fmt.Sprintf(`body[data-estimates="%d"][data-state="ready"] #cards`, n))
}

// TestBrowser drives the served app in headless Chromium: the page's
// totals for ResNet-50 equal `report`'s, switching GPU and batch changes
// them exactly as the CLI says, a bad file gets the CLI's error line, and
// the page fetches nothing from anywhere but its own origin.
func TestBrowser(t *testing.T) {
	exe, model, pre := browserFixture(t)
	// As `serve MODEL --gpu t4`: the page opens on the CLI's settings.
	code, _, errs := runCLI(t, "serve", "--gpu", "t4", "--addr", "0.0.0.0:1")
	if code != 2 {
		t.Fatalf("serve on a public address: exit %d (%s)", code, errs)
	}
	srv := httptest.NewServer(web.Handler(pre, web.Config{Version: version}))
	defer srv.Close()
	ctx := newBrowser(t, exe, 150*time.Second)

	var mu sync.Mutex
	var foreign, late []string
	loaded := false // set once the first report is shown
	var jsErrors []string
	chromedp.ListenTarget(ctx, func(ev any) {
		if e, ok := ev.(*runtime.EventExceptionThrown); ok {
			mu.Lock()
			jsErrors = append(jsErrors, e.ExceptionDetails.Error())
			mu.Unlock()
			t.Logf("page exception: %s", e.ExceptionDetails.Error())
		}
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			u := e.Request.URL
			mu.Lock()
			// Without the WebAssembly the page's calls go to serve
			// (/api/); with it, nothing may be fetched once loaded.
			if loaded && !strings.HasPrefix(u, "data:") && !strings.HasPrefix(u, "blob:") && (web.HasWasm() || !strings.HasPrefix(u, srv.URL+"/api/")) {
				late = append(late, u)
			}
			mu.Unlock()
			if !strings.HasPrefix(u, srv.URL+"/") && !strings.HasPrefix(u, "data:") && !strings.HasPrefix(u, "blob:") {
				mu.Lock()
				foreign = append(foreign, u)
				mu.Unlock()
			}
		}
	})

	// 1. The preloaded model under serve's settings.
	var firstMS float64
	if err := chromedp.Run(ctx); err != nil { // starts the browser
		t.Fatal(err)
	}
	browserPID := chromedp.FromContext(ctx).Browser.Process().Pid
	cpu0 := treeCPU(browserPID)
	start := time.Now()
	err := chromedp.Run(ctx, network.Enable(), performance.Enable(),
		chromedp.Navigate(srv.URL+"/"),
		waitEstimates(1),
		chromedp.Evaluate(`window.onnxcostTiming.firstReport`, &firstMS))
	if err != nil {
		t.Fatalf("loading the page: %v", err)
	}
	// Wall time depends on how busy the machine is; the browser's CPU
	// time says what the page costs.
	var metrics []*performance.Metric
	if err := chromedp.Run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		var err error
		metrics, err = performance.GetMetrics().Do(ctx)
		return err
	})); err != nil {
		t.Logf("performance metrics: %v", err)
	}
	busy := map[string]float64{}
	for _, m := range metrics {
		busy[m.Name] = m.Value
	}
	var transport string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`window.onnxcostTiming.transport`, &transport)); err != nil || transport != map[bool]string{true: "wasm", false: "server"}[web.HasWasm()] {
		t.Errorf("the page's calls went to %q (%v); the wasm is embedded: %v", transport, err, web.HasWasm())
	}
	t.Logf("ResNet-50 report shown %.0f ms after navigation start (Go build (%s) ready at %.0f ms; wall %v); Chromium's CPU time for it %v; renderer main-thread tasks %.0f ms",
		firstMS, transport, evalFloat(ctx, `window.onnxcostTiming.wasmReady`), time.Since(start).Round(time.Millisecond), treeCPU(browserPID)-cpu0, 1000*busy["TaskDuration"])
	page, err := pageTotals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("step 1 done at %v", time.Since(start))
	mu.Lock()
	loaded = true
	mu.Unlock()
	t4r := cliReport(t, model, "--gpu", "T4")
	t4 := t4r.Totals
	sameTotals(t, "T4", page, t4)
	// The whole report the page holds is the CLI's, node for node.
	if canonJSON(t, pageReport(t, ctx)) != canonJSON(t, t4r) {
		t.Errorf("the page's report JSON differs from 'report --format json'")
	}
	// How far to trust the time: the CLI's interval line, under the header.
	var lines string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector("#lines").innerText`, &lines)); err != nil || !strings.Contains(lines, render.IntervalText(t4r)) {
		t.Errorf("the page's lines %q (%v) lack the CLI's interval line %q", lines, err, render.IntervalText(t4r))
	}
	// The node notes the text report lists under its totals (ResNet-50 on
	// a T4 has Winograd's), listed below the warnings.
	var notes string
	noteLines, _ := render.NodeNoteLines(t4r)
	if len(noteLines) == 0 {
		t.Errorf("ResNet-50 on a T4 has no node notes to show; the check below checks nothing")
	}
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector("#nodenotes").textContent`, &notes)); err != nil {
		t.Errorf("reading the page's node notes: %v", err)
	}
	for _, l := range noteLines {
		if !strings.Contains(notes, l) {
			t.Errorf("the page's node notes %q lack the CLI's line %q", notes, l)
		}
	}

	// 2. Another GPU: re-estimated in place, exactly the CLI's numbers.
	err = chromedp.Run(ctx,
		chromedp.Evaluate(`(() => { const s = document.querySelector("#gpu"); s.value = "A100-SXM4-80GB"; s.dispatchEvent(new Event("change")); return s.value })()`, nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("changed GPU at %v", time.Since(start))
	err = chromedp.Run(ctx, waitEstimates(2))
	if err != nil {
		t.Fatal(err)
	}
	page, err = pageTotals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a100 := cliTotals(t, model, "--gpu", "A100-SXM4-80GB")
	sameTotals(t, "A100", page, a100)
	if a100.TimeS == t4.TimeS {
		t.Errorf("switching GPU did not change the time (%v)", a100.TimeS)
	}
	var hash string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`location.hash`, &hash)); err != nil || !strings.Contains(hash, "gpu=A100-SXM4-80GB") {
		t.Errorf("the URL hash does not record the GPU: %q (%v)", hash, err)
	}

	// 3. Batch and plan, as --batch 8 --plan unfused.
	err = chromedp.Run(ctx,
		chromedp.Evaluate(`(() => { const s = document.querySelector("#batch"); s.value = "8"; s.dispatchEvent(new Event("change")); return s.value })()`, nil),
		waitEstimates(3),
		chromedp.Click(`input[name="plan"][value="unfused"]`),
		waitEstimates(4))
	if err != nil {
		t.Fatal(err)
	}
	page, err = pageTotals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sameTotals(t, "A100 batch 8 unfused", page, cliTotals(t, model, "--gpu", "A100-SXM4-80GB", "--batch", "8", "--plan", "unfused"))

	// 3b. Another model dropped on the page keeps the settings and is
	// estimated as the CLI does it.
	alex, err := os.ReadFile(fixture(t, "alexnet.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	drop := func(name string, data []byte) chromedp.Action {
		return chromedp.Evaluate(fmt.Sprintf(`(() => {
			const bytes = Uint8Array.from(atob(%q), (c) => c.charCodeAt(0));
			const dt = new DataTransfer();
			dt.items.add(new File([bytes], %q));
			window.dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
			return true;
		})()`, base64.StdEncoding.EncodeToString(data), name), nil)
	}
	if err := chromedp.Run(ctx, drop("alexnet.onnx", alex), waitEstimates(5)); err != nil {
		t.Fatalf("dropping alexnet.onnx: %v", err)
	}
	if page, err = pageTotals(ctx); err != nil {
		t.Fatal(err)
	}
	sameTotals(t, "dropped alexnet, A100 batch 8 unfused", page, cliTotals(t, fixture(t, "alexnet.onnx"), "--gpu", "A100-SXM4-80GB", "--batch", "8", "--plan", "unfused"))
	// Back to ResNet-50, dropped this time, for the screenshots.
	if err := chromedp.Run(ctx, drop("resnet50.onnx", pre.Data), waitEstimates(6)); err != nil {
		t.Fatal(err)
	}

	// 4. The graph (Graphviz in the page) and a screenshot for people.
	shot := os.Getenv("ONNXCOST_SCREENSHOT_DIR")
	if shot == "" {
		shot = t.TempDir()
	}
	var png []byte
	err = chromedp.Run(ctx,
		chromedp.Click(`input[name="plan"][value="fused"]`), waitEstimates(7),
		chromedp.Click(`#tabs button[data-tab="graph"]`),
		chromedp.WaitVisible(`#graph svg g.node`),
		chromedp.CaptureScreenshot(&png))
	if err != nil {
		t.Fatalf("graph tab: %v", err)
	}
	writeShot(t, filepath.Join(shot, "onnxcost_web_graph.png"), png)
	err = chromedp.Run(ctx,
		chromedp.Click(`#graph svg g.node[id^="node:"]`),
		chromedp.WaitVisible(`#detail h3`),
		chromedp.Click(`#tabs button[data-tab="nodes"]`),
		chromedp.WaitVisible(`#nodes tbody tr`),
		chromedp.CaptureScreenshot(&png))
	if err != nil {
		t.Fatalf("node detail: %v", err)
	}
	writeShot(t, filepath.Join(shot, "onnxcost_web_nodes.png"), png)
	for _, tab := range []string{"roofline", "compare", "gpus"} {
		err = chromedp.Run(ctx,
			chromedp.Click(`#tabs button[data-tab="`+tab+`"]`),
			chromedp.WaitVisible(map[string]string{"roofline": "#roofline svg", "compare": "#compare table", "gpus": "#gpus tbody tr"}[tab]),
			chromedp.CaptureScreenshot(&png))
		if err != nil {
			t.Fatalf("%s tab: %v", tab, err)
		}
		writeShot(t, filepath.Join(shot, "onnxcost_web_"+tab+".png"), png)
	}

	// 5. A bad file gets the CLI's one line (run from its folder, so the
	// CLI names it as the page does: by its file name).
	dir := t.TempDir()
	junk := make([]byte, 4096)
	rand.New(rand.NewSource(7)).Read(junk)
	bad := filepath.Join(dir, "bad.onnx")
	if err := os.WriteFile(bad, junk, 0o644); err != nil {
		t.Fatal(err)
	}
	var shown string
	err = chromedp.Run(ctx,
		chromedp.SetUploadFiles("#file", []string{bad}),
		chromedp.WaitVisible(`body[data-state="error"] #error`),
		chromedp.Evaluate(`document.querySelector("#error").textContent`, &shown))
	if err != nil {
		t.Fatalf("bad file: %v", err)
	}
	var out string
	t.Chdir(dir)
	code, out, errs = runCLI(t, "report", "bad.onnx", "--gpu", "A100-SXM4-80GB")
	if code != 2 || out != "" {
		t.Fatalf("CLI on bad.onnx: exit %d, stdout %q", code, out)
	}
	// Go's protobuf puts a space or a no-break space in its messages,
	// chosen per binary (to stop tests matching them exactly): the wasm
	// and the test binary may differ in that character alone.
	nbsp := strings.NewReplacer("\u00a0", " ")
	if want := strings.TrimSpace(errs); nbsp.Replace(shown) != nbsp.Replace(want) {
		t.Errorf("page error %q, CLI %q", shown, want)
	}
	var mainHidden bool
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector("#main").hidden`, &mainHidden)); err != nil || !mainHidden {
		t.Errorf("the page still shows a report after a bad file (%v)", err)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(jsErrors) > 0 {
		t.Errorf("the page threw: %v", jsErrors)
	}
	if len(late) > 0 {
		t.Errorf("the page made requests after load (it must work offline once loaded): %v", late)
	}
	if len(foreign) > 0 {
		t.Errorf("the page requested other origins: %v", foreign)
	}
}

// browserFixture skips the test without a Chromium to drive; otherwise
// it gives the browser, ResNet-50's path and what `serve MODEL --gpu T4`
// preloads.
func browserFixture(tb testing.TB) (exe, model string, pre *web.Preload) {
	tb.Helper()
	if exe = chromium(); exe == "" {
		tb.Skip("no Chromium on PATH (Debian: apt-get install chromium); .ci/run installs it")
	}
	model = filepath.Join("..", "..", "testdata", "models", "resnet50.onnx")
	pre, err := readPreload(model)
	if err != nil {
		tb.Fatal(err)
	}
	pre.Settings = &session.Settings{GPU: "T4"} // the runtime's plan, as serve without --plan
	return exe, model, pre
}

// pageReport is the report the page holds (#report-json).
func pageReport(t *testing.T, ctx context.Context) *report.Report {
	t.Helper()
	var pageJSON string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.getElementById("report-json").textContent`, &pageJSON)); err != nil {
		t.Fatal(err)
	}
	var pr report.Report
	if err := json.Unmarshal([]byte(pageJSON), &pr); err != nil {
		t.Fatalf("#report-json: %v", err)
	}
	return &pr
}

// newBrowser starts a headless Chromium for the test, stopped when it ends.
func newBrowser(t testing.TB, exe string, limit time.Duration) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.WindowSize(1400, 1000), chromedp.Flag("disable-gpu", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTime := context.WithTimeout(ctx, limit)
	t.Cleanup(func() { cancelTime(); cancelCtx(); cancelAlloc() })
	return ctx
}

func evalFloat(ctx context.Context, expr string) float64 {
	var f float64
	_ = chromedp.Run(ctx, chromedp.Evaluate(expr, &f))
	return f
}

func writeShot(t *testing.T, path string, png []byte) {
	t.Helper()
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// treeCPU is the CPU time (user + system) the processes under root have
// used so far, from /proc (0 where there is none): the browser's cost of
// a page independent of how busy the machine is.
func treeCPU(root int) time.Duration {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	parent := map[int]int{}
	ticks := map[int]int64{}
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(s[:strings.IndexByte(s, '(')]))
		f := strings.Fields(s[i+1:]) // f[0] is the state: field 3
		if len(f) < 13 {
			continue
		}
		parent[pid], _ = strconv.Atoi(f[1])
		u, _ := strconv.ParseInt(f[11], 10, 64)
		k, _ := strconv.ParseInt(f[12], 10, 64)
		ticks[pid] = u + k
	}
	var sum int64
	for pid, t := range ticks {
		for p, n := pid, 0; p > 0 && n < 64; p, n = parent[p], n+1 {
			if p == root {
				sum += t
				break
			}
		}
	}
	return time.Duration(sum) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}
