package main

import (
	"encoding/csv"
	"github.com/onnxcost/onnxcost/internal/buildinfo"
	"math"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
)

// TestTrainCSVSumsToStep: under --train the CSV carries the whole step
// (forward, backward and optimizer rows), so its time_s and energy_j
// columns sum to the JSON's step, also under gradient accumulation, where
// the forward and backward rows count every micro-batch.
func TestTrainCSVSumsToStep(t *testing.T) {
	for _, accum := range []string{"1", "2"} {
		t.Run("accum"+accum, func(t *testing.T) {
			args := []string{"report", "zoo:resnet50", "--gpu", "A100-SXM4-40GB", "--train", "--batch", "32", "--grad-accum", accum}
			var r report.Report
			runJSON(t, &r, append(args, "--format", "json")...)
			tr := r.Totals.Train
			if tr == nil || tr.StepTimeS <= 0 {
				t.Fatal("no training step in the JSON")
			}
			rows, err := csv.NewReader(strings.NewReader(runOut(t, append(args, "--format", "csv")...))).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			col := map[string]int{}
			for i, h := range rows[0] {
				col[h] = i
			}
			var timeS, energyJ float64
			phases := map[string]int{}
			for _, row := range rows[1:] {
				phases[row[col["phase"]]]++
				v, err := strconv.ParseFloat(row[col["time_s"]], 64)
				if err != nil {
					t.Fatalf("time_s %q: %v", row[col["time_s"]], err)
				}
				e, _ := strconv.ParseFloat(row[col["energy_j"]], 64)
				timeS, energyJ = timeS+v, energyJ+e
			}
			if d := math.Abs(timeS/tr.StepTimeS - 1); d > 0.005 {
				t.Errorf("CSV time_s sums to %v, the JSON step is %v (off %.2f%%)", timeS, tr.StepTimeS, 100*d)
			}
			if d := math.Abs(energyJ/tr.StepEnergyJ - 1); d > 0.005 {
				t.Errorf("CSV energy_j sums to %v, the JSON step is %v", energyJ, tr.StepEnergyJ)
			}
			if phases["forward"] < len(r.Nodes) || phases["backward"] == 0 || phases["optimizer"] != 1 {
				t.Errorf("rows per phase %v for %d nodes: want every node's forward, backwards and one optimizer row", phases, len(r.Nodes))
			}
		})
	}
}

// TestTrainMarkdownHasPhases: --train's Markdown shows the backward and
// optimizer beside the forward, and the step's total.
func TestTrainMarkdownHasPhases(t *testing.T) {
	out := runOut(t, "report", "zoo:resnet18", "--gpu", "A100-SXM4-40GB", "--train", "--batch", "8", "--format", "markdown")
	for _, want := range []string{"| training phase |", "| forward |", "| backward |", "| optimizer (adam) |", "| **training step** |", "| step time | forward FLOPs |"} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
	inf := runOut(t, "report", "zoo:resnet18", "--gpu", "A100-SXM4-40GB", "--batch", "8", "--format", "markdown")
	if strings.Contains(inf, "training phase") || !strings.Contains(inf, "| time | FLOPs |") {
		t.Errorf("inference markdown changed:\n%s", inf)
	}
}

// TestVersionNamesBuild: --version keeps "onnxcost version <version>"
// first, and names the module version and VCS revision when the build
// recorded them.
func TestVersionNamesBuild(t *testing.T) {
	out := runOut(t, "--version")
	if !strings.HasPrefix(out, "onnxcost version "+version) {
		t.Errorf("--version: %q", out)
	}
	info := &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}}
	if got, want := buildinfo.Suffix(info), " (module v1.2.3, revision abc123, modified)"; got != want {
		t.Errorf("buildSuffix = %q, want %q", got, want)
	}
	info = &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "false"}}}
	if got, want := buildinfo.Suffix(info), " (revision abc123)"; got != want {
		t.Errorf("buildSuffix = %q, want %q", got, want)
	}
	if got := buildinfo.Suffix(&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}); got != "" {
		t.Errorf("buildSuffix with nothing recorded = %q", got)
	}
}
