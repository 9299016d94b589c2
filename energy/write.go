package energy

import (
	"encoding/csv"
	"fmt"
	"io"

	"github.com/onnxcost/onnxcost/cost/render"
)

// WriteText writes the result as `onnxcost energy` prints it: one line
// per setting, then what Δ is relative to and how settings are modelled.
func WriteText(w io.Writer, res *Result) error {
	ref := res.Reference
	fmt.Fprintf(w, "Model: %s   GPU: %s (TDP %.0f W)   dtype: %s   runtime: %s\n", render.Clean(res.Model), res.GPU, ref.PowerCapW, res.DType, render.RuntimeKernels(res.Runtime, res.Plan, res.Warm))
	if res.GPUs > 1 {
		fmt.Fprintf(w, "On %d GPUs: avg power and energy are one GPU's; all %d draw %d× them\n", res.GPUs, res.GPUs, res.GPUs)
	}
	if res.Calibration != "" {
		fmt.Fprintln(w, res.Calibration)
	}
	epoch := res.HasEpoch()
	if t := res.Train; t != nil {
		fmt.Fprintf(w, "Per training step (optimizer %s, checkpoint %s)", t.Optimizer, t.Checkpoint)
		if epoch {
			fmt.Fprintf(w, "; epoch: %d samples = %d optimizer steps of %d%s", t.Samples, t.StepsPerEpoch, t.SamplesPerStep, t.StepMakeup)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%8s %10s %12s %8s %10s %12s %8s %11s", "cap", "sm clock", "time", "Δtime", "avg power", "energy", "Δenergy", "EDP (J·s)")
	if epoch {
		fmt.Fprintf(w, " %12s %12s", "epoch time", "epoch energy")
	}
	fmt.Fprintln(w, "  ")
	for _, r := range res.Rows {
		fmt.Fprintf(w, "%6.0f W %6.0f MHz %12s %+7.1f%% %8.1f W %12s %+7.1f%% %11.4g",
			r.PowerCapW, r.SMClockMHz, render.Seconds(r.TimeS), r.DeltaTimePct, r.AvgPowerW,
			render.Joules(r.EnergyJ), r.DeltaEnergyPct, r.EDPJS)
		if epoch {
			fmt.Fprintf(w, " %12s %12s", render.Seconds(r.EpochTimeS), render.Joules(r.EpochEnergyJ))
		}
		fmt.Fprintf(w, "  %s\n", res.OptimalMark(r))
	}
	how := "Under a cap the SM clock settles where the call's average power fits it, as the limiter averages over about a second (sm clock: time-weighted mean)."
	if res.Train != nil {
		how = "Under a cap the SM clock settles where the step's average power (forward, backward, optimizer) fits it, as the limiter averages over about a second (sm clock: time-weighted mean over the forward's kernels)."
	}
	if res.Mode == ModeSMClock {
		how = "The SM clock is locked at most at the value given; the power limit stays at TDP."
	}
	listed := "not among the rows, priced for the comparison"
	if ref.Listed {
		listed = fmt.Sprintf("the %.0f W row", ref.PowerCapW)
	}
	if _, err := fmt.Fprintf(w, "Δ: relative to the %s: %s, %s (%s). %s\n", ref.Setting, render.Seconds(ref.TimeS), render.Joules(ref.EnergyJ), listed, how); err != nil {
		return err
	}
	if iv := ref.TimeIntervalS; len(iv) == 2 {
		if _, err := fmt.Fprintf(w, "time at the %s: 80%% interval %s – %s; the Δ columns compare settings of one model, where systematic errors cancel.\n",
			ref.Setting, render.Seconds(iv[0]), render.Seconds(iv[1])); err != nil {
			return err
		}
	}
	return nil
}

// WriteCSV writes one line per setting. Columns are added, never moved:
// the epoch's come after optimal, the Δ columns last.
func WriteCSV(w io.Writer, res *Result) error {
	cw := csv.NewWriter(w)
	g := render.CSVNumber
	head := []string{"power_cap_w", "sm_clock_mhz", "time_s", "energy_j", "avg_power_w", "edp_js", "optimal"}
	epoch := res.HasEpoch()
	if epoch {
		head = append(head, "epoch_time_s", "epoch_energy_j", "epoch_edp_js")
	}
	head = append(head, "delta_time_pct", "delta_energy_pct")
	cw.Write(head)
	for _, r := range res.Rows {
		rec := []string{g(r.PowerCapW), g(r.SMClockMHz), g(r.TimeS), g(r.EnergyJ), g(r.AvgPowerW), g(r.EDPJS), res.OptimalMark(r)}
		if epoch {
			rec = append(rec, g(r.EpochTimeS), g(r.EpochEnergyJ), g(r.EpochEDPJS))
		}
		rec = append(rec, g(r.DeltaTimePct), g(r.DeltaEnergyPct))
		cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}
