package sweep

import (
	"slices"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/pipeline"
	"github.com/onnxcost/onnxcost/train"
)

// TestCompare: a one-point sweep becomes a comparison whose cost per
// million items is USD/h ÷ 3600 ÷ items/s × 10^6, and a price for a GPU
// not compared is refused.
func TestCompare(t *testing.T) {
	res, err := Run(Config{Model: "zoo:alexnet", GPUs: gpus(t, "T4", "A100"), Batches: []int64{8}, Plan: "fused"})
	if err != nil {
		t.Fatal(err)
	}
	cmp, err := Compare(res, map[string]float64{res.GPUs[0].Name: 0.35}, 1)
	if err != nil {
		t.Fatal(err)
	}
	r := cmp.Rows[0]
	if want := 0.35 / 3600 / r.ThroughputPerS * 1e6; r.USDPerMillion == nil || *r.USDPerMillion != want || cmp.Batch != 8 {
		t.Errorf("row %+v, batch %d; want USD per million %v at batch 8", r, cmp.Batch, want)
	}
	if cmp.Rows[1].USDPerHour != nil {
		t.Errorf("unpriced GPU has a price: %+v", cmp.Rows[1])
	}
	if _, err := Compare(res, map[string]float64{"H100": 2}, 1); err == nil {
		t.Error("a price for a GPU not compared is accepted")
	}
}

// TestCompareTraining: a training step's comparison says so, and counts
// every sample a step trains (K micro-batches on each data-parallel
// replica) and every GPU it trains on (tensor-parallel groups ×
// replicas) in its energy per item and its cost per million samples.
func TestCompareTraining(t *testing.T) {
	opt := &train.Options{Optimizer: "sgd", GradAccum: 2, DataParallel: 3}
	res, err := Run(Config{Model: "zoo:alexnet", GPUs: gpus(t, "A100"), Batches: []int64{8}, Plan: "eager",
		Estimate: pipeline.EstimateOptions{Train: opt, GPUs: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Train == nil || *res.Train != (report.TrainSetting{Optimizer: "sgd", Checkpoint: "none", GradAccum: 2, DataParallel: 3}) {
		t.Fatalf("train %+v", res.Train)
	}
	cmp, err := Compare(res, map[string]float64{res.GPUs[0].Name: 2}, 2)
	if err != nil {
		t.Fatal(err)
	}
	r, row := cmp.Rows[0], res.Rows[0]
	samples := 8.0 * 2 * 3
	if want := samples / row.TimeS; r.ThroughputPerS != want {
		t.Errorf("throughput %v, want %v samples/s", r.ThroughputPerS, want)
	}
	if want := row.EnergyJ * 2 * 3; r.EnergyJ != want || r.EnergyPerItemJ != want/samples {
		t.Errorf("energy %v J (%v per sample), want %v (%v)", r.EnergyJ, r.EnergyPerItemJ, want, want/samples)
	}
	if r.USDPerMillion == nil {
		t.Fatal("a priced GPU has no cost per million")
	}
	if want := 6.0 * 2 / 3600 / r.ThroughputPerS * 1e6; *r.USDPerMillion != want {
		t.Errorf("USD per million %v, want %v (6 GPUs at $2/h)", *r.USDPerMillion, want)
	}
	var b strings.Builder
	if err := WriteCompareText(&b, cmp); err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(b.String(), "\n"); !strings.Contains(first, "training step (optimizer sgd, checkpoint none, grad-accum 2, data-parallel 3)") ||
		!strings.Contains(first, "energy and cost count all 3 replicas") {
		t.Errorf("first line %q", first)
	}
}

// TestPrices: a prices file reads in name order; aliases resolve to the
// canonical name, the later price of one GPU winning; a negative price
// and an unknown GPU are refused.
func TestPrices(t *testing.T) {
	ps, err := ParsePrices([]byte("T4: 0.35\nl4: 0.9\nA10: 1\n"))
	if err != nil || len(ps) != 3 || ps[0].GPU != "A10" || ps[2].GPU != "l4" {
		t.Fatalf("ParsePrices = %v, %v; want A10, T4, l4", ps, err)
	}
	if _, err := ParsePrices([]byte("T4: [1]")); err == nil {
		t.Error("a list for a price is accepted")
	}
	db, err := hwdb.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	t4 := gpus(t, "T4")[0].Name
	got, err := ResolvePrices(db, []Price{{"T4", 1}, {"t4", 2}})
	if err != nil || len(got) != 1 || got[t4] != 2 {
		t.Errorf("ResolvePrices = %v, %v; want %s: 2", got, err, t4)
	}
	for _, bad := range []Price{{"T4", -1}, {"nope", 1}} {
		if _, err := ResolvePrices(db, []Price{bad}); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// TestIntervals: every sweep row and comparison row carries its report's
// 80% interval around its time, and the CSV forms write its bounds.
func TestIntervals(t *testing.T) {
	res, err := Run(Config{Model: "zoo:alexnet", GPUs: gpus(t, "T4", "A100"), Batches: []int64{1, 8}, Plan: "fused"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Rows {
		if iv := r.TimeIntervalS; len(iv) != 2 || !(iv[0] <= r.TimeS && r.TimeS <= iv[1] && iv[0] < iv[1]) {
			t.Errorf("%s batch %d: time %g, interval %v", r.GPU, r.Batch, r.TimeS, iv)
		}
	}
	var csv strings.Builder
	if err := WriteCSV(&csv, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.SplitN(csv.String(), "\n", 2)[0], "time_interval_low_s,time_interval_high_s") {
		t.Errorf("sweep CSV header %q lacks the interval bounds", strings.SplitN(csv.String(), "\n", 2)[0])
	}
	one, err := Run(Config{Model: "zoo:alexnet", GPUs: gpus(t, "T4", "A100"), Batches: []int64{8}, Plan: "fused"})
	if err != nil {
		t.Fatal(err)
	}
	cmp, err := Compare(one, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range cmp.Rows {
		if !slices.Equal(r.TimeIntervalS, one.Rows[i].TimeIntervalS) || len(r.TimeIntervalS) != 2 {
			t.Errorf("%s: comparison interval %v, sweep row's %v", r.GPU, r.TimeIntervalS, one.Rows[i].TimeIntervalS)
		}
	}
	var text strings.Builder
	if err := WriteCompareText(&text, cmp); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "80% interval") || !strings.Contains(text.String(), IntervalText(cmp.Rows[0].TimeIntervalS)) {
		t.Errorf("gpus compare text lacks the interval:\n%s", text.String())
	}
}

// TestCarriedIntervalsMarked: beside a measured family's GPU, a GPU whose
// family has no measured kernels here (the L4) carries its report's
// interval basis and its interval is starred, with one footnote saying
// what the star means, in `gpus compare` and in `sweep`; a comparison of
// measured families has neither.
func TestCarriedIntervalsMarked(t *testing.T) {
	text := func(names ...string) (*Comparison, string) {
		t.Helper()
		res, err := Run(Config{Model: "zoo:alexnet", GPUs: gpus(t, names...), Batches: []int64{8}, Plan: "fused"})
		if err != nil {
			t.Fatal(err)
		}
		cmp, err := Compare(res, nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := WriteCompareText(&b, cmp); err != nil {
			t.Fatal(err)
		}
		return cmp, b.String()
	}
	cmp, out := text("A100", "L4")
	if cmp.Rows[0].IntervalBasis != "" || !strings.Contains(cmp.Rows[1].IntervalBasis, "no Ada Lovelace kernel") {
		t.Errorf("bases %q, %q: want none for the A100 and Ada's for the L4", cmp.Rows[0].IntervalBasis, cmp.Rows[1].IntervalBasis)
	}
	if strings.Count(out, IntervalText(cmp.Rows[1].TimeIntervalS)+" *") != 1 || strings.Contains(out, IntervalText(cmp.Rows[0].TimeIntervalS)+" *") || strings.Count(out, "\n* no kernel of this GPU's family is measured here") != 1 {
		t.Errorf("want the L4's interval starred, the A100's not, and one footnote:\n%s", out)
	}
	if _, out := text("A100", "T4"); strings.Contains(out, "*") {
		t.Errorf("measured families only: a star or footnote:\n%s", out)
	}
	// The sweep's rows alike.
	res, err := Run(Config{Model: "zoo:alexnet", GPUs: gpus(t, "A100", "L4"), Batches: []int64{1, 8}, Plan: "fused"})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteText(&b, res); err != nil {
		t.Fatal(err)
	}
	if strings.Count(b.String(), " *") != 2 || strings.Count(b.String(), "\n* no kernel of this GPU's family") != 1 {
		t.Errorf("sweep: want the L4's two rows starred and one footnote:\n%s", b.String())
	}
}
