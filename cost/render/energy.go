package render

import (
	"fmt"
	"io"

	"github.com/onnxcost/onnxcost/cost/report"
)

// trainEnergyText writes a training step's energy by phase and, with
// --samples, the epoch's time and energy. They are one GPU's: a step on
// several (gpus, GPUsRunning) says so and gives all of theirs.
func trainEnergyText(w io.Writer, tr *report.Train, gpus int) {
	avg := 0.0
	if tr.StepTimeS > 0 {
		avg = tr.StepEnergyJ / tr.StepTimeS
	}
	recompute := ""
	if tr.RecomputeEnergyJ > 0 {
		recompute = ", recompute " + Joules(tr.RecomputeEnergyJ)
	}
	extra := ""
	if tr.GradAccum > 1 {
		extra += fmt.Sprintf(" (×%d micro-batches), gradient adds %s", tr.GradAccum, Joules(tr.AccumulateEnergyJ))
	}
	if tr.WaitEnergyJ > 0 {
		extra += ", idle while waiting " + Joules(tr.WaitEnergyJ)
	}
	fmt.Fprintf(w, "training step energy %s: forward %s%s, backward %s%s, optimizer %s · average %.1f W%s · EDP %.4g J·s\n",
		allGPUs(tr.StepEnergyJ, gpus), Joules(tr.ForwardEnergyJ), recompute, Joules(tr.BackwardEnergyJ), extra, Joules(tr.OptimizerEnergyJ), avg, perGPU(gpus), tr.StepEnergyJ*tr.StepTimeS)
	if line := EpochLine(tr, gpus); line != "" {
		fmt.Fprintln(w, line)
	}
}

// EpochStepMakeup spells out what an optimizer step of an epoch consumes
// when it is more than one batch (" (4 micro-batches of 32)", " (2
// replicas × 4 micro-batches of 32)"), so that the samples per step can
// be checked against --batch; "" otherwise.
func EpochStepMakeup(tr *report.Train) string {
	e := tr.Epoch
	k, n := max(tr.GradAccum, 1), max(tr.DataParallel, 1)
	if e == nil || k*n == 1 {
		return ""
	}
	micro := e.SamplesPerStep / int64(k*n)
	s := ""
	if n > 1 {
		s = fmt.Sprintf("%d replicas × ", n)
	}
	if k > 1 {
		return fmt.Sprintf(" (%s%d micro-batches of %d)", s, k, micro)
	}
	return fmt.Sprintf(" (%sbatch %d)", s, micro)
}

// EpochLine is --samples' epoch as text: its steps, time and energy (one
// GPU's of gpus, beside all of theirs); "" without an epoch.
func EpochLine(tr *report.Train, gpus int) string {
	e := tr.Epoch
	if e == nil {
		return ""
	}
	return fmt.Sprintf("epoch of %d samples = %d optimizer steps of %d%s: %s, %s · EDP %.4g J·s",
		e.Samples, e.Steps, e.SamplesPerStep, EpochStepMakeup(tr), Seconds(e.TimeS), allGPUs(e.EnergyJ, gpus), e.EDPJS)
}

// allGPUs is one GPU's energy j of a step run on gpus GPUs: as is on
// one, else marked per GPU beside all of theirs ("15.1 J per GPU (60.4 J
// for the 4)").
func allGPUs(j float64, gpus int) string {
	if gpus > 1 {
		return fmt.Sprintf("%s per GPU (%s for the %d)", Joules(j), Joules(j*float64(gpus)), gpus)
	}
	return Joules(j)
}
