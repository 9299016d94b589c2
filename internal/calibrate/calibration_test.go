package calibrate

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/hwdb"
)

const deepBenchDir = "testdata/deepbench"

func loadP100(t *testing.T) *BenchFile {
	t.Helper()
	f, err := os.Open(deepBenchDir + "/train_DeepBench_NV_P100.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bf, err := ParseDeepBench("train_DeepBench_NV_P100.csv", f)
	if err != nil {
		t.Fatal(err)
	}
	return bf
}

func TestParseDeepBenchP100(t *testing.T) {
	bf := loadP100(t)
	if bf.GPU != "NVIDIA Tesla P100" {
		t.Errorf("GPU %q", bf.GPU)
	}
	count := map[string]int{}
	for _, r := range bf.Rows {
		count[string(r.Precision)+"/"+string(r.Kind)]++
	}
	// Both sheets have GEMM, convolution and RNN tables.
	for _, key := range []string{"fp32/gemm", "fp32/conv", "fp32/rnn", "pseudo_fp16/gemm", "pseudo_fp16/conv", "pseudo_fp16/rnn"} {
		if count[key] == 0 {
			t.Errorf("no %s rows (%v)", key, count)
		}
	}
	first := bf.Rows[0] // ",,1760,16,1760,N,N,,5.5E-2,..."
	if first.Kind != BenchGEMM || first.M != 1760 || first.N != 16 || first.K != 1760 || !near(first.TimeS, 0.055e-3, 1e-12) {
		t.Errorf("first row %+v", first)
	}
}

// TestConvGeometryMatchesDeepBench checks the column mapping (R/S,
// pads, strides by name) against DeepBench's own FWD TERAFLOPS column:
// FLOPs = 2·N·K·P·Q·C·R·S, and DeepBench's rate × its time must agree.
func TestConvGeometryMatchesDeepBench(t *testing.T) {
	bf := loadP100(t)
	for _, r := range bf.Rows {
		if r.Kind != BenchConv {
			continue
		}
		// ",,700,161,1,4,32,5,20,0,0,2,2,0.142,...,4.8187943661971824": DeepBench
		// used fractional P, Q (78.5, 340.5) where the exact ones are 79, 341.
		flops := 2 * float64(r.Batch*r.Filters*r.Conv().P()*r.Conv().Q()*r.C*r.R*r.S)
		deepBench := 4.8187943661971824e12 * 0.142e-3
		if !near(flops, deepBench, 0.01) {
			t.Errorf("first conv FLOPs %g, DeepBench's %g", flops, deepBench)
		}
		return
	}
	t.Fatal("no conv rows")
}

func TestParseDeepBenchDropsAndGarbage(t *testing.T) {
	in := strings.Join([]string{
		"=== SHEET Results - FP32 5 rows",
		"Dense Matrix Multiplication,,M,N,K,A Transpose,B Transpose,,Time (msec),TERAFLOPS",
		",,64,64,64,N,N,,,",                 // no time: dropped
		",,64,64,x,N,N,,1.0,",               // bad size: dropped
		",,,* = a footnote",                 // note: dropped
		",,128,128,128,N,T,,0.01,0.4",       // kept
		"Sparse Matrix Multiplication,,M,N", // skipped whole
		",,7680,1,2560,N,N,0.95,,0.1",
		"Recurrent Layers - GRU,,Hidden units,N,Timesteps,,Time Forward (msec)",
		",,512,32,1,,0.1",
	}, "\n")
	bf, err := ParseDeepBench("x.csv", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(bf.Rows) != 2 || !bf.Rows[0].TransB || bf.Rows[1].Cell != "gru" {
		t.Errorf("rows %+v", bf.Rows)
	}
	if len(bf.Dropped) != 3 {
		t.Errorf("dropped %+v, want 3", bf.Dropped)
	}
	for _, garbage := range []string{"", "\x00\x01", "Convolution\n,,W\n,,1,2", "=== SHEET", "\"unterminated"} {
		_, _ = ParseDeepBench("g.csv", strings.NewReader(garbage)) // must not panic
	}
}

// deepBench loads the committed DeepBench figures with the built-in GPUs.
func deepBench(t *testing.T) []BenchCase {
	t.Helper()
	cases, _, _, err := LoadDeepBench(os.DirFS(deepBenchDir), hwdb.Lookup)
	if err != nil {
		t.Fatal(err)
	}
	return cases
}

func TestHoldoutSplit(t *testing.T) {
	cases := deepBench(t)
	n := map[string][2]int{}
	for _, c := range cases {
		key := c.GPUName + "/" + string(c.Row.Kind)
		v := n[key]
		v[0]++
		if c.Holdout {
			v[1]++
		}
		n[key] = v
	}
	for key, v := range n {
		if want := v[0] / 3; v[1] != want { // every third row of each group
			t.Errorf("%s: %d of %d held out, want %d", key, v[1], v[0], want)
		}
	}
}

// TestHeldOutError recomputes the held-out error with the committed
// parameters and the figures they were fitted against. The bounds sit a
// couple of points above what the committed model gives (2026-12-05, with
// the boards' vector_gemm_scale: per-GPU medians 9.4-23.9%, pooled 14.3%,
// pooled P90 55.4%), so a change that makes the model worse fails, while a
// refit that moves a GPU by a point does not.
func TestHeldOutError(t *testing.T) {
	cases := deepBench(t)
	const perGPU, pooled, pooledP90 = 0.26, 0.16, 0.58 // the worst GPU (MI25) is at 23.9%
	var all []float64
	for _, s := range ErrorTable(cases, perf.DefaultParams(), Holdout) {
		if s.Kind == "all" && s.Median > perGPU {
			t.Errorf("%s: held-out median error %.1f%% > %.0f%%", s.GPU, 100*s.Median, 100*perGPU)
		}
	}
	for _, c := range cases {
		if c.Holdout {
			kt, _ := c.Predict(perf.DefaultParams())
			all = append(all, absPctErr(kt.TimeS, c.Row.TimeS))
		}
	}
	if m := quantile(all, 0.5); m > pooled || math.IsNaN(m) {
		t.Errorf("pooled held-out median error %.1f%% > %.0f%%", 100*m, 100*pooled)
	}
	if p := quantile(all, 0.9); p > pooledP90 || math.IsNaN(p) {
		t.Errorf("pooled held-out P90 error %.1f%% > %.0f%%", 100*p, 100*pooledP90)
	}
}

func TestFitImprovesLoss(t *testing.T) {
	var train []BenchCase
	for i, c := range deepBench(t) {
		if !c.Holdout && i%7 == 0 { // a small sample keeps the test cheap
			train = append(train, c)
		}
	}
	start := perf.DefaultParams()
	start.EffVector, start.KHalf = 0.3, 300 // a deliberately poor start
	before := FitLoss(train, start)
	_, after, err := Fit(train, start, 300)
	if err != nil {
		t.Fatal(err)
	}
	if after >= before {
		t.Errorf("fit did not reduce the loss: %.4f -> %.4f", before, after)
	}
}

func TestQuantile(t *testing.T) {
	xs := []float64{4, 1, 3, 2, 5}
	if got := quantile(xs, 0.5); got != 3 {
		t.Errorf("median %g, want 3", got)
	}
	if got := quantile(xs, 0.9); !near(got, 4.6, 1e-12) { // 4 + 0.6·(5-4)
		t.Errorf("P90 %g, want 4.6", got)
	}
}

func TestNelderMeadQuadratic(t *testing.T) {
	x, v := nelderMead(func(x []float64) float64 { return (x[0]-1)*(x[0]-1) + 2*(x[1]+3)*(x[1]+3) }, []float64{0, 0}, 0.5, 2000)
	if v > 1e-6 || math.Abs(x[0]-1) > 1e-3 || math.Abs(x[1]+3) > 1e-3 {
		t.Errorf("minimum at %v (%g), want (1, -3)", x, v)
	}
}

// TestFitHoldsUnidentified checks that a fit without tensor-core rows
// leaves eff_tensor where it started instead of letting it drift.
func TestFitHoldsUnidentified(t *testing.T) {
	var train []BenchCase
	for i, c := range deepBench(t) {
		if c.GPUName == "P100-PCIe-16GB" && i%5 == 0 { // no tensor cores; a sample keeps it cheap
			train = append(train, c)
		}
	}
	start := perf.DefaultParams()
	got, _, err := Fit(train, start, 200)
	if err != nil {
		t.Fatal(err)
	}
	if got.EffTensor != start.EffTensor || got.Unaligned != start.Unaligned {
		t.Errorf("eff_tensor %g -> %g, unaligned %g -> %g without tensor rows", start.EffTensor, got.EffTensor, start.Unaligned, got.Unaligned)
	}
}

func TestDeepBenchGPUNameResolvesNewFiles(t *testing.T) {
	cases := map[string]string{
		// The eight GPUs of the shipped exports, each to the hwdb entry
		// whose figures price its rows.
		"train_DeepBench_NV_TitanX.csv":                   "Titan-X-Maxwell",
		"train_DeepBench_NV_TitanX_Pascal.csv":            "Titan-X-Pascal",
		"inference_server_DeepBench_NV_TitanXp.csv":       "Titan-Xp",
		"train_DeepBench_NV_1080Ti.csv":                   "GTX-1080-Ti",
		"train_DeepBench_NV_P100.csv":                     "P100-PCIe-16GB",
		"train_DeepBench_NV_M40.csv":                      "M40",
		"train_DeepBench_AMD_MI25.csv":                    "MI25",
		"inference_server_DeepBench_NV_TitanX_Pascal.csv": "Titan-X-Pascal",
		"inference_DeepBench_NV_T4.csv":                   "T4",
		"train_DeepBench_NV_V100.csv":                     "V100-SXM2-16GB", // hwdb alias "v100"
		"inference_server_DeepBench_NV_P4.csv":            "P4",
		"train_DeepBench_NV_Frobnicator.csv":              "",
	}
	for file, want := range cases {
		if got := DeepBenchGPUName(file); got != want {
			t.Errorf("DeepBenchGPUName(%q) = %q, want %q", file, got, want)
		}
	}
}

func near(got, want, rel float64) bool { return math.Abs(got-want) <= rel*math.Abs(want) }

// TestMeasuredWithinPricedPeak checks that no forward GEMM or int8
// convolution row was measured faster than the datasheet peak of the path
// it is priced on: a row that beats its path's peak ran on another one
// (T4's int8 convolutions reach 72 TOPS on IMMA, twice the dp4a peak).
// GeForce and Titan boards boost above their rated clock, so the bound
// allows 10%. Floating-point convolutions are left out: Winograd beats
// the direct arithmetic's peak by design.
func TestMeasuredWithinPricedPeak(t *testing.T) {
	const boostAllowance = 1.10 // the GTX 1080 Ti's best SGEMM is 1.07× its rated peak
	checked := 0
	for _, c := range deepBench(t) {
		r := c.Row
		if r.Kind.IsBackward() || (r.Kind != BenchGEMM && !(r.Kind == BenchConv && r.Precision == BenchINT8)) {
			continue
		}
		_, k := c.Predict(perf.DefaultParams())
		peak := perf.PathPeak(c.GPU, k.Precision)
		if peak <= 0 || r.TimeS <= 0 {
			t.Fatalf("%s:%d: no peak for %s or no time", r.File, r.Line, k.Precision)
		}
		checked++
		if rate := k.FLOPs / r.TimeS; rate > boostAllowance*peak {
			t.Errorf("%s:%d (%s, %s): measured %.1f TFLOP/s above the %s path's %.1f peak",
				r.File, r.Line, c.GPU.Name, r.Kind, rate/1e12, k.Precision, peak/1e12)
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d rows checked", checked)
	}
}
