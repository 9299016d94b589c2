package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// Tests for the findings of issue 18: every flag does what it says, or
// is refused.

// TestBatchBindsTheBatchDim: `--batch` binds the dim the model calls
// batch (lstm_ptb_dyn's tokens are [seq,batch]), keeps a --dim of the
// other symbol, and the header says what was bound.
func TestBatchBindsTheBatchDim(t *testing.T) {
	m := fixture(t, "lstm_ptb_dyn.onnx")
	code, out, errs := runCLI(t, "report", m, "--gpu", "V100", "--batch", "20")
	if code != 0 || !strings.Contains(out, "batch=20") || strings.Contains(errs, "symbol batch is unbound") {
		t.Fatalf("--batch 20: exit %d, header %q, stderr %q", code, firstLine(out), errs)
	}
	var r struct{ Bindings map[string]int64 }
	runJSON(t, &r, "report", m, "--gpu", "V100", "--batch", "20", "--dim", "seq=35", "--format", "json")
	if r.Bindings["batch"] != 20 || r.Bindings["seq"] != 35 {
		t.Fatalf("bindings %v, want batch=20 seq=35", r.Bindings)
	}
}

// TestBatchOnStaticModel: a static batch-1 export is rewritten to the
// asked batch, with a warning naming the input, and the header shows it;
// a static model whose batch is not 1 is refused.
func TestBatchOnStaticModel(t *testing.T) {
	_, one, _ := runCLI(t, "report", fixture(t, "alexnet.onnx"), "--gpu", "T4", "--plan", "unfused", "--format", "json")
	code, out, errs := runCLI(t, "report", fixture(t, "alexnet.onnx"), "--gpu", "T4", "--plan", "unfused", "--batch", "8", "--format", "json")
	if code != 0 || !strings.Contains(errs, "input input has a static batch dim of 1") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	var a, b struct {
		Bindings map[string]int64
		Totals   struct{ MACs float64 }
	}
	if err := json.Unmarshal([]byte(one), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out), &b); err != nil {
		t.Fatal(err)
	}
	if b.Bindings["batch"] != 8 || b.Totals.MACs < 7.9*a.Totals.MACs {
		t.Fatalf("batch 8: bindings %v, MACs %g vs %g at batch 1", b.Bindings, b.Totals.MACs, a.Totals.MACs)
	}
	code, out, errs = runCLI(t, "report", fixture(t, "lstm_ptb.onnx"), "--gpu", "T4", "--batch", "8")
	if code != 2 || out != "" || !strings.Contains(errs, "batch size is fixed") {
		t.Fatalf("static batch 128: exit %d, stderr %q", code, errs)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// TestFlagsNeverPassSilently: flags that used to be accepted and ignored
// are refused or honoured.
func TestFlagsNeverPassSilently(t *testing.T) {
	m := fixture(t, "alexnet.onnx")
	refused := map[string][]string{
		"names no pass":       {"report", m, "--gpu", "T4", "--passes", ""},
		"--batch must be ≥ 1": {"report", m, "--gpu", "T4", "--batch", "0"},
		`--by "node"`:         {"report", m, "--gpu", "T4", "--by", "node"},
		"--top applies to":    {"report", m, "--gpu", "T4", "--top", "3", "--format", "json"},
	}
	for want, args := range refused {
		code, out, errs := runCLI(t, args...)
		if code != 2 || out != "" || !strings.Contains(errs, want) {
			t.Errorf("%s: exit %d, stderr %q, want exit 2 saying %q", strings.Join(args[2:], " "), code, errs, want)
		}
	}
	// --dtype is case-insensitive, like GPU names.
	_, lower, _ := runCLI(t, "report", m, "--gpu", "T4", "--dtype", "fp16")
	code, upper, errs := runCLI(t, "report", m, "--gpu", "T4", "--dtype", "FP16")
	if code != 0 || upper != lower {
		t.Errorf("--dtype FP16: exit %d, stderr %q, or output differs from fp16", code, errs)
	}
	// --top is honoured with --by op.
	_, out, _ := runCLI(t, "report", m, "--gpu", "T4", "--by", "op", "--top", "2")
	if !strings.Contains(out, "more op types") {
		t.Errorf("--by op --top 2 lists every op type:\n%s", out)
	}
}

// TestSavedReportFlags: a saved report cannot be redrawn for another GPU
// or dtype (refused), and diff warns — once, on stderr — about flags that
// do not apply and about different bindings.
func TestSavedReportFlags(t *testing.T) {
	dir := t.TempDir()
	m := fixture(t, "resnet50.onnx")
	save := func(name string, args ...string) string {
		t.Helper()
		code, out, errs := runCLI(t, append([]string{"report", m, "--format", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		p := dir + "/" + name
		writeFile(t, p, out)
		return p
	}
	base := save("base.json", "--gpu", "T4")
	head := save("head.json", "--gpu", "T4", "--batch", "8")
	for _, args := range [][]string{
		{"graph", base, "--gpu", "A100", "-o", dir + "/g.dot"},
		{"graph", base, "--dtype", "fp16", "-o", dir + "/g.dot"},
		{"roofline", base, "--gpu", "A100", "-o", dir + "/r.svg"},
	} {
		code, _, errs := runCLI(t, args...)
		if code != 2 || !strings.Contains(errs, "saved report") {
			t.Errorf("%s: exit %d, stderr %q", strings.Join(args, " "), code, errs)
		}
	}
	if code, _, errs := runCLI(t, "graph", base, "--gpu", "T4", "-o", dir+"/g.dot"); code != 0 {
		t.Errorf("graph with the report's own GPU: exit %d %s", code, errs)
	}
	code, out, errs := runCLI(t, "diff", base, head, "--gpu", "A100")
	if code != 0 || !strings.Contains(errs, "different bindings (batch=1 vs batch=8)") || !strings.Contains(errs, "--gpu A100 does not apply") {
		t.Errorf("diff: exit %d, stderr %q", code, errs)
	}
	if strings.Contains(out, "warning") {
		t.Errorf("diff prints warnings on stdout too:\n%s", out)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestErrorsSayMore: an LFS pointer, a gzipped model, a saved report
// where a model is expected and an unknown command each get a message
// that says what to do.
func TestErrorsSayMore(t *testing.T) {
	dir := t.TempDir()
	lfs := dir + "/model.onnx"
	writeFile(t, lfs, "version https://git-lfs.github.com/spec/v1\noid sha256:4d7a\nsize 102400\n")
	_, rep, _ := runCLI(t, "report", fixture(t, "alexnet.onnx"), "--gpu", "T4", "--format", "json")
	saved := dir + "/r.json"
	writeFile(t, saved, rep)
	gz := dir + "/model.onnx.gz"
	writeFile(t, gz, "\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff")
	cases := map[string][]string{
		"git lfs pull":               {"report", lfs, "--gpu", "T4"},
		"gzip-compressed":            {"report", gz, "--gpu", "T4"},
		"saved onnxcost JSON report": {"shapes", saved},
		"did you mean report?":       {"reprot"},
	}
	for want, args := range cases {
		code, out, errs := runCLI(t, args...)
		if code != 2 || out != "" || !strings.Contains(errs, want) || strings.Count(errs, "\n") != 1 || strings.Contains(errs, "; ;") {
			t.Errorf("%s: exit %d, stderr %q, want one line saying %q", strings.Join(args, " "), code, errs, want)
		}
	}
}

// TestSmallThings: compare folds its unchanged rows, -o never creates
// folders, CSV integers print as integers, folded constants say so, and
// shapes text is not padded to the widest cell.
func TestSmallThings(t *testing.T) {
	m := fixture(t, "bert_base.onnx")
	_, out, _ := runCLI(t, "compare", m, "--gpu", "A100")
	if strings.Contains(out, "0 ns → 0 ns") || !strings.Contains(out, "left unchanged or removed at no cost") {
		t.Errorf("compare lists unchanged rows:\n%s", out)
	}
	dir := t.TempDir()
	code, _, errs := runCLI(t, "roofline", m, "--gpu", "A100", "-o", dir+"/no/such/x.svg")
	if _, err := os.Stat(dir + "/no"); code != 2 || err == nil || !strings.Contains(errs, "does not exist") {
		t.Errorf("-o into a missing folder: exit %d, stderr %q, folder created: %v", code, errs, err == nil)
	}
	_, out, _ = runCLI(t, "report", fixture(t, "alexnet.onnx"), "--gpu", "T4", "--format", "csv")
	if strings.Contains(out, "e+") {
		t.Errorf("CSV has exponents:\n%s", firstLine(out[strings.Index(out, "\n")+1:]))
	}
	// A node the unfused plan runs as another op is, when the fused plan
	// shows it as a Constant, a folded one: its name must say so.
	ops := func(args ...string) map[string]string {
		_, out, _ := runCLI(t, append([]string{"report", m, "--gpu", "T4", "--format", "csv"}, args...)...)
		byName := map[string]string{}
		for _, line := range strings.Split(out, "\n")[1:] {
			if f := strings.SplitN(line, ",", 3); len(f) == 3 {
				byName[f[0]] = f[1]
			}
		}
		return byName
	}
	unfused, folded := ops("--plan", "unfused"), 0
	for name, op := range ops() {
		if op != "Constant" || unfused[name] == "Constant" {
			continue
		}
		folded++
		if !strings.HasSuffix(name, "/folded") && !strings.Contains(name, "/folded_") {
			t.Errorf("folded constant %s (was %s) does not say it was folded", name, unfused[name])
		}
	}
	if folded == 0 {
		t.Error("no folded constants found in bert_base")
	}
	_, out, _ = runCLI(t, "shapes", fixture(t, "gpt_small.onnx"))
	for _, line := range strings.Split(out, "\n") {
		if n := len([]rune(line)); n > 220 {
			t.Errorf("shapes line of %d columns: %s", n, line)
			break
		}
	}
}

// TestBigGraphLayoutBounded: the zoo's llama-70b (6,273 nodes, 80
// identical decoder layers) draws as a handful of boxes, the layers as
// one box ×80, by default and under an explicit --collapse; Graphviz
// took minutes on the eighty layer boxes and their fan-out edges.
func TestBigGraphLayoutBounded(t *testing.T) {
	dir := t.TempDir()
	m := dir + "/llama70b.onnx"
	if code, _, errs := runCLI(t, "zoo", "llama-70b", "-o", m); code != 0 {
		t.Fatalf("zoo: %s", errs)
	}
	for _, extra := range [][]string{nil, {"--collapse", "2"}, {"--collapse", "3"}} {
		code, out, errs := runCLI(t, append([]string{"graph", m, "--gpu", "A100"}, extra...)...)
		if code != 0 {
			t.Fatalf("graph %v: exit %d %s", extra, code, errs)
		}
		boxes := strings.Count(out, "\n\tn")
		if boxes > 40 || !strings.Contains(out, "×80") {
			t.Errorf("graph %v: %d boxes and edges, or no ×80 box", extra, boxes)
		}
	}
}

// TestModelCountsArePlanFree: a model's MACs and FLOPs are its arithmetic,
// the same in every plan and dtype on every GPU; what the fused fp32 plan
// executes (Winograd's fewer products plus transforms) is executed_macs
// and executed_flops, and the README's main command prints ResNet-50's
// standard 4.09 G MACs.
func TestModelCountsArePlanFree(t *testing.T) {
	m := fixture(t, "vgg16.onnx")
	type totals struct {
		MACs          float64 `json:"macs"`
		FLOPs         float64 `json:"flops"`
		ExecutedMACs  float64 `json:"executed_macs"`
		ExecutedFLOPs float64 `json:"executed_flops"`
	}
	var first *totals
	for _, gpu := range []string{"A100", "T4"} {
		for _, dt := range []string{"fp32", "fp16", "int8"} {
			for _, plan := range []string{"fused", "unfused"} {
				code, out, errs := runCLI(t, "report", m, "--gpu", gpu, "--dtype", dt, "--plan", plan, "--format", "json")
				if code != 0 {
					t.Fatalf("%s %s %s: exit %d: %s", gpu, dt, plan, code, errs)
				}
				var r struct{ Totals totals }
				if err := json.Unmarshal([]byte(out), &r); err != nil {
					t.Fatal(err)
				}
				tt := r.Totals
				if first == nil {
					first = &tt
				}
				if tt.MACs != first.MACs || tt.FLOPs != first.FLOPs {
					t.Errorf("%s %s %s: macs %g flops %g, want %g and %g as in every plan and dtype", gpu, dt, plan, tt.MACs, tt.FLOPs, first.MACs, first.FLOPs)
				}
				if winograd := dt == "fp32" && plan == "fused"; winograd != (tt.ExecutedMACs < tt.MACs) {
					t.Errorf("%s %s %s: executed_macs %g vs macs %g (Winograd only in the fused fp32 plan)", gpu, dt, plan, tt.ExecutedMACs, tt.MACs)
				}
			}
		}
	}
	// VGG-16's convolutions and classifier: 15.47 G MACs.
	if first.MACs < 15.4e9 || first.MACs > 15.5e9 {
		t.Errorf("VGG-16 macs %g, want 15.47 G", first.MACs)
	}
	code, out, _ := runCLI(t, "report", fixture(t, "resnet50.onnx"), "--gpu", "T4", "--batch", "1", "--top", "15")
	if code != 0 || !strings.Contains(out, "\n4.09 G MACs (the plan executes ") {
		t.Errorf("README main command: exit %d, want 4.09 G MACs with the executed count beside it:\n%s", code, out)
	}
}
