package loop

import (
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/calib"
	"github.com/onnxcost/onnxcost/calib/profile"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/measured"
	"github.com/onnxcost/onnxcost/pipeline"
)

const repo = "../.."

// A measurements table is priced row by row with each row's settings; a
// bad row is an error naming the table and its line.
func TestMeasuredRows(t *testing.T) {
	dir := t.TempDir()
	model, err := filepath.Abs(filepath.Join(repo, "testdata", "models", "resnet50.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	table := filepath.Join(dir, "runs.csv")
	write := func(body string) {
		if err := os.WriteFile(table, []byte("model,ms,batch,dtype,runtime\n"+body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(model + ",1.2,1,fp32,graph\n" + model + ",3.4,8,fp16,pytorch\nzoo:alexnet,0.5,2,,\n")
	rows, err := MeasuredRows(table, pipeline.Config{GPU: "A100"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	if r := rows[1].Report; r.Runtime.Name != "pytorch" || r.DType != "fp16" || r.Bindings["batch"] != 8 || rows[1].MeasuredS != 3.4e-3 {
		t.Errorf("row 2 priced as %s %s batch %d, measured %g", r.Runtime.Name, r.DType, r.Bindings["batch"], rows[1].MeasuredS)
	}
	if r := rows[2].Report; r.Runtime.Name != "tensorrt" || r.Plan != "fused" {
		t.Errorf("a row without a runtime: %s %s, want the configured default", r.Runtime.Name, r.Plan)
	}
	src := CalibrationSource(rows, "runs.csv", "2026-11-29")
	if src.Runtime != "graph, pytorch, tensorrt" || src.Date != "2026-11-29" {
		t.Errorf("source %+v", src)
	}
	write(model + ",1.2,1,fp99,graph\n")
	if _, err := MeasuredRows(table, pipeline.Config{GPU: "A100"}); err == nil || !strings.Contains(err.Error(), "runs.csv:2") {
		t.Errorf("bad dtype: %v, want an error naming runs.csv:2", err)
	}
	// A train column prices its rows as training steps (train's default
	// runtime, eager PyTorch, where the row names none), the others as calls.
	if err := os.WriteFile(table, []byte("model,ms,batch,train\n"+model+",30,16,momentum\n"+model+",2,16,\n"+model+",31,16,yes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, err = MeasuredRows(table, pipeline.Config{GPU: "A100"})
	if err != nil {
		t.Fatal(err)
	}
	if tr := rows[0].Report.Totals.Train; tr == nil || tr.Optimizer != "momentum" || rows[0].Report.Runtime.Name != "pytorch" {
		t.Errorf("train=momentum: priced as %+v under %s", tr, rows[0].Report.Runtime.Name)
	}
	if rows[1].Report.Totals.Train != nil {
		t.Error("an empty train cell priced as a training step")
	}
	if tr := rows[2].Report.Totals.Train; tr == nil || tr.Optimizer != pipeline.DefaultOptimizer {
		t.Errorf("train=yes: %+v, want the default optimizer", tr)
	}
	// A warm row is priced as report --warm prices the call: the small CNN
	// fixture's whole traffic fits an H100's L2, so a call repeated back to
	// back finds its weights there and is cheaper than a cold one.
	small, err := filepath.Abs(filepath.Join(repo, "calib", "profile", "testdata", "models", "cnn.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(table, []byte("model,ms,warm\n"+small+",0.1,yes\n"+small+",0.1,\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, err = MeasuredRows(table, pipeline.Config{GPU: "H100"})
	if err != nil {
		t.Fatal(err)
	}
	if w, c := rows[0].Report, rows[1].Report; !w.Warm || c.Warm || !(w.Totals.TimeS < c.Totals.TimeS) {
		t.Errorf("warm row: warm %v %g s; cold row: warm %v %g s; want the warm row priced warm and cheaper", w.Warm, w.Totals.TimeS, c.Warm, c.Totals.TimeS)
	}
	if err := os.WriteFile(table, []byte("model,ms,train\n"+model+",30,lion\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := MeasuredRows(table, pipeline.Config{GPU: "A100"}); err == nil || !strings.Contains(err.Error(), "runs.csv:2") || !strings.Contains(err.Error(), "lion") || !pipeline.IsInputError(err) {
		t.Errorf("unknown optimizer: %v, want an input error naming runs.csv:2 and lion", err)
	}
	if _, err := MeasuredRows(filepath.Join(dir, "none.csv"), pipeline.Config{GPU: "A100"}); err == nil || !pipeline.IsInputError(err) {
		t.Errorf("missing table: %v, want an input error", err)
	}
}

// A profile's comparison, its rows for a fit, and the runtime each
// format was measured under.
func TestProfileComparison(t *testing.T) {
	p, err := ReadProfile(filepath.Join(repo, "calib", "profile", "testdata", "ort_transformer.json"), "")
	if err != nil {
		t.Fatal(err)
	}
	if ProfileRuntime(p.Format) != "onnxruntime" || ProfileRuntime(profile.PyTorch) != "pytorch" || ProfileRuntime(profile.TensorRT) != "tensorrt" {
		t.Errorf("profile runtimes wrong")
	}
	c, m, rep, err := ProfileComparison(filepath.Join(repo, "calib", "profile", "testdata", "models", "transformer.onnx"), p, pipeline.Config{GPU: "A100", Runtime: "onnxruntime"})
	if err != nil {
		t.Fatal(err)
	}
	if c.MatchedTimeFraction < 0.95 || len(c.Nodes) == 0 {
		t.Fatalf("matched %.3f of the time over %d nodes", c.MatchedTimeFraction, len(c.Nodes))
	}
	rows := m.Rows(rep)
	if len(rows) == 0 {
		t.Fatal("no rows for a fit")
	}
	cal, err := calib.Fit(mustGPU(t), rows, CalibrationSource(rows, "ort_transformer.json", "2026-11-29"))
	if err != nil || cal.Source.Rows != len(rows) {
		t.Fatalf("fit: %v", err)
	}
	if !strings.Contains(FitSummary(cal, "x.yaml"), "from ") {
		t.Errorf("summary %q", FitSummary(cal, "x.yaml"))
	}
	cal.Hosts = []calib.HostFactor{{Runtime: "pytorch", N: 12, Factor: 0.891}, {Runtime: "pytorch-nhwc", Training: true, N: 5, Factor: 0.809}}
	if s := FitSummary(cal, "x.yaml"); !strings.Contains(s, "host ×0.891 on pytorch (12 rows)") || !strings.Contains(s, "host ×0.809 on pytorch-nhwc training (5 rows)") {
		t.Errorf("summary %q does not list the host factors", s)
	}
}

func mustGPU(t *testing.T) *hwdb.GPU {
	t.Helper()
	g, err := hwdb.Lookup("A100")
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestOwnTransferH100ToH200: a calibration fitted on our H100 rows
// (testdata/measured/h100_sxm5_measurements.csv) and applied to the
// H200 rows (h200_sxm_measurements.csv: the same models, measured a week
// later on the other GPU) moves the H200's estimates, and moves them
// closer: issue 31's transfer check on our own data. The two are one
// silicon at one power limit, so the calibration applies whole
// (calib.sameSilicon). Since the uncalibrated model reaches 5.5% on
// the H200's 120 rows, there is little left to move: 5.53% → 5.59%, a
// tie (measured.Tie; 5.53% → 5.46% before the replays kept their eager
// twin's algorithms, cost/perf ChoiceOptions), 101 of 120 rows inside
// the 80% interval at a median width 1.38. Earlier time models: 10.3% →
// 8.6% (89 of 120 inside at 1.42), 11.0% → 8.5% over the 114 inference
// rows before the ATen latencies.
func TestOwnTransferH100ToH200(t *testing.T) {
	if testing.Short() {
		t.Skip("prices two measurement tables")
	}
	dir := filepath.Join(repo, "testdata", "measured")
	g100, err := hwdb.Lookup("H100-SXM5-80GB")
	if err != nil {
		t.Fatal(err)
	}
	fitRows, err := MeasuredRows(filepath.Join(dir, "h100_sxm5_measurements.csv"), pipeline.Config{GPU: g100.Name})
	if err != nil {
		t.Fatal(err)
	}
	cal, err := calib.Fit(g100, fitRows, CalibrationSource(fitRows, "h100_sxm5_measurements.csv", "2026-12-01"))
	if err != nil {
		t.Fatal(err)
	}
	table := filepath.Join(dir, "h200_sxm_measurements.csv")
	plain, err := MeasuredRows(table, pipeline.Config{GPU: "H200-SXM-141GB"})
	if err != nil {
		t.Fatal(err)
	}
	moved, err := PriceMeasured(table, pipeline.Config{GPU: "H200-SXM-141GB", Calibration: cal})
	if err != nil {
		t.Fatal(err)
	}
	var before, after, widths, plainS, movedS, meas []float64
	changed, inside := 0, 0
	for i := range plain {
		p, c := plain[i].Report.Totals.TimeS, moved[i].Report.Totals.TimeS
		plainS, movedS, meas = append(plainS, p), append(movedS, c), append(meas, plain[i].MeasuredS)
		if iv := moved[i].Report.Totals.TimeIntervalS; len(iv) == 2 {
			if m := moved[i].MeasuredS; m >= iv[0] && m <= iv[1] {
				inside++
			}
			widths = append(widths, iv[1]/iv[0])
		}
		before = append(before, math.Abs(p/plain[i].MeasuredS-1))
		after = append(after, math.Abs(c/moved[i].MeasuredS-1))
		if math.Abs(c/p-1) > 1e-3 {
			changed++
		}
	}
	mb, ma := median(before), median(after)
	t.Logf("H100 calibration (%d rows, %.1f%% → %.1f%% on its own GPU, cross-validated) on %d H200 rows: median |error| %.2f%% uncalibrated, %.2f%% calibrated; %d rows moved",
		len(fitRows), 100*cal.MedianErrBefore, 100*cal.MedianErrAfter, len(plain), 100*mb, 100*ma, changed)
	t.Logf("80%% intervals under it: %d of %d rows inside, median width %.2f", inside, len(widths), median(widths))
	if changed < len(plain)/2 {
		t.Errorf("the calibration moved %d of %d rows: a no-op transfer", changed, len(plain))
	}
	// No worse, with the kernel rows' tie (measured.Tie): the H100's
	// calibration has little left to teach the H200 (the model is within
	// 5-6% on both), and since the replays keep their eager twin's
	// algorithms (cost/perf ChoiceOptions) the median moved 5.53% →
	// 5.59%, one row crossing it, with the rows' median change in
	// |log error| 0.
	if tie, paired := measured.Tie(plainS, movedS, meas); ma > mb+tie {
		t.Errorf("transferred calibration made the H200 worse: %.2f%% → %.2f%% (a tie allows %.2f points; the rows' median change in |log error| %+.6g)", 100*mb, 100*ma, 100*tie, paired)
	}
	if cover, w := float64(inside)/float64(len(widths)), median(widths); cover < 0.7 || w > 1.6 {
		t.Errorf("80%% intervals: %.0f%% of rows inside at median width %.2f; want ≥ 70%% at ≤ 1.6", 100*cover, w)
	}
}

// TestTrainingRowsCalibrate: a measurements table's training rows (train
// column) are priced as training steps and fitted, and each, left out of
// the fit, is predicted better by the calibration of the rest than
// uncalibrated, on our H200's machine, whose host issued training steps
// faster than the profile's figures (0.75 of them) and faster, relative to
// them, than its inference calls (0.88): the training factor apart. 6 rows;
// measured: 25.6% → 9.6% held out (12.7% with the inference factor
// applied to them, before training rows had their own).
func TestTrainingRowsCalibrate(t *testing.T) {
	if testing.Short() {
		t.Skip("prices a measurement table and fits it six times")
	}
	g, err := hwdb.Lookup("H200-SXM-141GB")
	if err != nil {
		t.Fatal(err)
	}
	table := filepath.Join(repo, "testdata", "measured", "h200_sxm_measurements.csv")
	rows, err := MeasuredRows(table, pipeline.Config{GPU: g.Name})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := calib.ReadMeasurements(table)
	if err != nil {
		t.Fatal(err)
	}
	var before, after []float64
	for i, m := range ms {
		if !m.Train {
			if rows[i].Report.Totals.Train != nil {
				t.Fatalf("%s: an inference row priced as a training step", rows[i].Name)
			}
			continue
		}
		if rows[i].Report.Totals.Train == nil || rows[i].Report.Totals.Train.Optimizer != m.Optimizer {
			t.Fatalf("%s: not priced as a %s training step", rows[i].Name, m.Optimizer)
		}
		cal, err := calib.Fit(g, slices.Delete(slices.Clone(rows), i, i+1), calib.Source{})
		if err != nil {
			t.Fatal(err)
		}
		cfg := pipeline.Config{GPU: g.Name, Batch: m.Batch, DType: m.DType, Runtime: m.Runtime, Calibration: cal}
		cfg.Train, err = rowTraining(m)
		if err != nil {
			t.Fatal(err)
		}
		r, err := pipeline.Run(m.Model, cfg)
		if err != nil {
			t.Fatal(err)
		}
		b, a := rows[i].Report.Totals.TimeS/m.MeasuredS-1, r.Totals.TimeS/m.MeasuredS-1
		t.Logf("%-40s %-8s measured %7.2f ms  uncalibrated %+6.1f%%  calibrated without it %+6.1f%%", filepath.Base(m.Model), m.Optimizer, 1e3*m.MeasuredS, 100*b, 100*a)
		before, after = append(before, math.Abs(b)), append(after, math.Abs(a))
	}
	mb, ma := median(before), median(after)
	t.Logf("%d training rows: median |error| %.1f%% uncalibrated, %.1f%% calibrated (each left out of its fit)", len(before), 100*mb, 100*ma)
	if len(before) < 5 {
		t.Fatalf("%d training rows in %s, want 6", len(before), table)
	}
	if ma > 0.7*mb || ma > 0.15 {
		t.Errorf("held-out training rows %.1f%% → %.1f%%: want at least 30%% less and at most 15%%", 100*mb, 100*ma)
	}
}

// median is measured.Median.
func median(a []float64) float64 { return measured.Median(a) }

// TestRealKinetoTraces: PyTorch's own traces of eager calls on an H200
// (calib/profile/testdata/kineto_h200) match the exported models' nodes:
// at least 95% of the kernel time (issue 31's bar for a real profile),
// one row per profiled node. The LLaMA's rotary cos/sin, which the
// export folds into constants, are the time left over.
func TestRealKinetoTraces(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		trace, model, dtype string
		batch               int64
	}{
		{"bert_base_fp32_b1", "testdata/models/bert_base.onnx", "fp32", 1},
		{"gpt2_hf_small_fp16_b32", "testdata/saved/gpt2_hf_small.onnx.gz", "fp16", 32},
		{"llama_hf_small_fp16_b8", "testdata/saved/llama_hf_small.onnx.gz", "fp16", 8},
		{"mobilenet_v2_fp32_b128", "testdata/models/mobilenet_v2.onnx", "fp32", 128},
		{"vgg16_fp16_b128", "testdata/models/vgg16.onnx", "fp16", 128},
		{"vgg16_fp32_b128", "testdata/models/vgg16.onnx", "fp32", 128},
	} {
		trace := filepath.Join(repo, "calib", "profile", "testdata", "kineto_h200", tc.trace+".json.gz") // read gzipped
		model := filepath.Join(repo, tc.model)
		if strings.HasSuffix(model, ".gz") {
			model = gunzip(t, model, dir)
		}
		p, err := ReadProfile(trace, "")
		if err != nil {
			t.Fatal(err)
		}
		c, _, _, err := ProfileComparison(model, p, pipeline.Config{GPU: "H200-SXM-141GB", Runtime: "pytorch", DType: tc.dtype, Batch: tc.batch})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, n := range c.Nodes {
			if seen[n.Name] {
				t.Errorf("%s: node %s has two rows", tc.trace, n.Name)
			}
			seen[n.Name] = true
		}
		t.Logf("%s: %.2f%% of the kernel time matched over %d nodes", tc.trace, 100*c.MatchedTimeFraction, len(c.Nodes))
		if c.MatchedTimeFraction < 0.95 {
			t.Errorf("%s: matched %.1f%% of the time, want ≥ 95%%", tc.trace, 100*c.MatchedTimeFraction)
		}
	}
}

// TestBatchNormPlanesAreTheTrace: MobileNet-V2's 52 batch norms in our
// H200's Kineto trace (fp32, batch 128, NCHW: cuDNN's
// bn_fw_inf_1C11_kernel_NCHW, one CTA per plane) are priced within a
// median 10% node by node, as the CTAs' rate (perf smallCTALifetimeCycles) prices
// them; by their bytes alone they were 22.8% short, 2.13 ms of 3.01.
func TestBatchNormPlanesAreTheTrace(t *testing.T) {
	c := h200Trace(t, "mobilenet_v2_fp32_b128", "mobilenet_v2", pipeline.Config{Runtime: "pytorch", DType: "fp32", Batch: 128})
	var errs []float64
	for _, n := range c.Nodes {
		if n.OpType == "BatchNormalization" && n.MeasuredS > 0 {
			errs = append(errs, math.Abs(n.PredictedS/n.MeasuredS-1))
		}
	}
	if len(errs) != 52 {
		t.Fatalf("%d batch norms compared, want MobileNet-V2's 52", len(errs))
	}
	if m := median(errs); m > 0.10 {
		t.Errorf("batch norms priced a median %.1f%% off the trace, want ≤ 10%%", 100*m)
	}
}

// TestTranscendentalKernelsAreTheTraces: the transcendental kernels of
// our H200's eager Kineto traces, which perf's transcendentalChainCycles
// was fitted on (BERT-base fp32 batch 1's pooler tanh; the small LLaMA
// fp16 batch 8's rotary cos and sin and its two SiLUs), are priced within
// 15% node by node (20-25% and 10-16% short without the chain), while
// BERT's twelve GELUs, held by their bytes, keep their price.
func TestTranscendentalKernelsAreTheTraces(t *testing.T) {
	bert := h200Trace(t, "bert_base_fp32_b1", "bert_base", pipeline.Config{Runtime: "pytorch", DType: "fp32", Batch: 1})
	llama := gunzip(t, filepath.Join(repo, "testdata", "saved", "llama_hf_small.onnx.gz"), t.TempDir())
	p, err := ReadProfile(filepath.Join(repo, "calib", "profile", "testdata", "kineto_h200", "llama_hf_small_fp16_b8.json.gz"), "")
	if err != nil {
		t.Fatal(err)
	}
	small, _, _, err := ProfileComparison(llama, p, pipeline.Config{GPU: "H200-SXM-141GB", Runtime: "pytorch", DType: "fp16", Batch: 8})
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]int{}
	var gelu []float64
	for _, c := range []*profile.Comparison{bert, small} {
		for _, n := range c.Nodes {
			if !(n.MeasuredS > 0) {
				continue
			}
			e := n.PredictedS/n.MeasuredS - 1
			switch n.OpType {
			case "Tanh", "Cos", "Sin", "QuickGelu":
				found[n.OpType]++
				if math.Abs(e) > 0.15 {
					t.Errorf("%s %s priced %.3g s against %.3g measured: %+.0f%%, want within 15%%", n.OpType, n.Name, n.PredictedS, n.MeasuredS, 100*e)
				}
			case "Gelu":
				gelu = append(gelu, e)
			}
		}
	}
	if want := map[string]int{"Tanh": 1, "Cos": 1, "Sin": 1, "QuickGelu": 2}; !maps.Equal(found, want) {
		t.Errorf("compared %v, want %v", found, want)
	}
	if len(gelu) != 12 || median(gelu) < 0.05 || median(gelu) > 0.25 {
		t.Errorf("BERT's GELUs: %d compared, median %+.1f%%; want its 12 at their price by bytes (+14%%)", len(gelu), 100*median(gelu))
	}
}

// TestPlaneMeansAndAdaptivePool: the two NCHW poolings of our H200's
// fp32 traces at batch 128 that run a small CTA per few planes (perf
// smallCTALifetimeCycles, held out: fitted on the norms' 64-thread CTAs)
// are priced within 30%: MobileNet-V2's global average pool (ATen's mean,
// 10,240 CTAs of 512 threads, 40.3 µs; +26%) and VGG-16's adaptive
// average pool (65,536 CTAs of 256 threads, 175.6 µs; −8%). By their
// bytes they were −73% and −96%.
func TestPlaneMeansAndAdaptivePool(t *testing.T) {
	for _, c := range []struct{ trace, model, op string }{
		{"mobilenet_v2_fp32_b128", "mobilenet_v2", "GlobalAveragePool"},
		{"vgg16_fp32_b128", "vgg16", "AveragePool"},
	} {
		cmp := h200Trace(t, c.trace, c.model, pipeline.Config{Runtime: "pytorch", DType: "fp32", Batch: 128})
		found := false
		for _, n := range cmp.Nodes {
			if n.OpType != c.op || !(n.MeasuredS > 0) {
				continue
			}
			found = true
			if e := n.PredictedS/n.MeasuredS - 1; math.Abs(e) > 0.30 {
				t.Errorf("%s's %s priced %.3g s against %.3g measured: %+.0f%%, want within 30%%", c.model, n.Name, n.PredictedS, n.MeasuredS, 100*e)
			}
		}
		if !found {
			t.Errorf("%s: no %s compared", c.model, c.op)
		}
	}
}

// TestChannelsLastPoolsAndBiasAdds: VGG-16 fp16 channels_last at batch
// 128 in our H200's Kineto trace: its five max pools
// (max_pool_forward_nhwc, perf maxPoolOutputCycles) and its 13 bias adds
// (ATen's broadcast loop, perf stridedElemInstr), both held by their
// integer arithmetic, are priced within a median 10% node by node; by
// their bytes (pools) and the source's count (adds) they were 68% and
// 23% short.
func TestChannelsLastPoolsAndBiasAdds(t *testing.T) {
	c := h200Trace(t, "vgg16_fp16_b128", "vgg16", pipeline.Config{Runtime: "pytorch-nhwc", DType: "fp16", Batch: 128})
	errs := map[string][]float64{}
	for _, n := range c.Nodes {
		if (n.OpType == "MaxPool" || n.OpType == "Add") && n.MeasuredS > 0 {
			errs[n.OpType] = append(errs[n.OpType], math.Abs(n.PredictedS/n.MeasuredS-1))
		}
	}
	for op, want := range map[string]int{"MaxPool": 5, "Add": 13} {
		if len(errs[op]) != want {
			t.Fatalf("%d %s nodes compared, want %d", len(errs[op]), op, want)
		}
		if m := median(errs[op]); m > 0.10 {
			t.Errorf("%s priced a median %.1f%% off the trace, want ≤ 10%%", op, 100*m)
		}
	}
}

// TestNCHWPoolsAndFFT: VGG-16 fp32 NCHW at batch 128 in our H200's
// Kineto trace: its five max pools (max_pool_forward_nchw, perf
// maxPoolOutputCycles, fitted on the channels_last fp16 pools) are priced
// within a median 10% node by node (by their bytes: 51% short), and its
// three 28×28 layers, which cuDNN runs as FFT (flip_filter, one small CTA
// per filter plane: perf smallCTALifetimeCycles; a complex GEMM batched over 544
// frequencies: perf complexTiles; the transforms), within 10% each
// (+74% and +0.7% before: the batched product was priced as cuBLAS's
// largek kernel). The 14×14 FFT layers are bounded at 25%: their 16-point
// input transform ran 199 µs where its bytes take 31 (unexplained).
func TestNCHWPoolsAndFFT(t *testing.T) {
	c := h200Trace(t, "vgg16_fp32_b128", "vgg16", pipeline.Config{Runtime: "pytorch", DType: "fp32", Batch: 128})
	var pools []float64
	fft := map[string]float64{}
	for _, n := range c.Nodes {
		if !(n.MeasuredS > 0) {
			continue
		}
		e := n.PredictedS/n.MeasuredS - 1
		switch {
		case n.OpType == "MaxPool":
			pools = append(pools, math.Abs(e))
		case n.OpType == "Conv":
			for _, l := range []string{"17", "19", "21", "24", "26", "28"} {
				if n.Name == "/features/features."+l+"/Conv" {
					fft[l] = e
				}
			}
		}
	}
	if len(pools) != 5 || len(fft) != 6 {
		t.Fatalf("%d max pools and %d FFT layers compared, want 5 and 6", len(pools), len(fft))
	}
	if m := median(pools); m > 0.10 {
		t.Errorf("max pools priced a median %.1f%% off the trace, want ≤ 10%%", 100*m)
	}
	for l, e := range fft {
		if bound := map[bool]float64{true: 0.10, false: 0.25}[l < "24"]; math.Abs(e) > bound {
			t.Errorf("features.%s (FFT) priced %+.1f%% off the trace, want within %.0f%%", l, 100*e, 100*bound)
		}
	}
}

// TestCUDNNSIMTConvsAreTheTrace: the fp32 NCHW convolutions that cuDNN
// runs as its sm80 256×64 tile (perf cudnnSIMTTile, two CTAs per SM in
// rounds), node by node against our H200's Kineto traces under the eager
// runtime. MobileNet-V2 at batch 128 (held out: no layer of it set the
// tile's rate): the 14 layers whose grid of that tile fills the SMs over
// output channels in 64s (its expand 1×1s of 192-960 channels and the
// 1,280-channel head) within a median 10%, priced −19% (signed and
// |error|) by the model's own tiles before. VGG-16 at batch 128: its
// three layers of the tile at 224×224 and 112×112 within 6% each (+28%,
// −8%, −7% before; the sweep's layers of the same shapes set the rate).
func TestCUDNNSIMTConvsAreTheTrace(t *testing.T) {
	cfg := pipeline.Config{Runtime: "pytorch", DType: "fp32", Batch: 128}
	c, r := h200TraceReport(t, "mobilenet_v2_fp32_b128", "mobilenet_v2", cfg)
	tiled := map[string]bool{}
	for _, n := range r.Nodes {
		if n.OpType != "Conv" || len(n.Inputs) < 2 || len(n.Outputs) < 1 || len(n.Inputs[1].Shape) != 4 || len(n.Outputs[0].Shape) != 4 {
			continue
		}
		w, y := n.Inputs[1].Shape, n.Outputs[0].Shape
		pixels, channels := y[0].Value*y[2].Value*y[3].Value, y[1].Value
		ctas := (pixels + 255) / 256 * ((channels + 63) / 64)
		if w[1].Value%4 == 0 && channels%64 == 0 && ctas >= 132 {
			tiled[n.Name] = true
		}
	}
	var errs []float64
	for _, n := range c.Nodes {
		if tiled[n.Name] && n.MeasuredS > 0 {
			errs = append(errs, math.Abs(n.PredictedS/n.MeasuredS-1))
		}
	}
	if len(errs) != 14 {
		t.Fatalf("MobileNet-V2: %d convolutions of cuDNN's 256×64 tile compared, want 14", len(errs))
	}
	if m := median(errs); m > 0.10 {
		t.Errorf("MobileNet-V2's 256×64 convolutions priced a median %.1f%% off the trace, want ≤ 10%%", 100*m)
	}
	vgg := h200Trace(t, "vgg16_fp32_b128", "vgg16", cfg)
	seen := 0
	for _, n := range vgg.Nodes {
		for _, l := range []string{"2", "5", "7"} {
			if n.Name != "/features/features."+l+"/Conv" || !(n.MeasuredS > 0) {
				continue
			}
			seen++
			if e := n.PredictedS/n.MeasuredS - 1; math.Abs(e) > 0.06 {
				t.Errorf("VGG-16 features.%s (cuDNN's 256×64 tile) priced %+.1f%% off the trace, want within 6%%", l, 100*e)
			}
		}
	}
	if seen != 3 {
		t.Fatalf("VGG-16: %d of features.2, .5, .7 compared, want 3", seen)
	}
}

// h200Trace compares one of our H200's Kineto traces
// (calib/profile/testdata/kineto_h200/TRACE.json.gz) with the fixture
// testdata/models/MODEL.onnx priced on the H200 under cfg.
func h200Trace(t *testing.T, trace, model string, cfg pipeline.Config) *profile.Comparison {
	t.Helper()
	c, _ := h200TraceReport(t, trace, model, cfg)
	return c
}

// h200TraceReport is h200Trace with the report the model was priced in
// (its nodes' shapes).
func h200TraceReport(t *testing.T, trace, model string, cfg pipeline.Config) (*profile.Comparison, *report.Report) {
	t.Helper()
	p, err := ReadProfile(filepath.Join(repo, "calib", "profile", "testdata", "kineto_h200", trace+".json.gz"), "")
	if err != nil {
		t.Fatal(err)
	}
	cfg.GPU = "H200-SXM-141GB"
	c, _, r, err := ProfileComparison(filepath.Join(repo, "testdata", "models", model+".onnx"), p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, r
}

// gunzip writes the gzipped file at path into dir without its .gz.
func gunzip(t *testing.T, path, dir string) string {
	t.Helper()
	out, err := measured.Gunzip(path, dir)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A calibration whose own left-out rows came out worse says so; one that
// helped says nothing.
func TestFitWarnings(t *testing.T) {
	worse := &calib.Calibration{Source: calib.Source{GPU: "H200-SXM-141GB", Rows: 38}, MedianErrBefore: 0.053, MedianErrAfter: 0.069}
	w := FitWarnings(worse)
	if len(w) != 1 || !strings.Contains(w[0], "H200-SXM-141GB: its 38 rows") || !strings.Contains(w[0], "6.9%") || !strings.Contains(w[0], "5.3%") || strings.Contains(w[0], "\n") {
		t.Errorf("worse calibration: warnings %q", w)
	}
	better := *worse
	better.MedianErrAfter = 0.04
	if w := FitWarnings(&better); len(w) != 0 {
		t.Errorf("better calibration: warnings %q", w)
	}
}

// TestRootScopeOpsMatched: an op a model's own forward calls, outside any
// submodule (MobileNet-V2's global pool, eager PyTorch's aten::mean;
// BERT's pooler tanh), carries no module annotation in a Kineto trace and
// is placed on the root scope's node ("/GlobalAveragePool", "/Tanh") by
// its exported op type. Left unmatched before: 40 µs of MobileNet's trace
// (0.36%) and BERT's tanh and sub.
func TestRootScopeOpsMatched(t *testing.T) {
	for _, tc := range []struct{ trace, model, node string }{
		{"mobilenet_v2_fp32_b128", "mobilenet_v2", "/GlobalAveragePool"},
		{"bert_base_fp32_b1", "bert_base", "/Tanh"},
	} {
		c := h200Trace(t, tc.trace, tc.model, pipeline.Config{Runtime: "pytorch", DType: "fp32", Batch: map[string]int64{"mobilenet_v2": 128, "bert_base": 1}[tc.model]})
		for _, e := range c.Unmatched {
			if e.OpType == "aten::mean" || e.OpType == "aten::tanh" || e.OpType == "aten::sub" {
				t.Errorf("%s: %s (%s) left unmatched", tc.trace, e.Name, e.OpType)
			}
		}
		found := false
		for _, n := range c.Nodes {
			if n.Name == tc.node && n.MeasuredS > 0 {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no measured time on %s", tc.trace, tc.node)
		}
	}
}

// TestSourceRuntime: a calibration's source names the runtimes its rows
// were priced under with the software the measurements name beside them,
// either alone where the other is unknown; a profile whose metadata names
// no software is named by its format.
func TestSourceRuntime(t *testing.T) {
	for _, c := range []struct{ runtimes, software, want string }{
		{"graph, pytorch", "PyTorch 2.11.0+cu130", "graph, pytorch (PyTorch 2.11.0+cu130)"},
		{"", "PyTorch (Kineto trace, CUDA runtime 13.0)", "PyTorch (Kineto trace, CUDA runtime 13.0)"},
		{"tensorrt", "", "tensorrt"},
		{"", "", ""},
	} {
		if got := SourceRuntime(c.runtimes, c.software); got != c.want {
			t.Errorf("SourceRuntime(%q, %q) = %q, want %q", c.runtimes, c.software, got, c.want)
		}
	}
	for _, f := range []profile.Format{profile.ONNXRuntime, profile.PyTorch, profile.TensorRT} {
		if ProfileSoftware(f) == "" {
			t.Errorf("format %s names no software", f)
		}
	}
}
