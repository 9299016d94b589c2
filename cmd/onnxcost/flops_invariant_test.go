package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestFusionKeepsFLOPs: fusion changes launches and bytes, never the
// arithmetic. With Winograd (which really does less arithmetic) disabled,
// every fixture's fused plan has exactly the unfused plan's FLOPs and
// transcendentals.
func TestFusionKeepsFLOPs(t *testing.T) {
	models, err := filepath.Glob(filepath.Join(repoRoot, "testdata", "models", "*.onnx"))
	if err != nil || len(models) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, m := range models {
		var totals [2][2]float64
		for i, plan := range []string{"unfused", "fused"} {
			f := costFlags{gpu: "A100", plan: plan, passFlags: passFlags{disable: []string{"winograd"}}}
			f.batch = 2
			r, _, err := estimate(m, &f)
			if err != nil && strings.Contains(err.Error(), "batch size is fixed") {
				f.batch = 0 // a static batch other than 1: refused, cost it as exported
				r, _, err = estimate(m, &f)
			}
			if err != nil {
				t.Fatalf("%s %s: %v", filepath.Base(m), plan, err)
			}
			totals[i] = [2]float64{r.Totals.FLOPs, r.Totals.Transcendentals}
		}
		t.Logf("%s: %.6g FLOPs", filepath.Base(m), totals[1][0])
		if totals[0] != totals[1] {
			t.Errorf("%s: unfused FLOPs/transcendentals %v, fused %v", filepath.Base(m), totals[0], totals[1])
		}
	}
}
