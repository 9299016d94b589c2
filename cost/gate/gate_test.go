package gate

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

func metric(t *testing.T, name string) *Metric {
	t.Helper()
	m, err := LookupMetric(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestParseQuantity(t *testing.T) {
	cases := []struct {
		in, metric string
		want       float64
	}{
		{"1.8 ms", "time", 1.8e-3},
		{"250us", "time", 250e-6},
		{"2 s", "time", 2},
		{"120 GFLOP", "flops", 120e9},
		{"120 GFLOPs", "flops", 120e9},
		{"2.5 GB", "peak_memory", 2.5e9},
		{"512 MiB", "peak_memory", 512 << 20},
		{"300", "launches", 300},
		{"1.5k", "launches", 1500},
		{"0.2 J", "energy", 0.2},
	}
	for _, c := range cases {
		got, err := ParseQuantity(c.in, metric(t, c.metric))
		if err != nil {
			t.Errorf("ParseQuantity(%q): %v", c.in, err)
			continue
		}
		if math.Abs(got-c.want) > 1e-12*math.Max(1, c.want) {
			t.Errorf("ParseQuantity(%q) = %g, want %g", c.in, got, c.want)
		}
	}
	for _, bad := range []struct{ in, metric string }{{"1.8 GB", "time"}, {"fast", "time"}, {"-1 ms", "time"}, {"3 parsecs", "flops"}, {"NaN", "launches"}} {
		if _, err := ParseQuantity(bad.in, metric(t, bad.metric)); err == nil {
			t.Errorf("ParseQuantity(%q) for %s: want an error", bad.in, bad.metric)
		}
	}
}

func mkReport(timeS, flops, launches float64, nodes ...report.NodeCost) *report.Report {
	return &report.Report{Header: report.Header{SchemaVersion: report.SchemaVersion, ToolVersion: "t"}, CostModelVersion: "1", GPU: "T4", GPUSpecHash: "abc", DType: "fp32", Plan: "fused", Totals: report.Totals{Counts: report.Counts{FLOPs: flops}, TimeS: timeS, Launches: launches}, Nodes: nodes}
}

func node(name, op string, timeS float64, shape ...int64) report.NodeCost {
	return report.NodeCost{Counts: report.Counts{FLOPs: timeS * 1e12}, Name: name, OpType: op, TimeS: timeS, Outputs: []report.TensorInfo{{Name: name + "_out", DType: "float32", Shape: report.ShapeOf(ir.KnownShape(shape...))}}}
}

func TestDiffAndConditions(t *testing.T) {
	base := mkReport(1e-3, 1e9, 10, node("a", "Conv", 4e-4, 1, 8), node("b", "Relu", 1e-4, 1, 8), node("old", "Add", 5e-5, 1, 4))
	head := mkReport(1.2e-3, 1e9, 11, node("a", "Conv", 6e-4, 1, 8), node("b", "Relu", 1e-4, 1, 8), node("renamed", "Add", 5e-5, 1, 4), node("new", "MatMul", 2e-4, 4, 4))
	d := Diff(base, head)
	// a changed (+0.2 ms), new added (+0.2 ms), old matched structurally to renamed (no change), b unchanged.
	if len(d.Nodes) != 2 {
		t.Fatalf("changed nodes = %+v, want a and new", d.Nodes)
	}
	got := map[string]string{}
	for _, n := range d.Nodes {
		got[n.Name] = n.Status
	}
	if got["a"] != "changed" || got["new"] != "added" {
		t.Errorf("statuses %v", got)
	}
	ch := d.ChangeFor("time")
	if ch.Rel == nil || math.Abs(*ch.Rel-0.2) > 1e-9 { // (1.2-1.0)/1.0
		t.Errorf("time rel = %v, want 0.2", ch.Rel)
	}
	conds, err := ParseConditions("time>+5%,launches>+0,flops>+2%")
	if err != nil {
		t.Fatal(err)
	}
	var holding []string
	for _, c := range conds {
		if h, _ := c.Holds(d.ChangeFor(c.Metric.Name)); h {
			holding = append(holding, c.Metric.Name)
		}
	}
	if strings.Join(holding, ",") != "time,launches" {
		t.Errorf("holding = %v, want time and launches", holding)
	}
	if _, err := ParseConditions("speed>5%"); err == nil {
		t.Error("unknown metric accepted")
	}
	if _, err := ParseConditions("time<5%"); err == nil {
		t.Error("a condition without > accepted")
	}
	// Provenance differences are warned about.
	head.CostModelVersion = "2"
	if d := Diff(base, head); len(d.Warnings) == 0 {
		t.Error("no warning for different cost-model versions")
	}
}

const budgetYAML = `version: 1
defaults:
  gpu: T4
  plan: fused
models:
  - path: m.onnx
    budgets:
      time: { max: "1.1 ms", max_increase: "5%" }
      flops: { max: "2 GFLOP", level: warn }
      launches: 12
`

func TestBudgetEvaluate(t *testing.T) {
	b, err := ParseBudget("b.yaml", []byte(budgetYAML))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Models) != 1 || b.Models[0].Settings.GPU != "T4" || len(b.Models[0].Assertions) != 3 {
		t.Fatalf("parsed %+v", b.Models)
	}
	if line := b.Models[0].Assertions[0].Line; line != 8 {
		t.Errorf("time assertion on line %d, want 8", line)
	}
	base := mkReport(1e-3, 1e9, 10)
	pass := Evaluate(b, "t", map[string]*report.Report{"m.onnx": mkReport(1.04e-3, 1e9, 10)}, map[string]*report.Report{"m.onnx": base})
	if pass.Verdict != "pass" || pass.Errors != 0 {
		t.Errorf("verdict %s errors %d, want pass", pass.Verdict, pass.Errors)
	}
	// 1.2 ms > 1.1 ms and +20% > 5%: two errors; 3 GFLOP > 2 GFLOP: a warning.
	fail := Evaluate(b, "t", map[string]*report.Report{"m.onnx": mkReport(1.2e-3, 3e9, 10)}, map[string]*report.Report{"m.onnx": base})
	if fail.Verdict != "fail" || fail.Errors != 2 || fail.Warnings != 1 {
		t.Errorf("verdict %s errors %d warnings %d, want fail 2 1", fail.Verdict, fail.Errors, fail.Warnings)
	}
	// No base: relative budget skipped, not failed.
	nobase := Evaluate(b, "t", map[string]*report.Report{"m.onnx": mkReport(1.0e-3, 1e9, 10)}, nil)
	skipped := 0
	for _, r := range nobase.Models[0].Results {
		if r.Status == "skipped" {
			skipped++
		}
	}
	if skipped != 1 || nobase.Verdict != "pass" {
		t.Errorf("skipped %d verdict %s", skipped, nobase.Verdict)
	}
	var ann bytes.Buffer
	WriteAnnotations(&ann, fail, "")
	if n := strings.Count(ann.String(), "::error file=b.yaml,line=8,"); n != 2 {
		t.Errorf("annotations:\n%s\nwant 2 on line 8", ann.String())
	}
	if strings.Contains(ann.String(), "flops") {
		t.Errorf("warn-level failure annotated:\n%s", ann.String())
	}
	var junit bytes.Buffer
	if err := WriteJUnit(&junit, fail); err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(junit.Bytes(), new(junitSuites)); err != nil {
		t.Errorf("JUnit not well-formed: %v\n%s", err, junit.String())
	}
	if c := strings.Count(junit.String(), "<failure"); c != 2 {
		t.Errorf("JUnit has %d failures, want 2", c)
	}
}

func TestBudgetErrorsNameTheLine(t *testing.T) {
	cases := []struct {
		yaml string
		line int
		want string
	}{
		{"version: 1\nmodels:\n  - path: m.onnx\n    budgets:\n      time: { max: \"fast\" }\n", 5, "time.max"},
		{"version: 1\nmodels:\n  - path: m.onnx\n    budgets:\n      speed: 3\n", 5, "unknown metric"},
		{"version: 1\nmodel:\n  - path: m.onnx\n", 2, "unknown key"},
		{"version: 1\ndefaults: {gpux: T4}\nmodels:\n  - path: m.onnx\n", 2, "unknown key \"gpux\" in defaults"},
		{"version: 1\nmodels:\n  - path: m.onnx\n    budgets:\n      time: { max: 1ms, level: fatal }\n", 5, "level"},
		{"version: 1\nmodels:\n  - budgets: {}\n", 3, "needs a path"},
		{"version: 1\nmodels: [\n", 2, "not valid YAML"},
		{"", 0, "empty"},
		{"version: 1\ndefaults: {train: yes}\nmodels:\n  - path: m.onnx\n", 2, "train must be true or false"},
		{"version: 1\ndefaults: {optimizer: lion}\nmodels:\n  - path: m.onnx\n", 2, "optimizer \"lion\""},
		{"version: 1\ndefaults: {power_cap: -5}\nmodels:\n  - path: m.onnx\n", 2, "power_cap (W) must be a number above 0"},
		{"version: 1\ndefaults: {gpus: 0}\nmodels:\n  - path: m.onnx\n", 2, "gpus must be a positive integer"},
		{"version: 1\ndefaults: {dtype: fp64}\nmodels:\n  - path: m.onnx\n", 2, "fp16-amp"},
		// A training setting without a training step, and warm with one,
		// are refused at the model they reach.
		{"version: 1\ndefaults: {optimizer: sgd}\nmodels:\n  - path: m.onnx\n", 4, "model m.onnx: optimizer needs train: true"},
		{"version: 1\ndefaults: {train: true, warm: true}\nmodels:\n  - path: a.onnx\n  - path: m.onnx\n    warm: false\n", 4, "model a.onnx: warm: true prices an inference call"},
		{"version: 1\ndefaults: {train: true, grad_accum: 2}\nmodels:\n  - path: a.onnx\n  - path: m.onnx\n    train: false\n", 5, "model m.onnx: grad_accum needs train: true"},
	}
	for _, c := range cases {
		_, err := ParseBudget("b.yaml", []byte(c.yaml))
		var ce *ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("%q: err = %v, want a ConfigError", c.yaml, err)
			continue
		}
		if (c.line > 0 && ce.Line != c.line) || !strings.Contains(ce.Msg, c.want) {
			t.Errorf("%q: got line %d %q, want line %d containing %q", c.yaml, ce.Line, ce.Msg, c.line, c.want)
		}
	}
}

// TestBudgetSettingsRoundTrip: every setting budget init writes parses
// back to the same settings, and a model's own settings override the
// defaults (train: false too).
func TestBudgetSettingsRoundTrip(t *testing.T) {
	yes := true
	d := Settings{GPU: "A100", GPUFile: "gpus.yaml", Runtime: "pytorch", RuntimeFile: "rt.yaml", Calibration: "a.cal.yaml", DType: "fp16-amp", Plan: "eager", Batch: 8,
		Dims: map[string]int64{"seq": 128}, InputData: "inputs", Train: &yes, Optimizer: "sgd", Checkpoint: "sqrt", GradAccum: 2, DataParallel: 4,
		PowerCapW: 250.5, SMClockMHz: 1200, GPUs: 2}
	text := BudgetYAML(d, []BudgetEntry{{Path: "m.onnx", Report: mkReport(1e-3, 1e9, 10)}}, 0.1)
	b, err := ParseBudget("b.yaml", []byte(text))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	js := func(s Settings) string { j, _ := json.Marshal(s); return string(j) }
	if got := b.Models[0].Settings; js(got) != js(d) || !got.Training() || got.WarmCall() {
		t.Errorf("parsed back %+v, wrote %+v:\n%s", got, d, text)
	}
	warm := Settings{GPU: "A100", Plan: "fused", Warm: &yes}
	if b, err = ParseBudget("b.yaml", []byte(BudgetYAML(warm, []BudgetEntry{{Path: "m.onnx", Report: mkReport(1e-3, 1e9, 10)}}, 0.1))); err != nil || !b.Models[0].Settings.WarmCall() {
		t.Errorf("warm: %v %+v", err, b)
	}
	if _, err := ParseBudget("b.yaml", []byte("version: 1\ndefaults: {gpu: A100, train: true, optimizer: sgd, power_cap: 300}\nmodels:\n  - path: a.onnx\n  - path: b.onnx\n    train: false\n    optimizer: adam\n")); err == nil {
		t.Fatal("a model with train: false and an optimizer parsed")
	}
	b, err = ParseBudget("b.yaml", []byte("version: 1\ndefaults: {gpu: A100, train: true, optimizer: sgd, power_cap: 300}\nmodels:\n  - path: a.onnx\n  - path: b.onnx\n    optimizer: adam\n    power_cap: 200\n"))
	if err != nil {
		t.Fatal(err)
	}
	a, m := b.Models[0].Settings, b.Models[1].Settings
	if !a.Training() || a.Optimizer != "sgd" || a.PowerCapW != 300 || !m.Training() || m.Optimizer != "adam" || m.PowerCapW != 200 {
		t.Errorf("defaults %+v, override %+v", a, m)
	}
}

func TestHostileNamesAreEscaped(t *testing.T) {
	evil := "x\n::error::pwned|`<b>`"
	b, err := ParseBudget("b.yaml", []byte("version: 1\ndefaults: {gpu: T4}\nmodels:\n  - path: m.onnx\n    name: \""+strings.ReplaceAll(evil, "\n", `\n`)+"\"\n    budgets:\n      time: 1ms\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := mkReport(2e-3, 1, 1, node(evil, "Conv", 2e-3, 1))
	res := Evaluate(b, "t", map[string]*report.Report{evil: r}, map[string]*report.Report{evil: mkReport(1e-3, 1, 1, node(evil, "Relu", 1e-3, 1))})
	var text, mdBuf, ann bytes.Buffer
	WriteCheckText(&text, res)
	WriteCheckMarkdown(&mdBuf, res)
	WriteAnnotations(&ann, res, "")
	for name, out := range map[string]string{"text": text.String(), "markdown": mdBuf.String(), "annotations": ann.String()} {
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "::error::pwned") {
				t.Errorf("%s output lets a node name start a workflow command:\n%s", name, out)
			}
		}
	}
	if strings.Count(ann.String(), "\n") != 1 {
		t.Errorf("one failure must give one annotation line:\n%s", ann.String())
	}
	for _, line := range strings.Split(mdBuf.String(), "\n") {
		if strings.HasPrefix(line, "| ") && strings.Count(strings.ReplaceAll(line, `\|`, ""), "|") != 8 && strings.Count(strings.ReplaceAll(line, `\|`, ""), "|") != 7 {
			t.Errorf("a table row has a stray pipe: %q", line)
		}
		if strings.Contains(line, "<b>") {
			t.Errorf("raw HTML from a model name: %q", line)
		}
	}
}

// A time budget says where its limit sits in the estimate's interval.
func TestIntervalVerdict(t *testing.T) {
	for _, c := range []struct {
		lo, hi, limit float64
		want          string
	}{{2, 3, 1, "beyond"}, {1, 3, 2, "inside"}, {1, 2, 3, "clear"}, {1, 2, 2, "clear"}} {
		if got := intervalVerdict(c.lo, c.hi, c.limit); got != c.want {
			t.Errorf("[%g, %g] vs %g: %s, want %s", c.lo, c.hi, c.limit, got, c.want)
		}
	}
}

// TestDiffSaysWhichCalibration: two sides priced with the same
// calibration say so in the text's first line; sides priced with
// different ones (or one without) carry a warning, since part of the
// change is then the calibration's.
func TestDiffSaysWhichCalibration(t *testing.T) {
	const cal = "calibration h100.cal.yaml: fitted on H100-SXM5-80GB from 118 rows of runs.csv; applied in full (GPU factor 1.02, 40 cells)"
	base, head := mkReport(1e-3, 1e9, 10), mkReport(1e-3, 1e9, 10)
	base.Calibration, head.Calibration = cal, cal
	d := Diff(base, head)
	if len(d.Warnings) != 0 {
		t.Errorf("same calibration: warnings %q", d.Warnings)
	}
	var b bytes.Buffer
	WriteDiffText(&b, d, nil)
	if first, _, _ := strings.Cut(b.String(), "\n"); !strings.HasSuffix(first, " · both calibrated by h100.cal.yaml") {
		t.Errorf("first line %q", first)
	}
	head.Calibration = ""
	d = Diff(base, head)
	if len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], "different calibrations (calibration h100.cal.yaml: fitted") || !strings.Contains(d.Warnings[0], " vs none)") {
		t.Errorf("one side calibrated: warnings %q", d.Warnings)
	}
	b.Reset()
	WriteDiffText(&b, d, nil)
	if strings.Contains(b.String(), "both calibrated") {
		t.Errorf("one side calibrated, text says both: %q", b.String())
	}
}

// TestDiffSaysWhichCall: sides priced warm (--warm) say so in the first
// line; a cold side against a warm one carries a warning, since L2 then
// accounts for part of the change.
func TestDiffSaysWhichCall(t *testing.T) {
	base, head := mkReport(1e-3, 1e9, 10), mkReport(1e-3, 1e9, 10)
	base.GPU, head.GPU = "A100-SXM4-80GB", "A100-SXM4-80GB"
	base.Warm, head.Warm = true, true
	d := Diff(base, head)
	var b bytes.Buffer
	WriteDiffText(&b, d, nil)
	if first, _, _ := strings.Cut(b.String(), "\n"); len(d.Warnings) != 0 || !strings.HasSuffix(first, " · repeated calls, warm L2") {
		t.Errorf("both warm: warnings %q, first line %q", d.Warnings, first)
	}
	base.Warm = false
	d = Diff(base, head)
	b.Reset()
	WriteDiffText(&b, d, nil)
	if first, _, _ := strings.Cut(b.String(), "\n"); len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], "different calls (a first call vs repeated calls, warm L2)") ||
		!strings.HasSuffix(first, " · a first call → repeated calls, warm L2") {
		t.Errorf("cold base, warm head: warnings %q, first line %q", d.Warnings, first)
	}
	base.Warm, head.Warm = false, false
	b.Reset()
	WriteDiffText(&b, Diff(base, head), nil)
	if strings.Contains(b.String(), "call") {
		t.Errorf("two first calls: the text names the call: %q", b.String())
	}
}

// TestDiffSaysWhichStep: sides priced as training steps name the step
// in the first line; a training step against an inference call, or
// another step, carries a warning.
func TestDiffSaysWhichStep(t *testing.T) {
	base, head := mkReport(1e-3, 1e9, 10), mkReport(1e-3, 1e9, 10)
	base.GPU, head.GPU = "A100-SXM4-80GB", "A100-SXM4-80GB"
	base.Totals.Train = &report.Train{Optimizer: "adam", Checkpoint: "none", GradAccum: 1, DataParallel: 1}
	head.Totals.Train = &report.Train{Optimizer: "adam", Checkpoint: "none", GradAccum: 1, DataParallel: 1}
	d := Diff(base, head)
	var b bytes.Buffer
	WriteDiffText(&b, d, nil)
	if first, _, _ := strings.Cut(b.String(), "\n"); len(d.Warnings) != 0 || !strings.HasSuffix(first, " · training step (optimizer adam, checkpoint none)") {
		t.Errorf("two steps: warnings %q, first line %q", d.Warnings, first)
	}
	head.Totals.Train.GradAccum = 4
	if d = Diff(base, head); len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], "different steps (training step (optimizer adam, checkpoint none) vs training step (optimizer adam, checkpoint none, grad-accum 4))") {
		t.Errorf("another step: warnings %q", d.Warnings)
	}
	base.Totals.Train = nil
	if d = Diff(base, head); len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], "different steps (an inference call vs training step") {
		t.Errorf("inference against a step: warnings %q", d.Warnings)
	}
}

// TestCheckSaysWhichCalibration: a check whose models were priced with a
// calibration names it on each model's text line and in the Markdown
// footer (each file once); without one neither says "calibrated".
func TestCheckSaysWhichCalibration(t *testing.T) {
	r1, r2 := mkReport(1e-3, 1e9, 10), mkReport(2e-3, 1e9, 10)
	res := &CheckResult{Verdict: "pass", Models: []ModelResult{{Name: "a.onnx", Report: r1}, {Name: "b.onnx", Report: r2}}}
	var text, markdown bytes.Buffer
	WriteCheckText(&text, res)
	WriteCheckMarkdown(&markdown, res)
	if strings.Contains(text.String()+markdown.String(), "calibrated") {
		t.Errorf("uncalibrated check says calibrated:\n%s\n%s", text.String(), markdown.String())
	}
	r1.Calibration = "calibration h100.cal.yaml: fitted on H100-SXM5-80GB from 118 rows of runs.csv; applied in full (GPU factor 1.02, 40 cells)"
	r2.Calibration = r1.Calibration
	text.Reset()
	markdown.Reset()
	WriteCheckText(&text, res)
	WriteCheckMarkdown(&markdown, res)
	if got := strings.Count(text.String(), ", calibrated by h100.cal.yaml)"); got != 2 {
		t.Errorf("text names the calibration on %d model lines, want 2:\n%s", got, text.String())
	}
	if !strings.Contains(markdown.String(), " · calibrated by h100.cal.yaml</sub>") {
		t.Errorf("markdown footer does not name the calibration once:\n%s", markdown.String())
	}
}

// TestTrainingBudgetNamesForwardCounts: under a training step, time,
// energy and peak memory are the step's, while flops, macs, bytes and
// launches count the forward pass alone; check's lines, its JSON and its
// PR table say so, and budget init writes it beside those budgets. A
// training budget for ResNet-50 read "launches 187" where the step
// launches 491 (187 forward, 269 backward, 35 optimizer).
func TestTrainingBudgetNamesForwardCounts(t *testing.T) {
	b, err := ParseBudget("b.yaml", []byte(budgetYAML))
	if err != nil {
		t.Fatal(err)
	}
	for _, train := range []bool{false, true} {
		r := mkReport(1e-3, 1e9, 10)
		if train {
			r.Totals.Train = &report.Train{}
		}
		res := Evaluate(b, "t", map[string]*report.Report{"m.onnx": r}, nil)
		var md bytes.Buffer
		WriteCheckMarkdown(&md, res)
		for _, a := range res.Models[0].Results {
			forward := a.Metric == "flops" || a.Metric == "launches"
			if want := map[bool]string{true: "forward pass"}[train && forward]; a.Scope != want {
				t.Errorf("train %v: %s scope %q, want %q", train, a.Metric, a.Scope, want)
			}
			if has := strings.Contains(a.Message, a.Metric+" (forward pass)"); has != (train && forward) {
				t.Errorf("train %v: message %q", train, a.Message)
			}
		}
		if has := strings.Contains(md.String(), "| launches (forward pass) |"); has != train {
			t.Errorf("train %v: PR table\n%s", train, md.String())
		}
		text := BudgetYAML(Settings{GPU: "A100", Plan: "fused"}, []BudgetEntry{{Path: "m.onnx", Report: r}}, 0.1)
		if has := strings.Contains(text, "launches: { max: \"11\" } # the forward pass's"); has != train {
			t.Errorf("train %v: budget init wrote\n%s", train, text)
		}
		if _, err := ParseBudget("b.yaml", []byte(text)); err != nil {
			t.Errorf("train %v: %v\n%s", train, err, text)
		}
	}
}
