package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCalibrateProfileWarm: calibrate --profile says how the estimate it
// compares was priced, and --warm prices the profiled call as one timed
// after others like it, as a measurements table's warm column does: the
// small CNN of the TensorRT fixture keeps its weights in an H100's L2
// between calls, so its warm estimate is below the first call's, and the
// text and JSON say which one is shown.
func TestCalibrateProfileWarm(t *testing.T) {
	dir := filepath.Join(repoRoot, "calib", "profile", "testdata")
	prof, model := filepath.Join(dir, "trt_cnn_profile.json"), filepath.Join(dir, "models", "cnn.onnx")
	type cmp struct {
		Runtime    string  `json:"runtime"`
		Warm       bool    `json:"warm"`
		PredictedS float64 `json:"predicted_s"`
	}
	var cold, warm cmp
	runJSON(t, &cold, "calibrate", "--gpu", "H100", "--profile", prof, model, "--format", "json")
	runJSON(t, &warm, "calibrate", "--gpu", "H100", "--profile", prof, model, "--format", "json", "--warm")
	if cold.Warm || !warm.Warm || cold.Runtime != "tensorrt" || warm.Runtime != "tensorrt" {
		t.Errorf("JSON runtime/warm: cold %q %v, warm %q %v; want tensorrt, false and true", cold.Runtime, cold.Warm, warm.Runtime, warm.Warm)
	}
	if !(warm.PredictedS > 0 && warm.PredictedS < cold.PredictedS) {
		t.Errorf("predicted %g s warm, %g s cold: want the warm call cheaper", warm.PredictedS, cold.PredictedS)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "estimate: runtime tensorrt, a first call (every weight and input read from DRAM; --warm prices"},
		{[]string{"--warm"}, "estimate: runtime tensorrt, a call repeated back to back (L2 holds what the previous call left)"},
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
