package main

import (
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
		}
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	m := fixture(t, "alexnet.onnx")
	for _, args := range [][]string{
		{"report", m},                                     // no --gpu
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
