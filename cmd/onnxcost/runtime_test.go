package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
)

// TestRuntimeFlagEveryCostCommand: every command that costs a model takes
// --runtime; a non-default profile changes what it prints, and an unknown
// one is a usage error (exit 2) naming the known profiles.
func TestRuntimeFlagEveryCostCommand(t *testing.T) {
	m := filepath.Join(repoRoot, "testdata", "models", "resnet50.onnx")
	dir := t.TempDir()
	budget := filepath.Join(dir, "b.yaml")
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmds := map[string][]string{
		"report":   {"report", m, "--gpu", "A100", "--format", "json"},
		"compare":  {"compare", m, "--gpu", "A100", "--format", "json"},
		"graph":    {"graph", m, "--gpu", "A100"},
		"html":     {"html", m, "--gpu", "A100", "-o", filepath.Join(dir, "x.html")},
		"roofline": {"roofline", m, "--gpu", "A100", "-o", filepath.Join(dir, "x.svg")},
		"diff":     {"diff", m, m, "--gpu", "A100", "--format", "json"},
	}
	for name, args := range cmds {
		outFile := ""
		for i, a := range args {
			if a == "-o" {
				outFile = args[i+1]
			}
		}
		read := func(stdout string) string {
			if outFile == "" {
				return stdout
			}
			b, err := os.ReadFile(outFile)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return string(b)
		}
		code, out, errs := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errs)
		}
		def := read(out)
		code, out, errs = runCLI(t, append(args, "--runtime", "tensorrt")...)
		if code != 0 || read(out) != def {
			t.Errorf("%s --runtime tensorrt: exit %d, differs from the default: %s", name, code, errs)
		}
		code, out, errs = runCLI(t, append(args, "--runtime", "pytorch")...)
		if code != 0 {
			t.Fatalf("%s --runtime pytorch: exit %d: %s", name, code, errs)
		}
		if name != "diff" && read(out) == def {
			t.Errorf("%s --runtime pytorch prints the same as tensorrt", name)
		}
		code, _, errs = runCLI(t, append(args, "--runtime", "nosuch")...)
		if code != 2 || !strings.Contains(errs, "unknown runtime") || !strings.Contains(errs, "tensorrt") {
			t.Errorf("%s --runtime nosuch: exit %d, stderr %q", name, code, errs)
		}
	}
	// check takes the runtime from the budget file.
	abs, err := filepath.Abs(m)
	if err != nil {
		t.Fatal(err)
	}
	m = abs
	write(budget, "version: 1\ndefaults:\n  gpu: A100\n  runtime: pytorch\nmodels:\n  - path: "+m+"\n    budgets:\n      latency: {max: \"1 s\"}\n")
	if code, out, errs := runCLI(t, "check", "-c", budget); code != 0 {
		t.Errorf("check with runtime: exit %d: %s %s", code, out, errs)
	}
	write(budget, "version: 1\ndefaults:\n  gpu: A100\n  runtime: nosuch\nmodels:\n  - path: "+m+"\n    budgets:\n      latency: {max: \"1 s\"}\n")
	if code, _, errs := runCLI(t, "check", "-c", budget); code != 2 || !strings.Contains(errs, "unknown runtime") {
		t.Errorf("check with unknown runtime: exit %d: %s", code, errs)
	}
}

// TestRuntimeJSONAndGPUFileLaunch (issue 18 finding 6): a --gpu-file
// launch_us is scaled by the profile's gap, and the report says by how
// much, in JSON and in the text header.
func TestRuntimeJSONAndGPUFileLaunch(t *testing.T) {
	m := filepath.Join(repoRoot, "testdata", "models", "resnet50.onnx")
	gf := filepath.Join(t.TempDir(), "gpu.yaml")
	if err := os.WriteFile(gf, []byte("- name: MyGPU\n  base: A100-SXM4-80GB\n  launch_us: 4.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var r report.Report
	runJSON(t, &r, "report", m, "--gpu", "MyGPU", "--gpu-file", gf, "--format", "json")
	rt := r.Runtime
	if rt == nil || rt.Name != "tensorrt" || rt.LaunchS != 4.5e-6 || rt.KernelGapScale != 0.53 {
		t.Fatalf("runtime = %+v", rt)
	}
	if !strings.Contains(strings.Join(rt.Notes, "\n"), "0.53 × the GPU entry's launch_us (4.5 µs)") {
		t.Errorf("notes do not say launch_us is scaled: %q", rt.Notes)
	}
	_, text, _ := runCLI(t, "report", m, "--gpu", "MyGPU", "--gpu-file", gf, "--runtime", "graph", "--top", "1")
	if !strings.Contains(text, "runtime graph · kernel gap 2.39 µs (0.53 × launch 4.50 µs; 1.19 µs of it the kernel's ramp)") {
		t.Errorf("text header does not state the gap:\n%s", text)
	}
	// An eager profile pays the whole launch and the host's dispatch.
	var e report.Report
	runJSON(t, &e, "report", m, "--gpu", "MyGPU", "--gpu-file", gf, "--runtime", "pytorch", "--format", "json")
	if e.Runtime.KernelGapS != 4.5e-6 || e.Runtime.DispatchS != 8e-6 || math.Abs(e.Runtime.ModuleS-2.2e-6) > 1e-12 || e.Runtime.OpCallScale != 1.35 || !(e.Totals.TimeS > r.Totals.TimeS) {
		t.Errorf("pytorch: gap %g dispatch %g module %g scale %g time %g (graph %g)", e.Runtime.KernelGapS, e.Runtime.DispatchS, e.Runtime.ModuleS, e.Runtime.OpCallScale, e.Totals.TimeS, r.Totals.TimeS)
	}
	// Each node's host call is in its row, and the host's work is their
	// sum and the call's.
	var host float64
	for _, n := range e.Nodes {
		host += n.HostS
	}
	if math.Abs(e.Runtime.HostS-(e.Runtime.CallS+host)) > 1e-12 || !(host > 0) {
		t.Errorf("pytorch: host_s %g, want call %g + the nodes' %g", e.Runtime.HostS, e.Runtime.CallS, host)
	}
	if e.Runtime.DeviceMemoryBytes != e.Totals.PeakMemoryBytes+e.Runtime.MemoryFloorBytes {
		t.Errorf("device memory %g != peak %g + floor %g", e.Runtime.DeviceMemoryBytes, e.Totals.PeakMemoryBytes, e.Runtime.MemoryFloorBytes)
	}
}

// TestDiffWarnsOnRuntime: two saved reports priced under different runtimes
// are compared with a warning saying so, and graph refuses to redraw a
// saved report for another --runtime.
func TestDiffWarnsOnRuntime(t *testing.T) {
	m := filepath.Join(repoRoot, "testdata", "models", "resnet50.onnx")
	dir := t.TempDir()
	save := func(name string, args ...string) string {
		_, out, errs := runCLI(t, append([]string{"report", m, "--gpu", "A100", "--format", "json"}, args...)...)
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
			t.Fatal(err, errs)
		}
		return p
	}
	a, b := save("a.json", "--runtime", "graph"), save("b.json", "--runtime", "pytorch")
	code, out, errs := runCLI(t, "diff", a, b)
	if code != 0 || !strings.Contains(out+errs, "different runtimes (graph vs pytorch)") {
		t.Errorf("diff: exit %d, no runtime warning:\n%s\n%s", code, out, errs)
	}
	// graph refuses to redraw a saved report for other settings.
	code, _, errs = runCLI(t, "graph", a, "--runtime", "tensorrt")
	if code != 2 || !strings.Contains(errs, "computed with runtime graph") || !strings.Contains(errs, "--runtime tensorrt") {
		t.Errorf("graph on a saved report with --runtime: %s", errs)
	}
}

// TestBudgetCalibration: check prices a budget's models under the
// calibration its defaults name (relative to the budget file), says so in
// the report, and places a time limit in the estimate's interval.
func TestBudgetCalibration(t *testing.T) {
	dir := t.TempDir()
	smallCalibration(t, dir) // dir/h100.cal.yaml, named relative to the budget below
	m, err := filepath.Abs(filepath.Join(repoRoot, "testdata", "models", "resnet50.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	budget := filepath.Join(dir, "budget.yaml")
	if err := os.WriteFile(budget, []byte("version: 1\ndefaults:\n  gpu: H100-SXM5-80GB\n  calibration: h100.cal.yaml\nmodels:\n  - path: "+m+"\n    budgets:\n      time: {max: \"1 s\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "check.json")
	if code, _, errs := runCLI(t, "check", "-c", budget, "--out-json", out); code != 0 {
		t.Fatalf("check: exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "applied in full") || !strings.Contains(string(b), `"interval": "clear"`) {
		t.Errorf("check's JSON names no calibration or interval verdict:\n%.600s", b)
	}
}

// TestCalibrationNeverSilent: every cost command that takes
// --calibration says so in what it prints.
func TestCalibrationNeverSilent(t *testing.T) {
	dir := t.TempDir()
	cal := smallCalibration(t, dir)
	for _, args := range [][]string{
		{"report", "zoo:alexnet", "--gpu", "H100-SXM5-80GB"},
		{"sweep", "zoo:alexnet", "--gpu", "H100-SXM5-80GB", "--batch", "1,2"},
		{"gpus", "compare", "zoo:alexnet", "--gpu", "H100-SXM5-80GB,A100"},
		{"energy", "zoo:alexnet", "--gpu", "H100-SXM5-80GB"},
		{"generate", "zoo:llama-tiny", "--gpu", "H100-SXM5-80GB", "--prompt", "8", "--output", "4"},
	} {
		code, out, errs := runCLI(t, append(args, "--calibration", cal)...)
		if code != 0 || !strings.Contains(out, "calibration "+cal) {
			t.Errorf("%v: exit %d, no calibration line in:\n%.400s%s", args, code, out, errs)
		}
	}
}

// smallCalibration fits a calibration on a few of our H100 rows (the
// ResNet-50 fixture's) into dir: enough to have one in force, quickly.
func smallCalibration(t *testing.T, dir string) string {
	t.Helper()
	m, err := filepath.Abs(filepath.Join(repoRoot, "testdata", "models", "resnet50.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	table := filepath.Join(dir, "runs.csv")
	rows := "model,ms,batch,dtype,runtime\n"
	for _, r := range []string{"2.392,1,fp32", "11.379,32,fp32", "1.249,1,tf32", "4.820,32,tf32", "1.089,1,fp16", "2.694,32,fp16"} {
		rows += m + "," + r + ",graph\n"
	}
	if err := os.WriteFile(table, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	cal := filepath.Join(dir, "h100.cal.yaml")
	if code, _, errs := runCLI(t, "calibrate", "--gpu", "H100-SXM5-80GB", "--measurements", table, "-o", cal, "--date", "2026-11-29"); code != 0 {
		t.Fatalf("calibrate: exit %d: %s", code, errs)
	}
	return cal
}

// TestModelRuntimeFromRuntimeFile: with no --runtime, a model holding
// onnxruntime's contrib operators is priced under onnxruntime as the
// user's --runtime-file defines it, as a named runtime would be.
func TestModelRuntimeFromRuntimeFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "rt.yaml")
	if err := os.WriteFile(file, []byte("- name: onnxruntime\n  base: onnxruntime\n  description: mine\n  call_us: 500\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "report", "../../testdata/models/contrib/bert_ms_attention.onnx", "--gpu", "A100", "--runtime-file", file, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r struct {
		Runtime struct {
			Name  string  `json:"name"`
			CallS float64 `json:"call_s"`
		} `json:"runtime"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Runtime.Name != "onnxruntime" || r.Runtime.CallS != 500e-6 {
		t.Errorf("runtime %+v: want the file's onnxruntime, 500 µs a call", r.Runtime)
	}
	if !strings.Contains(errs, "the default for a model holding operators only onnxruntime runs") {
		t.Errorf("stderr %q: want the default explained", errs)
	}
}

// TestDiffPricesOneRuntime: with no --runtime, a diff of a model against
// its onnxruntime-optimized graph (which holds operators only onnxruntime
// runs) prices both under onnxruntime, so the change is the model's, not
// a runtime's; a runtime named prices both under it.
func TestDiffPricesOneRuntime(t *testing.T) {
	base, head := "../../testdata/models/qoperator/qdq_cnn.onnx", "../../testdata/models/qoperator/qdq_cnn_ort_all.onnx"
	for _, c := range []struct {
		args          []string
		plan, runtime string
		repriced      bool
	}{
		{nil, "onnxruntime", "onnxruntime", true},
		{[]string{"--runtime", "tensorrt"}, "fused", "tensorrt", false},
	} {
		var d struct {
			Base, Head struct {
				Plan    string `json:"plan"`
				Runtime string `json:"runtime"`
			}
			Warnings []string `json:"warnings"`
		}
		runJSON(t, &d, append([]string{"diff", base, head, "--gpu", "A100", "--format", "json"}, c.args...)...)
		if d.Base.Plan != c.plan || d.Head.Plan != c.plan || d.Base.Runtime != c.runtime || d.Head.Runtime != c.runtime {
			t.Errorf("%v: plans %s and %s, runtimes %s and %s; want both %s under %s", c.args, d.Base.Plan, d.Head.Plan, d.Base.Runtime, d.Head.Runtime, c.plan, c.runtime)
		}
		repriced := false
		for _, w := range d.Warnings {
			if strings.Contains(w, "different runtimes") || strings.Contains(w, "different plans") {
				t.Errorf("%v: %s", c.args, w)
			}
			repriced = repriced || strings.HasPrefix(w, "base is priced under onnxruntime too, as head is")
		}
		if repriced != c.repriced {
			t.Errorf("%v: warnings %q; want one saying base was priced under head's runtime: %v", c.args, d.Warnings, c.repriced)
		}
		// The text names the GPU, dtype and runtime both sides share.
		_, text, _ := runCLI(t, append([]string{"diff", base, head, "--gpu", "A100"}, c.args...)...)
		if first, _, _ := strings.Cut(text, "\n"); !strings.HasSuffix(first, " · A100-SXM4-80GB · int8 · runtime "+c.runtime) {
			t.Errorf("%v: first line %q", c.args, first)
		}
	}
}
