package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCalibrateProfileWarm: calibrate --profile says how the estimate it
// compares was priced, and prices a profile that averages several calls
// (trtexec's iterations, onnxruntime's runs after its warm-up, profiler
// steps) as calls that each came after one like it, as a measurements
// table's warm column does; one call is priced as a first call, and
// --warm / --warm=false override either. The small CNN of the TensorRT
// fixture (10 iterations) keeps its weights in an H100's L2 between
// calls, so its warm estimate is below the first call's.
func TestCalibrateProfileWarm(t *testing.T) {
	dir := filepath.Join(repoRoot, "calib", "profile", "testdata")
	prof, model := filepath.Join(dir, "trt_cnn_profile.json"), filepath.Join(dir, "models", "cnn.onnx")
	type cmp struct {
		Runs       int     `json:"runs"`
		Runtime    string  `json:"runtime"`
		Warm       bool    `json:"warm"`
		PredictedS float64 `json:"predicted_s"`
	}
	var warm, cold cmp
	runJSON(t, &warm, "calibrate", "--gpu", "H100", "--profile", prof, model, "--format", "json")
	runJSON(t, &cold, "calibrate", "--gpu", "H100", "--profile", prof, model, "--format", "json", "--warm=false")
	if warm.Runs < 2 || !warm.Warm || cold.Warm || warm.Runtime != "tensorrt" || cold.Runtime != "tensorrt" {
		t.Errorf("runs %d: runtime/warm by default %q %v, with --warm=false %q %v; want tensorrt, true and false", warm.Runs, warm.Runtime, warm.Warm, cold.Runtime, cold.Warm)
	}
	// --train takes no implicit --warm: a training step's traffic is
	// priced as its own (an explicit --warm with --train is refused).
	var train cmp
	runJSON(t, &train, "calibrate", "--gpu", "H100", "--profile", prof, model, "--format", "json", "--train")
	if train.Warm {
		t.Errorf("--train: priced warm")
	}
	if !(warm.PredictedS > 0 && warm.PredictedS < cold.PredictedS) {
		t.Errorf("predicted %g s warm, %g s cold: want the warm call cheaper", warm.PredictedS, cold.PredictedS)
	}
	// One profiled call (our H200's Kineto trace) is a first call unless
	// --warm says it came after others.
	trace := filepath.Join(dir, "kineto_h200", "gpt2_hf_small_fp16_b32.json.gz")
	lm := gunzipTo(t, filepath.Join(repoRoot, "testdata", "saved", "gpt2_hf_small.onnx.gz"), t.TempDir())
	var one, oneWarm cmp
	runJSON(t, &one, "calibrate", "--gpu", "H200", "--profile", trace, lm, "--dtype", "fp16", "--batch", "32", "--format", "json")
	runJSON(t, &oneWarm, "calibrate", "--gpu", "H200", "--profile", trace, lm, "--dtype", "fp16", "--batch", "32", "--format", "json", "--warm")
	if one.Runs != 1 || one.Warm || !oneWarm.Warm || one.Runtime != "pytorch" {
		t.Errorf("one call: runs %d, runtime %q, warm %v (with --warm %v); want 1, pytorch, false (true)", one.Runs, one.Runtime, one.Warm, oneWarm.Warm)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "estimate: runtime tensorrt, a call repeated back to back (L2 holds what the previous call left; --warm=false prices a first call)"},
		{[]string{"--warm=false"}, "estimate: runtime tensorrt, a first call (every weight and input read from DRAM; --warm prices"},
	} {
		args := append([]string{"calibrate", "--gpu", "H100", "--profile", prof, model}, c.args...)
		code, out, errs := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errs)
		}
		if !strings.Contains(out, c.want) {
			t.Errorf("%v: output lacks %q:\n%s", c.args, c.want, out)
		}
	}
}
