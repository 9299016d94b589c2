package main

import (
	"encoding/json"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/internal/config"
)

// TestBadModelsExit2 feeds unreadable models to every model-reading
// command: each must exit 2 with one line on stderr that names the file,
// and print nothing on stdout.
func TestBadModelsExit2(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(fixture(t, "alexnet.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	random := make([]byte, 4096)
	rng.Read(random)
	bad := map[string][]byte{
		"empty.onnx":     {},
		"random.onnx":    random,
		"truncated.onnx": good[:len(good)/2],
		"text.onnx":      []byte("this is not a model\n"),
	}
	var paths []string
	for name, data := range bad {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	paths = append(paths, filepath.Join(dir, "missing.onnx"), dir /* a folder */)
	// Structurally bad models (testdata/bad, made with python onnx): each
	// message must name the problem, not just fail.
	problems := map[string]string{
		"cycle.onnx":             "cycle",
		"undefined.onnx":         `undefined tensor "nowhere"`,
		"dim_2pow62.onnx":        "dimension 4611686018427387904 exceeds",
		"external_escape.onnx":   "escapes the model folder",
		"external_absolute.onnx": "is absolute",
		// Operand mismatches python onnx's checker and strict shape
		// inference accept: the message names the node and the mismatch.
		"conv_channels.onnx":   `Conv node "conv1": input [1,3,8,8] has 3 channels but weight [4,5,3,3] with group 1 takes 5`,
		"conv_group.onnx":      `Conv node "conv_g": input [1,6,8,8] has 6 channels but weight [4,2,3,3] with group 4 takes 8`,
		"gemm_inner.onnx":      `Gemm node "fc": inner dims differ`,
		"batchnorm_scale.onnx": `BatchNormalization node "bn": scale has length 4, want 3`,
		"pool_window.onnx":     `MaxPool node "pool": window of 9 on spatial axis 0 exceeds the padded input extent 8`,
	}
	for name, want := range problems {
		p := filepath.Join("testdata", "bad", name)
		paths = append(paths, p)
		_, _, errs := runCLI(t, "shapes", p)
		if !strings.Contains(errs, want) {
			t.Errorf("shapes %s: stderr %q does not say %q", name, errs, want)
		}
	}
	for _, p := range paths {
		for _, cmd := range [][]string{{"shapes", p}, {"report", p, "--gpu", "T4"}} {
			code, out, errs := runCLI(t, cmd...)
			if code != 2 {
				t.Errorf("onnxcost %s: exit %d, want 2 (stderr %q)", strings.Join(cmd, " "), code, errs)
				continue
			}
			if out != "" {
				t.Errorf("onnxcost %s: wrote to stdout on error: %q", strings.Join(cmd, " "), out)
			}
			lines := strings.Split(strings.TrimRight(errs, "\n"), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], p) {
				t.Errorf("onnxcost %s: stderr %q, want one line naming the file", strings.Join(cmd, " "), errs)
			}
			if strings.Count(lines[0], p) > 1 {
				t.Errorf("onnxcost %s: stderr %q names the file twice", strings.Join(cmd, " "), errs)
			}
		}
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	m := fixture(t, "alexnet.onnx")
	for _, args := range [][]string{
		{"report", m, "--format", "csv"},                  // no --gpu for a priced table
		{"roofline", m, "-o", "r.svg"},                    // no --gpu
		{"report", m, "--gpu", "NoSuchGPU"},               // unknown GPU
		{"report", m, "--gpu", "T4", "--dtype", "fp13"},   // bad dtype
		{"report", m, "--gpu", "T4", "--format", "yaml"},  // bad format
		{"report", m, "--gpu", "T4", "--dim", "batch"},    // bad --dim
		{"report", m, "--gpu", "T4", "--plan", "partial"}, // bad plan
		{"report"},                  // no model
		{"shapes", m, "--nonsense"}, // unknown flag
		{"frobnicate"},              // unknown command
		{"diff", m},                 // one of two
		{"check", "-c", "/nonexistent/budget.yaml"},
		{"diff", m, m, "--gpu", "T4", "--fail-on", "speed>+5%"},
	} {
		code, out, errs := runCLI(t, args...)
		if code != 2 || out != "" || strings.Count(strings.TrimRight(errs, "\n"), "\n") != 0 || errs == "" {
			t.Errorf("onnxcost %s: exit %d stdout %q stderr %q; want exit 2, one stderr line", strings.Join(args, " "), code, out, errs)
		}
	}
}

// TestDeterministic: the same input gives byte-identical output.
func TestDeterministic(t *testing.T) {
	m := fixture(t, "resnet50.onnx")
	for _, format := range []string{"text", "json", "csv", "markdown"} {
		args := []string{"report", m, "--gpu", "A100", "--batch", "4", "--format", format}
		_, a, _ := runCLI(t, args...)
		_, b, _ := runCLI(t, args...)
		if a != b || a == "" {
			t.Errorf("report --format %s differs between two runs (or is empty)", format)
		}
	}
}

// TestCheckBudgets: one budget passes, a tighter one fails with exit 1
// naming its line, and a broken budget file exits 2 naming its line.
func TestCheckBudgets(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, fixture(t, "resnet50.onnx"), filepath.Join(dir, "m.onnx"))
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	loose := write("loose.yaml", "version: 1\ndefaults:\n  gpu: T4\n  batch: 1\nmodels:\n  - path: m.onnx\n    budgets:\n      time: 1 s\n      launches: { max: 100000 }\n")
	tight := write("tight.yaml", "version: 1\ndefaults:\n  gpu: T4\n  batch: 1\nmodels:\n  - path: m.onnx\n    budgets:\n      launches: { max: 100000 }\n      time: { max: \"1 µs\" }\n")
	broken := write("broken.yaml", "version: 1\ndefaults:\n  gpu: T4\nmodels:\n  - path: m.onnx\n    budgets:\n      time: { max: \"soon\" }\n")
	if code, out, errs := runCLI(t, "check", "-c", loose); code != 0 {
		t.Errorf("loose budget: exit %d\n%s%s", code, out, errs)
	}
	code, out, _ := runCLI(t, "check", "-c", tight)
	if code != 1 || !strings.Contains(out, "tight.yaml:9") || !strings.Contains(out, "FAIL") {
		t.Errorf("tight budget: exit %d, want 1 and a failure on tight.yaml:9\n%s", code, out)
	}
	code, _, errs := runCLI(t, "check", "-c", broken)
	if code != 2 || !strings.Contains(errs, "broken.yaml:7") {
		t.Errorf("broken budget: exit %d stderr %q, want 2 naming broken.yaml:7", code, errs)
	}
}

// TestDiffFailOn: --fail-on exits 1 when a condition holds, else 0.
func TestDiffFailOn(t *testing.T) {
	base, head := fixture(t, "resnet50.onnx"), fixture(t, "resnet50_plus_block.onnx")
	if code, _, errs := runCLI(t, "diff", base, head, "--gpu", "T4", "--batch", "1"); code != 0 {
		t.Errorf("diff without --fail-on: exit %d (%s)", code, errs)
	}
	if code, out, _ := runCLI(t, "diff", base, head, "--gpu", "T4", "--batch", "1", "--fail-on", "launches>+0,flops>+1%"); code != 1 || !strings.Contains(out, "FAIL launches>+0") {
		t.Errorf("diff with a holding condition: exit %d, want 1\n%s", code, out)
	}
	if code, out, _ := runCLI(t, "diff", base, head, "--gpu", "T4", "--batch", "1", "--fail-on", "flops>+50%,time>1 s"); code != 0 {
		t.Errorf("diff with no holding condition: exit %d, want 0\n%s", code, out)
	}
	if code, out, _ := runCLI(t, "diff", base, base, "--gpu", "T4", "--batch", "1", "--fail-on", "time>+0%,launches>+0"); code != 0 {
		t.Errorf("diff of a model with itself: exit %d, want 0\n%s", code, out)
	}
}

// TestReportCountsWithoutGPU: with no GPU anywhere, report prints the
// exact counts (the same FLOPs, bytes and launches as with a GPU), says
// what needs one, and exits 0; priced formats and GPU-only flags are
// usage errors.
func TestReportCountsWithoutGPU(t *testing.T) {
	m := fixture(t, "resnet50.onnx")
	t.Chdir(t.TempDir()) // no .onnxcost.yaml above
	t.Setenv(config.GPUEnv, "")

	code, out, errs := runCLI(t, "report", m, "--batch", "2")
	if code != 0 {
		t.Fatalf("text: exit %d: %s", code, errs)
	}
	var priced report.Report
	runJSON(t, &priced, "report", m, "--batch", "2", "--gpu", "A100", "--format", "json")
	for _, want := range []string{"no GPU (counts only)", "batch=2", render.NeedGPULine, "total", render.FLOPs(priced.Totals.FLOPs), render.Count(priced.Totals.Launches) + " launches"} {
		if !strings.Contains(out, want) {
			t.Errorf("text: no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, " ms") || strings.Contains(out, "µs") {
		t.Errorf("text: a time without a GPU:\n%s", out)
	}
	if lines := strings.Count(out, "\n"); lines < len(priced.Nodes) {
		t.Errorf("text: %d lines for %d nodes", lines, len(priced.Nodes))
	}

	var counted report.Report
	code, js, errs := runCLI(t, "report", m, "--batch", "2", "--format", "json")
	if code != 0 || !strings.Contains(errs, render.NeedGPULine) {
		t.Fatalf("json: exit %d, stderr %q", code, errs)
	}
	if err := json.Unmarshal([]byte(js), &counted); err != nil {
		t.Fatal(err)
	}
	rs := resolveSchema(t, report.ReportSchema)
	var inst any
	if err := json.Unmarshal([]byte(js), &inst); err != nil {
		t.Fatal(err)
	}
	if err := rs.Validate(inst); err != nil {
		t.Errorf("json: a count-only report fails the schema: %v", err)
	}
	ct, pt := counted.Totals, priced.Totals
	if !counted.CountOnly || counted.GPU != "" || ct.TimeS != 0 || ct.EnergyJ != 0 {
		t.Errorf("json: count_only %v, gpu %q, time %g, energy %g", counted.CountOnly, counted.GPU, ct.TimeS, ct.EnergyJ)
	}
	// Exact: the counts do not depend on the GPU.
	if ct.FLOPs != pt.FLOPs || ct.MACs != pt.MACs || ct.BytesRead != pt.BytesRead || ct.BytesWritten != pt.BytesWritten || ct.Params != pt.Params || ct.Launches != pt.Launches || len(counted.Nodes) != len(priced.Nodes) {
		t.Errorf("json: counts differ from the A100 report:\ncount %+v\nA100  %+v", ct, pt)
	}
	if strings.Contains(js, `"count_only"`) == strings.Contains(runOut(t, "report", m, "--gpu", "A100", "--format", "json"), `"count_only"`) {
		t.Error("count_only must appear in a count-only report and only there")
	}

	for _, args := range [][]string{{"--top", "3"}, {"--by", "op"}, {"--by", "op", "--top", "2"}} {
		code, out, errs := runCLI(t, append([]string{"report", m, "--batch", "2"}, args...)...)
		if code != 0 || !strings.Contains(out, "total") || !strings.Contains(out, render.FLOPs(pt.FLOPs)) {
			t.Errorf("%v: exit %d, stderr %q\n%s", args, code, errs, out)
		}
	}

	for _, args := range [][]string{
		{"--format", "csv"}, {"--format", "markdown"}, {"--train"}, {"--gpus", "2"},
		{"--power-cap", "200"}, {"--runtime", "pytorch"}, {"--trace", filepath.Join(t.TempDir(), "t.json")},
	} {
		code, out, errs := runCLI(t, append([]string{"report", m}, args...)...)
		if code != 2 || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, "--gpu NAME") {
			t.Errorf("%v: exit %d, stdout %d bytes, stderr %q (want exit 2 and one line asking for --gpu)", args, code, len(out), errs)
		}
	}

	// Other cost commands still need a GPU.
	code, _, errs = runCLI(t, "roofline", m, "-o", filepath.Join(t.TempDir(), "r.svg"))
	if code != 2 || !strings.Contains(errs, "--gpu is required") {
		t.Errorf("roofline: exit %d, stderr %q", code, errs)
	}
}

// runOut runs a command that must succeed and returns its stdout.
func runOut(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errs := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("onnxcost %s: exit %d: %s", strings.Join(args, " "), code, errs)
	}
	return out
}

// TestPromptBindsEmptyCache: a prompt step of a decoder exported with a
// KV cache binds the cache length to 0, and a negative size is refused.
func TestPromptBindsEmptyCache(t *testing.T) {
	m := fixture(t, "contrib/llama_int4_gqa.onnx")
	dims := []string{"--dim", "batch_size=1", "--dim", "sequence_length=16", "--dim", "total_sequence_length=16"}
	var r report.Report
	runJSON(t, &r, append([]string{"report", m, "--gpu", "A100", "--format", "json", "--dim", "past_sequence_length=0"}, dims...)...)
	if r.Totals.MACs <= 0 || r.Totals.TimeS <= 0 {
		t.Errorf("empty-cache prompt step: MACs %g, time %g", r.Totals.MACs, r.Totals.TimeS)
	}
	code, out, errs := runCLI(t, append([]string{"report", m, "--gpu", "A100", "--dim", "past_sequence_length=-1"}, dims...)...)
	if code != 2 || out != "" || !strings.Contains(errs, "non-negative integer") {
		t.Errorf("negative size: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// TestMissingSideFilesNamedOnce: a file a flag names that is not there is
// named once, with the reason alone ("no such file or directory"), not
// Go's "stat PATH: …" or "open PATH: …" after the path already given.
func TestMissingSideFilesNamedOnce(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "gone")
	for _, args := range [][]string{
		{"report", "zoo:alexnet", "--gpu", "T4", "--calibration", missing},
		{"report", "zoo:alexnet", "--gpu", "T4", "--gpu-file", missing},
		{"report", "zoo:alexnet", "--gpu", "T4", "--runtime-file", missing},
		{"calibrate", "--gpu", "H100", "--profile", missing, "zoo:alexnet"},
		{"calibrate", "--gpu", "H100", "--measurements", missing, "-o", filepath.Join(t.TempDir(), "c.yaml")},
		{"report", missing, "--gpu", "T4"},
	} {
		code, out, errs := runCLI(t, args...)
		line := strings.TrimSpace(errs)
		if code != 2 || out != "" || strings.Contains(line, "\n") || strings.Count(line, missing) != 1 ||
			strings.Contains(line, "stat ") || strings.Contains(line, "open ") || !strings.HasSuffix(line, "no such file or directory") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
}

// TestBudgetInitGatesWhatItPriced: `budget init` writes every pricing
// flag it was given into the budget (training and its settings, power
// cap, GPUs, warm, autocast, calibration and runtime files, the files
// relative to the budget's own folder wherever it is written), so that
// `check` prices exactly the estimates its limits came from: each
// model's time and peak memory in check's JSON equal `report`'s for the
// same flags. Before, init dropped all of these, and a training step's
// limits were checked against an inference estimate, which passed.
func TestBudgetInitGatesWhatItPriced(t *testing.T) {
	m, err := filepath.Abs(fixture(t, "resnet50.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	// Relative to the working folder, as a user names files.
	rtFile := filepath.Join(repoRoot, "testdata", "runtimes", "my-runtimes.yaml")
	cal := filepath.Join(repoRoot, "testdata", "calibrations", "a100_hand.cal.yaml")
	for _, flags := range [][]string{
		{"--batch", "8", "--train", "--optimizer", "sgd", "--checkpoint", "sqrt", "--grad-accum", "2", "--data-parallel", "2", "--power-cap", "200", "--gpus", "2"},
		{"--batch", "2", "--warm", "--calibration", cal, "--sm-clock", "1100"},
		{"--batch", "4", "--dtype", "fp16-amp"},
		{"--batch", "4", "--runtime-file", rtFile, "--runtime", "pytorch-lab", "--dtype", "bf16"},
	} {
		dir := filepath.Join(t.TempDir(), "ci")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		budget, out := filepath.Join(dir, "budget.yaml"), filepath.Join(dir, "check.json")
		args := append([]string{"budget", "init", m, "zoo:alexnet", "--gpu", "A100", "-o", budget, "-q"}, flags...)
		if code, _, errs := runCLI(t, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		text, _ := os.ReadFile(budget)
		code, stdout, errs := runCLI(t, "check", "-c", budget, "--out-json", out, "-q")
		if code != 0 {
			t.Fatalf("%v: check: exit %d: %s%s\n%s", flags, code, stdout, errs, text)
		}
		// Each model's line names what it was priced under.
		if slices.Contains(flags, "--train") && !strings.Contains(stdout, "training step (optimizer sgd, checkpoint sqrt, grad-accum 2, data-parallel 2) · tensor-parallel over 2 GPUs") {
			t.Errorf("%v: check's model lines do not name the step and the group:\n%s", flags, stdout)
		}
		var res struct {
			Models []struct {
				Name   string         `json:"name"`
				Report *report.Report `json:"report"`
			} `json:"models"`
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &res); err != nil || len(res.Models) != 2 {
			t.Fatalf("%v: check.json: %v, %d models", flags, err, len(res.Models))
		}
		for i, model := range []string{m, "zoo:alexnet"} {
			want := cliReport(t, append([]string{model, "--gpu", "A100", "-q"}, flags...)...)
			got := res.Models[i].Report
			if got == nil || got.Totals.TimeS != want.Totals.TimeS || got.Totals.PeakMemoryBytes != want.Totals.PeakMemoryBytes ||
				(got.Totals.Train == nil) != (want.Totals.Train == nil) || got.Warm != want.Warm || calibrationFit(got) != calibrationFit(want) {
				t.Errorf("%v: %s: check priced %g s (%q), report %g s (%q)\nbudget:\n%s", flags, model, got.Totals.TimeS, got.Calibration, want.Totals.TimeS, want.Calibration, text)
			}
		}
	}
}

// calibrationFit is what r says of its calibration but the file's path
// (check names the file as the budget resolves it, report as given).
func calibrationFit(r *report.Report) string {
	_, fit, _ := strings.Cut(r.Calibration, ".yaml:")
	return fit
}

// TestBudgetInitInputData: a budget written with --input-data records
// the folder (relative to the budget) and check binds the inputs to it,
// as report does: ONNX's Expand conformance model, whose target shape is
// a graph input, prices differently bound and unbound.
func TestBudgetInitInputData(t *testing.T) {
	const dir = "/usr/share/libonnx-testdata/data/node/test_expand_dim_changed"
	if _, err := os.Stat(dir); err != nil {
		t.Skip("libonnx-testdata is not installed (/usr/share/libonnx-testdata/data)")
	}
	m, data := filepath.Join(dir, "model.onnx"), filepath.Join(dir, "test_data_set_0")
	budget := filepath.Join(t.TempDir(), "budget.yaml")
	if code, _, errs := runCLI(t, "budget", "init", m, "--gpu", "A100", "--input-data", data, "-o", budget, "-q"); code != 0 {
		t.Fatalf("budget init: exit %d: %s", code, errs)
	}
	out := filepath.Join(filepath.Dir(budget), "check.json")
	if code, stdout, errs := runCLI(t, "check", "-c", budget, "--out-json", out, "-q"); code != 0 {
		t.Fatalf("check: exit %d: %s%s", code, stdout, errs)
	}
	var res struct {
		Models []struct {
			Report *report.Report `json:"report"`
		} `json:"models"`
	}
	b, _ := os.ReadFile(out)
	if err := json.Unmarshal(b, &res); err != nil || len(res.Models) != 1 || res.Models[0].Report == nil {
		t.Fatalf("check.json: %v\n%.300s", err, b)
	}
	bound, unbound := cliReport(t, m, "--gpu", "A100", "--input-data", data, "-q"), cliReport(t, m, "--gpu", "A100", "-q")
	got := res.Models[0].Report.Totals
	if got.BytesRead != bound.Totals.BytesRead || got.TimeS != bound.Totals.TimeS || bound.Totals.BytesRead == unbound.Totals.BytesRead {
		t.Errorf("check priced %g B in %g s; report with --input-data %g B in %g s, without %g B", got.BytesRead, got.TimeS, bound.Totals.BytesRead, bound.Totals.TimeS, unbound.Totals.BytesRead)
	}
}
