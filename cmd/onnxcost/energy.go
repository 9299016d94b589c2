package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/pipeline"
	"github.com/onnxcost/onnxcost/viz"
	"github.com/spf13/cobra"
)

func init() { register("energy", newEnergyCmd) }

// energyJSON is `onnxcost energy --format json`
// (cmd/onnxcost/energy.schema.json).
type energyJSON struct {
	report.Header
	Model string `json:"model"`
	GPU   string `json:"gpu"`
	DType string `json:"dtype"`
	Plan  string `json:"plan"`
	// Unit is what a row's time and energy are: "inference" (one run of
	// the model) or "training step" (--train: forward, loss, backward,
	// optimizer); the epoch_* fields then price --samples samples.
	Unit  string       `json:"unit"`
	Train *energyTrain `json:"train,omitempty"`
	// Reference is the setting every Δ is relative to: the GPU's default
	// (power limit at TDP, no clock lock), priced whether or not a row
	// lists it, so that a row's Δ does not depend on which other rows
	// were asked for.
	Reference energyReference  `json:"reference"`
	Rows      []energyRow      `json:"rows"`
	Optimal   energyOptimal    `json:"optimal"`
	Warnings  []string         `json:"warnings"`
	gpu       *hwdb.GPU        // for the chart and text
	mode      string           // "power_cap" or "sm_clock": what the rows sweep
	reports   []*report.Report // one per row, parallel to Rows
}

// energyRow is one power cap or SM clock lock. SMClockMHz is the lock for
// a clock sweep, and under a power cap the SM clock averaged over the
// model's kernel time (each kernel settles at its own clock; under --train
// over the forward's kernels, the nodes that carry a clock).
type energyRow struct {
	energyPoint
	// DeltaTimePct and DeltaEnergyPct are 100·(x/reference − 1) against
	// energyJSON.Reference, the figures the text's Δ columns print.
	DeltaTimePct   float64 `json:"delta_time_pct"`
	DeltaEnergyPct float64 `json:"delta_energy_pct"`
	// The epoch (--samples with --train): steps_per_epoch × the step's
	// time and energy, and their product. The optimal rows are the same
	// for steps and epochs: both scale by constants.
	EpochTimeS   float64 `json:"epoch_time_s,omitempty"`
	EpochEnergyJ float64 `json:"epoch_energy_j,omitempty"`
	EpochEDPJS   float64 `json:"epoch_edp_js,omitempty"`
}

// energyPoint is one setting and what the model costs under it: the
// figures a row and the reference share (embedded, so JSON keeps them
// flat and in this order).
type energyPoint struct {
	PowerCapW  float64 `json:"power_cap_w"`
	SMClockMHz float64 `json:"sm_clock_mhz"`
	TimeS      float64 `json:"time_s"`
	EnergyJ    float64 `json:"energy_j"`
	AvgPowerW  float64 `json:"avg_power_w"`
	EDPJS      float64 `json:"edp_js"`
}

// pointOf is the setting capW/clockMHz with report totals t.
func pointOf(capW, clockMHz float64, t report.Totals) energyPoint {
	return energyPoint{PowerCapW: capW, SMClockMHz: clockMHz, TimeS: t.TimeS, EnergyJ: t.EnergyJ, AvgPowerW: t.AvgPowerW, EDPJS: t.EDPJS}
}

// energyReference is the default setting the Δ columns compare against.
type energyReference struct {
	// Setting names it in words ("default power limit (TDP 300 W), no
	// SM clock lock").
	Setting string `json:"setting"`
	energyPoint
	// Listed says whether one of the rows is this setting (a cap at TDP
	// in a cap sweep; never in a clock sweep, whose rows are all locks).
	Listed bool `json:"listed"`
}

// energyTrain says which training step the rows price (--train).
type energyTrain struct {
	Optimizer  string `json:"optimizer"`
	Checkpoint string `json:"checkpoint"`
	// GradAccum (micro-batches per optimizer step) and DataParallel
	// (replicas) make up, with the batch, the samples one step consumes.
	GradAccum    int `json:"grad_accum"`
	DataParallel int `json:"data_parallel"`
	// Samples, SamplesPerStep and StepsPerEpoch are set with --samples:
	// SamplesPerStep = batch × grad_accum × data_parallel.
	Samples        int64 `json:"samples,omitempty"`
	SamplesPerStep int64 `json:"samples_per_step,omitempty"`
	StepsPerEpoch  int64 `json:"steps_per_epoch,omitempty"`
	// stepMakeup spells out a step of more than one batch for the text
	// (render.EpochStepMakeup).
	stepMakeup string
}

// energySetting names one row's setting.
type energySetting struct {
	PowerCapW  float64 `json:"power_cap_w"`
	SMClockMHz float64 `json:"sm_clock_mhz"`
}

// energyOptimal are the rows of least energy-to-solution and least EDP.
type energyOptimal struct {
	Energy energySetting `json:"energy"`
	EDP    energySetting `json:"edp"`
}

// capStepW is the default step between power caps (the granularity
// nvidia-smi -pl sweeps in published studies use).
const capStepW = 25

// assumedMinCapFraction is the lowest cap swept, as a fraction of TDP,
// for a GPU whose record has no minimum power limit (NVIDIA datacenter
// boards allow 40-50% of TDP; an assumption, warned about).
const assumedMinCapFraction = 0.5

func newEnergyCmd(stdout, stderr io.Writer) *cobra.Command {
	var f costFlags
	var caps, clocks, format, out string
	c := &cobra.Command{
		Use:   "energy MODEL --gpu NAME [--power-cap LIST | --sm-clock LIST]",
		Short: "Time, power, energy-to-solution and energy-delay product across power caps or SM clocks",
		Long: `energy costs the model once per power cap (nvidia-smi -pl) or SM clock
lock (nvidia-smi -lgc) and prints, per setting, the time of one inference
(with --train: of one training step), the average board power, the energy
to solution and the energy-delay product (energy × time). The rows of least
energy and least EDP are marked. Δ is relative to the GPU's default
setting (power limit at TDP, no clock lock), priced even when no row
lists it. With --train --samples N each row also prices an epoch of N
samples: ceil(N / (batch × grad-accum × data-parallel)) optimizer steps.

Under a cap every kernel settles at the highest SM clock at which its own
modelled power fits: compute-bound kernels slow about as 1/clock,
memory-bound ones barely (DRAM stays saturated down to about half the boost
clock), launch-bound ones not at all.

LIST is a comma list (150,200,250) or a range LO..HI[:STEP] (150..300:25).
By default the caps run from the GPU's minimum power limit to its TDP in
25 W steps.

  onnxcost energy zoo:resnet50 --gpu V100 --batch 64 -o r50-energy.svg
  onnxcost energy zoo:lstm-ptb --gpu V100 --sm-clock 600..1530:100 --format csv
  onnxcost energy zoo:resnet50 --gpu V100 --batch 64 --train --samples 1281167`,
		Args: exactArgs(1, "MODEL"),
		RunE: func(c *cobra.Command, args []string) error {
			if err := checkFormat(format, "text", "json", "csv"); err != nil {
				return err
			}
			if caps != "" && clocks != "" {
				return usageErr("--power-cap and --sm-clock are alternatives: sweep one of them")
			}
			if out != "" {
				if _, err := outFormat(out, "svg", "png", "pdf"); err != nil {
					return err
				}
			}
			f.dumpTo = stderr
			res, err := runEnergy(args[0], &f, caps, clocks)
			if err != nil {
				return err
			}
			printWarnings(stderr, res.Warnings)
			if out != "" {
				if err := writeEnergyChart(out, res); err != nil {
					return err
				}
			}
			return writeAs(stdout, format, res, writeEnergyCSV, writeEnergyText)
		},
	}
	f.addBase(c)
	f.addSamples(c)
	c.Flags().StringVar(&caps, "power-cap", "", "power caps in watts: `LIST` (150,200,250 or 150..300:25); default: the GPU's minimum power limit to its TDP in 25 W steps")
	c.Flags().StringVar(&clocks, "sm-clock", "", "SM clock locks in MHz instead of caps: `LIST` (600,900,1200 or 600..1500:100)")
	c.Flags().StringVar(&format, "format", "text", "output format: text|json|csv")
	c.Flags().StringVarP(&out, "out", "o", "", "draw time and energy against the setting to `FILE`.svg|png|pdf")
	return c
}

// parseFloatList reads a comma list or LO..HI[:STEP] of positive numbers.
func parseFloatList(flag, s string, step float64) ([]float64, error) {
	s = strings.TrimSpace(s)
	if lo, rest, ok := strings.Cut(s, ".."); ok {
		hi := rest
		if h, st, ok := strings.Cut(rest, ":"); ok {
			hi = h
			v, err := strconv.ParseFloat(strings.TrimSpace(st), 64)
			if err != nil || !(v > 0) || math.IsInf(v, 0) {
				return nil, usageErr("%s: bad step %q in %q (want a positive number)", flag, st, s)
			}
			step = v
		}
		a, err1 := strconv.ParseFloat(strings.TrimSpace(lo), 64)
		b, err2 := strconv.ParseFloat(strings.TrimSpace(hi), 64)
		if err1 != nil || err2 != nil || !(a > 0) || !(b >= a) || math.IsInf(b, 0) {
			return nil, usageErr("%s: bad range %q (want LO..HI[:STEP] with 0 < LO ≤ HI)", flag, s)
		}
		if (b-a)/step > 1000 {
			return nil, usageErr("%s: range %q has more than 1000 values", flag, s)
		}
		var out []float64
		for i := 0; a+float64(i)*step <= b+1e-9; i++ {
			out = append(out, a+float64(i)*step)
		}
		return out, nil
	}
	var out []float64
	for _, p := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return nil, usageErr("%s: bad value %q in %q (want positive numbers, comma-separated)", flag, p, s)
		}
		out = append(out, v)
	}
	return out, nil
}

// defaultCaps are the caps swept when none are given: the GPU's minimum
// power limit up to TDP in capStepW steps, TDP always included.
func defaultCaps(g *hwdb.GPU) ([]float64, []string) {
	var warns []string
	lo := g.MinPowerW
	if !(lo > 0) || lo >= g.TDPWatts {
		lo = math.Round(assumedMinCapFraction * g.TDPWatts)
		warns = append(warns, fmt.Sprintf("GPU %s has no minimum power limit on record: caps swept from %.0f W (%.0f%% of TDP, assumed)", g.Name, lo, assumedMinCapFraction*100))
	}
	var caps []float64
	var skipped []string
	for c := lo; c < g.TDPWatts-1e-9; c += capStepW {
		if g.IdleWatts > 0 && c <= g.IdleWatts {
			// A cap at or below idle power cannot be met by any clock.
			skipped = append(skipped, fmt.Sprintf("%.0f W", c))
			continue
		}
		caps = append(caps, c)
	}
	if len(skipped) > 0 {
		warns = append(warns, fmt.Sprintf("caps %s skipped: at or below %s's idle power (%.0f W)", strings.Join(skipped, ", "), g.Name, g.IdleWatts))
	}
	return append(caps, g.TDPWatts), warns
}

// checkPowerControl refuses a cap or clock the GPU cannot be set to.
func checkPowerControl(g *hwdb.GPU, c perf.PowerControl) error {
	return asUsage(pipeline.CheckPowerControl(g, c))
}

// powerControl is the cap or lock the flags ask for.
func (f *costFlags) powerControl() perf.PowerControl {
	return perf.PowerControl{CapW: f.powerCap, SMClockMHz: f.smClock}
}

// runEnergy loads and plans the model once, then costs it per setting.
func runEnergy(path string, f *costFlags, caps, clocks string) (*energyJSON, error) {
	r0, l, opt, err := estimateWith(path, f)
	if err != nil {
		return nil, err
	}
	g, err := resolveGPU(f.gpu, f.gpuFile)
	if err != nil {
		return nil, err
	}
	if !(g.TDPWatts > 0) {
		return nil, usageErr("GPU %s has no TDP on record: energy needs one", g.Name)
	}
	res := &energyJSON{Header: report.Header{SchemaVersion: report.SchemaVersion, ToolVersion: version}, Model: path, GPU: g.Name, Unit: "inference", Warnings: []string{}, gpu: g, mode: "power_cap"}
	if tr := r0.Totals.Train; tr != nil {
		res.Unit = "training step"
		res.Train = &energyTrain{Optimizer: tr.Optimizer, Checkpoint: tr.Checkpoint, GradAccum: max(tr.GradAccum, 1), DataParallel: max(tr.DataParallel, 1)}
		if e := tr.Epoch; e != nil {
			res.Train.Samples, res.Train.SamplesPerStep, res.Train.StepsPerEpoch = e.Samples, e.SamplesPerStep, e.Steps
			res.Train.stepMakeup = render.EpochStepMakeup(tr)
		}
	}
	// r0 was priced with no cap and no lock (energy's --power-cap and
	// --sm-clock are lists, not costFlags'): the default setting.
	res.Reference = energyReference{
		Setting:     fmt.Sprintf("default power limit (TDP %.0f W), no SM clock lock", g.TDPWatts),
		energyPoint: pointOf(g.TDPWatts, meanClock(r0), r0.Totals),
	}
	var settings []perf.PowerControl
	switch {
	case clocks != "":
		res.mode = "sm_clock"
		vs, err := parseFloatList("--sm-clock", clocks, 100)
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			settings = append(settings, perf.PowerControl{SMClockMHz: v})
		}
	case caps != "":
		vs, err := parseFloatList("--power-cap", caps, capStepW)
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			settings = append(settings, perf.PowerControl{CapW: v})
		}
	default:
		vs, warns := defaultCaps(g)
		res.Warnings = append(res.Warnings, warns...)
		for _, v := range vs {
			settings = append(settings, perf.PowerControl{CapW: v})
		}
	}
	for _, s := range settings {
		if err := checkPowerControl(g, s); err != nil {
			return nil, err
		}
	}
	seen := map[string]bool{}
	for _, w := range res.Warnings {
		seen[w] = true
	}
	for _, s := range settings {
		o := opt
		o.Power = s
		r, err := pipeline.Estimate(l, g, o)
		if err != nil {
			return nil, pipeErr(err)
		}
		if err := f.applyEpoch(r, l); err != nil {
			return nil, err
		}
		res.DType, res.Plan = r.DType, r.Plan
		for _, w := range r.Warnings {
			if !seen[w] {
				seen[w] = true
				res.Warnings = append(res.Warnings, w)
			}
		}
		t := r.Totals
		row := energyRow{energyPoint: pointOf(s.CapW, s.SMClockMHz, t)}
		if t.Train != nil && t.Train.Epoch != nil {
			e := t.Train.Epoch
			row.EpochTimeS, row.EpochEnergyJ, row.EpochEDPJS = e.TimeS, e.EnergyJ, e.EDPJS
		}
		if res.mode == "sm_clock" {
			row.PowerCapW = g.TDPWatts
		} else {
			row.SMClockMHz = meanClock(r)
			// A cap at TDP is the default limit (perf.UnderControl
			// leaves it unchanged).
			res.Reference.Listed = res.Reference.Listed || s.CapW == g.TDPWatts
		}
		row.DeltaTimePct, row.DeltaEnergyPct = pct(row.TimeS, res.Reference.TimeS), pct(row.EnergyJ, res.Reference.EnergyJ)
		res.Rows = append(res.Rows, row)
		res.reports = append(res.reports, r)
	}
	if len(res.Rows) == 0 {
		return nil, usageErr("energy: no settings to cost")
	}
	if !(res.Rows[0].TimeS > 0) || !(res.Reference.TimeS > 0) || !(res.Reference.EnergyJ > 0) {
		return nil, usageErr("%s: the model has no kernel time on %s: nothing to compare", path, g.Name)
	}
	eb, db := 0, 0
	for i, r := range res.Rows {
		if r.EnergyJ < res.Rows[eb].EnergyJ {
			eb = i
		}
		if r.EDPJS < res.Rows[db].EDPJS {
			db = i
		}
	}
	res.Optimal.Energy = energySetting{res.Rows[eb].PowerCapW, res.Rows[eb].SMClockMHz}
	res.Optimal.EDP = energySetting{res.Rows[db].PowerCapW, res.Rows[db].SMClockMHz}
	return res, nil
}

// meanClock is the SM clock of a report's nodes averaged over their time
// (nodes that sum a subgraph carry none and are skipped).
func meanClock(r *report.Report) float64 {
	var num, den float64
	for _, n := range r.Nodes {
		if n.SMClockMHz > 0 && n.TimeS > 0 {
			num += n.SMClockMHz * n.TimeS
			den += n.TimeS
		}
	}
	if den == 0 {
		return 0
	}
	return math.Round(num/den*10) / 10
}

// optimalMark is the text and CSV marker of a row.
func (res *energyJSON) optimalMark(r energyRow) string {
	var m []string
	if r.PowerCapW == res.Optimal.Energy.PowerCapW && r.SMClockMHz == res.Optimal.Energy.SMClockMHz {
		m = append(m, "min-energy")
	}
	if r.PowerCapW == res.Optimal.EDP.PowerCapW && r.SMClockMHz == res.Optimal.EDP.SMClockMHz {
		m = append(m, "min-EDP")
	}
	return strings.Join(m, ",")
}

func writeEnergyText(w io.Writer, res *energyJSON) error {
	fmt.Fprintf(w, "Model: %s   GPU: %s (TDP %.0f W)   dtype: %s   plan: %s\n", render.Clean(res.Model), res.GPU, res.gpu.TDPWatts, res.DType, res.Plan)
	epoch := res.hasEpoch()
	if t := res.Train; t != nil {
		fmt.Fprintf(w, "Per training step (optimizer %s, checkpoint %s)", t.Optimizer, t.Checkpoint)
		if epoch {
			fmt.Fprintf(w, "; epoch: %d samples = %d optimizer steps of %d%s", t.Samples, t.StepsPerEpoch, t.SamplesPerStep, t.stepMakeup)
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
		fmt.Fprintf(w, "  %s\n", res.optimalMark(r))
	}
	how := "Under a cap each kernel runs at the highest SM clock its own power fits (sm clock: time-weighted mean)."
	if res.Train != nil {
		how = "Under a cap each kernel (forward, backward, optimizer) runs at the highest SM clock its own power fits (sm clock: time-weighted mean over the forward's kernels)."
	}
	if res.mode == "sm_clock" {
		how = "The SM clock is locked at most at the value given; the power limit stays at TDP."
	}
	ref := res.Reference
	listed := "not among the rows, priced for the comparison"
	if ref.Listed {
		listed = fmt.Sprintf("the %.0f W row", ref.PowerCapW)
	}
	fmt.Fprintf(w, "Δ: relative to the %s: %s, %s (%s). %s\n", ref.Setting, render.Seconds(ref.TimeS), render.Joules(ref.EnergyJ), listed, how)
	return nil
}

// hasEpoch reports whether the rows carry an epoch (--train --samples).
func (res *energyJSON) hasEpoch() bool { return res.Train != nil && res.Train.StepsPerEpoch > 0 }

// pct is 100·(a/b − 1), 0 when b is 0.
func pct(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * (a/b - 1)
}

func writeEnergyCSV(w io.Writer, res *energyJSON) error {
	cw := csv.NewWriter(w)
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	head := []string{"power_cap_w", "sm_clock_mhz", "time_s", "energy_j", "avg_power_w", "edp_js", "optimal"}
	epoch := res.hasEpoch()
	if epoch {
		head = append(head, "epoch_time_s", "epoch_energy_j", "epoch_edp_js")
	}
	// The Δ columns go last: columns are added, never moved.
	head = append(head, "delta_time_pct", "delta_energy_pct")
	cw.Write(head)
	for _, r := range res.Rows {
		rec := []string{g(r.PowerCapW), g(r.SMClockMHz), g(r.TimeS), g(r.EnergyJ), g(r.AvgPowerW), g(r.EDPJS), res.optimalMark(r)}
		if epoch {
			rec = append(rec, g(r.EpochTimeS), g(r.EpochEnergyJ), g(r.EpochEDPJS))
		}
		rec = append(rec, g(r.DeltaTimePct), g(r.DeltaEnergyPct))
		cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}

// writeEnergyChart draws time and energy relative to the GPU's default
// setting (res.Reference) against the setting; the energy-optimal row is
// ringed on the energy line.
func writeEnergyChart(path string, res *energyJSON) error {
	format, err := outFormat(path, "svg", "png", "pdf")
	if err != nil {
		return err
	}
	series, xl := energySeries(res, 0, "")
	o := viz.EnergyOptions{
		Title:  fmt.Sprintf("%s on %s, dtype %s", baseNameOf(res.Model), res.GPU, res.DType),
		XLabel: xl,
		YLabel: "relative to the default (TDP, no clock lock)",
	}
	img, err := viz.EnergyChart(series, o, format)
	if err != nil {
		return usageErr("%s: %v", path, err)
	}
	return writeOut(path, img)
}

// energySeries is a result's time and energy lines, relative to its
// reference (the default setting), in colour c; prefix labels them (a
// model name on a shared chart).
func energySeries(res *energyJSON, c int, prefix string) ([]viz.EnergySeries, string) {
	base := res.Reference
	ts := viz.EnergySeries{Label: prefix + "time", Colour: c}
	es := viz.EnergySeries{Label: prefix + "energy", Colour: c, Dashed: true}
	xl := "power cap (W)"
	for _, r := range res.Rows {
		x := r.PowerCapW
		if res.mode == "sm_clock" {
			x, xl = r.SMClockMHz, "SM clock (MHz)"
		}
		ts.X, ts.Y = append(ts.X, x), append(ts.Y, r.TimeS/base.TimeS)
		es.X, es.Y = append(es.X, x), append(es.Y, r.EnergyJ/base.EnergyJ)
	}
	opt := res.Optimal.Energy.PowerCapW
	if res.mode == "sm_clock" {
		opt = res.Optimal.Energy.SMClockMHz
	}
	es.Marks = []float64{opt}
	return []viz.EnergySeries{ts, es}, xl
}
