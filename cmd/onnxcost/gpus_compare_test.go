package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/sweep"
)

// TestGPUsCompare: one row per GPU in the order given, the figures of the
// report on that GPU, and the cost per million items from the user's
// price: USD/h ÷ 3600 ÷ items/s × 10^6.
func TestGPUsCompare(t *testing.T) {
	prices := filepath.Join(t.TempDir(), "prices.yaml")
	if err := os.WriteFile(prices, []byte("T4: 0.35\nl4: 0.9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var res sweep.Comparison
	runJSON(t, &res, "gpus", "compare", "zoo:resnet18", "--gpu", "T4,L4,V100", "--batch", "8",
		"--prices", prices, "--price", "L4=0.7", "--format", "json")
	if len(res.Rows) != 3 || res.Rows[0].GPU != "T4" || res.Rows[1].GPU != "L4" || res.Batch != 8 {
		t.Fatalf("rows %+v", res.Rows)
	}
	for _, row := range res.Rows {
		code, rep, errs := runCLI(t, "report", "zoo:resnet18", "--gpu", row.GPU, "--batch", "8", "--format", "json")
		if code != 0 {
			t.Fatal(errs)
		}
		var r struct {
			Totals struct {
				TimeS   float64 `json:"time_s"`
				EnergyJ float64 `json:"energy_j"`
				Fits    bool    `json:"fits"`
			} `json:"totals"`
		}
		json.Unmarshal([]byte(rep), &r)
		if row.TimeS != r.Totals.TimeS || row.EnergyJ != r.Totals.EnergyJ || row.Fits != r.Totals.Fits || row.ThroughputPerS != 8/r.Totals.TimeS {
			t.Errorf("%s: %+v disagrees with report %+v", row.GPU, row, r.Totals)
		}
	}
	for i, want := range []float64{0.35, 0.7} {
		row := res.Rows[i]
		if row.USDPerHour == nil || *row.USDPerHour != want {
			t.Fatalf("%s: price %v, want %v (flag over file)", row.GPU, row.USDPerHour, want)
		}
		if m := want / 3600 / row.ThroughputPerS * 1e6; math.Abs(*row.USDPerMillion-m) > 1e-12*m {
			t.Errorf("%s: USD per million %v, want %v", row.GPU, *row.USDPerMillion, m)
		}
	}
	if res.Rows[2].USDPerHour != nil || res.Rows[2].USDPerMillion != nil {
		t.Error("V100 has no price and must show none")
	}
	// Bad prices: one line, exit 2.
	for _, args := range [][]string{{"--price", "T4=x"}, {"--price", "T4=-1"}, {"--price", "nope=1"}, {"--price", "A100=1"}, {"--prices", "/nonexistent"}} {
		code, out, errs := runCLI(t, append([]string{"gpus", "compare", "zoo:resnet18", "--gpu", "T4"}, args...)...)
		if code != 2 || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d, %q, %q", args, code, out, errs)
		}
	}
}
