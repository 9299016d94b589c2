// Package energy prices a model across GPU power caps (nvidia-smi -pl) or
// SM clock locks (nvidia-smi -lgc): per setting the time of one run (or
// training step), the average board power, the energy to solution and the
// energy-delay product, each relative to the GPU's default setting, with
// the rows of least energy and least EDP marked. Run returns a Result,
// which WriteText and WriteCSV print and whose JSON form Schema
// describes.
package energy

import (
	_ "embed"
	"fmt"
	"math"
	"strings"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/pipeline"
)

// Schema is the JSON Schema (draft 2020-12) of Result as `onnxcost energy
// --format json` writes it, committed so scripts can validate saved
// results; TestSchema checks real results against it.
//
//go:embed energy.schema.json
var Schema []byte

// Sweep modes: what a Result's rows vary.
const (
	ModePowerCap = "power_cap"
	ModeSMClock  = "sm_clock"
)

// Result is the energy of one model on one GPU across settings.
type Result struct {
	report.Header
	Model string `json:"model"`
	GPU   string `json:"gpu"`
	DType string `json:"dtype"`
	// Runtime is the execution profile priced, Plan the kernels it runs.
	Runtime string `json:"runtime"`
	Plan    string `json:"plan"`
	// Warm marks estimates priced as calls repeated back to back
	// (--warm: L2 holds what the previous call left); absent for first
	// calls.
	Warm bool `json:"warm,omitempty"`
	// GPUs is how many GPUs one call or step runs on when above 1 (the
	// tensor-parallel group times a training step's data-parallel
	// replicas, render.GPUsRunning): each row's power and energy are one
	// GPU's, and all of them draw GPUs times that.
	GPUs int `json:"gpus,omitempty"`
	// Calibration says which measured calibration corrected the kernel
	// times (the reports'); absent when none.
	Calibration string `json:"calibration,omitempty"`
	// Unit is what a row's time and energy are: "inference" (one run of
	// the model) or "training step" (forward, loss, backward, optimizer);
	// the epoch_* fields then price Train.Samples samples.
	Unit  string `json:"unit"`
	Train *Train `json:"train,omitempty"`
	// Reference is the setting every Δ is relative to: the GPU's default
	// (power limit at TDP, no clock lock), priced whether or not a row
	// lists it, so that a row's Δ does not depend on which other rows
	// were asked for.
	Reference Reference `json:"reference"`
	Rows      []Row     `json:"rows"`
	Optimal   Optimal   `json:"optimal"`
	Warnings  []string  `json:"warnings"`
	// Mode is ModePowerCap or ModeSMClock. The JSON contract leaves it
	// out: a reader tells the modes apart by which column varies.
	Mode string `json:"-"`
}

// Row is one power cap or SM clock lock. SMClockMHz is the lock for a
// clock sweep, and under a power cap the SM clock averaged over the
// model's kernel time (each kernel settles at its own clock; in a
// training step over the forward's kernels, the nodes that carry a
// clock).
type Row struct {
	Point
	// DeltaTimePct and DeltaEnergyPct are 100·(x/reference − 1) against
	// Result.Reference, the figures the text's Δ columns print.
	DeltaTimePct   float64 `json:"delta_time_pct"`
	DeltaEnergyPct float64 `json:"delta_energy_pct"`
	// The epoch (Config.Samples in a training step): steps_per_epoch ×
	// the step's time and energy, and their product. The optimal rows
	// are the same for steps and epochs: both scale by constants.
	EpochTimeS   float64 `json:"epoch_time_s,omitempty"`
	EpochEnergyJ float64 `json:"epoch_energy_j,omitempty"`
	EpochEDPJS   float64 `json:"epoch_edp_js,omitempty"`
}

// Point is one setting and what the model costs under it: the figures a
// row and the reference share (embedded, so JSON keeps them flat and in
// this order).
type Point struct {
	PowerCapW  float64 `json:"power_cap_w"`
	SMClockMHz float64 `json:"sm_clock_mhz"`
	TimeS      float64 `json:"time_s"`
	// TimeIntervalS is TimeS's 80% interval (the report's
	// totals.time_interval_s); absent where it has none. The Δ columns
	// compare settings of one model, where systematic errors cancel.
	TimeIntervalS []float64 `json:"time_interval_s,omitempty"`
	EnergyJ       float64   `json:"energy_j"`
	AvgPowerW     float64   `json:"avg_power_w"`
	EDPJS         float64   `json:"edp_js"`
}

// pointOf is the setting capW/clockMHz with report totals t.
func pointOf(capW, clockMHz float64, t report.Totals) Point {
	return Point{PowerCapW: capW, SMClockMHz: clockMHz, TimeS: t.TimeS, TimeIntervalS: t.TimeIntervalS, EnergyJ: t.EnergyJ, AvgPowerW: t.AvgPowerW, EDPJS: t.EDPJS}
}

// Reference is the default setting the Δ columns compare against; its
// PowerCapW is the GPU's TDP.
type Reference struct {
	// Setting names it in words ("default power limit (TDP 300 W), no
	// SM clock lock").
	Setting string `json:"setting"`
	Point
	// Listed says whether one of the rows is this setting (a cap at TDP
	// in a cap sweep; never in a clock sweep, whose rows are all locks).
	Listed bool `json:"listed"`
}

// Train says which training step the rows price.
type Train struct {
	// The step: optimizer, checkpoint, and the grad-accum micro-batches
	// and data-parallel replicas that make up, with the batch, the
	// samples one step consumes (the same JSON keys as sweep's train).
	report.TrainSetting
	// Samples, SamplesPerStep and StepsPerEpoch are set with an epoch:
	// SamplesPerStep = batch × grad_accum × data_parallel.
	Samples        int64 `json:"samples,omitempty"`
	SamplesPerStep int64 `json:"samples_per_step,omitempty"`
	StepsPerEpoch  int64 `json:"steps_per_epoch,omitempty"`
	// StepMakeup spells out a step of more than one batch for the text
	// (render.EpochStepMakeup); the JSON has its parts already.
	StepMakeup string `json:"-"`
}

// Setting names one row's setting.
type Setting struct {
	PowerCapW  float64 `json:"power_cap_w"`
	SMClockMHz float64 `json:"sm_clock_mhz"`
}

// Optimal are the rows of least energy-to-solution and least EDP.
type Optimal struct {
	Energy Setting `json:"energy"`
	EDP    Setting `json:"edp"`
}

// CapStepW is the default step between power caps (the granularity
// nvidia-smi -pl sweeps in published studies use).
const CapStepW = 25

// assumedMinCapFraction is the lowest cap swept, as a fraction of TDP,
// for a GPU whose record has no minimum power limit (NVIDIA datacenter
// boards allow 40-50% of TDP; an assumption, warned about).
const assumedMinCapFraction = 0.5

// DefaultCaps are the caps swept when none are given: the GPU's minimum
// power limit up to TDP in CapStepW steps, TDP always included, with the
// warnings the choice needs.
func DefaultCaps(g *hwdb.GPU) ([]float64, []string) {
	var warns []string
	lo := g.MinPowerW
	if !(lo > 0) || lo >= g.TDPWatts {
		lo = math.Round(assumedMinCapFraction * g.TDPWatts)
		warns = append(warns, fmt.Sprintf("GPU %s has no minimum power limit on record: caps swept from %.0f W (%.0f%% of TDP, assumed)", g.Name, lo, assumedMinCapFraction*100))
	}
	var caps []float64
	var skipped []string
	for c := lo; c < g.TDPWatts-1e-9; c += CapStepW {
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

// Config says what Run prices.
type Config struct {
	// Model names the model in the result ("" is Loaded.Path).
	Model string
	// Loaded is the model, read and planned (pipeline.Load, Plan).
	Loaded *pipeline.Loaded
	GPU    *hwdb.GPU
	// Estimate is what every setting is costed with; its Power is
	// replaced by each setting's.
	Estimate pipeline.EstimateOptions
	// Default is the estimate at the GPU's default setting when the
	// caller has it already; nil prices it.
	Default *report.Report
	// Caps (W) or Clocks (MHz) are the settings, one or the other;
	// neither sweeps DefaultCaps.
	Caps, Clocks []float64
	// Samples, with SamplesPerStep, prices a training epoch at every
	// setting (0: no epoch).
	Samples, SamplesPerStep int64
}

// settings are the power controls cfg asks for, and the mode they sweep.
func (cfg *Config) settings() ([]perf.PowerControl, string, []string) {
	var out []perf.PowerControl
	if len(cfg.Clocks) > 0 {
		for _, v := range cfg.Clocks {
			out = append(out, perf.PowerControl{SMClockMHz: v})
		}
		return out, ModeSMClock, nil
	}
	caps, warns := cfg.Caps, []string(nil)
	if len(caps) == 0 {
		caps, warns = DefaultCaps(cfg.GPU)
	}
	for _, v := range caps {
		out = append(out, perf.PowerControl{CapW: v})
	}
	return out, ModePowerCap, warns
}

// estimate prices the model under one setting, with the epoch.
func (cfg *Config) estimate(s perf.PowerControl) (*report.Report, error) {
	o := cfg.Estimate
	o.Power = s
	r, err := pipeline.Estimate(cfg.Loaded, cfg.GPU, o)
	if err != nil {
		return nil, err
	}
	if cfg.Samples > 0 && r.Totals.Train != nil {
		if err := r.Totals.Train.SetEpoch(cfg.Samples, cfg.SamplesPerStep); err != nil {
			return nil, fmt.Errorf("--samples %d: %v", cfg.Samples, err)
		}
	}
	return r, nil
}

// Run prices the model at the default setting and at every setting
// asked for.
func Run(cfg Config) (*Result, error) {
	g := cfg.GPU
	if !(g.TDPWatts > 0) {
		return nil, fmt.Errorf("GPU %s has no TDP on record: energy needs one", g.Name)
	}
	r0 := cfg.Default
	if r0 == nil {
		var err error
		if r0, err = cfg.estimate(perf.PowerControl{}); err != nil {
			return nil, err
		}
	}
	model := cfg.Model
	if model == "" {
		model = cfg.Loaded.Path
	}
	settings, mode, warns := cfg.settings()
	res := &Result{Header: report.Header{SchemaVersion: report.SchemaVersion, ToolVersion: cfg.Estimate.ToolVersion}, Model: model, GPU: g.Name,
		Unit: "inference", Warnings: append([]string{}, warns...), Mode: mode, Calibration: r0.Calibration}
	if n := render.GPUsRunning(r0.Totals); n > 1 {
		res.GPUs = n
	}
	if tr := r0.Totals.Train; tr != nil {
		res.Unit = "training step"
		res.Train = &Train{TrainSetting: *tr.Setting()}
		if e := tr.Epoch; e != nil {
			res.Train.Samples, res.Train.SamplesPerStep, res.Train.StepsPerEpoch = e.Samples, e.SamplesPerStep, e.Steps
			res.Train.StepMakeup = render.EpochStepMakeup(tr)
		}
	}
	res.Reference = Reference{
		Setting: fmt.Sprintf("default power limit (TDP %.0f W), no SM clock lock", g.TDPWatts),
		Point:   pointOf(g.TDPWatts, meanClock(r0), r0.Totals),
	}
	for _, s := range settings {
		if err := pipeline.CheckPowerControl(g, s); err != nil {
			return nil, err
		}
	}
	if err := res.price(&cfg, settings); err != nil {
		return nil, err
	}
	if len(res.Rows) == 0 {
		return nil, fmt.Errorf("energy: no settings to cost")
	}
	if !(res.Rows[0].TimeS > 0) || !(res.Reference.TimeS > 0) || !(res.Reference.EnergyJ > 0) {
		return nil, fmt.Errorf("%s: the model has no kernel time on %s: nothing to compare", model, g.Name)
	}
	res.markOptimal()
	return res, nil
}

// price adds one row per setting.
func (res *Result) price(cfg *Config, settings []perf.PowerControl) error {
	g := cfg.GPU
	seen := map[string]bool{}
	for _, w := range res.Warnings {
		seen[w] = true
	}
	for _, s := range settings {
		r, err := cfg.estimate(s)
		if err != nil {
			return err
		}
		res.DType, res.Plan, res.Warm = r.DType, r.Plan, r.Warm
		if r.Runtime != nil {
			res.Runtime = r.Runtime.Name
		}
		for _, w := range r.Warnings {
			if !seen[w] {
				seen[w] = true
				res.Warnings = append(res.Warnings, w)
			}
		}
		t := r.Totals
		row := Row{Point: pointOf(s.CapW, s.SMClockMHz, t)}
		if t.Train != nil && t.Train.Epoch != nil {
			e := t.Train.Epoch
			row.EpochTimeS, row.EpochEnergyJ, row.EpochEDPJS = e.TimeS, e.EnergyJ, e.EDPJS
		}
		if res.Mode == ModeSMClock {
			row.PowerCapW = g.TDPWatts
		} else {
			row.SMClockMHz = meanClock(r)
			// A cap at TDP is the default limit (perf.UnderControl
			// leaves it unchanged).
			res.Reference.Listed = res.Reference.Listed || s.CapW == g.TDPWatts
		}
		row.DeltaTimePct, row.DeltaEnergyPct = pct(row.TimeS, res.Reference.TimeS), pct(row.EnergyJ, res.Reference.EnergyJ)
		res.Rows = append(res.Rows, row)
	}
	return nil
}

// markOptimal sets Optimal: the first row of least energy and of least
// EDP.
func (res *Result) markOptimal() {
	eb, db := 0, 0
	for i, r := range res.Rows {
		if r.EnergyJ < res.Rows[eb].EnergyJ {
			eb = i
		}
		if r.EDPJS < res.Rows[db].EDPJS {
			db = i
		}
	}
	res.Optimal.Energy = Setting{res.Rows[eb].PowerCapW, res.Rows[eb].SMClockMHz}
	res.Optimal.EDP = Setting{res.Rows[db].PowerCapW, res.Rows[db].SMClockMHz}
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

// pct is 100·(a/b − 1), 0 when b is 0.
func pct(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * (a/b - 1)
}

// OptimalMark is the text and CSV marker of a row: "min-energy",
// "min-EDP", both, or "".
func (res *Result) OptimalMark(r Row) string {
	var m []string
	if r.PowerCapW == res.Optimal.Energy.PowerCapW && r.SMClockMHz == res.Optimal.Energy.SMClockMHz {
		m = append(m, "min-energy")
	}
	if r.PowerCapW == res.Optimal.EDP.PowerCapW && r.SMClockMHz == res.Optimal.EDP.SMClockMHz {
		m = append(m, "min-EDP")
	}
	return strings.Join(m, ",")
}

// HasEpoch reports whether the rows carry an epoch.
func (res *Result) HasEpoch() bool { return res.Train != nil && res.Train.StepsPerEpoch > 0 }
