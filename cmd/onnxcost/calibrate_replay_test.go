package main

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestCalibrateReplay: --replay takes each kernel's time from a
// CUDA-graph replay of the profiled eager call, keeps the eager call's
// attribution to nodes, and prices the replay's runtime (graph) unless
// --runtime says otherwise; a replay of another call is an exit-2 error.
func TestCalibrateReplay(t *testing.T) {
	dir := filepath.Join(repoRoot, "calib", "profile", "testdata", "kineto_h200")
	trace := filepath.Join(dir, "llama_hf_small_fp16_b8.json.gz")
	tmp := t.TempDir()
	lm := gunzipTo(t, filepath.Join(repoRoot, "testdata", "saved", "llama_hf_small.onnx.gz"), tmp)
	f, err := os.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Ph, Cat, Name string
			Ts, Dur       float64
		} `json:"traceEvents"`
	}
	if err := json.NewDecoder(zr).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	ks := doc.TraceEvents[:0]
	for _, e := range doc.TraceEvents {
		if e.Ph == "X" && (e.Cat == "kernel" || e.Cat == "gpu_memcpy" || e.Cat == "gpu_memset") {
			ks = append(ks, e)
		}
	}
	sort.SliceStable(ks, func(i, j int) bool { return ks[i].Ts < ks[j].Ts })
	var b strings.Builder
	b.WriteString("spec,i,kernel,us\n")
	for i, k := range ks {
		fmt.Fprintf(&b, "llama:fp16:8:graph,%d,%q,%.4f\n", i, k.Name, 0.75*k.Dur)
	}
	replay := filepath.Join(tmp, "replay.csv")
	if err := os.WriteFile(replay, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	type cmp struct {
		Runtime  string  `json:"runtime"`
		Replayed bool    `json:"replayed"`
		MatchedS float64 `json:"matched_s"`
	}
	args := []string{"calibrate", "--gpu", "H200", "--profile", trace, lm, "--dtype", "fp16", "--batch", "8", "--format", "json"}
	var eager, replayed cmp
	runJSON(t, &eager, args...)
	runJSON(t, &replayed, append(args, "--replay", replay)...)
	if !replayed.Replayed || replayed.Runtime != "graph" || eager.Runtime != "pytorch" {
		t.Errorf("replayed %v runtime %q (eager %q): want true, graph (pytorch)", replayed.Replayed, replayed.Runtime, eager.Runtime)
	}
	if math.Abs(replayed.MatchedS-0.75*eager.MatchedS) > 1e-9 {
		t.Errorf("matched %g s replayed, %g s eager: want 0.75 of it", replayed.MatchedS, eager.MatchedS)
	}
	code, out, errs := runCLI(t, "calibrate", "--gpu", "H200", "--profile", trace, lm, "--dtype", "fp16", "--batch", "8", "--replay", replay)
	if code != 0 || !strings.Contains(out, "(pytorch, kernels timed in a CUDA-graph replay)") || !strings.Contains(out, "estimate: runtime graph") {
		t.Errorf("exit %d, %s\n%s", code, errs, out)
	}
	bad := filepath.Join(tmp, "bad.csv")
	if err := os.WriteFile(bad, []byte("kernel,us\nk,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, "calibrate", "--gpu", "H200", "--profile", trace, lm, "--replay", bad)
	if code != 2 || out != "" || !strings.Contains(errs, "has 1 kernels, the eager call") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("a replay of another call: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// TestCalibrateRefusesCalibration: calibrate compares and fits the
// estimate before any calibration, so --calibration (which every cost
// command takes) is refused with one line and exit 2, where it was taken
// and silently not applied.
func TestCalibrateRefusesCalibration(t *testing.T) {
	trace := filepath.Join("..", "..", "calib", "profile", "testdata", "ort_transformer.json")
	model := filepath.Join("..", "..", "calib", "profile", "testdata", "models", "transformer.onnx")
	code, out, errs := runCLI(t, "calibrate", "--gpu", "A100", "--profile", trace, model, "--calibration", "any.yaml")
	if code != 2 || out != "" || !strings.Contains(errs, "--calibration") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
}
