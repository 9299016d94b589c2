package main

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/web"
	"github.com/onnxcost/onnxcost/web/session"
)

// chooseFile puts a file of the given name and text in the file input sel
// and fires its change event, as a user's pick does.
func chooseFile(sel, name, text string) chromedp.Action {
	return chromedp.Evaluate(fmt.Sprintf(`(() => {
		const dt = new DataTransfer();
		dt.items.add(new File([%q], %q));
		const i = document.querySelector(%q);
		i.files = dt.files;
		i.dispatchEvent(new Event("change"));
		return true;
	})()`, text, name, sel), nil)
}

// TestBrowserCalibration: serve --calibration opens the page calibrated;
// a calibration chosen on the page, or none, prices exactly as report
// with (or without) --calibration of the same file, the header and the
// interval line name it, and a bad file gets --calibration's line. The
// page names the file by its own name, the CLI by the path given.
func TestBrowserCalibration(t *testing.T) {
	exe, model, pre := browserFixture(t)
	// A hand-written calibration of the A100 (testdata/calibrations).
	cal := filepath.Join(repoRoot, "testdata", "calibrations", "a100_hand.cal.yaml")
	b, err := os.ReadFile(cal)
	if err != nil {
		t.Fatal(err)
	}
	pageCalibration := string(b)
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("format: 9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// serve reads and checks the file before it listens.
	code, out, errs := runCLI(t, "serve", "--calibration", bad, "--addr", "127.0.0.1:0")
	if want := "onnxcost: --calibration: calibration " + bad + ": format 9, this onnxcost reads format 1"; code != 2 || out != "" || strings.TrimSpace(errs) != want {
		t.Errorf("serve with a bad calibration: exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, errs, want)
	}
	f := costFlags{calibration: cal}
	st, err := f.pageSettings()
	if err != nil {
		t.Fatal(err)
	}
	if st.Calibration == nil || st.Calibration.Name != cal || st.Calibration.Text != pageCalibration {
		t.Fatalf("serve --calibration: page settings %+v", st.Calibration)
	}

	pre.Settings = &session.Settings{GPU: "A100-SXM4-80GB", Calibration: &session.File{Name: "a100.yaml", Text: pageCalibration}}
	srv := httptest.NewServer(web.Handler(pre, web.Config{NoWasm: true, Version: version}))
	defer srv.Close()
	ctx := newBrowser(t, exe, 120*time.Second)
	args := []string{model, "--gpu", "A100-SXM4-80GB"}
	check := func(what string, calibrated bool) {
		t.Helper()
		page, err := pageTotals(ctx)
		if err != nil {
			t.Fatal(err)
		}
		a := args
		if calibrated {
			a = append(a, "--calibration", cal)
		}
		cli := cliReport(t, a...)
		sameTotals(t, what, page, cli.Totals)
		pr := pageReport(t, ctx)
		// The page names the file as chosen; report, as given.
		cli.CalibrationFile = strings.ReplaceAll(cli.CalibrationFile, cal, "a100.yaml")
		cli.Calibration = strings.ReplaceAll(cli.Calibration, cal, "a100.yaml")
		if canonJSON(t, pr) != canonJSON(t, cli) {
			t.Errorf("%s: the page's report JSON differs from 'report --format json %s'", what, strings.Join(a, " "))
		}
		var header, interval, name string
		if err := chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector("#title").textContent`, &header),
			chromedp.Evaluate(`document.querySelector("#lines").textContent`, &interval),
			chromedp.Evaluate(`document.querySelector("#cal-name").textContent`, &name)); err != nil {
			t.Fatal(err)
		}
		named := strings.Contains(header, "a100.yaml") && strings.Contains(interval, "calibration a100.yaml:")
		if named != calibrated || (name == "a100.yaml") != calibrated {
			t.Errorf("%s: header %q, lines %q, control %q", what, header, interval, name)
		}
	}
	var uncal report.Totals
	if err := chromedp.Run(ctx, chromedp.Navigate(srv.URL+"/"), waitEstimates(1)); err != nil {
		t.Fatalf("loading the page: %v", err)
	}
	check("serve --calibration", true)
	if err := chromedp.Run(ctx, chromedp.Click("#cal-clear"), waitEstimates(2)); err != nil {
		t.Fatal(err)
	}
	check("calibration removed", false)
	uncal = cliTotals(t, args...)
	if err := chromedp.Run(ctx, chooseFile("#cal-file", "a100.yaml", pageCalibration), waitEstimates(3)); err != nil {
		t.Fatal(err)
	}
	check("calibration chosen", true)
	if page, _ := pageTotals(ctx); page["time_s"] == uncal.TimeS {
		t.Errorf("the calibration changed nothing: %v", uncal.TimeS)
	}
	var shown string
	err = chromedp.Run(ctx, chooseFile("#cal-file", "bad.yaml", "format: 9\n"),
		chromedp.WaitVisible(`body[data-state="error"] #error`),
		chromedp.Evaluate(`document.querySelector("#error").textContent`, &shown))
	if err != nil {
		t.Fatal(err)
	}
	code, _, errs = runCLI(t, "report", model, "--gpu", "A100-SXM4-80GB", "--calibration", bad)
	if want := strings.ReplaceAll(strings.TrimSpace(errs), bad, "bad.yaml"); code != 2 || shown != want {
		t.Errorf("a bad calibration: page %q, CLI (exit %d) %q", shown, code, want)
	}
}
