package main

import (
	"strings"
	"testing"
)

// TestReportGPUsFlag: --gpus N says so in the header and judges fit per
// GPU; a count below 1 is a one-line usage error with no output.
func TestReportGPUsFlag(t *testing.T) {
	code, out, errs := runCLI(t, "report", "zoo:llama-70b", "--gpu", "h100-sxm", "--dtype", "fp16", "--gpus", "2", "--top", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(out, "\n")
	if len(lines) < 2 || !strings.Contains(lines[0], "tensor-parallel over 2 × H100") || !strings.HasPrefix(lines[1], "memory per GPU: peak 69.6 GB") || !strings.Contains(lines[1], ": fits") {
		t.Errorf("header:\n%s", strings.Join(lines[:min(2, len(lines))], "\n"))
	}
	code, out, errs = runCLI(t, "report", "zoo:alexnet", "--gpu", "t4", "--gpus", "0")
	if code != 2 || out != "" || !strings.Contains(errs, "--gpus 0") || strings.Count(strings.TrimRight(errs, "\n"), "\n") != 0 {
		t.Errorf("--gpus 0: exit %d, out %q, err %q", code, out, errs)
	}
}
