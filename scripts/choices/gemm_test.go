package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBERTLinears: the three fp32 Linear shapes of our H200 BERT-base
// trace, each one product with its cuBLAS kernels and grids, beside the
// model's plan (the two largek products as 32×32 tiles, as the trace
// runs them), and a malformed table is refused by name.
func TestBERTLinears(t *testing.T) {
	var out strings.Builder
	if err := run(&out, "H200", []string{filepath.Join("testdata", "bert_fp32_h200.csv")}); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	t.Log("\n" + s)
	for _, want := range []string{"sgemm_largek_lds64 (24x4x2), scal_kernel (12x4x1)", "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x32x8", "32x32 split", "3 products on H200-SXM-141GB"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Count(s, "\n") != 5 {
		t.Errorf("want a header, three products and a summary:\n%s", s)
	}
	if err := run(&out, "H200", []string{filepath.Join("testdata", "missing.csv")}); err == nil || !strings.Contains(err.Error(), "missing.csv") {
		t.Errorf("missing file: %v", err)
	}
	if err := run(&out, "", []string{"x.csv"}); err == nil {
		t.Error("no GPU: accepted")
	}
}

// tableWriter returns a function that writes head then body to a file
// named name in a fresh temporary directory, and returns its path.
func tableWriter(t *testing.T, head string) func(name, body string) string {
	t.Helper()
	dir := t.TempDir()
	return func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(head+body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
}
