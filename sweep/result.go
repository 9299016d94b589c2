package sweep

import (
	_ "embed"

	"github.com/onnxcost/onnxcost/cost/report"
)

// SchemaVersion versions the JSON form of Result (Schema).
const SchemaVersion = 1

// Schema is the JSON Schema (draft 2020-12) of Result as `onnxcost sweep
// --format json` writes it, committed so scripts can validate saved
// sweeps; TestSchema checks real results against it.
//
//go:embed sweep.schema.json
var Schema []byte

// Result is a whole sweep: one row per GPU and point.
type Result struct {
	SchemaVersion int    `json:"schema_version"`
	ToolVersion   string `json:"tool_version"`
	Model         string `json:"model"`
	DType         string `json:"dtype"`
	// Runtime is the execution profile priced, Plan the kernels it runs
	// (of the first model, when several are swept).
	Runtime string `json:"runtime"`
	Plan    string `json:"plan"`
	// PowerCapW and SMClockMHz are the power cap and SM clock lock every
	// point was priced under; absent at each GPU's default.
	PowerCapW  float64 `json:"power_cap_w,omitempty"`
	SMClockMHz float64 `json:"sm_clock_mhz,omitempty"`
	// Warm marks estimates priced as calls repeated back to back
	// (--warm: L2 holds what the previous call left); absent for first
	// calls.
	Warm bool `json:"warm,omitempty"`
	// Train is the training step every row prices (--train: a row's
	// time is one optimizer step, its throughput the samples it trains a
	// second); absent for inference.
	Train *report.TrainSetting `json:"train,omitempty"`
	// Swept names the dimensions that take more than one value, in the
	// order rows vary them (params, then dims, then batch fastest).
	Swept []string `json:"swept"`
	// GPUs gives each GPU's canonical name and memory, in the order asked.
	GPUs []GPU `json:"gpus"`
	Rows []Row `json:"rows"`
	// MaxBatch and Knee are keyed by GPU name, or "MODEL on GPU" when
	// several models are swept (Key); a nil value is "none".
	MaxBatch map[string]*int64 `json:"max_batch"`
	Knee     map[string]*int64 `json:"knee"`
	Fit      []CostFit         `json:"fit,omitempty"`
	Warnings []string          `json:"warnings"`
	// Calibration says which measured calibration corrected the kernel
	// times (the reports'); absent when none.
	Calibration string `json:"calibration,omitempty"`
}

// GPU is one GPU of a sweep.
type GPU struct {
	Name        string  `json:"name"`
	MemoryBytes float64 `json:"memory_bytes"`
}

// Row is one GPU at one point of the sweep.
type Row struct {
	GPU      string           `json:"gpu"`
	Batch    int64            `json:"batch"`
	Bindings map[string]int64 `json:"bindings"`
	// Model is the row's model when the sweep compares several.
	Model string `json:"model,omitempty"`
	// Params holds the zoo parameters of the point (--param), if any.
	Params map[string]int64 `json:"params,omitempty"`
	TimeS  float64          `json:"time_s"`
	// TimeIntervalS is the 80% interval [low, high] around TimeS, the
	// report's (report.Totals.TimeIntervalS); absent where it has none.
	TimeIntervalS []float64 `json:"time_interval_s,omitempty"`
	// IntervalBasis is the report's totals.interval_basis: whose
	// measured kernels the interval rests on where they are not the GPU
	// family's own; absent otherwise.
	IntervalBasis   string  `json:"interval_basis,omitempty"`
	ThroughputPerS  float64 `json:"throughput_per_s"`
	PeakMemoryBytes float64 `json:"peak_memory_bytes"`
	Fits            bool    `json:"fits"`
	FLOPs           float64 `json:"flops"`
	// GEMMFLOPs counts the FLOPs of Conv, Gemm, MatMul and recurrent
	// nodes (and fused nodes built around them): the work the seed's
	// scaling formulas describe.
	GEMMFLOPs float64 `json:"gemm_flops"`

	// X is the value of the last swept dimension at this row, what fits
	// and charts plot against. It stays out of the JSON contract, which
	// already carries it as batch, a binding or a param.
	X float64 `json:"-"`
	// EnergyJ is the energy of one run, for Compare; the sweep contract
	// has no energy column.
	EnergyJ float64 `json:"-"`
	// MemoryBoundS is the time of the run's memory-bound kernels (the
	// report's nodes whose bound is memory), which warnThroughputDip
	// tells apart from the rest; not in the sweep contract.
	MemoryBoundS float64 `json:"-"`
}

// Key is the row's key in Result.MaxBatch and Result.Knee.
func (r Row) Key() string {
	if r.Model != "" {
		return r.Model + " on " + r.GPU
	}
	return r.GPU
}

// CostFit is one GPU's least-squares fit against the swept dimension.
type CostFit struct {
	GPU       string   `json:"gpu"`
	X         string   `json:"x"`
	Degree    string   `json:"degree"`
	TimeS     FitTerms `json:"time_s"`
	FLOPs     FitTerms `json:"flops"`
	GEMMFLOPs FitTerms `json:"gemm_flops"`
}

// FitTerms are y ≈ baseline + slope·x (+ quadratic·x²).
type FitTerms struct {
	Baseline       float64  `json:"baseline"`
	Slope          float64  `json:"slope"`
	Quadratic      *float64 `json:"quadratic,omitempty"`
	R2             float64  `json:"r2"`
	MaxRelResidual float64  `json:"max_rel_residual"`
}

// Models lists the models of a several-model sweep in row order; nil for
// one model.
func (res *Result) Models() []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range res.Rows {
		if r.Model != "" && !seen[r.Model] {
			seen[r.Model] = true
			out = append(out, r.Model)
		}
	}
	return out
}

// RowsOf are the rows whose Key is key.
func (res *Result) RowsOf(key string) []Row {
	var out []Row
	for _, r := range res.Rows {
		if r.Key() == key {
			out = append(out, r)
		}
	}
	return out
}

// batchSwept reports whether rows (one GPU's) hold more than one batch.
func batchSwept(rows []Row) bool {
	for _, r := range rows {
		if r.Batch != rows[0].Batch {
			return true
		}
	}
	return false
}
