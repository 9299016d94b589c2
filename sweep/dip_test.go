package sweep

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/pipeline"
)

// TestThroughputDipNamesL2: ResNet-50 in fp16 on an L4 loses throughput
// past batch 16 as its activations outgrow the 48 MiB of L2 the model
// credits; the sweep says so once, with the fall its rows show and the
// L2 as the cause, and says nothing for an H100, whose throughput rises
// at every batch.
func TestThroughputDipNamesL2(t *testing.T) {
	cfg := Config{Model: "zoo:resnet50", GPUs: gpus(t, "L4", "H100-SXM5-80GB"), Batches: []int64{8, 16, 32, 64}, Plan: "fused",
		Estimate: pipeline.EstimateOptions{DType: "fp16"}}
	res, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	best, fall := 0.0, 0.0
	for _, r := range res.Rows {
		if r.GPU != "L4" {
			continue
		}
		fall = max(fall, 1-r.ThroughputPerS/best)
		best = max(best, r.ThroughputPerS)
	}
	var dips []string
	for _, w := range res.Warnings {
		if strings.Contains(w, "throughput falls") {
			dips = append(dips, w)
		}
	}
	if !(fall > dipShare) {
		t.Fatalf("L4 throughput falls %.1f%% at most over %v: the case no longer shows the dip", 100*fall, cfg.Batches)
	}
	want := fmt.Sprintf("L4: throughput falls %.0f%% from batch 16", 100*fall)
	if len(dips) != 1 || !strings.HasPrefix(dips[0], want) || !strings.Contains(dips[0], "48 MiB of L2") || !strings.Contains(dips[0], "run as calls of 16, a batch of ") {
		t.Errorf("throughput warnings %q, want one starting %q naming the L2 and calls of 16", dips, want)
	}
	// Swept beside another model, the warning says which model fell, as
	// the knees are keyed.
	cfg.GPUs = cfg.GPUs[:1]
	both, err := RunModels([]string{"zoo:alexnet", "zoo:resnet50"}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(both.Warnings, func(w string) bool { return strings.HasPrefix(w, "zoo:resnet50 on "+want) }) {
		t.Errorf("two models' warnings %q, none starting %q", both.Warnings, "zoo:resnet50 on "+want)
	}
}

// TestThroughputDipCause: the warning names the L2 where memory-bound
// kernels carry the fall per item, the kernels' tiles where the rest do,
// both where neither carries two thirds, and nothing for a fall under
// dipShare or between rows of different points.
func TestThroughputDipCause(t *testing.T) {
	g := gpus(t, "A10")[0]
	row := func(batch int64, timeS, memS float64) Row {
		return Row{Batch: batch, TimeS: timeS, MemoryBoundS: memS, ThroughputPerS: float64(batch) / timeS}
	}
	for _, c := range []struct {
		name string
		rows []Row
		want string // "" for no warning
	}{
		{"memory-bound", []Row{row(8, 1, 0.5), row(16, 2.4, 1.3)}, "MiB of L2"},
		{"tiles", []Row{row(8, 1, 0.5), row(16, 2.4, 1.0)}, "tiles and K splits suit batch 8 better than 16"},
		{"both", []Row{row(8, 1, 0.5), row(16, 2.4, 1.2)}, "may be smaller; and the GEMM"},
		{"under dipShare", []Row{row(8, 1, 0.5), row(16, 2.01, 1.3)}, ""},
		{"rising", []Row{row(8, 1, 0.5), row(16, 1.9, 1.3)}, ""},
		{"other point", []Row{row(8, 1, 0.5), {Batch: 16, TimeS: 2.4, ThroughputPerS: 16 / 2.4, Params: map[string]int64{"seq": 2}}}, ""},
	} {
		s := &Sweeper{seen: map[string]bool{}}
		s.warnThroughputDip(g, c.rows)
		switch {
		case c.want == "" && len(s.warns) > 0:
			t.Errorf("%s: warned %q", c.name, s.warns)
		case c.want != "" && (len(s.warns) != 1 || !strings.Contains(s.warns[0], c.want) || !strings.HasPrefix(s.warns[0], "A10: throughput falls 17% from batch 8")):
			t.Errorf("%s: warnings %q, want one from batch 8 with %q", c.name, s.warns, c.want)
		}
	}
}
