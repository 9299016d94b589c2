package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/internal/config"
)

// TestGPUDefaults: an omitted --gpu comes from $ONNXCOST_GPU, else from
// the nearest .onnxcost.yaml above the working folder, and the header
// says which; with neither, report counts without one; a flag wins over
// both.
func TestGPUDefaults(t *testing.T) {
	m := fixture(t, "alexnet.onnx")
	root := t.TempDir()
	nested := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(nested)

	t.Setenv(config.GPUEnv, "")
	code, out, errs := runCLI(t, "report", m)
	if code != 0 || !strings.Contains(firstLine(out), "no GPU (counts only)") {
		t.Errorf("no default: exit %d, header %q, stderr %q (want the counts only)", code, firstLine(out), errs)
	}

	budget := filepath.Join(root, config.BudgetFileName)
	if err := os.WriteFile(budget, []byte("version: 1\ndefaults:\n  gpu: T4\nmodels: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, "report", m)
	if code != 0 || !strings.Contains(firstLine(out), "GPU T4 (from "+budget+")") {
		t.Errorf("budget default: exit %d, header %q, stderr %q", code, firstLine(out), errs)
	}

	t.Setenv(config.GPUEnv, "A100-SXM4-80GB")
	code, out, _ = runCLI(t, "report", m, "--format", "markdown")
	if code != 0 || !strings.Contains(firstLine(out), "A100-SXM4-80GB (from $ONNXCOST_GPU)") {
		t.Errorf("env default: exit %d, header %q", code, firstLine(out))
	}

	code, out, _ = runCLI(t, "report", m, "--gpu", "H100-SXM5-80GB")
	if code != 0 || strings.Contains(firstLine(out), "(from") || !strings.Contains(firstLine(out), "H100") {
		t.Errorf("flag: exit %d, header %q", code, firstLine(out))
	}

	t.Setenv(config.GPUEnv, "")
	if err := os.WriteFile(budget, []byte("defaults: [unclosed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runCLI(t, "report", m)
	if code != 2 || !strings.Contains(errs, budget) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("bad budget file: exit %d, stderr %q (want one line naming the file)", code, errs)
	}
}
