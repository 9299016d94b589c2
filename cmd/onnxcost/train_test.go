package main

import (
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
)

// TestTrainReport: --train fills totals.train and nodes[].backward, its
// time_s is the step and peak_memory_bytes the training peak; fold-bn does
// not run (the BatchNormalization nodes stay).
func TestTrainReport(t *testing.T) {
	// fp16: no Winograd. A Winograd layer's backward kernels count the
	// transformed products they execute, while forward_flops is the
	// model's arithmetic, so the 2x ratio holds only without it.
	var r report.Report
	runJSON(t, &r, "report", "zoo:resnet18", "--gpu", "A100-SXM4-40GB", "--dtype", "fp16", "--train", "--batch", "8", "--format", "json")
	tr := r.Totals.Train
	if tr == nil {
		t.Fatal("no totals.train")
	}
	if r.Totals.TimeS != tr.StepTimeS || r.Totals.PeakMemoryBytes != tr.Memory.PeakBytes {
		t.Errorf("totals.time_s %v / peak %v are not the step's %v / %v", r.Totals.TimeS, r.Totals.PeakMemoryBytes, tr.StepTimeS, tr.Memory.PeakBytes)
	}
	bn, back := 0, 0
	for _, n := range r.Nodes {
		if n.OpType == "BatchNormalization" {
			bn++
		}
		if n.Backward != nil {
			back++
		}
	}
	if bn == 0 {
		t.Error("BatchNormalization folded under --train")
	}
	if back == 0 {
		t.Error("no node has a backward")
	}
	if tr.BackwardFLOPs < 1.8*tr.ForwardFLOPs || tr.BackwardFLOPs > 2.1*tr.ForwardFLOPs {
		t.Errorf("backward/forward FLOPs %v, want ~2 (first layer has no data gradient)", tr.BackwardFLOPs/tr.ForwardFLOPs)
	}
}

// TestTrainBadOptimizer: a usage error, exit 2, nothing on stdout.
func TestTrainBadOptimizer(t *testing.T) {
	code, out, errs := runCLI(t, "report", "zoo:alexnet", "--gpu", "T4", "--train", "--optimizer", "rmsprop")
	if code != 2 || out != "" || !strings.Contains(errs, "--optimizer") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// TestTrainStepUnderRuntime: with a runtime profile, time_s is still the
// training step (the profile's per-call pricing once overwrote it with the
// forward pass's).
func TestTrainStepUnderRuntime(t *testing.T) {
	var r report.Report
	runJSON(t, &r, "report", "zoo:resnet18", "--gpu", "A100-SXM4-40GB", "--train", "--runtime", "pytorch", "--batch", "8", "--format", "json")
	if r.Totals.Train == nil || r.Totals.TimeS != r.Totals.Train.StepTimeS {
		t.Fatalf("time_s %v is not the step's %+v", r.Totals.TimeS, r.Totals.Train)
	}
}
