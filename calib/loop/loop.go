// Package loop closes the loop between measurement and model: it prices
// the rows of a measurements table and the model a profile measured
// (through pipeline), for calib.Fit and the comparison `onnxcost
// calibrate` prints. It sits above pipeline so that pipeline, which
// applies calibrations, need not know profiles.
package loop

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/onnxcost/onnxcost/calib"
	"github.com/onnxcost/onnxcost/calib/profile"
	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/passes"
	"github.com/onnxcost/onnxcost/pipeline"
	"github.com/onnxcost/onnxcost/train"
)

// MeasuredRows reads a measurements table (calib.ReadMeasurements) and
// prices every row uncalibrated, under cfg with the row's own batch,
// dtype, dims and runtime where it gives them, as one training step
// where it says train and as one inference call otherwise (cfg's Train
// is not read): the rows calib.Fit takes.
// cfg's Calibration is ignored (a calibration is fitted against the bare
// model). An error names the file, and the row's line.
func MeasuredRows(table string, cfg pipeline.Config) ([]calib.Row, error) {
	rows, _, err := MeasuredTable(table, cfg)
	return rows, err
}

// MeasuredTable is MeasuredRows with the provenance the table's comment
// lines give (calib.ReadTable), the file read once.
func MeasuredTable(table string, cfg pipeline.Config) ([]calib.Row, calib.Provenance, error) {
	ms, prov, err := calib.ReadTable(table)
	if err != nil {
		return nil, calib.Provenance{}, &pipeline.Error{Err: err}
	}
	cfg.Calibration = nil
	rows, err := priceRows(table, ms, cfg)
	return rows, prov, err
}

// PriceMeasured prices every row of a measurements table as MeasuredRows
// does, but under cfg's calibration when it has one: how a calibration
// fitted elsewhere (another GPU, another day) does on these rows.
func PriceMeasured(table string, cfg pipeline.Config) ([]calib.Row, error) {
	ms, err := calib.ReadMeasurements(table)
	if err != nil {
		return nil, &pipeline.Error{Err: err}
	}
	return priceRows(table, ms, cfg)
}

// priceRows prices the measured calls ms of table under cfg.
func priceRows(table string, ms []calib.Measurement, cfg pipeline.Config) ([]calib.Row, error) {
	var err error
	rows := make([]calib.Row, 0, len(ms))
	for _, m := range ms {
		c := cfg
		if m.Batch > 0 {
			c.Batch = m.Batch
		}
		if m.DType != "" {
			c.DType = m.DType
		}
		if len(m.Dims) > 0 {
			c.Dims = maps.Clone(cfg.Dims)
			if c.Dims == nil {
				c.Dims = map[string]int64{}
			}
			maps.Copy(c.Dims, m.Dims)
		}
		if m.Runtime != "" {
			c.Runtime, c.RuntimeSpec = m.Runtime, nil
		}
		c.Warm = c.Warm || m.Warm
		if c.Train, err = rowTraining(m); err != nil {
			return nil, &pipeline.Error{Err: fmt.Errorf("measurements %s:%d: %v", table, m.Line, err)}
		}
		c.ModelName = m.Model
		r, err := pipeline.Run(m.Model, c)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", table, m.Line, err)
		}
		rows = append(rows, calib.Row{Name: fmt.Sprintf("%s:%d", table, m.Line), MeasuredS: m.MeasuredS, Report: r})
	}
	return rows, nil
}

// rowTraining is the training step a row measured (nil for an inference
// call), its optimizer one --optimizer takes ("" is its default).
func rowTraining(m calib.Measurement) (cost.Training, error) {
	if !m.Train {
		return nil, nil
	}
	opt := m.Optimizer
	if opt == "" {
		opt = pipeline.DefaultOptimizer
	}
	if !slices.Contains(train.Optimizers(), opt) {
		return nil, fmt.Errorf("train %q: want yes, no or an optimizer (%s)", m.Optimizer, strings.Join(train.Optimizers(), "|"))
	}
	return (&train.Options{Optimizer: opt}).Training(), nil
}

// ProfileComparison prices model under cfg and matches a measured
// profile to its nodes: the comparison `calibrate --profile` prints, the
// match itself (for a trace overlay or a fit) and the report.
func ProfileComparison(model string, p *profile.Profile, cfg pipeline.Config) (*profile.Comparison, *profile.Match, *report.Report, error) {
	cfg.Calibration = nil
	r, err := pipeline.Run(model, cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	// The model as read, for the nodes the plan removed that the
	// profiled runtime may still have run (profile.MatchReportFrom).
	src := cfg
	src.Plan, src.Passes = "unfused", passes.Options{}
	asRead, err := pipeline.Run(model, src)
	if err != nil {
		return nil, nil, nil, err
	}
	m := profile.MatchReportFrom(p, r, asRead)
	c := profile.Compare(p, m)
	c.Warm = r.Warm
	if r.Runtime != nil {
		c.Runtime = r.Runtime.Name
	}
	return c, m, r, nil
}

// CalibrationSource names what a calibration was fitted from: the table
// or profile, the date as given (today, UTC, when ""), and the runtimes its rows were priced
// under, in order of first use.
func CalibrationSource(rows []calib.Row, source, date string) calib.Source {
	var names []string
	for _, r := range rows {
		if rt := r.Report.Runtime; rt != nil && !slices.Contains(names, rt.Name) {
			names = append(names, rt.Name)
		}
	}
	if date == "" {
		date = time.Now().UTC().Format(time.DateOnly)
	}
	return calib.Source{Measurements: source, Date: date, Runtime: strings.Join(names, ", ")}
}

// FitSummary is the line `calibrate` prints after writing a calibration.
func FitSummary(c *calib.Calibration, out string) string {
	var hosts strings.Builder
	for _, h := range c.Hosts {
		kind := ""
		if h.Training {
			kind = " training"
		}
		fmt.Fprintf(&hosts, " · host ×%.3g on %s%s (%d rows)", h.Factor, h.Runtime, kind, h.N)
	}
	return fmt.Sprintf("calibration for %s from %d rows: median |measured/predicted − 1| %.1f%% uncalibrated, %.1f%% calibrated (each row predicted by a fit that left it out) · %d cells · GPU factor %.3g%s · wrote %s",
		c.Source.GPU, c.Source.Rows, 100*c.MedianErrBefore, 100*c.MedianErrAfter, len(c.Cells), c.GPUFactor, hosts.String(), out)
}

// FitWarnings are what a user should know before using calibration c:
// that its rows, each predicted by a fit that left it out, came out worse
// than the uncalibrated estimate (too few rows for the cells they touch,
// or rows that disagree), so it may make later estimates worse too.
func FitWarnings(c *calib.Calibration) []string {
	if c.Source.Rows == 0 || !(c.MedianErrAfter > c.MedianErrBefore) {
		return nil
	}
	return []string{fmt.Sprintf("calibration for %s: its %d rows, each predicted by a fit that left it out, came out worse calibrated (median |error| %.1f%%) than uncalibrated (%.1f%%): too few rows for the kernels they cover, or rows that disagree; the calibration is written as fitted, and may make estimates worse",
		c.Source.GPU, c.Source.Rows, 100*c.MedianErrAfter, 100*c.MedianErrBefore)}
}

// profileFormats is, per profile format, the runtime its calls ran
// under (what `calibrate --profile` prices unless told otherwise) and
// the software that ran them as the format alone tells.
var profileFormats = map[profile.Format]struct{ runtime, software string }{
	profile.ONNXRuntime: {"onnxruntime", "onnxruntime (profiling JSON)"},
	profile.PyTorch:     {"pytorch", "PyTorch (Kineto trace)"},
	profile.TensorRT:    {"tensorrt", "TensorRT (trtexec profile)"},
}

// ProfileSoftware is what ran a profile's calls as its format tells,
// for a profile whose own metadata names nothing more (Kineto traces name
// their CUDA runtime: calib.Provenance.Software); "" for a format not
// known.
func ProfileSoftware(f profile.Format) string { return profileFormats[f].software }

// SourceRuntime is a calibration source's Runtime: the runtimes its rows
// were priced under (CalibrationSource), with the software the
// measurements name beside them; either alone where the other is unknown.
func SourceRuntime(runtimes, software string) string {
	switch {
	case software == "":
		return runtimes
	case runtimes == "":
		return software
	}
	return runtimes + " (" + software + ")"
}

// ProfileRuntime is the runtime a profile's format was measured under:
// what `calibrate --profile` prices unless told otherwise; "" for a
// format not known.
func ProfileRuntime(f profile.Format) string { return profileFormats[f].runtime }

// ReadProfile reads a measured profile: a trtexec profile with its layer
// information when layers is given, else any format profile.Read knows.
func ReadProfile(path, layers string) (*profile.Profile, error) {
	if layers != "" {
		return profile.ReadTensorRT(path, layers)
	}
	return profile.Read(path)
}
