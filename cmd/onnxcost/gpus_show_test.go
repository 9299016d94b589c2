package main

import (
	"strings"
	"testing"
)

// TestGPUsShowModelClocks: `gpus show` ends with the clocks the time
// model prices a GPU-filling GEMM at, per path: an H100 SXM's tensor cores
// below its CUDA cores (each path's power need against its 700 W), an
// A100's CUDA cores at the full clock (64 FP32 lanes, power to spare), an
// A40's CUDA cores below its tensor cores (128 FP32 lanes at 300 W), a
// T4's DP4A products above its FP32 ones (70 W holds neither at boost,
// and integer dot products need less power); a P100, with no tensor cores
// and no DP4A, shows its CUDA cores alone.
func TestGPUsShowModelClocks(t *testing.T) {
	for gpu, want := range map[string]string{
		"H100-SXM5-80GB": "tensor cores (fp16) 0.88, CUDA cores (fp32) 0.95, integer dot products (DP4A) 1.00",
		"A100-SXM4-80GB": "tensor cores (fp16) 0.94, CUDA cores (fp32) 1.00, integer dot products (DP4A) 1.00",
		"A40":            "tensor cores (fp16) 0.91, CUDA cores (fp32) 0.83, integer dot products (DP4A) 1.00",
		"T4":             "tensor cores (fp16) 0.66, CUDA cores (fp32) 0.66, integer dot products (DP4A) 0.84;",
		"P100-PCIe-16GB": "is quoted at: CUDA cores (fp32) 1.00;",
	} {
		out := runOut(t, "gpus", "show", gpu)
		last := strings.TrimSpace(out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:])
		if !strings.HasPrefix(last, "time model (derived from the figures above)") || !strings.Contains(last, want) {
			t.Errorf("%s: last line %q, want the time model's clocks %q", gpu, last, want)
		}
	}
}

// TestGPUsShowIntervalBasis: a GPU whose family has no measured kernels
// here says what its estimates' intervals rest on instead; a measured
// family's says nothing of it.
func TestGPUsShowIntervalBasis(t *testing.T) {
	if out := runOut(t, "gpus", "show", "L4"); !strings.Contains(out, "estimates' 80% intervals: from the held-out error of each kernel class on Ampere GPUs") || !strings.Contains(out, "no Ada Lovelace kernel is measured here") {
		t.Errorf("L4: no interval basis line:\n%s", out)
	}
	if out := runOut(t, "gpus", "show", "H100"); strings.Contains(out, "estimates' 80% intervals") {
		t.Errorf("H100: an interval basis line for a measured family:\n%s", out)
	}
}
