package main

// Issue 27, item 9: the smaller wrong answers a new user found in diff,
// budget/check, html, roofline --time and the --gpus node table.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/gate"
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
)

// wantOneLine fails unless stderr is exactly one line.
func wantOneLine(t *testing.T, what, stderr string) {
	t.Helper()
	if strings.Count(strings.TrimRight(stderr, "\n"), "\n") != 0 || stderr == "" {
		t.Errorf("%s: want one line on stderr, got %q", what, stderr)
	}
}

// TestDiffReadsCheckJSON: the baseline `check --out-json` writes (the
// README's CI section) is a saved report to diff too, on either side; of
// several models, the one the other side is.
func TestDiffReadsCheckJSON(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, fixture(t, "resnet50.onnx"), filepath.Join(dir, "m.onnx"))
	copyFile(t, fixture(t, "resnet50_plus_block.onnx"), filepath.Join(dir, "m2.onnx"))
	one := filepath.Join(dir, "one.yaml")
	writeFile(t, one, "version: 1\ndefaults:\n  gpu: T4\n  batch: 1\nmodels:\n  - path: m.onnx\n    budgets:\n      time: 1 s\n")
	two := filepath.Join(dir, "two.yaml")
	writeFile(t, two, "version: 1\ndefaults:\n  gpu: T4\n  batch: 1\nmodels:\n  - path: m.onnx\n    budgets:\n      time: 1 s\n  - path: m2.onnx\n    budgets:\n      time: 1 s\n")
	base1, base2 := filepath.Join(dir, "base1.json"), filepath.Join(dir, "base2.json")
	for cfg, out := range map[string]string{one: base1, two: base2} {
		if code, _, errs := runCLI(t, "check", "-c", cfg, "--out-json", out); code != 0 {
			t.Fatalf("check -c %s: exit %d: %s", cfg, code, errs)
		}
	}
	model, model2 := filepath.Join(dir, "m.onnx"), filepath.Join(dir, "m2.onnx")
	for _, args := range [][]string{
		{base1, model}, {model, base1}, {base1, base1}, // one model, either side
		{base2, model}, {model2, base2}, // several: the other side's
	} {
		code, out, errs := runCLI(t, append([]string{"diff"}, append(args, "--gpu", "T4", "--batch", "1", "--format", "json")...)...)
		if code != 0 {
			t.Errorf("diff %s: exit %d: %s", strings.Join(args, " "), code, errs)
			continue
		}
		var d gate.ReportDiff
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatal(err)
		}
		// The same model at the same settings: no FLOPs moved, so the
		// right report of the check result was picked.
		if c := d.ChangeFor("flops"); c.Base == 0 || c.Delta != 0 {
			t.Errorf("diff %s: flops %g → %g, want the same model on both sides", strings.Join(args, " "), c.Base, c.Head)
		}
	}
	// A text diff too: the totals table, exit 0.
	if code, out, errs := runCLI(t, "diff", base1, model, "--gpu", "T4", "--batch", "1"); code != 0 || !strings.Contains(out, "flops") {
		t.Errorf("text diff of a check baseline: exit %d\n%s%s", code, out, errs)
	}
	// Of several models none of which is the other side: exit 2, one line
	// naming the file and its models.
	code, _, errs := runCLI(t, "diff", base2, "zoo:alexnet", "--gpu", "T4")
	wantOneLine(t, "diff of an unmatched check result", errs)
	if code != 2 || !strings.Contains(errs, "base2.json") || !strings.Contains(errs, "m2.onnx") {
		t.Errorf("diff of an unmatched check result: exit %d, stderr %q; want 2 naming the file and its models", code, errs)
	}
}

// TestBudgetWarnsAssumedSymbols: budget init and check name every symbol
// they assumed 1, on stderr and in check's JSON, as report does.
func TestBudgetWarnsAssumedSymbols(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, fixture(t, "resnet50.onnx"), filepath.Join(dir, "m.onnx"))
	cfg := filepath.Join(dir, "b.yaml")
	code, _, errs := runCLI(t, "budget", "init", filepath.Join(dir, "m.onnx"), "--gpu", "T4", "-o", cfg)
	if code != 0 {
		t.Fatalf("budget init: exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "symbol batch is unbound; assumed 1") || !strings.Contains(errs, "m.onnx") {
		t.Errorf("budget init without --batch: stderr %q, want a warning naming m.onnx and batch assumed 1", errs)
	}
	out := filepath.Join(dir, "c.json")
	code, _, errs = runCLI(t, "check", "-c", cfg, "--out-json", out)
	if code != 0 {
		t.Fatalf("check: exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "symbol batch is unbound; assumed 1") || !strings.Contains(errs, "batch: N") {
		t.Errorf("check of a budget without batch: stderr %q, want the warning with the budget's way to bind it", errs)
	}
	var res gate.CheckResult
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range res.Models[0].Report.Warnings {
		found = found || strings.Contains(w, "symbol batch is unbound; assumed 1")
	}
	if !found {
		t.Errorf("check --out-json: report warnings %q lack the assumed symbol", res.Models[0].Report.Warnings)
	}
	// Bound: no such warning.
	code, _, errs = runCLI(t, "budget", "init", filepath.Join(dir, "m.onnx"), "--gpu", "T4", "--batch", "2", "-o", filepath.Join(dir, "b2.yaml"))
	if code != 0 || strings.Contains(errs, "assumed 1") {
		t.Errorf("budget init --batch 2: exit %d, stderr %q; want no assumed-symbol warning", code, errs)
	}
}

// TestHTMLRefusesOtherExtensions: html writes HTML, so -o x.pdf is an
// error (exit 2, one line), and nothing is written.
func TestHTMLRefusesOtherExtensions(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"x.pdf", "x.svg", "x"} {
		out := filepath.Join(dir, name)
		code, stdout, errs := runCLI(t, "html", fixture(t, "resnet50.onnx"), "--gpu", "T4", "-o", out)
		wantOneLine(t, "html -o "+name, errs)
		if code != 2 || !strings.Contains(errs, name) || !strings.Contains(errs, ".html") || stdout != "" {
			t.Errorf("html -o %s: exit %d, stderr %q; want 2 naming the file and .html", name, code, errs)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("html with a wrong extension wrote %d file(s)", len(ents))
	}
}

// TestTimeRooflineUnknownSweepParam: sweeping a name the model does not
// have is an error naming it and what can be swept, not a flat chart.
func TestTimeRooflineUnknownSweepParam(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ model, want string }{
		{fixture(t, "resnet50.onnx"), "batch"},
		{"zoo:resnet50", "image"},
	} {
		out := filepath.Join(dir, "r.png")
		code, _, errs := runCLI(t, "roofline", c.model, "--gpu", "T4", "--time", "--sweep", "seq=128,256", "-o", out)
		wantOneLine(t, "roofline --sweep seq", errs)
		if code != 2 || !strings.Contains(errs, "seq") || !strings.Contains(errs, c.want) {
			t.Errorf("roofline %s --time --sweep seq=…: exit %d, stderr %q; want 2 naming seq and %s", c.model, code, errs, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("roofline %s: wrote %s on an error", c.model, out)
		}
	}
}

// TestTensorParallelTableRates: under --gpus N the node table's bytes are
// one GPU's, like its time, so no row implies a bandwidth above the GPU's
// L2 (whole-model bytes over one GPU's time read as 15 TB/s on an H100).
func TestTensorParallelTableRates(t *testing.T) {
	cell := regexp.MustCompile(`\s{2,}`)
	bytesM, _ := gate.LookupMetric("bytes")
	timeM, _ := gate.LookupMetric("time")
	for _, gpu := range []string{"H100", "A100-SXM4-80GB", "L40S"} {
		g, err := resolveGPU(gpu, "")
		if err != nil {
			t.Fatal(err)
		}
		l2 := perf.L2Bandwidth(g, perf.DefaultParams())
		for _, model := range []string{"zoo:llama-7b?decode=1&past=1024", "zoo:llama-7b?decode=1&past=1024&batch=8", "zoo:llama-7b?seq=512"} {
			args := []string{"report", model, "--gpu", gpu, "--gpus", "4", "--dtype", "fp16"}
			code, out, errs := runCLI(t, args...)
			if code != 0 {
				t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, errs)
			}
			lines := strings.Split(out, "\n")
			start := -1
			for i, l := range lines {
				if strings.HasPrefix(l, "node ") {
					start = i
					break
				}
			}
			if start < 0 || !strings.Contains(lines[start], "read/GPU") || !strings.Contains(lines[start], "written/GPU") {
				t.Fatalf("%s: no node table with per-GPU columns:\n%s", strings.Join(args, " "), out)
			}
			rows := 0
			for _, l := range lines[start+1:] {
				if strings.HasPrefix(l, "total") || l == "" {
					break
				}
				c := cell.Split(strings.TrimSpace(l), -1)
				if len(c) != 10 {
					t.Fatalf("%s: row %q has %d cells, want 10", model, l, len(c))
				}
				read, err1 := gate.ParseQuantity(c[4], bytesM)
				written, err2 := gate.ParseQuantity(c[5], bytesM)
				sec, err3 := gate.ParseQuantity(c[8], timeM)
				if err1 != nil || err2 != nil || err3 != nil {
					t.Fatalf("%s: row %q: %v %v %v", model, l, err1, err2, err3)
				}
				rows++
				// 5%: the table rounds to three significant digits.
				if sec > 0 && (read+written)/sec > l2*1.05 {
					t.Errorf("%s on %d × %s: %s moves %s + %s in %s, %.3g TB/s above L2's %.3g TB/s", model, 4, gpu, c[0], c[4], c[5], c[8], (read+written)/sec/1e12, l2/1e12)
				}
			}
			if rows < 100 {
				t.Errorf("%s: only %d node rows read", model, rows)
			}
		}
	}
	// compare's tables likewise: one GPU's bytes beside one GPU's time.
	g, _ := resolveGPU("L40S", "")
	code, out, errs := runCLI(t, "compare", "zoo:llama-7b?decode=1&past=1024&batch=8", "--gpu", "L40S", "--gpus", "4", "--dtype", "fp16", "--top", "5")
	if code != 0 {
		t.Fatalf("compare --gpus 4: exit %d: %s", code, errs)
	}
	var timeS, bytesB float64
	for _, l := range strings.Split(out, "\n") {
		c := cell.Split(strings.TrimSpace(l), -1)
		if len(c) == 4 && c[0] == "time" {
			timeS, _ = gate.ParseQuantity(c[2], timeM)
		}
		if len(c) == 4 && c[0] == "bytes/GPU" {
			bytesB, _ = gate.ParseQuantity(c[2], bytesM)
		}
	}
	if timeS == 0 || bytesB == 0 || !strings.Contains(out, "one GPU of 4") {
		t.Fatalf("compare --gpus 4: no per-GPU totals:\n%s", out)
	}
	if l2 := perf.L2Bandwidth(g, perf.DefaultParams()); bytesB/timeS > l2 {
		t.Errorf("compare --gpus 4: fused plan moves %g B/GPU in %g s, above L2's %g B/s", bytesB, timeS, l2)
	}
	// JSON keeps the model's counts and says each node's share.
	var r report.Report
	runJSON(t, &r, "report", "zoo:llama-7b?decode=1&past=1024", "--gpu", "H100", "--gpus", "4", "--dtype", "fp16", "--format", "json")
	split := 0
	for _, n := range r.Nodes {
		switch n.GPUShare {
		case 0:
		case 0.25:
			split++
		default:
			t.Errorf("%s: gpu_share %g, want 0.25 or absent", n.Name, n.GPUShare)
		}
	}
	if split == 0 {
		t.Error("no node has gpu_share 0.25 under --gpus 4")
	}
}
