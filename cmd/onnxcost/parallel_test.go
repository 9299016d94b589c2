package main

import (
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/render"
)

// TestReportGPUsFlag: --gpus N says so in the header and judges fit per
// GPU; a count below 1 is a one-line usage error with no output.
func TestReportGPUsFlag(t *testing.T) {
	code, out, errs := runCLI(t, "report", "zoo:llama-70b", "--gpu", "h100-sxm", "--dtype", "fp16", "--gpus", "2", "--top", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(out, "\n")
	if len(lines) < 2 || !strings.Contains(lines[0], "tensor-parallel over 2 × H100") || !strings.HasPrefix(lines[1], "memory per GPU: peak 69.6 GB") || !strings.Contains(lines[1], ": fits") {
		t.Errorf("header:\n%s", strings.Join(lines[:min(2, len(lines))], "\n"))
	}
	code, out, errs = runCLI(t, "report", "zoo:alexnet", "--gpu", "t4", "--gpus", "0")
	if code != 2 || out != "" || !strings.Contains(errs, "--gpus 0") || strings.Count(strings.TrimRight(errs, "\n"), "\n") != 0 {
		t.Errorf("--gpus 0: exit %d, out %q, err %q", code, out, errs)
	}
}

// TestParallelEnergyIsPerGPU: under --gpus N a report's energy and power
// are one GPU's (as its time is the group's and its memory one GPU's),
// and every text that prints them says so and gives the group's energy:
// report's totals line, energy's header (its JSON "gpus"). Printed bare,
// 2-way ResNet-50's 3 J read as half the 6 J one A100 spends, where the
// pair spends 6 J.
func TestParallelEnergyIsPerGPU(t *testing.T) {
	args := []string{"zoo:resnet50", "--gpu", "A100", "--batch", "32", "--gpus", "2", "-q"}
	r := cliReport(t, args...)
	if r.Totals.GPUs != 2 {
		t.Fatalf("gpus %d", r.Totals.GPUs)
	}
	code, out, errs := runCLI(t, append([]string{"report"}, args...)...)
	want := "energy " + render.EnergyText(r.Totals)
	if code != 0 || !strings.Contains(out, want) || !strings.Contains(want, " per GPU (") || !strings.Contains(out, "W per GPU") {
		t.Errorf("report: exit %d (%s), no %q in:\n%s", code, errs, want, out)
	}
	var e struct {
		GPUs int `json:"gpus"`
	}
	runJSON(t, &e, append([]string{"energy", "--format", "json"}, args...)...)
	code, out, _ = runCLI(t, append([]string{"energy"}, args...)...)
	if e.GPUs != 2 || code != 0 || !strings.Contains(out, "On 2 GPUs: avg power and energy are one GPU's") {
		t.Errorf("energy: JSON gpus %d, text:\n%s", e.GPUs, out)
	}
	// A training step over 2 tensor-parallel GPUs on each of 2
	// data-parallel replicas runs on 4: its step's and epoch's energy.
	train := append(args, "--train", "--data-parallel", "2", "--samples", "1000")
	r = cliReport(t, train...)
	tr := r.Totals.Train
	code, out, errs = runCLI(t, append([]string{"report"}, train...)...)
	for _, want := range []string{
		"training step energy " + render.Joules(tr.StepEnergyJ) + " per GPU (" + render.Joules(4*tr.StepEnergyJ) + " for the 4)",
		render.Joules(tr.Epoch.EnergyJ) + " per GPU (" + render.Joules(4*tr.Epoch.EnergyJ) + " for the 4)",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("report --train --data-parallel 2: exit %d (%s), no %q in:\n%s", code, errs, want, out)
		}
	}
	runJSON(t, &e, append([]string{"energy", "--format", "json"}, train...)...)
	if e.GPUs != 4 {
		t.Errorf("energy --train --data-parallel 2 --gpus 2: JSON gpus %d, want 4", e.GPUs)
	}
}
