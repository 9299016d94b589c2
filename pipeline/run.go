package pipeline

import (
	"fmt"
	"strings"

	"github.com/onnxcost/onnxcost/calib"
	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/passes"
)

// Config says how Run reads, plans and prices a model: one field per
// option of `onnxcost report`. The zero value costs the fused plan at
// the model's own dtypes with the default runtime profile; Run needs a
// GPU (GPU or GPUSpec), Count none.
type Config struct {
	// Batch, when > 0, binds the batch dim (--batch): the input dim
	// named like a batch, else the symbolic dim every input shares; a
	// static batch-1 model has its leading dim rewritten, with a warning.
	Batch int64
	// Dims binds symbolic dims by name (--dim NAME=VALUE). A symbol left
	// unbound is taken as 1 and the report warns about it.
	Dims map[string]int64
	// InputDataDir binds graph inputs to the tensors in
	// DIR/input_<i>.pb, in graph-input order (--input-data); InputData
	// binds them by name to tensors the caller holds.
	InputDataDir string
	InputData    map[string]*ir.Tensor

	// Calibration, when set, corrects the kernel times by measurements
	// (--calibration, calib.Load).
	Calibration *calib.Calibration
	// Warm prices a call repeated back to back (--warm; cost.Options.Warm).
	Warm bool

	// Plan names the kernels priced (--plan; passes.PlanNames): "" is
	// the runtime's own (hwdb.Runtime.Plan: eager for pytorch and graph,
	// inductor for pytorch-compile, onnxruntime, fused for tensorrt).
	Plan string
	// Passes selects the fusion passes of the fused plan (Only: --passes,
	// Disable: --disable, Check: --check); the zero value runs them all.
	// The selection is checked under either plan, so a misspelt pass is
	// an error whichever is asked for.
	Passes passes.Options

	// GPU names the target GPU as `onnxcost gpus` lists it (--gpu);
	// GPUSpec, when set, is used instead: a spec of your own (measured
	// ceilings, an unreleased part).
	GPU     string
	GPUSpec *hwdb.GPU
	// DType is the compute dtype (--dtype): "" for the model's own, or
	// one of cost.DTypes().
	DType string
	// Runtime names the execution profile (--runtime; "" is the
	// training step's own under Train, else the model's: ModelRuntime);
	// RuntimeSpec, when set, is used instead. Runtimes, when set, is
	// where names are looked up (the built-in profiles with a user's
	// file over them); nil is the built-in ones.
	Runtime     string
	RuntimeSpec *hwdb.Runtime
	Runtimes    *hwdb.RuntimeDB
	// PowerCapW (--power-cap) and SMClockMHz (--sm-clock) price every
	// kernel under a board power limit or an SM clock lock; 0 is the
	// GPU's default.
	PowerCapW, SMClockMHz float64
	// GPUs is the tensor-parallel degree (--gpus); 0 and 1 are one GPU.
	GPUs int
	// Train, when set, costs one training step instead of an inference
	// (--train; a *train.Options, through its Training method); passes
	// valid only at inference are then left out.
	Train cost.Training

	// ModelName names the model in the report ("" is the path or name
	// given); ToolVersion is recorded in it.
	ModelName, ToolVersion string

	// Progress, when set, is called as each phase starts (a progress
	// display; the command line's spinner).
	Progress func(Phase)
	// DropFilePages and Counted tune the reading of very large models
	// (see Options); the zero values suit a library caller.
	DropFilePages bool
	Counted       func(nodes int)
}

// Phase is a step of Run, as Config.Progress is told it.
type Phase int

const (
	// PhaseRead reads the model, inlines its functions and infers its
	// shapes.
	PhaseRead Phase = iota
	// PhasePlan runs the plan's fusion passes.
	PhasePlan
	// PhaseCost runs the cost model (pricing on a GPU, or counting).
	PhaseCost
)

// Result is what Analyze returns: the report, and what a caller needs to
// price the same planned model again (Estimate) under other settings.
type Result struct {
	Report *report.Report
	// Loaded is the model as read and planned.
	Loaded *Loaded
	// GPU is the GPU priced on; nil for a count-only report.
	GPU *hwdb.GPU
	// Estimate is the cost model's request, as Estimate takes it.
	Estimate EstimateOptions
}

// Run reads the model at path (a .onnx file, or "zoo:NAME?k=v" for a
// built-in model), infers its shapes, runs the plan's fusion passes and
// prices it on cfg's GPU. Bad input (an unreadable model, a bad binding,
// an unknown GPU or pass) is an *Error naming the file or the setting.
func Run(path string, cfg Config) (*report.Report, error) {
	return report1(runModel(fileSource(path), cfg, mustPrice))
}

// RunBytes is Run for a model held in memory; name stands for its path
// in messages and the report. Tensors stored outside the file cannot be
// resolved and are marked missing (their dims and dtype are still
// known, which is all the cost needs).
func RunBytes(name string, data []byte, cfg Config) (*report.Report, error) {
	return report1(runModel(bytesSource(name, data), cfg, mustPrice))
}

// Count is Run without a GPU: the model's exact counts (MACs, FLOPs,
// bytes read and written, parameters, launches, peak activation memory)
// per node and in total, with nothing priced; the report's CountOnly is
// set (see cost.Count). Every GPU setting of cfg is ignored, except that
// Train and GPUs above 1, which need a GPU, are refused.
func Count(path string, cfg Config) (*report.Report, error) {
	return report1(runModel(fileSource(path), cfg, mustCount))
}

// CountBytes is Count for a model held in memory (see RunBytes).
func CountBytes(name string, data []byte, cfg Config) (*report.Report, error) {
	return report1(runModel(bytesSource(name, data), cfg, mustCount))
}

// Analyze is Run when cfg names a GPU and Count when it names none,
// keeping the loaded model: the command line's one way in.
func Analyze(path string, cfg Config) (*Result, error) {
	mode := mustPrice
	if !cfg.hasGPU() {
		mode = mustCount
	}
	return runModel(fileSource(path), cfg, mode)
}

// report1 is a Result's report.
func report1(res *Result, err error) (*report.Report, error) {
	if err != nil {
		return nil, err
	}
	return res.Report, nil
}

// hasGPU reports whether cfg names a GPU to price on.
func (cfg *Config) hasGPU() bool {
	return cfg.GPUSpec != nil || strings.TrimSpace(cfg.GPU) != ""
}

// source loads a model with the given options: from a file or from bytes.
type source func(Options) (*Loaded, error)

func fileSource(path string) source {
	return func(o Options) (*Loaded, error) { return Load(path, o) }
}

func bytesSource(name string, data []byte) source {
	return func(o Options) (*Loaded, error) { return LoadBytes(name, data, o) }
}

// runMode says whether runModel prices or counts.
type runMode int

const (
	mustPrice runMode = iota
	mustCount
)

// runModel is every entry point: check the settings (before reading, so
// a typo costs no parse), load, plan, then price or count.
func runModel(src source, cfg Config, mode runMode) (*Result, error) {
	if err := CheckValue("--plan", cfg.Plan, append([]string{""}, passes.PlanNames()...)...); err != nil {
		return nil, &Error{Err: err}
	}
	if err := CheckValue("--dtype", cfg.DType, append([]string{""}, cost.DTypes()...)...); err != nil {
		return nil, &Error{Err: err}
	}
	if err := CheckWarm(cfg.Warm, cfg.Train != nil); err != nil {
		return nil, &Error{Err: err}
	}
	res := &Result{}
	var err error
	if mode == mustCount {
		if cfg.Train != nil {
			return nil, inputErr("a training step is priced on a GPU: name one to cost it")
		}
		if cfg.GPUs > 1 {
			return nil, inputErr("--gpus %d: tensor parallelism is priced on a GPU: name one to cost it", cfg.GPUs)
		}
	} else if res.GPU, err = cfg.gpu(); err != nil {
		return nil, err
	}
	// The runtime names the plan even when counting (the kernels counted
	// are those it runs); only pricing uses its figures. With none named,
	// the model decides it once read.
	rt, err := cfg.runtime()
	if err != nil {
		return nil, err
	}
	if _, err := ResolvePlan(cfg.Plan, rt, cfg.Train); err != nil {
		return nil, err
	}
	if mode == mustPrice {
		if err := CheckGPUs(cfg.GPUs); err != nil {
			return nil, &Error{Err: err}
		}
		if err := CheckPowerControl(res.GPU, cfg.power()); err != nil {
			return nil, &Error{Err: err}
		}
	}
	cfg.phase(PhaseRead)
	l, err := src(Options{
		Batch:         cfg.Batch,
		Dims:          cfg.Dims,
		InputDataDir:  cfg.InputDataDir,
		InputData:     cfg.InputData,
		BindAll:       true,
		DropFilePages: cfg.DropFilePages,
		Counted:       cfg.Counted,
	})
	if err != nil {
		return nil, err
	}
	res.Loaded = l
	byModel := rt == nil
	rt, plan, err := SettleRuntime(l, rt, cfg.Runtimes, cfg.Plan, cfg.Train, cfg.DType)
	if err != nil {
		return nil, err
	}
	cfg.phase(PhasePlan)
	popt := ForDType(cfg.Passes, cfg.DType)
	if cfg.Train != nil {
		popt = ForTraining(popt)
	}
	if err := l.Plan(plan, popt); err != nil {
		return nil, err
	}
	if mode == mustCount {
		rt = nil
	}
	res.Estimate = EstimateOptions{
		DType:          cfg.DType,
		Plan:           plan,
		Runtime:        rt,
		ToolVersion:    cfg.ToolVersion,
		ModelName:      cfg.ModelName,
		Power:          cfg.power(),
		Train:          cfg.Train,
		GPUs:           cfg.GPUs,
		Calibration:    cfg.Calibration,
		Warm:           cfg.Warm,
		RuntimeByModel: byModel,
	}
	cfg.phase(PhaseCost)
	if mode == mustCount {
		res.Report, err = CountLoaded(l, res.Estimate)
	} else {
		res.Report, err = Estimate(l, res.GPU, res.Estimate)
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (cfg *Config) phase(p Phase) {
	if cfg.Progress != nil {
		cfg.Progress(p)
	}
}

func (cfg *Config) power() perf.PowerControl {
	return perf.PowerControl{CapW: cfg.PowerCapW, SMClockMHz: cfg.SMClockMHz}
}

// gpu is the GPU cfg names.
func (cfg *Config) gpu() (*hwdb.GPU, error) {
	if cfg.GPUSpec != nil {
		return cfg.GPUSpec, nil
	}
	name := strings.TrimSpace(cfg.GPU)
	if name == "" {
		return nil, inputErr("no GPU to price on: name one (Config.GPU, --gpu; see 'onnxcost gpus'), or count without one (Count)")
	}
	g, err := hwdb.Lookup(name)
	if err != nil {
		return nil, inputErr("--gpu %s: %w", name, err)
	}
	return g, nil
}

// runtime is the execution profile cfg names: nil when none is named
// and no training step decides it, for the model to (ModelRuntime).
func (cfg *Config) runtime() (*hwdb.Runtime, error) {
	if cfg.RuntimeSpec != nil {
		return cfg.RuntimeSpec, nil
	}
	// A training step or an autocast call asks for PyTorch when no
	// runtime is named, as every command asks (RequestedRuntime); found
	// in cfg.Runtimes, where a user's file may replace it.
	name := strings.TrimSpace(RequestedRuntime(cfg.Runtime, cfg.Train != nil, cfg.DType))
	if name == "" {
		return nil, nil
	}
	return cfg.lookupRuntime(name)
}

// lookupRuntime finds a named profile in cfg.Runtimes, or among the
// built-in ones.
func (cfg *Config) lookupRuntime(name string) (*hwdb.Runtime, error) {
	return lookupRuntimeIn(cfg.Runtimes, name)
}

// lookupRuntimeIn finds a named profile in db (nil: the built-in ones).
func lookupRuntimeIn(db *hwdb.RuntimeDB, name string) (*hwdb.Runtime, error) {
	if db == nil {
		return lookupRuntime(name)
	}
	rt, err := db.Lookup(name)
	if err != nil {
		return nil, inputErr("--runtime %s: %w", name, err)
	}
	return rt, nil
}

// defaultRuntime is the profile priced when none is named:
// hwdb.DefaultRuntime, or a training step's own (PyTorch eager).
func defaultRuntime(tr cost.Training) (*hwdb.Runtime, error) {
	if tr != nil {
		return lookupRuntime(tr.DefaultRuntime())
	}
	return lookupRuntime(hwdb.DefaultRuntime)
}

func lookupRuntime(name string) (*hwdb.Runtime, error) {
	rt, err := hwdb.LookupRuntime(name)
	if err != nil {
		return nil, inputErr("--runtime %s: %w", name, err)
	}
	return rt, nil
}

// CountLoaded is Estimate without a GPU (cost.Count): the counts of a
// loaded, planned model, with its bindings and warnings attached. Of
// opt, only DType, Plan, ToolVersion and ModelName apply; Train and GPUs
// above 1 are refused.
func CountLoaded(l *Loaded, opt EstimateOptions) (*report.Report, error) {
	name := opt.ModelName
	if name == "" {
		name = l.Path
	}
	r, err := cost.Count(l.Model.Graph, l.Model, cost.Options{
		DType:       opt.DType,
		Plan:        opt.Plan,
		ToolVersion: opt.ToolVersion,
		ModelName:   name,
		Train:       opt.Train,
		GPUs:        opt.GPUs,
	})
	if err != nil {
		return nil, inputErr("%s: %w", l.Path, err)
	}
	r.Bindings = l.Bindings
	r.Warnings = shortenAll(append(append([]string{}, l.Warnings...), r.Warnings...))
	return r, nil
}

// String names a phase as a progress display shows it.
func (p Phase) String() string {
	switch p {
	case PhaseRead:
		return "reading, inferring shapes"
	case PhasePlan:
		return "planning"
	case PhaseCost:
		return "costing"
	}
	return fmt.Sprintf("Phase(%d)", int(p))
}
