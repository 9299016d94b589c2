package calibrate

import (
	"math"
	"strconv"
	"testing"

	"github.com/onnxcost/onnxcost/cost/perf"
)

// TestParseDeepBenchBackward checks the backward columns against cells of
// the P100 sheet: the first convolution row (",,700,161,1,4,32,5,20,...,
// 0.142,0.482,0.301") and the first LSTM row of each sheet (fp32 has
// separate "wrt inputs"/"wrt weights" columns, the pseudo-fp16 sheet one
// "Time Backward").
func TestParseDeepBenchBackward(t *testing.T) {
	bf := loadP100(t)
	var conv, lstm32, lstm16 *BenchRow
	for i := range bf.Rows {
		r := &bf.Rows[i]
		switch {
		case conv == nil && r.Kind == BenchConv:
			conv = r
		case lstm32 == nil && r.Kind == BenchRNN && r.Cell == "lstm" && r.Precision == BenchFP32:
			lstm32 = r
		case lstm16 == nil && r.Kind == BenchRNN && r.Cell == "lstm" && r.Precision == BenchPseudoFP16:
			lstm16 = r
		}
	}
	if conv == nil || lstm32 == nil || lstm16 == nil {
		t.Fatal("missing conv or LSTM rows")
	}
	if !near(conv.BwdDataS, 0.482e-3, 1e-9) || !near(conv.BwdWeightS, 0.301e-3, 1e-9) || conv.BwdS != 0 {
		t.Errorf("conv backward %g/%g/%g, want 0.482 ms, 0.301 ms, 0", conv.BwdDataS, conv.BwdWeightS, conv.BwdS)
	}
	// ",Machine Translation,512,16,25,,1.478,1.688,0.213,..."
	if !near(lstm32.BwdDataS, 1.688e-3, 1e-9) || !near(lstm32.BwdWeightS, 0.213e-3, 1e-9) {
		t.Errorf("fp32 LSTM backward %g/%g, want 1.688 ms, 0.213 ms", lstm32.BwdDataS, lstm32.BwdWeightS)
	}
	if lstm16.BwdS <= 0 || lstm16.BwdDataS != 0 || lstm16.BwdWeightS != 0 {
		t.Errorf("pseudo-fp16 LSTM backward %g/%g/%g, want only the combined time", lstm16.BwdDataS, lstm16.BwdWeightS, lstm16.BwdS)
	}
}

// TestBackwardHoldoutFollowsForward checks that a backward case is held
// out exactly when its forward row is, so no geometry held out on one
// side is fitted on the other, and that about a third is held out.
func TestBackwardHoldoutFollowsForward(t *testing.T) {
	fwd := deepBench(t)
	held := map[string]bool{}
	for _, c := range fwd {
		held[c.Row.File+":"+strconv.Itoa(c.Row.Line)] = c.Holdout
	}
	bwd := BackwardCases(fwd)
	n := 0
	for _, c := range bwd {
		if !c.Row.Kind.IsBackward() {
			t.Fatalf("%s:%d kind %s is not a backward kind", c.Row.File, c.Row.Line, c.Row.Kind)
		}
		if want := held[c.Row.File+":"+strconv.Itoa(c.Row.Line)]; c.Holdout != want {
			t.Errorf("%s:%d %s: holdout %v, forward row %v", c.Row.File, c.Row.Line, c.Row.Kind, c.Holdout, want)
		}
		if c.Holdout {
			n++
		}
	}
	if f := float64(n) / float64(len(bwd)); len(bwd) < 2000 || f < 0.3 || f > 0.36 {
		t.Errorf("%d backward cases, %.2f held out; want > 2000 and about a third", len(bwd), f)
	}
}

// TestHeldOutBackwardError recomputes the held-out error of the backward
// kernels from the DeepBench sheets with the committed parameters. The
// bounds sit 2-3 points above what the committed model gives
// (CALIBRATION.md, "Backward kernels": conv-dgrad 24.1%, conv-wgrad
// 30.3%, rnn-dgrad 32.2%, rnn-wgrad 12.8%, rnn-bwd 37.6%, pooled 24.7%,
// pooled P90 70.9%), and well below what backward.go's previous kernel
// view gave (conv-dgrad 47.6%, conv-wgrad 35.6%, pooled 34.6%), so
// returning to it, or any change that makes the backward kernels worse,
// fails.
func TestHeldOutBackwardError(t *testing.T) {
	bwd := BackwardCases(deepBench(t))
	bound := map[string]float64{
		"conv-dgrad": 0.27, "conv-wgrad": 0.33, "rnn-dgrad": 0.35, "rnn-wgrad": 0.15, "rnn-bwd": 0.48, "all": 0.27,
	}
	// rnn-bwd: 40.3% with the DeepBench-only parameters, 42.5% with the
	// joint DeepBench+Vidur fit (rnn_step_launches 14.2 → 23.8; 35 rows),
	// 45.6% once RNN steps stopped splitting K (perf.rnnStepSplitsK): both
	// GPUs' own medians fell (MI25 31.4 → 29.5%, P100 60.5 → 55.9%); the
	// pooled median of the 35 rows rose as rows crossed it; 44.5% with
	// the RNN stage's step latencies (rnn-dgrad 25.3 → 26.3%).
	const pooledP90 = 0.74
	seen := 0
	for _, s := range ErrorTable(bwd, perf.DefaultParams(), Holdout) {
		if s.GPU != pooledGPU {
			continue
		}
		seen++
		b, ok := bound[s.Kind]
		if !ok {
			t.Errorf("unexpected kind %q", s.Kind)
			continue
		}
		if s.Median > b || math.IsNaN(s.Median) {
			t.Errorf("%s: held-out median error %.1f%% > %.0f%% (n=%d)", s.Kind, 100*s.Median, 100*b, s.N)
		}
		if s.Kind == "all" && (s.P90 > pooledP90 || math.IsNaN(s.P90)) {
			t.Errorf("pooled held-out P90 error %.1f%% > %.0f%%", 100*s.P90, 100*pooledP90)
		}
	}
	if seen != len(bound) {
		t.Errorf("%d pooled rows, want %d", seen, len(bound))
	}
}

// TestFitBackwardRecoversEffWgrad starts the backward fit from a poor
// eff_wgrad and checks it lands near the committed value, with the
// forward parameters untouched.
func TestFitBackwardRecoversEffWgrad(t *testing.T) {
	var train []BenchCase
	for _, c := range BackwardCases(deepBench(t)) {
		if !c.Holdout {
			train = append(train, c)
		}
	}
	start := perf.DefaultParams()
	start.EffWgrad = 1
	got, _, err := FitBackward(train, start)
	if err != nil {
		t.Fatal(err)
	}
	if want := perf.DefaultParams().EffWgrad; !near(got.EffWgrad, want, 0.01) {
		t.Errorf("eff_wgrad %g, committed %g", got.EffWgrad, want)
	}
	got.EffWgrad = start.EffWgrad
	if got != start {
		t.Errorf("the backward fit moved a forward parameter: %+v", got)
	}
	if _, _, err := FitBackward(nil, start); err == nil {
		t.Error("no error without weight-gradient rows")
	}
}
