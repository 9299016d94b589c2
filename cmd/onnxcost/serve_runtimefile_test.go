package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/onnxcost/onnxcost/web"
)

// TestBrowserRuntimeFile: serve --runtime-file FILE --runtime pytorch-lab
// opens the page under the file's profile; removing the file leaves the
// built-in profiles (the default chosen), choosing it again chooses its
// first profile, and its other profile can be chosen from the menu, each
// priced as report --runtime-file prices it (report JSON and all, the
// file named as the page names it); a bad file gets --runtime-file's
// line, and the file before it stays in force.
func TestBrowserRuntimeFile(t *testing.T) {
	exe, model, pre := browserFixture(t)
	file, err := filepath.Abs(filepath.Join(repoRoot, "testdata", "runtimes", "my-runtimes.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	f := costFlags{gpu: "A100", runtime: "pytorch-lab", runtimeFile: file}
	if pre.Settings, err = f.pageSettings(); err != nil {
		t.Fatal(err)
	}
	if pre.Settings.Runtime != "pytorch-lab" || pre.Settings.RuntimeFile == nil {
		t.Fatalf("serve --runtime-file --runtime pytorch-lab: settings %+v", pre.Settings)
	}
	srv := httptest.NewServer(web.Handler(pre, web.Config{NoWasm: true, Version: version}))
	defer srv.Close()
	ctx := newBrowser(t, exe, 90*time.Second)
	// check compares the page with report under runtime rt ("": none
	// named), with the file where named, as the page calls it (pageName).
	check := func(what, rt, pageName string) {
		t.Helper()
		var shown string
		var offered bool
		if err := chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector("#runtime").value`, &shown),
			chromedp.Evaluate(`!!document.querySelector('#runtime option[value="trt86-enqueue"]')`, &offered)); err != nil {
			t.Fatal(err)
		}
		if shown != rt {
			t.Errorf("%s: the menu shows %q, want %q", what, shown, rt)
		}
		if offered != (pageName != "") {
			t.Errorf("%s: the menu offers the file's trt86-enqueue: %v", what, offered)
		}
		page, err := pageTotals(ctx)
		if err != nil {
			t.Fatal(err)
		}
		args := []string{model, "--gpu", "A100-SXM4-80GB"}
		if rt != "" {
			args = append(args, "--runtime", rt)
		}
		if pageName != "" {
			args = append(args, "--runtime-file", file)
		}
		cli := cliReport(t, args...)
		sameTotals(t, what, page, cli.Totals)
		// A figure the file leaves unsourced is sourced to its line: the
		// page names the file as chosen, report as given.
		want := canonJSON(t, cli)
		if pageName != "" {
			want = strings.ReplaceAll(want, file, pageName)
		}
		if got := canonJSON(t, pageReport(t, ctx)); got != want {
			t.Errorf("%s: the page's report JSON differs from 'report --format json %s'", what, strings.Join(args, " "))
		}
	}
	if err := chromedp.Run(ctx, chromedp.Navigate(srv.URL+"/"), waitEstimates(1)); err != nil {
		t.Fatal(err)
	}
	check("serve --runtime-file --runtime pytorch-lab", "pytorch-lab", file)
	if err := chromedp.Run(ctx, chromedp.Click("#runtime-file-clear"), waitEstimates(2)); err != nil {
		t.Fatal(err)
	}
	check("runtime file removed", "", "")
	if err := chromedp.Run(ctx, chooseFile("#runtime-file", "my-runtimes.yaml", string(text)), waitEstimates(3)); err != nil {
		t.Fatal(err)
	}
	check("runtime file chosen", "pytorch-lab", "my-runtimes.yaml")
	if err := chromedp.Run(ctx, setControl("#runtime", "trt86-enqueue"), waitEstimates(4)); err != nil {
		t.Fatal(err)
	}
	check("the file's other profile", "trt86-enqueue", "my-runtimes.yaml")

	badFileRefusedLikeCLI(t, ctx, "#runtime-file", "--runtime-file", model, "- name: x\n  base: nosuch\n")
	// The page keeps the last good file in force: the next setting is
	// priced under it.
	if err := chromedp.Run(ctx, setControl("#runtime", "pytorch-lab"), waitEstimates(5)); err != nil {
		t.Fatal(err)
	}
	check("after a bad runtime file", "pytorch-lab", "my-runtimes.yaml")
}
