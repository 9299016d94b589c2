package pipeline

import (
	"os"
	"reflect"
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/passes"
)

// TestRunIsTheSteps: Run gives exactly what Load, Plan and Estimate give
// by hand, so the one-call API and the steps cannot drift apart.
func TestRunIsTheSteps(t *testing.T) {
	const path = "../testdata/models/resnet50.onnx"
	got, err := Run(path, Config{GPU: "A100", Batch: 4, DType: "fp16"})
	if err != nil {
		t.Fatal(err)
	}
	gpu, err := hwdb.Lookup("A100")
	if err != nil {
		t.Fatal(err)
	}
	l, err := Load(path, Options{Batch: 4, BindAll: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Plan("fused", passes.Options{}); err != nil {
		t.Fatal(err)
	}
	rt, err := hwdb.LookupRuntime(hwdb.DefaultRuntime)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Estimate(l, gpu, EstimateOptions{DType: "fp16", Plan: "fused", Runtime: rt})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Run and the steps disagree: time %g vs %g s, FLOPs %g vs %g", got.Totals.TimeS, want.Totals.TimeS, got.Totals.FLOPs, want.Totals.FLOPs)
	}
}

// TestCountMatchesRun: counting with no GPU gives every count a priced
// report gives, node by node, in both plans, and prices nothing.
func TestCountMatchesRun(t *testing.T) {
	for _, m := range []string{"resnet50", "bert_base", "gpt_small", "lstm_ptb_dyn", "loop_if", "mobilenet_v2"} {
		for _, plan := range []string{"fused", "unfused"} {
			path := "../testdata/models/" + m + ".onnx"
			cfg := Config{Batch: 2, Plan: plan}
			counted, err := Count(path, cfg)
			if err != nil {
				t.Fatalf("%s %s: %v", m, plan, err)
			}
			cfg.GPU = "A100"
			priced, err := Run(path, cfg)
			if err != nil {
				t.Fatalf("%s %s: %v", m, plan, err)
			}
			if !counted.CountOnly || priced.CountOnly {
				t.Fatalf("%s %s: CountOnly %v (count) and %v (run)", m, plan, counted.CountOnly, priced.CountOnly)
			}
			if counted.GPU != "" || counted.Runtime != nil || counted.Totals.TimeS != 0 || counted.Totals.EnergyJ != 0 {
				t.Errorf("%s %s: a count-only report priced something: gpu %q, time %g s, energy %g J", m, plan, counted.GPU, counted.Totals.TimeS, counted.Totals.EnergyJ)
			}
			ct, pt := counted.Totals, priced.Totals
			if ct.Counts != pt.Counts || ct.Params != pt.Params || ct.ParamBytes != pt.ParamBytes || ct.Launches != pt.Launches || ct.PeakActivationBytes != pt.PeakActivationBytes || ct.Nodes != pt.Nodes {
				t.Errorf("%s %s: totals differ:\ncount %+v\nrun   %+v", m, plan, ct, pt)
			}
			if len(counted.Nodes) != len(priced.Nodes) {
				t.Fatalf("%s %s: %d nodes counted, %d priced", m, plan, len(counted.Nodes), len(priced.Nodes))
			}
			for i := range counted.Nodes {
				c, p := &counted.Nodes[i], &priced.Nodes[i]
				if c.Name != p.Name || c.Counts != p.Counts || c.Params != p.Params || c.Launches != p.Launches || c.ArithmeticIntensity != p.ArithmeticIntensity {
					t.Errorf("%s %s: node %s differs:\ncount %+v\nrun   %+v", m, plan, c.Name, c.Counts, p.Counts)
					break
				}
				if c.TimeS != 0 || c.Bound != "" || c.MemLevel != "" || c.Precision != "" {
					t.Errorf("%s %s: node %s priced without a GPU: %g s, bound %q, level %q", m, plan, c.Name, c.TimeS, c.Bound, c.MemLevel)
					break
				}
			}
			if !reflect.DeepEqual(counted.Bindings, priced.Bindings) {
				t.Errorf("%s %s: bindings %v vs %v", m, plan, counted.Bindings, priced.Bindings)
			}
		}
	}
}

// TestRunBytesMatchesRun: the bytes entry points give the file ones'
// reports.
func TestRunBytesMatchesRun(t *testing.T) {
	const path = "../testdata/models/alexnet.onnx"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{GPU: "T4", Batch: 2}
	pairs := [][2]func() (*report.Report, error){
		{func() (*report.Report, error) { return Run(path, cfg) }, func() (*report.Report, error) { return RunBytes(path, data, cfg) }},
		{func() (*report.Report, error) { return Count(path, cfg) }, func() (*report.Report, error) { return CountBytes(path, data, cfg) }},
	}
	for i, p := range pairs {
		a, err := p[0]()
		if err != nil {
			t.Fatal(err)
		}
		b, err := p[1]()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("pair %d: the bytes and file entry points disagree", i)
		}
	}
}

// TestRunRefuses: bad settings are input errors naming the setting,
// found before the model is read.
func TestRunRefuses(t *testing.T) {
	const path = "../testdata/models/alexnet.onnx"
	for _, tc := range []struct {
		name string
		run  func() (*report.Report, error)
	}{
		{"no GPU", func() (*report.Report, error) { return Run(path, Config{}) }},
		{"unknown GPU", func() (*report.Report, error) { return Run(path, Config{GPU: "no-such-gpu"}) }},
		{"plan", func() (*report.Report, error) { return Run(path, Config{GPU: "A100", Plan: "half"}) }},
		{"dtype", func() (*report.Report, error) { return Count(path, Config{DType: "fp4"}) }},
		{"runtime", func() (*report.Report, error) { return Run(path, Config{GPU: "A100", Runtime: "nope"}) }},
		{"power cap", func() (*report.Report, error) { return Run(path, Config{GPU: "A100", PowerCapW: 5000}) }},
		{"pass", func() (*report.Report, error) {
			return Run(path, Config{GPU: "A100", Passes: passes.Options{Disable: []string{"no-such-pass"}}})
		}},
		{"count across GPUs", func() (*report.Report, error) { return Count(path, Config{GPUs: 4}) }},
		{"missing model", func() (*report.Report, error) { return Count("no-such.onnx", Config{}) }},
	} {
		_, err := tc.run()
		if err == nil || !IsInputError(err) {
			t.Errorf("%s: got %v, want an input error", tc.name, err)
		}
	}
}

// TestAnalyzeCountsWithoutGPU: Analyze, the command line's way in, counts
// when no GPU is named and prices when one is.
func TestAnalyzeCountsWithoutGPU(t *testing.T) {
	const path = "../testdata/models/alexnet.onnx"
	var phases []Phase
	res, err := Analyze(path, Config{Progress: func(p Phase) { phases = append(phases, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Report.CountOnly || res.GPU != nil || res.Loaded == nil {
		t.Errorf("no GPU: CountOnly %v, GPU %v", res.Report.CountOnly, res.GPU)
	}
	if want := []Phase{PhaseRead, PhasePlan, PhaseCost}; !reflect.DeepEqual(phases, want) {
		t.Errorf("phases %v, want %v", phases, want)
	}
	res, err = Analyze(path, Config{GPU: "A100"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.CountOnly || res.GPU == nil || res.Report.Totals.TimeS <= 0 {
		t.Errorf("A100: CountOnly %v, time %g s", res.Report.CountOnly, res.Report.Totals.TimeS)
	}
}
