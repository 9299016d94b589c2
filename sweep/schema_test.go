package sweep

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/schematest"
	"github.com/onnxcost/onnxcost/pipeline"
	"github.com/onnxcost/onnxcost/train"
)

// gpus looks GPUs up in the built-in database.
func gpus(t *testing.T, names ...string) []*hwdb.GPU {
	t.Helper()
	var out []*hwdb.GPU
	for _, n := range names {
		g, err := hwdb.Lookup(n)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, g)
	}
	return out
}

// TestSchema: real sweeps (a batch sweep with the max-batch search, a
// tied parameter sweep with a fit, several models) validate against the
// committed Schema, and the schema rejects a row without its GPU.
func TestSchema(t *testing.T) {
	rs := schematest.Resolve(t, Schema)
	axes, err := ParseAxes([]string{"hidden=128,256,512", "embed=hidden"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	base := Config{Plan: "fused", Estimate: pipeline.EstimateOptions{ToolVersion: "test"}}
	cases := []struct {
		models []string
		cfg    Config
	}{
		{[]string{"zoo:alexnet"}, Config{GPUs: gpus(t, "V100", "P4"), Batches: []int64{1, 4}, FindMaxBatch: true}},
		{[]string{"zoo:lstm-ptb"}, Config{GPUs: gpus(t, "V100"), Axes: axes, Fit: "quadratic"}},
		{[]string{"zoo:alexnet", "zoo:vgg11"}, Config{GPUs: gpus(t, "T4"), Batches: []int64{1, 2}}},
	}
	for _, c := range cases {
		cfg := c.cfg
		cfg.Plan, cfg.Estimate = base.Plan, base.Estimate
		res, err := RunModels(c.models, cfg)
		if err != nil {
			t.Fatalf("%v: %v", c.models, err)
		}
		js, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		var inst map[string]any
		if err := json.Unmarshal(js, &inst); err != nil {
			t.Fatal(err)
		}
		if err := rs.Validate(inst); err != nil {
			t.Errorf("%v: a real sweep fails the schema: %v", c.models, err)
		}
		var text, csv bytes.Buffer
		if err := WriteText(&text, res); err != nil || !strings.Contains(text.String(), "knee") {
			t.Errorf("%v: text %q, %v", c.models, text.String(), err)
		}
		if err := WriteCSV(&csv, res); err != nil || strings.Count(csv.String(), "\n") != len(res.Rows)+1 {
			t.Errorf("%v: CSV %q, %v; want a header and %d rows", c.models, csv.String(), err, len(res.Rows))
		}
		delete(inst["rows"].([]any)[0].(map[string]any), "gpu")
		if err := rs.Validate(inst); err == nil {
			t.Errorf("%v: schema accepts a row without its GPU", c.models)
		}
	}
}

// TestFindMaxBatchTrainingReserve: a training step's reported peak is the
// caching allocator's reserve, which falls from batch 4 to 8 for VGG-16
// at TF32 with Adam (its segments pack differently); the search orders
// batches by the live tensors under it instead of refusing, and the
// batch it finds fits where the next does not.
func TestFindMaxBatchTrainingReserve(t *testing.T) {
	rt, err := hwdb.LookupRuntime("tensorrt")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Model: "zoo:vgg16", GPUs: gpus(t, "T4"), Plan: "fused", FindMaxBatch: true,
		Estimate: pipeline.EstimateOptions{ToolVersion: "test", DType: "tf32", Runtime: rt,
			Train: &train.Options{Optimizer: "adam"}}}
	s, err := NewSweeper(cfg)
	if err != nil {
		t.Fatal(err)
	}
	reserve := map[int64]float64{}
	for _, b := range []int64{4, 8} {
		reps, _, err := s.Eval(Point{}, b)
		if err != nil {
			t.Fatal(err)
		}
		reserve[b] = reps[0].Totals.PeakMemoryBytes
	}
	if !(reserve[8] < reserve[4]) {
		t.Logf("the reserve no longer falls from batch 4 (%.4g B) to 8 (%.4g B): this test no longer exercises the wobble", reserve[4], reserve[8])
	}
	res, err := RunModels([]string{"zoo:vgg16"}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b := res.MaxBatch["T4"]
	if b == nil || *b < 8 {
		t.Fatalf("largest batch %v, want one found", b)
	}
	t.Logf("reserve %.4g B at batch 4, %.4g B at 8; largest batch %v", reserve[4], reserve[8], *b)
	for _, n := range []int64{*b, *b + 1} {
		reps, _, err := s.Eval(Point{}, n)
		if err != nil {
			t.Fatal(err)
		}
		if fits := reps[0].Totals.Fits; fits != (n == *b) {
			t.Errorf("batch %d fits = %v; the search found %d", n, fits, *b)
		}
	}
	// A sweep over the dip says why the peak falls, once per GPU.
	cfg.FindMaxBatch, cfg.Batches = false, []int64{2, 4, 8, 16}
	swept, err := RunModels([]string{"zoo:vgg16"}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var dips []string
	for _, w := range swept.Warnings {
		if strings.Contains(w, "peak memory falls") {
			dips = append(dips, w)
		}
	}
	if reserve[8] < reserve[4] && (len(dips) != 1 || !strings.Contains(dips[0], "T4: peak memory falls from batch 4")) {
		t.Errorf("warnings about the dip: %q, want one for T4 from batch 4", dips)
	}
}
