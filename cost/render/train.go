package render

import (
	"encoding/csv"
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
	copies := ""
	if m.LayoutCopyBytes > 0 {
		copies = ", cuDNN's NHWC copies at the peak " + Bytes(m.LayoutCopyBytes)
	}
	parts := fmt.Sprintf("%s; weights %s, master copies %s, gradients %s, optimizer state %s, activations kept for backward %s, workspace %s%s, CUDA context %s; tensor peak in %s",
		memoryViews(m), Bytes(m.WeightsBytes), Bytes(m.MasterWeightsBytes), Bytes(m.GradientsBytes), Bytes(m.OptimizerStateBytes),
		Bytes(m.ActivationsBytes), Bytes(m.WorkspaceBytes), copies, Bytes(m.RuntimeBytes), m.PeakPhase)
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
	trainEnergyText(w, tr, GPUsRunning(r.Totals))
	if line := IntervalText(r); line != "" {
		fmt.Fprintln(w, "step "+line)
	}
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

// phase is one part of a training step as the CSV and Markdown show it:
// its time, FLOPs, launches and energy over one optimizer step.
type phase struct {
	name                    string
	timeS, flops, launches  float64
	energyJ                 float64
	perMicroBatch, optional bool
}

// stepPhases splits a training step into the phases whose times add up
// to Train.StepTimeS (train.price and train.dispatchStep): forward,
// recompute and backward once per micro-batch, then the gradient adds,
// the exposed all-reduce, the optimizer and the device's wait on the host.
func stepPhases(r *report.Report) []phase {
	tr := r.Totals.Train
	var fl, bl float64
	for i := range r.Nodes {
		n := &r.Nodes[i]
		fl += n.Launches
		if n.Backward != nil {
			bl += n.Backward.Launches
		}
	}
	fr, br := lossRest(r)
	if restShown(fr, tr) {
		fl += fr.launches
	}
	if restShown(br, tr) {
		bl += br.launches
	}
	return []phase{
		{name: "forward", timeS: tr.ForwardTimeS, flops: tr.ForwardFLOPs, launches: fl, energyJ: tr.ForwardEnergyJ, perMicroBatch: true},
		{name: "recompute", timeS: tr.RecomputeTimeS, energyJ: tr.RecomputeEnergyJ, perMicroBatch: true, optional: true},
		{name: "backward", timeS: tr.BackwardTimeS, flops: tr.BackwardFLOPs, launches: bl, energyJ: tr.BackwardEnergyJ, perMicroBatch: true},
		{name: "accumulate", timeS: tr.AccumulateTimeS, energyJ: tr.AccumulateEnergyJ, optional: true},
		{name: "all_reduce", timeS: tr.GradAllReduceExposedS, optional: true},
		{name: "optimizer", timeS: tr.OptimizerTimeS, flops: tr.OptimizerFLOPs, launches: tr.OptimizerLaunches, energyJ: tr.OptimizerEnergyJ},
		{name: "host_wait", timeS: tr.HostWaitS, energyJ: tr.WaitEnergyJ, optional: true},
	}
}

// lossRest is the forward and backward work no node row carries: the
// loss head a graph without a loss gets (one kernel each way), and
// whatever else the phase totals hold beyond the nodes' sums.
func lossRest(r *report.Report) (fwd, bwd phase) {
	tr := r.Totals.Train
	fwd = phase{name: "forward", timeS: tr.ForwardTimeS, flops: tr.ForwardFLOPs, energyJ: tr.ForwardEnergyJ, launches: 1}
	bwd = phase{name: "backward", timeS: tr.BackwardTimeS, flops: tr.BackwardFLOPs, energyJ: tr.BackwardEnergyJ, launches: 1}
	for i := range r.Nodes {
		n := &r.Nodes[i]
		fwd.timeS -= n.TimeS
		fwd.flops -= n.FLOPs
		fwd.energyJ -= n.EnergyJ
		if b := n.Backward; b != nil {
			fwd.timeS -= b.ForwardExtraS
			fwd.energyJ -= b.ForwardExtraJ
			bwd.timeS -= b.TimeS
			bwd.flops -= b.FLOPs
			bwd.energyJ -= b.EnergyJ
		}
	}
	return fwd, bwd
}

// restShown reports whether a lossRest is work of its own rather than
// the rounding left between the phase total and the nodes' sum.
func restShown(p phase, tr *report.Train) bool { return p.timeS > 1e-9*tr.StepTimeS }

// accumOf is the micro-batches per optimizer step.
func accumOf(tr *report.Train) float64 { return float64(max(tr.GradAccum, 1)) }

// lossRestName names the CSV rows of lossRest.
const lossRestName = "(loss head and work outside the nodes)"

// trainCSV writes a training step one row per node per phase (forward,
// backward) plus a row per step-level phase, in base units. Each row is
// its cost within one optimizer step: under gradient accumulation the
// forward and backward rows count every micro-batch, so time_s sums to
// the report's train.step_time_s and energy_j to train.step_energy_j.
func trainCSV(w io.Writer, r *report.Report, opt Options) error {
	cw := csv.NewWriter(w)
	f := csvNumber
	tr := r.Totals.Train
	k := accumOf(tr)
	cw.Write([]string{"phase", "name", "op_type", "domain", "kernels", "flops", "bytes_read", "bytes_written", "launches", "time_s", "energy_j"})
	row := func(ph, name, op, domain, kernels string, flops, read, written, launches, timeS, energyJ float64) {
		cw.Write([]string{ph, Clean(name), Clean(op), Clean(domain), Clean(kernels), f(flops), f(read), f(written), f(launches), f(timeS), f(energyJ)})
	}
	shown, _ := selectNodes(r, opt.Top)
	for _, n := range shown {
		t, e := n.TimeS, n.EnergyJ
		if n.Backward != nil {
			t += n.Backward.ForwardExtraS
			e += n.Backward.ForwardExtraJ
		}
		row("forward", n.Name, n.OpType, n.Domain, "", k*n.FLOPs, k*n.BytesRead, k*n.BytesWritten, k*n.Launches, k*t, k*e)
	}
	fr, br := lossRest(r)
	if restShown(fr, tr) {
		row("forward", lossRestName, "", "", "", k*fr.flops, 0, 0, k*fr.launches, k*fr.timeS, k*fr.energyJ)
	}
	if tr.RecomputeTimeS > 0 {
		row("recompute", "(checkpoint "+tr.Checkpoint+")", "", "", "", 0, 0, 0, 0, k*tr.RecomputeTimeS, k*tr.RecomputeEnergyJ)
	}
	if restShown(br, tr) {
		row("backward", lossRestName, "", "", "", k*br.flops, 0, 0, k*br.launches, k*br.timeS, k*br.energyJ)
	}
	// Backward runs in reverse node order, as autograd issues it.
	for i := len(shown) - 1; i >= 0; i-- {
		n := &shown[i]
		if b := n.Backward; b != nil {
			row("backward", n.Name, n.OpType, n.Domain, b.Kernels, k*b.FLOPs, k*b.BytesRead, k*b.BytesWritten, k*b.Launches, k*b.TimeS, k*b.EnergyJ)
		}
	}
	for _, p := range stepPhases(r)[3:] {
		if p.optional && p.timeS <= 0 {
			continue
		}
		name := ""
		if p.name == "optimizer" {
			name = tr.Optimizer
		}
		row(p.name, name, "", "", "", p.flops, 0, 0, p.launches, p.timeS, p.energyJ)
	}
	cw.Flush()
	return cw.Error()
}

// trainMarkdown writes the training step's phases: time, FLOPs and
// launches of each, and the step's total.
func trainMarkdown(w io.Writer, r *report.Report) {
	tr := r.Totals.Train
	k := accumOf(tr)
	per := ""
	if k > 1 {
		per = fmt.Sprintf(" (×%d micro-batches)", tr.GradAccum)
	}
	fmt.Fprintf(w, "| training phase | time | FLOPs | launches | energy | share of step |\n|---|---:|---:|---:|---:|---:|\n")
	var ff, fn float64
	for _, p := range stepPhases(r) {
		if p.optional && p.timeS <= 0 {
			continue
		}
		name := p.name
		switch name {
		case "optimizer":
			name += " (" + tr.Optimizer + ")"
		case "all_reduce":
			name = "gradient all-reduce (exposed)"
		case "host_wait":
			name = "wait on host dispatch"
		case "accumulate":
			name = "gradient accumulation adds"
		case "recompute":
			name += " (checkpoint " + tr.Checkpoint + ")"
		}
		if p.perMicroBatch {
			p.timeS, p.flops, p.launches, p.energyJ = k*p.timeS, k*p.flops, k*p.launches, k*p.energyJ
			name += per
		}
		ff, fn = ff+p.flops, fn+p.launches
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", MarkdownEscape(name), Seconds(p.timeS), FLOPs(p.flops), Count(p.launches), Joules(p.energyJ), share(p.timeS, tr.StepTimeS))
	}
	fmt.Fprintf(w, "| **training step** | %s | %s | %s | %s | 100%% |\n\n", Seconds(tr.StepTimeS), FLOPs(ff), Count(fn), Joules(tr.StepEnergyJ))
}
