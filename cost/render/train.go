package render

import (
	"fmt"
	"io"

	"github.com/onnxcost/onnxcost/cost/report"
)

// Training renderings (report --train): the layer-wise table of forward
// and backward time, and the step's memory breakdown.

// trainFitLine is FitLine for a training step: the device peak (live
// tensors over the step plus the PyTorch runtime floor) and its parts.
func trainFitLine(r *report.Report) string {
	t := r.Totals
	m := t.Train.Memory
	parts := fmt.Sprintf("%s; weights %s, master copies %s, gradients %s, optimizer state %s, activations kept for backward %s, workspace %s, CUDA context %s; tensor peak in %s",
		memoryViews(m), Bytes(m.WeightsBytes), Bytes(m.MasterWeightsBytes), Bytes(m.GradientsBytes), Bytes(m.OptimizerStateBytes),
		Bytes(m.ActivationsBytes), Bytes(m.WorkspaceBytes), Bytes(m.RuntimeBytes), m.PeakPhase)
	switch {
	case t.MemoryLimitBytes <= 0:
		return fmt.Sprintf("training memory: peak (nvidia-smi view) %s (%s); the GPU's memory size is unknown", Bytes(m.PeakBytes), parts)
	case t.Fits:
		return fmt.Sprintf("training memory: peak (nvidia-smi view) %s of %s: fits (%s of memory; %s)", Bytes(m.PeakBytes), Bytes(t.MemoryLimitBytes), Percent(m.PeakBytes/t.MemoryLimitBytes), parts)
	}
	return fmt.Sprintf("training memory: DOES NOT FIT: peak (nvidia-smi view) %s exceeds the GPU's %s (%s)", Bytes(m.PeakBytes), Bytes(t.MemoryLimitBytes), parts)
}

// memoryViews names the three training memory views (report.TrainMemory);
// the peak the report checks against the GPU is the last.
func memoryViews(m report.TrainMemory) string {
	return fmt.Sprintf("live tensors %s · caching-allocator reserve %s · nvidia-smi %s (reserve + CUDA context)",
		Bytes(m.TensorPeakBytes), Bytes(m.AllocatorReservedBytes), Bytes(m.NvidiaSMIBytes))
}

// ratio formats backward/forward.
func ratio(b, f float64) string {
	if f <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", b/f)
}

// l2Fit labels whether the forward kernel's working set fits in L2, the
// time model's estimate (NodeCost.MemLevel).
func l2Fit(n report.NodeCost) string {
	switch n.MemLevel {
	case "l2":
		return "yes"
	case "hbm":
		return "no"
	}
	return "-"
}

// trainText writes the layer-wise training table: per node forward time,
// backward time, their ratio, the forward's bound, whether its working set
// fits in L2 (an estimate) and its share of the step.
func trainText(w io.Writer, r *report.Report, opt Options) error {
	tr := r.Totals.Train
	shown, rest := selectNodes(r, opt.Top)
	t := newTable(len(shown)+2, []string{"node", "op", "output", "forward", "backward", "bwd/fwd", "bound", "L2 fit (est.)", "bwd kernels", "share of step"},
		false, false, false, true, true, true, false, false, false, true)
	row := func(n report.NodeCost) (float64, float64) {
		var b float64
		if n.Backward != nil {
			b = n.Backward.TimeS
		}
		return n.TimeS, b
	}
	for _, n := range shown {
		f, b := row(n)
		k := "-"
		if n.Backward != nil && n.Backward.Kernels != "" {
			k = n.Backward.Kernels
		}
		t.add(Clean(n.Name), Clean(opName(&n)), Clean(outShape(&n)), Seconds(f), Seconds(b), ratio(b, f), dash(n.Bound), l2Fit(n), Clean(k), share(f+b, tr.StepTimeS))
	}
	if len(rest) > 0 {
		var rf, rb float64
		for _, n := range rest {
			f, b := row(n)
			rf, rb = rf+f, rb+b
		}
		t.add(fmt.Sprintf("… %d more nodes", len(rest)), "", "", Seconds(rf), Seconds(rb), ratio(rb, rf), "", "", "", share(rf+rb, tr.StepTimeS))
	}
	t.add("total (with loss, training-only forward work)", "", "", Seconds(tr.ForwardTimeS), Seconds(tr.BackwardTimeS), ratio(tr.BackwardTimeS, tr.ForwardTimeS), "", "", "", share(tr.ForwardTimeS+tr.BackwardTimeS, tr.StepTimeS))
	if err := t.write(w); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%s\n", TrainStepLine(tr))
	trainEnergyText(w, tr)
	if tr.MixedPrecision {
		fmt.Fprintln(w, "mixed precision: compute copies of the weights and gradients at "+r.DType+"; fp32 master weights and optimizer state")
	}
	for _, n := range tr.Notes {
		fmt.Fprintln(w, "note: "+Clean(n))
	}
	fmt.Fprintln(w, "L2 fit (est.): whether the forward kernel's working set fits in the GPU's L2, as the time model assumes; not measured.")
	writeUnsupported(w, r)
	return nil
}

// TrainStepLine sums up a training step in one line: its time by phase,
// FLOPs by phase and memory in its three views.
func TrainStepLine(tr *report.Train) string {
	recompute := ""
	if tr.RecomputeTimeS > 0 {
		recompute = fmt.Sprintf(", recompute (checkpoint %s) %s", tr.Checkpoint, Seconds(tr.RecomputeTimeS))
	}
	accum := ""
	if tr.GradAccum > 1 {
		accum = fmt.Sprintf(" (%d micro-batches, gradient adds %s)", tr.GradAccum, Seconds(tr.AccumulateTimeS))
	}
	return fmt.Sprintf("training step%s %s: forward %s%s, backward %s, optimizer (%s) %s · forward %s, backward %s, optimizer %s · memory: %s",
		accum, Seconds(tr.StepTimeS), Seconds(tr.ForwardTimeS), recompute, Seconds(tr.BackwardTimeS), tr.Optimizer, Seconds(tr.OptimizerTimeS),
		FLOPs(tr.ForwardFLOPs), FLOPs(tr.BackwardFLOPs), FLOPs(tr.OptimizerFLOPs),
		memoryViews(tr.Memory))
}
