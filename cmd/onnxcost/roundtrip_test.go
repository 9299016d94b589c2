package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestOptimizeRoundTrip: the model `optimize` writes (symbolic dims left
// symbolic) re-read by `report` at batch 1 and 8 costs exactly what the
// fused plan of the original costs at the same batch — every total, on
// every fixture. It fails if a fused op froze an element count at fusion
// time (the re-read model would keep the batch the passes saw) or if a
// fused op's shape rule loses a shape the default-domain ops infer.
// Fixtures with static inputs refuse --batch by design; they are compared
// at their own batch.
func TestOptimizeRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("optimizes and re-costs every fixture")
	}
	models, err := filepath.Glob(filepath.Join(repoRoot, "testdata", "models", "*.onnx"))
	if err != nil || len(models) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	totals := func(t *testing.T, path string, batch []string) (string, []string, bool) {
		t.Helper()
		args := append([]string{"report", path, "--gpu", "A100-SXM4-80GB", "--format", "json"}, batch...)
		code, js, errs := runCLI(t, args...)
		if code != 0 {
			if strings.Contains(errs, "static") {
				return "", nil, false
			}
			t.Fatalf("report %s %v: exit %d: %s", filepath.Base(path), batch, code, errs)
		}
		var r struct {
			Totals   json.RawMessage `json:"totals"`
			Warnings []string        `json:"warnings"`
		}
		if err := json.Unmarshal([]byte(js), &r); err != nil {
			t.Fatal(err)
		}
		return string(r.Totals), r.Warnings, true
	}
	for _, m := range models {
		t.Run(filepath.Base(m), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "opt.onnx")
			if code, _, errs := runCLI(t, "optimize", m, "-o", out); code != 0 {
				t.Fatalf("optimize: exit %d: %s", code, errs)
			}
			compared := 0
			for _, b := range [][]string{{"--batch", "1"}, {"--batch", "8"}, nil} {
				if b == nil && compared > 0 {
					break
				}
				want, _, ok := totals(t, m, b)
				if !ok {
					continue
				}
				got, warns, ok := totals(t, out, b)
				if !ok {
					t.Fatalf("%v: the optimized model refuses a batch the original accepts", b)
				}
				compared++
				if got != want {
					t.Errorf("%v: optimized model re-read:\n%s\noriginal's fused plan:\n%s", b, got, want)
				}
				for _, w := range warns {
					if strings.Contains(w, "counted as 0") {
						t.Errorf("%v: optimized model: %s", b, w)
					}
				}
			}
			if compared == 0 {
				t.Fatal("compared at no batch")
			}
		})
	}
}
