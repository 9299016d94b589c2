package main

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/onnxcost/onnxcost/web"
)

// TestBrowserGPUFile: serve --gpu-file FILE --gpu lab opens the page on
// the file's GPU; removing the file leaves the database's GPUs (and a GPU
// of them chosen), choosing it again chooses its first GPU, each priced
// as report --gpu-file prices it; a bad file gets --gpu-file's line and
// the menu stays.
func TestBrowserGPUFile(t *testing.T) {
	exe, model, pre := browserFixture(t)
	file, err := filepath.Abs(filepath.Join(repoRoot, "testdata", "gpus", "my-gpus.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	f := costFlags{gpu: "lab", gpuFile: file}
	if pre.Settings, err = f.pageSettings(); err != nil {
		t.Fatal(err)
	}
	if pre.Settings.GPU != "A100-lab" || pre.Settings.GPUFile == nil {
		t.Fatalf("serve --gpu-file --gpu lab: settings %+v", pre.Settings)
	}
	srv := httptest.NewServer(web.Handler(pre, web.Config{NoWasm: true, Version: version}))
	defer srv.Close()
	ctx := newBrowser(t, exe, 90*time.Second)
	check := func(what, gpu string, withFile bool) {
		t.Helper()
		var shown string
		if err := chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector("#gpu").value`, &shown)); err != nil {
			t.Fatal(err)
		}
		if shown != gpu {
			t.Errorf("%s: the menu shows %q, want %q", what, shown, gpu)
		}
		page, err := pageTotals(ctx)
		if err != nil {
			t.Fatal(err)
		}
		args := []string{model, "--gpu", gpu}
		if withFile {
			args = append(args, "--gpu-file", file)
		}
		sameTotals(t, what, page, cliTotals(t, args...))
		var offered bool
		if err := chromedp.Run(ctx, chromedp.Evaluate(`!!document.querySelector('#gpu option[value="MyInferenceCard"]')`, &offered)); err != nil {
			t.Fatal(err)
		}
		if offered != withFile {
			t.Errorf("%s: the menu offers the file's MyInferenceCard: %v", what, offered)
		}
	}
	if err := chromedp.Run(ctx, chromedp.Navigate(srv.URL+"/"), waitEstimates(1)); err != nil {
		t.Fatal(err)
	}
	check("serve --gpu-file --gpu lab", "A100-lab", true)
	if err := chromedp.Run(ctx, chromedp.Click("#gpu-file-clear"), waitEstimates(2)); err != nil {
		t.Fatal(err)
	}
	check("GPU file removed", "A100-SXM4-80GB", false)
	if err := chromedp.Run(ctx, chromedp.SetUploadFiles("#gpu-file", []string{file}), waitEstimates(3)); err != nil {
		t.Fatal(err)
	}
	check("GPU file chosen", "A100-lab", true)

	badFileRefusedLikeCLI(t, ctx, "#gpu-file", "--gpu-file", model, "- name: x\n  vendor: Acme\n")
	check("after a bad GPU file", "A100-lab", true)
}

// badFileRefusedLikeCLI chooses a file named bad.yaml holding text on the
// page's chooser input (a GPU or runtime file): the page must show the
// line `report --gpu A100 FLAG bad.yaml` prints (exit 2), and `serve FLAG
// bad.yaml` must refuse it with that line before it listens.
func badFileRefusedLikeCLI(t *testing.T, ctx context.Context, input, flag, model, text string) {
	t.Helper()
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var shown string
	err := chromedp.Run(ctx, chromedp.SetUploadFiles(input, []string{bad}),
		chromedp.WaitVisible(`body[data-state="error"] #error, #error:not([hidden])`),
		chromedp.Evaluate(`document.querySelector("#error").textContent`, &shown))
	if err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI(t, "report", model, "--gpu", "A100", flag, bad)
	if want := strings.ReplaceAll(strings.TrimSpace(errs), bad, "bad.yaml"); code != 2 || shown != want {
		t.Errorf("a bad %s: page %q, CLI (exit %d) %q", flag, shown, code, want)
	}
	if c, out, e := runCLI(t, "serve", flag, bad, "--addr", "127.0.0.1:0"); c != 2 || out != "" || strings.TrimSpace(e) != strings.TrimSpace(errs) {
		t.Errorf("serve with a bad %s: exit %d, stdout %q, stderr %q; want exit 2 and %q", flag, c, out, e, errs)
	}
}
