package main

import (
	"strings"
	"testing"
)

// TestQuietDropsDiagnosticsNotErrors: --quiet silences warnings and notes
// but a failing command still says why, on one line.
func TestQuietDropsDiagnosticsNotErrors(t *testing.T) {
	m := fixture(t, "resnet50.onnx") // unbound batch: a warning
	code, out, errs := runCLI(t, "report", m, "--gpu", "T4", "--top", "1")
	if code != 0 || !strings.Contains(errs, "onnxcost: warning: symbol batch is unbound") {
		t.Fatalf("without --quiet: exit %d, stderr %q", code, errs)
	}
	code, qout, qerrs := runCLI(t, "report", m, "--gpu", "T4", "--top", "1", "--quiet")
	if code != 0 || qerrs != "" || qout != out {
		t.Errorf("--quiet: exit %d, stderr %q, stdout changed: %v", code, qerrs, qout != out)
	}
	dir := t.TempDir()
	code, _, qerrs = runCLI(t, "optimize", m, "-o", dir+"/o.onnx", "-q")
	if code != 0 || qerrs != "" {
		t.Errorf("optimize -q: exit %d, stderr %q", code, qerrs)
	}
	code, _, qerrs = runCLI(t, "report", dir+"/missing.onnx", "--gpu", "T4", "--quiet")
	if code != 2 || !strings.Contains(qerrs, "missing.onnx") {
		t.Errorf("--quiet error: exit %d, stderr %q", code, qerrs)
	}
}
