package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
)

// TestTrainReport: --train fills totals.train and nodes[].backward, its
// time_s is the step and peak_memory_bytes the training peak; fold-bn does
// not run (the BatchNormalization nodes stay).
func TestTrainReport(t *testing.T) {
	for _, dtype := range []string{"fp16", "fp32"} {
		t.Run(dtype, func(t *testing.T) { checkTrainReport(t, dtype) })
	}
}

// checkTrainReport checks one dtype: fp16 runs no Winograd, fp32 does on
// ResNet-18's 3×3 stride-1 layers, whose backward FLOPs are still the
// useful work (2·MACs per gradient), as forward_flops is the direct
// convolution's.
func checkTrainReport(t *testing.T, dtype string) {
	var r report.Report
	// The fused plan, where Winograd stands in for cuDNN's 3×3 kernels.
	runJSON(t, &r, "report", "zoo:resnet18", "--gpu", "A100-SXM4-40GB", "--dtype", dtype, "--train", "--batch", "8", "--plan", "fused", "--format", "json")
	if dtype == "fp32" && !strings.Contains(fmt.Sprint(opsOf(r)), "WinogradConv") {
		t.Fatalf("no WinogradConv in the fp32 plan: the case this checks is gone")
	}
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

// trainJSON runs report --train --format json with extra flags.
func trainJSON(t *testing.T, model string, args ...string) *report.Report {
	t.Helper()
	var r report.Report
	runJSON(t, &r, append([]string{"report", model, "--format", "json", "--train"}, args...)...)
	if r.Totals.Train == nil {
		t.Fatalf("%s %v: no totals.train", model, args)
	}
	return &r
}

// TestTrainComposes: a training step under a power cap or an SM clock
// lock prices its backward and optimizer kernels at the lowered clock as
// it does the forward's (every phase slower, memory unchanged); under
// --gpus N the backward's GEMMs are split as the forward's, each forward
// all-reduce has its backward twin (communication doubles), and one GPU
// holds its share of the split weights, gradients and optimizer state.
// Without --runtime the step runs under PyTorch eager; --runtime graph
// replays it with no host dispatch.
func TestTrainComposes(t *testing.T) {
	bert := fixture(t, "bert_base.onnx")
	base := trainJSON(t, bert, "--gpu", "A100-SXM4-40GB")
	if base.Runtime == nil || base.Runtime.Name != "pytorch" {
		t.Errorf("--train runtime %+v, want pytorch by default", base.Runtime)
	}
	// Under eager PyTorch a batch-1 BERT step is host-bound (the
	// autograd engine's issue is slower than the kernels), so a lowered
	// clock shows in the step only without host dispatch.
	replay := trainJSON(t, bert, "--gpu", "A100-SXM4-40GB", "--runtime", "graph")
	for _, ctl := range [][]string{{"--power-cap", "150"}, {"--sm-clock", "900"}} {
		r := trainJSON(t, bert, append([]string{"--gpu", "A100-SXM4-40GB", "--runtime", "graph"}, ctl...)...)
		a, b := r.Totals.Train, replay.Totals.Train
		if !(a.ForwardTimeS > b.ForwardTimeS && a.BackwardTimeS > b.BackwardTimeS && a.StepTimeS > b.StepTimeS) || a.Memory.PeakBytes != b.Memory.PeakBytes {
			t.Errorf("%v: forward %v backward %v step %v vs uncapped %v %v %v", ctl, a.ForwardTimeS, a.BackwardTimeS, a.StepTimeS, b.ForwardTimeS, b.BackwardTimeS, b.StepTimeS)
		}
	}
	var inf report.Report
	runJSON(t, &inf, "report", bert, "--format", "json", "--gpu", "A100-SXM4-40GB", "--gpus", "2")
	tp := trainJSON(t, bert, "--gpu", "A100-SXM4-40GB", "--gpus", "2")
	a, b := tp.Totals.Train, base.Totals.Train
	if math.Abs(tp.Totals.CommunicationTimeS-2*inf.Totals.CommunicationTimeS) > 1e-12 || inf.Totals.CommunicationTimeS <= 0 {
		t.Errorf("training communication %v, want twice the forward's %v (one backward all-reduce each)", tp.Totals.CommunicationTimeS, inf.Totals.CommunicationTimeS)
	}
	if !(a.BackwardTimeS < b.BackwardTimeS) || a.BackwardFLOPs != b.BackwardFLOPs {
		t.Errorf("--gpus 2 backward %v (flops %v), one GPU %v (flops %v)", a.BackwardTimeS, a.BackwardFLOPs, b.BackwardTimeS, b.BackwardFLOPs)
	}
	if !(a.Memory.WeightsBytes < b.Memory.WeightsBytes && a.Memory.OptimizerStateBytes < b.Memory.OptimizerStateBytes) ||
		tp.Totals.PerGPUPeakMemoryBytes != a.Memory.PeakBytes || tp.Totals.PeakMemoryBytes != base.Totals.PeakMemoryBytes {
		t.Errorf("--gpus 2 memory %+v, per-GPU %v, peak %v (one GPU %v)", a.Memory, tp.Totals.PerGPUPeakMemoryBytes, tp.Totals.PeakMemoryBytes, base.Totals.PeakMemoryBytes)
	}
	g := trainJSON(t, bert, "--gpu", "A100-SXM4-40GB", "--runtime", "graph").Totals.Train
	if g.HostWaitS != 0 || b.HostWaitS <= 0 {
		t.Errorf("host wait: graph %v, pytorch %v", g.HostWaitS, b.HostWaitS)
	}
}

// TestGradAccumFlag: --grad-accum and --data-parallel need --train and a
// count ≥ 1.
func TestGradAccumFlag(t *testing.T) {
	for _, args := range [][]string{{"--grad-accum", "4"}, {"--grad-accum", "0"}, {"--train", "--grad-accum", "0"}, {"--data-parallel", "2"}, {"--data-parallel", "0"}, {"--train", "--data-parallel", "-1"}} {
		code, out, errs := runCLI(t, append([]string{"report", "zoo:alexnet", "--gpu", "T4"}, args...)...)
		if code != 2 || out != "" || !strings.Contains(errs, args[len(args)-2]) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
}

// TestSweepTrainMemoryChart: sweep takes several models and --chart
// memory draws their training peak against batch on one chart; each row
// names its model, knee and max_batch are keyed "MODEL on GPU", and every
// model's rows are what a one-model sweep gives.
func TestSweepTrainMemoryChart(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "m.svg")
	var two, one sweepJSON
	runJSON(t, &two, "sweep", "zoo:alexnet", "zoo:vgg11", "--gpu", "T4", "--train", "--batch", "1,2", "--find-max-batch", "--chart", "memory", "-o", svg, "--format", "json")
	runJSON(t, &one, "sweep", "zoo:vgg11", "--gpu", "T4", "--train", "--batch", "1,2", "--format", "json")
	if len(two.Rows) != 4 || two.Rows[0].Model != "zoo:alexnet" || two.Rows[3].Model != "zoo:vgg11" {
		t.Fatalf("rows %+v", two.Rows)
	}
	if two.Rows[3].PeakMemoryBytes != one.Rows[1].PeakMemoryBytes || two.Rows[3].TimeS != one.Rows[1].TimeS {
		t.Errorf("vgg11 batch 2 in the two-model sweep %+v, alone %+v", two.Rows[3], one.Rows[1])
	}
	if _, ok := two.MaxBatch["zoo:vgg11 on T4"]; !ok || two.Knee["zoo:alexnet on T4"] == nil {
		t.Errorf("max_batch %v knee %v", two.MaxBatch, two.Knee)
	}
	data, err := os.ReadFile(svg)
	if err != nil || !bytes.Contains(data, []byte("estimated peak memory (GB)")) || !bytes.Contains(data, []byte("zoo:vgg11")) {
		t.Errorf("chart: %v, memory axis or legend missing", err)
	}
	code, _, errs := runCLI(t, "sweep", "zoo:alexnet", "--gpu", "T4", "--chart", "bytes", "-o", svg)
	if code != 2 || !strings.Contains(errs, "--chart") {
		t.Errorf("--chart bytes: exit %d, %s", code, errs)
	}
}

// opsOf lists a report's node op types.
func opsOf(r report.Report) []string {
	ops := make([]string, len(r.Nodes))
	for i, n := range r.Nodes {
		ops[i] = n.OpType
	}
	return ops
}

// TestTrainFusedGeluKeepsPreActivation: a GEMM with a fused GELU keeps its
// pre-activation for the backward (GELU's derivative reads its input, as
// eager PyTorch keeps it and cuBLASLt's GELU_AUX epilogue writes it), one
// tensor of the output's size beyond what the plan's values hold; a fused
// ReLU reads its output and keeps nothing extra.
func TestTrainFusedGeluKeepsPreActivation(t *testing.T) {
	var r report.Report
	// The fused plan's GEMM epilogues (PyTorch eager runs the GELU alone).
	runJSON(t, &r, "report", "../../testdata/models/bert_base.onnx", "--gpu", "A100", "--train", "--batch", "2", "--plan", "fused", "--format", "json")
	seen := 0
	for _, n := range r.Nodes {
		if n.OpType != "FusedGemm" || n.Backward == nil || !strings.Contains(n.Backward.Kernels, "Gelu-bwd") {
			continue
		}
		seen++
		out := 4.0 // fp32
		for _, d := range n.Outputs[0].Shape {
			out *= float64(d.Value)
		}
		if n.Backward.SavedBytes != out {
			t.Errorf("%s: saved_bytes %v, want the pre-activation's %v", n.Name, n.Backward.SavedBytes, out)
		}
	}
	if seen == 0 {
		t.Fatal("no FusedGemm with a GELU epilogue: the case this checks is gone")
	}
}

// TestTrainEpochGradAccum: with --grad-accum K an epoch of N samples is
// ceil(N / (K × batch)) optimizer steps, each the report's step (which
// already runs its K micro-batches), in report and in energy; counting
// ceil(N / batch) steps made the epoch K times too long.
func TestTrainEpochGradAccum(t *testing.T) {
	args := []string{"zoo:resnet18", "--gpu", "A100-SXM4-40GB", "--train", "--batch", "8", "--samples", "1000"}
	for _, c := range []struct {
		k              string
		perStep, steps int64
	}{{"1", 8, 125}, {"4", 32, 32}} {
		r := trainJSON(t, args[0], append(args[1:], "--grad-accum", c.k)...)
		tr := r.Totals.Train
		e := tr.Epoch
		if e == nil || e.SamplesPerStep != c.perStep || e.Steps != c.steps || !relClose(e.TimeS, float64(c.steps)*tr.StepTimeS, 1e-12) || !relClose(e.EnergyJ, float64(c.steps)*tr.StepEnergyJ, 1e-12) {
			t.Errorf("--grad-accum %s: epoch %+v of step %g s, %g J; want %d steps of %d samples", c.k, e, tr.StepTimeS, tr.StepEnergyJ, c.steps, c.perStep)
		}
		res, _ := runEnergyJSON(t, append(args, "--grad-accum", c.k, "--power-cap", "250,400")...)
		if et := res.Train; et == nil || et.SamplesPerStep != c.perStep || et.StepsPerEpoch != c.steps || fmt.Sprint(et.GradAccum) != c.k {
			t.Errorf("energy --grad-accum %s: train %+v; want %d steps of %d samples", c.k, et, c.steps, c.perStep)
		}
		for _, row := range res.Rows {
			if !relClose(row.EpochTimeS, float64(c.steps)*row.TimeS, 1e-12) {
				t.Errorf("energy --grad-accum %s at %g W: epoch %g s, step %g s; want %d steps", c.k, row.PowerCapW, row.EpochTimeS, row.TimeS, c.steps)
			}
		}
	}
	code, out, errs := runCLI(t, append([]string{"report"}, append(args, "--grad-accum", "4")...)...)
	if code != 0 || !strings.Contains(out, "epoch of 1000 samples = 32 optimizer steps of 32 (4 micro-batches of 8)") {
		t.Errorf("exit %d, stderr %q; the text's epoch line does not say 32 optimizer steps of 4 micro-batches of 8:\n%s", code, errs, out)
	}
}

// TestTrainOnlyFlagsNeedTrain: a training-only flag given without
// --train (even at its default value) is a one-line usage error, exit 2,
// naming the flag, on every command that takes it; it used to be
// silently ignored.
func TestTrainOnlyFlagsNeedTrain(t *testing.T) {
	for _, cmd := range [][]string{
		{"report", "zoo:alexnet", "--gpu", "T4"},
		{"energy", "zoo:alexnet", "--gpu", "T4", "--power-cap", "70"},
		{"sweep", "zoo:alexnet", "--gpu", "T4", "--batch", "1,2"},
	} {
		for _, flag := range [][]string{{"--optimizer", "sgd"}, {"--optimizer", "adam"}, {"--checkpoint", "sqrt"}, {"--checkpoint", "none"}, {"--grad-accum", "1"}, {"--data-parallel", "1"}} {
			args := append(append([]string{}, cmd...), flag...)
			code, out, errs := runCLI(t, args...)
			if code != 2 || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, flag[0]+" "+flag[1]+" needs --train") {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line naming %s", args, code, out, errs, flag[0])
			}
		}
	}
}

// TestTrainWarnsOnEvalExport: --train on the shipped ResNet-50, an
// eval-mode export whose BatchNormalizations were folded into the
// convolutions' biases, warns on stderr (text) and in the JSON warnings,
// with the export advice whole; the zoo's ResNet-50, which keeps its 53
// BatchNormalizations, does not warn.
func TestTrainWarnsOnEvalExport(t *testing.T) {
	const advice = "export with torch.onnx.export(..., training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)"
	folded := fixture(t, "resnet50.onnx")
	code, _, errs := runCLI(t, "report", folded, "--gpu", "V100", "--train", "--batch", "1")
	if code != 0 || !strings.Contains(errs, "inference-mode export") || !strings.Contains(errs, advice) {
		t.Errorf("text: exit %d, stderr %q; want the inference-export warning with the advice", code, errs)
	}
	has := func(r *report.Report) bool {
		for _, w := range r.Warnings {
			if strings.Contains(w, "inference-mode export") && strings.HasSuffix(w, advice) {
				return true
			}
		}
		return false
	}
	if r := trainJSON(t, folded, "--gpu", "V100", "--batch", "1"); !has(r) {
		t.Errorf("JSON warnings %q lack the inference-export warning", r.Warnings)
	}
	var inf report.Report
	runJSON(t, &inf, "report", folded, "--gpu", "V100", "--batch", "1", "--format", "json")
	if has(&inf) {
		t.Error("an inference estimate warns about training")
	}
	zoo := trainJSON(t, "zoo:resnet50", "--gpu", "V100", "--batch", "1")
	bn := 0
	for _, n := range zoo.Nodes {
		if n.OpType == "BatchNormalization" {
			bn++
		}
	}
	if bn != 53 || has(zoo) {
		t.Errorf("zoo:resnet50: %d BatchNormalization nodes, warnings %q; want 53 and no inference-export warning", bn, zoo.Warnings)
	}
}
