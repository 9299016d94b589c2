// Package session is what the browser build of onnxcost runs: one model
// held in memory as bytes, estimated again under each new setting (GPU,
// dtype, batch, symbols, plan) through the same pipeline as the command
// line (pipeline), so the page and `onnxcost report` give the
// same numbers. It is plain Go, compiled natively for tests and to
// WebAssembly for the page (web/wasm).
package session

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	"github.com/onnxcost/onnxcost/calib"
	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/passes"
	"github.com/onnxcost/onnxcost/pipeline"
	"github.com/onnxcost/onnxcost/train"
	"github.com/onnxcost/onnxcost/viz"
)

// Settings are the command-line flags the page offers, by their flag
// names: --gpu, --dtype, --batch, --dim NAME=V, --plan, --runtime,
// --train, --optimizer, --checkpoint, --power-cap, --sm-clock, --gpus.
// A zero field is the flag's default.
type Settings struct {
	GPU   string           `json:"gpu"`
	DType string           `json:"dtype"`
	Batch int64            `json:"batch"`
	Dims  map[string]int64 `json:"dims"`
	Plan  string           `json:"plan"`
	// Runtime is the execution profile ("" is hwdb.DefaultRuntime).
	Runtime string `json:"runtime,omitempty"`
	// Train costs one training step with Optimizer ("" is adam) and
	// Checkpoint ("" is none).
	Train      bool   `json:"train,omitempty"`
	Optimizer  string `json:"optimizer,omitempty"`
	Checkpoint string `json:"checkpoint,omitempty"`
	// Samples is --samples: a training epoch's samples, priced as
	// ceil(Samples / samples per step) steps (0: no epoch); with Train only.
	Samples int64 `json:"samples,omitempty"`
	// GradAccum and DataParallel are --grad-accum and --data-parallel
	// (0: 1), read with Train only.
	GradAccum    int `json:"grad_accum,omitempty"`
	DataParallel int `json:"data_parallel,omitempty"`
	// Warm is --warm: a call timed back to back with itself, its operands
	// in L2 where the call before left them.
	Warm bool `json:"warm,omitempty"`
	// PowerCap (W) and SMClock (MHz) price every kernel under a board
	// power limit or an SM clock lock (0: the GPU's default).
	PowerCap float64 `json:"power_cap,omitempty"`
	SMClock  float64 `json:"sm_clock,omitempty"`
	// GPUs is the tensor-parallel degree (0 or 1: one GPU).
	GPUs int `json:"gpus,omitempty"`
	// Prompt and Output are generate's --prompt and --output (0: the
	// page's defaults, DefaultPrompt and DefaultOutput); only the
	// generate call reads them, and Concurrency.
	Prompt int64 `json:"prompt,omitempty"`
	Output int64 `json:"output,omitempty"`
	// Concurrency is generate's --concurrency LIST (1,4,16 or 1..256):
	// the serving curve ("": none); TTFTSLO and TPOTSLO (seconds) and
	// Price (USD per GPU-hour) are its --ttft-slo, --tpot-slo and --price
	// (0: none).
	Concurrency string  `json:"concurrency,omitempty"`
	TTFTSLO     float64 `json:"ttft_slo,omitempty"`
	TPOTSLO     float64 `json:"tpot_slo,omitempty"`
	Price       float64 `json:"price,omitempty"`
	// Calibration is --calibration: a file 'onnxcost calibrate' wrote,
	// given by its text (nil: none). The page holds it, not the URL.
	Calibration *File `json:"calibration,omitempty"`
	// GPUFile is --gpu-file: the user's GPU specs (hwdb's format), by
	// its text (nil: none); its GPUs join the database's.
	GPUFile *File `json:"gpu_file,omitempty"`
	// RuntimeFile is --runtime-file: the user's runtime profiles
	// (hwdb/runtimes.yaml's format), by its text (nil: none); they join
	// the built-in profiles, a profile of the same name replacing one.
	RuntimeFile *File `json:"runtime_file,omitempty"`
	// cal is Calibration read and checked (check sets it).
	cal *calib.Calibration
	// Graph is how draw lays out the graph; no other call reads it.
	Graph *GraphView `json:"graph,omitempty"`
}

// File is a file the page read (a calibration, a GPU or runtime file):
// its name, as the user's file was called, which messages and the report
// name as the CLI names the path it was given, and its text.
type File struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

// name is f's name, or def for a file given without one.
func (f *File) name(def string) string {
	if n := strings.TrimSpace(f.Name); n != "" {
		return n
	}
	return def
}

// key identifies f's contents under its name.
// A nil f (no file) has the key "", which no file's is.
func (f *File) key() string {
	if f == nil {
		return ""
	}
	return f.Name + "\x00" + f.Text
}

// GPUDB is the GPU database the settings price on: the built-in one, or
// with --gpu-file's GPUs over it (hwdb.WithUserData: the CLI's reading
// and its one-line errors).
func GPUDB(f *File) (*hwdb.DB, error) {
	if f == nil {
		return hwdb.Builtin()
	}
	db, err := hwdb.WithUserData(f.name("gpus.yaml"), []byte(f.Text))
	if err != nil {
		return nil, fmt.Errorf("--gpu-file %v", err)
	}
	return db, nil
}

// RuntimeDB is the runtime profiles the settings price under: the
// built-in ones, or with --runtime-file's over them
// (hwdb.RuntimesWithUserData: the CLI's reading and its one-line errors).
func RuntimeDB(f *File) (*hwdb.RuntimeDB, error) {
	if f == nil {
		return hwdb.BuiltinRuntimes()
	}
	db, err := hwdb.RuntimesWithUserData(f.name("runtimes.yaml"), []byte(f.Text))
	if err != nil {
		return nil, fmt.Errorf("--runtime-file %v", err)
	}
	return db, nil
}

// GraphView is the page's view of a large graph: the groups it opened,
// a node it searched for, and a focus pattern (graph's --focus).
type GraphView struct {
	// Expand are the keys of the open groups (viz.Group.Key).
	Expand []string `json:"expand,omitempty"`
	// Reveal is a node to draw alone, its groups opened.
	Reveal string `json:"reveal,omitempty"`
	// Focus keeps the nodes whose name or op type matches (a regular
	// expression) and folds the rest.
	Focus string `json:"focus,omitempty"`
}

// power is the cap or lock the settings ask for.
func (st *Settings) power() perf.PowerControl {
	return perf.PowerControl{CapW: st.PowerCap, SMClockMHz: st.SMClock}
}

// train is the cost model's training request; nil without Train.
func (st *Settings) train() cost.Training {
	if !st.Train {
		return nil
	}
	return &train.Options{Optimizer: st.Optimizer, Checkpoint: st.Checkpoint, GradAccum: max(st.GradAccum, 1), DataParallel: max(st.DataParallel, 1)}
}

// options is what pipeline.Estimate needs besides the GPU, as `report`
// passes them for the same flags.
func (s *Session) options(st *Settings, rt *hwdb.Runtime) pipeline.EstimateOptions {
	return pipeline.EstimateOptions{
		DType: st.DType, Plan: st.Plan, Runtime: rt, ToolVersion: s.version, ModelName: s.name,
		Power: st.power(), Train: st.train(), GPUs: st.GPUs, Calibration: st.cal, Warm: st.Warm,
		RuntimeByModel: pipeline.RequestedRuntime(st.Runtime, st.Train, st.DType) == "",
	}
}

// Session is one model held as bytes. The fusion passes rewrite a graph
// in place, so every estimate loads the model again from the bytes
// (milliseconds, and it keeps each estimate independent of the last).
type Session struct {
	name    string
	data    []byte
	version string
	db      *hwdb.DB
	symbols []Symbol
	// decoder says the model takes a key/value cache: the page offers
	// generate's view of it.
	decoder bool
	// runtime is the profile priced when the settings name none and
	// train none: the model's (pipeline.ModelRuntime).
	runtime string
	// fresh is Open's load, unbound and unplanned, kept for the first
	// estimate under default bindings (a page's first view): loading is
	// most of an estimate's cost in WebAssembly. Used once, since the
	// passes rewrite it.
	fresh *pipeline.Loaded
	// cal, gpus and rts are the last calibration, GPU file and runtime
	// file read, by name and text (File.key).
	cal  fileCache[*calib.Calibration]
	gpus fileCache[*hwdb.DB]
	rts  fileCache[*hwdb.RuntimeDB]
	// drawn keeps the last estimates draw made, by settings: opening a
	// group of the graph changes only the drawing, and estimating
	// LLaMA-70B again would cost more than laying out the boxes opened.
	drawn []drawnEstimate
}

// drawnEstimate is one estimate kept for draw.
type drawnEstimate struct {
	key             string
	r               *report.Report
	gpu             *hwdb.GPU
	inputs, outputs []string
}

// keptEstimates is how many estimates draw keeps: the plan's and the
// unfused plan's of the roofline, under the last two settings.
const keptEstimates = 4

// Symbol is a symbolic dim of a graph input.
type Symbol struct {
	Name string `json:"name"`
	// Leading is true when the symbol is the first dim of some input, so
	// that --batch binds it.
	Leading bool `json:"leading"`
	// Inputs name the graph inputs that use it.
	Inputs []string `json:"inputs"`
}

// Open reads a model from bytes; name stands for the file path in every
// message (the CLI names the path it was given). A model that cannot be
// read gives the error the CLI prints for it.
func Open(name string, data []byte, toolVersion string) (*Session, error) {
	db, err := hwdb.Builtin()
	if err != nil {
		return nil, err
	}
	s := &Session{name: name, data: data, version: toolVersion, db: db}
	l, err := pipeline.LoadBytes(name, data, pipeline.Options{BindAll: true})
	if err != nil {
		return nil, err
	}
	s.symbols = symbolsOf(l)
	s.runtime = pipeline.ModelRuntime(l)
	s.decoder = pipeline.HasCacheInput(l.Model.Graph)
	s.fresh = l
	return s, nil
}

// Name is the model's name as given to Open.
func (s *Session) Name() string { return s.name }

// Decoder says whether the model takes a key/value cache (generate's view).
func (s *Session) Decoder() bool { return s.decoder }

// Symbols lists the symbolic dims of the model's graph inputs, sorted.
func (s *Session) Symbols() []Symbol { return s.symbols }

// symbolsOf collects the symbolic dims of the declared graph inputs.
func symbolsOf(l *pipeline.Loaded) []Symbol {
	by := map[string]*Symbol{}
	for _, in := range l.Model.Graph.Inputs {
		if in == nil || in.IsInitializer || in.Declared == nil {
			continue
		}
		for i, d := range in.Declared.Shape.Dims {
			if d.IsKnown() || d.Sym == "" {
				continue
			}
			sym := by[d.Sym]
			if sym == nil {
				sym = &Symbol{Name: d.Sym}
				by[d.Sym] = sym
			}
			sym.Leading = sym.Leading || i == 0
			if n := len(sym.Inputs); n == 0 || sym.Inputs[n-1] != in.Name {
				sym.Inputs = append(sym.Inputs, in.Name)
			}
		}
	}
	out := make([]Symbol, 0, len(by))
	for _, sym := range by {
		out = append(out, *sym)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// validDTypes are the values --dtype accepts ("" is the model's own).
var validDTypes = append([]string{""}, cost.DTypes()...)

// check validates settings with the CLI's checks and messages for the
// same flags (pipeline/check.go), in the order `report` makes
// them, and resolves the GPU and runtime profile.
func (s *Session) check(st *Settings) (*hwdb.GPU, *hwdb.Runtime, error) {
	if st.GPU == "" {
		return nil, nil, fmt.Errorf("--gpu is required (see 'onnxcost gpus' for the list)")
	}
	st.DType = strings.ToLower(strings.TrimSpace(st.DType))
	if err := pipeline.CheckValue("--dtype", st.DType, validDTypes...); err != nil {
		return nil, nil, err
	}
	if st.Batch < 0 {
		return nil, nil, fmt.Errorf("--batch must be positive, got %d", st.Batch)
	}
	for k, v := range st.Dims {
		if strings.TrimSpace(k) == "" || v <= 0 {
			return nil, nil, fmt.Errorf("--dim %q: value must be a positive integer", fmt.Sprintf("%s=%d", k, v))
		}
	}
	if err := pipeline.CheckGPUs(st.GPUs); err != nil {
		return nil, nil, err
	}
	db, err := s.gpuDB(st.GPUFile)
	if err != nil {
		return nil, nil, err
	}
	g, err := db.Lookup(st.GPU)
	if err != nil {
		return nil, nil, fmt.Errorf("--gpu: %w", err)
	}
	rts, err := s.runtimeDB(st.RuntimeFile)
	if err != nil {
		return nil, nil, err
	}
	// The runtime asked for (named, or training's or autocast's), else
	// the model's, as report settles it.
	name := pipeline.RequestedRuntime(st.Runtime, st.Train, st.DType)
	if name == "" {
		name = s.runtime
	}
	rt, err := lookupRuntime(rts, name)
	if err != nil {
		return nil, nil, err
	}
	if err := pipeline.CheckValue("--plan", st.Plan, append([]string{""}, pipeline.PlanNames()...)...); err != nil {
		return nil, nil, err
	}
	if st.Plan, err = pipeline.ResolvePlan(st.Plan, rt, st.train()); err != nil {
		return nil, nil, err
	}
	if err := pipeline.CheckPowerControl(g, st.power()); err != nil {
		return nil, nil, err
	}
	if err := pipeline.CheckTrain(&st.Optimizer, &st.Checkpoint); err != nil {
		return nil, nil, err
	}
	if err := pipeline.CheckWarm(st.Warm, st.Train); err != nil {
		return nil, nil, err
	}
	// As the CLI's flags; the page keeps them with training off, unused.
	if st.GradAccum < 0 {
		return nil, nil, fmt.Errorf("--grad-accum %d: want 1 or more micro-batches per optimizer step", st.GradAccum)
	}
	if st.DataParallel < 0 {
		return nil, nil, fmt.Errorf("--data-parallel %d: want 1 or more replicas", st.DataParallel)
	}
	if st.cal, err = s.calibration(st.Calibration); err != nil {
		return nil, nil, err
	}
	return g, rt, nil
}

// fileCache keeps what the last file of one kind read to (File.key):
// the page sends its files with every call, and reading a GPU or runtime
// database again per call would cost more than the estimate.
type fileCache[T any] struct {
	key string
	v   T
	ok  bool
}

// get is read(f), or what it gave for the same file last.
func (c *fileCache[T]) get(f *File, read func(*File) (T, error)) (T, error) {
	if c.ok && c.key == f.key() {
		return c.v, nil
	}
	v, err := read(f)
	if err != nil {
		return v, err
	}
	c.key, c.v, c.ok = f.key(), v, true
	return v, nil
}

// calibration reads f as --calibration reads a file (calib.Parse: the
// same checks, the same one-line error naming it); nil for none.
func (s *Session) calibration(f *File) (*calib.Calibration, error) {
	if f == nil {
		return nil, nil
	}
	return s.cal.get(f, func(f *File) (*calib.Calibration, error) {
		c, err := calib.Parse(f.name("calibration.yaml"), []byte(f.Text))
		if err != nil {
			return nil, fmt.Errorf("--calibration: %w", err)
		}
		return c, nil
	})
}

// gpuDB is GPUDB(f), the session's built-in database when f is nil and
// the last file's when it is the same.
func (s *Session) gpuDB(f *File) (*hwdb.DB, error) {
	if f == nil {
		return s.db, nil
	}
	return s.gpus.get(f, GPUDB)
}

// runtimeDB is RuntimeDB(f), kept while f is the same file.
func (s *Session) runtimeDB(f *File) (*hwdb.RuntimeDB, error) { return s.rts.get(f, RuntimeDB) }

// lookupRuntime is the profile of db --runtime names, with the CLI's
// message for an unknown one.
func lookupRuntime(db *hwdb.RuntimeDB, name string) (*hwdb.Runtime, error) {
	rt, err := db.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("--runtime: %w", err)
	}
	return rt, nil
}

// load reads the bytes again and runs the plan's passes, as `report` does.
func (s *Session) load(st Settings) (*pipeline.Loaded, error) {
	var l *pipeline.Loaded
	if s.fresh != nil && st.Batch == 0 && len(st.Dims) == 0 {
		l, s.fresh = s.fresh, nil
	} else {
		var err error
		l, err = pipeline.LoadBytes(s.name, s.data, pipeline.Options{Batch: st.Batch, Dims: st.Dims, BindAll: true})
		if err != nil {
			return nil, err
		}
	}
	// The CLI's default pass flags: all passes, no checks, no dumps; a
	// training step leaves out the inference-only passes, as --train does.
	opt := pipeline.ForDType(passes.Options{DumpTo: io.Discard}, st.DType)
	if st.Train {
		opt = pipeline.ForTraining(opt)
	}
	if err := l.Plan(st.Plan, opt); err != nil {
		return nil, err
	}
	return l, nil
}

// Estimate is `onnxcost report MODEL --format json` under the settings.
func (s *Session) Estimate(st Settings) (*report.Report, error) {
	r, l, _, err := s.estimate(st)
	if err != nil {
		return nil, err
	}
	if err := st.epoch(r, l); err != nil {
		return nil, err
	}
	return r, nil
}

// epoch adds --samples' epoch to a training step's report, with report's
// checks and messages (nothing without Samples). The page keeps Samples
// with training off, unused, as it keeps the optimizer.
func (st *Settings) epoch(r *report.Report, l *pipeline.Loaded) error {
	if st.Samples == 0 || !st.Train {
		return nil
	}
	dims := make([]string, 0, len(st.Dims))
	for k, v := range st.Dims {
		dims = append(dims, fmt.Sprintf("%s=%d", k, v))
	}
	return pipeline.SetEpoch(r, l, st.Samples, st.Batch, dims)
}

func (s *Session) estimate(st Settings) (*report.Report, *pipeline.Loaded, *hwdb.GPU, error) {
	gpu, rt, err := s.check(&st)
	if err != nil {
		return nil, nil, nil, err
	}
	l, err := s.load(st)
	if err != nil {
		return nil, nil, nil, err
	}
	r, err := pipeline.Estimate(l, gpu, s.options(&st, rt))
	if err != nil {
		return nil, nil, nil, err
	}
	return r, l, gpu, nil
}

// GPURow is one GPU of the comparison table.
type GPURow struct {
	GPU    string `json:"gpu"`
	Vendor string `json:"vendor"`
	Arch   string `json:"arch"`
	// Totals are the report's totals on this GPU; Err is set instead when
	// the model cannot be costed there (e.g. fp8 on a GPU without it).
	Totals *report.Totals `json:"totals,omitempty"`
	Err    string         `json:"error,omitempty"`
}

// GPUs costs the model on every GPU of the database under the other
// settings (st.GPU is ignored): each row's totals are what `report --gpu
// ROW` prints. The model is loaded and planned once (neither depends on
// the GPU) and costed per GPU.
func (s *Session) GPUs(st Settings) ([]GPURow, error) {
	db, err := s.gpuDB(st.GPUFile)
	if err != nil {
		return nil, err
	}
	all := db.All()
	if len(all) == 0 {
		return nil, fmt.Errorf("the GPU database is empty")
	}
	st.GPU = all[0].Name
	// A power cap or clock lock is checked per GPU below: each has its
	// own range, and a row out of range says so.
	pw := st.power()
	st.PowerCap, st.SMClock = 0, 0
	_, rt, err := s.check(&st)
	if err != nil {
		return nil, err
	}
	st.PowerCap, st.SMClock = pw.CapW, pw.SMClockMHz
	l, err := s.load(st)
	if err != nil {
		return nil, err
	}
	rows := make([]GPURow, 0, len(all))
	for _, g := range all {
		row := GPURow{GPU: g.Name, Vendor: g.Vendor, Arch: g.Arch}
		err := pipeline.CheckPowerControl(g, pw)
		var r *report.Report
		if err == nil {
			r, err = pipeline.Estimate(l, g, s.options(&st, rt))
		}
		if err != nil {
			row.Err = err.Error()
		} else {
			t := r.Totals
			row.Totals = &t
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// GPUList is the database's GPUs, as `onnxcost gpus --format json` lists them.
func (s *Session) GPUList() []*hwdb.GPU { return s.db.All() }

// Views are the drawings of one estimate: the annotated graph as DOT (the
// page lays it out with Graphviz) and the roofline's data (the page draws
// it: the chart library of `onnxcost roofline` would triple the
// WebAssembly's size).
type Views struct {
	DOT      string   `json:"dot"`
	Roofline Roofline `json:"roofline"`
	// Depth is the depth scopes were collapsed to, Expanded the open
	// groups' keys (with those Reveal opened), Groups the boxes drawn:
	// the page names and opens boxes by them.
	Depth    int         `json:"depth"`
	Expanded []string    `json:"expanded"`
	Groups   []viz.Group `json:"groups"`
}

// Roofline is the data of a roofline chart: the GPU's roofs and every
// node placed under them, for the plan and (when the plan is fused) the
// unfused plan.
type Roofline struct {
	HBMBW     float64 `json:"hbm_bw"`
	L2BW      float64 `json:"l2_bw"`
	L2Assumed bool    `json:"l2_assumed"`
	// Peaks are the compute roofs of the precisions the nodes run at.
	Peaks   map[string]float64 `json:"peaks"`
	Points  []RoofPoint        `json:"points"`
	Unfused []RoofPoint        `json:"unfused,omitempty"`
}

// RoofPoint is one node under the roofs (viz.RoofOf).
type RoofPoint struct {
	Name      string  `json:"name"`
	OpType    string  `json:"op_type"`
	AI        float64 `json:"ai"`       // FLOP/byte
	Achieved  float64 `json:"achieved"` // estimated FLOP/s
	Roof      float64 `json:"roof"`
	Ceiling   string  `json:"ceiling"`
	Precision string  `json:"precision"`
	TimeS     float64 `json:"time_s"`
}

// Draw is `onnxcost graph MODEL` (default flags) under the settings, the
// DOT of the plan's graph, collapsed by module when large and opened where
// st.Graph says; with no st.Graph, with the data of `onnxcost roofline
// MODEL` (with it, the page is redrawing its graph: no roofline points).
func (s *Session) Draw(st Settings) (*Views, error) {
	view, graphOnly := st.Graph, st.Graph != nil
	if view == nil {
		view = &GraphView{}
	}
	st.Graph = nil // not part of the estimate
	e, err := s.drawEstimate(st)
	if err != nil {
		return nil, err
	}
	ceil := viz.CeilingsOf(e.gpu)
	opt := viz.GraphOptions{Color: "bound", Halo: viz.DefaultHalo, RankDir: "TB", Page: true,
		Inputs: e.inputs, Outputs: e.outputs, Expand: view.Expand, Reveal: view.Reveal}
	if view.Focus != "" {
		re, err := regexp.Compile(view.Focus)
		if err != nil {
			return nil, fmt.Errorf("focus %q: %v", view.Focus, err)
		}
		opt.Focus = re
	}
	d, err := viz.Draw(e.r, ceil, opt)
	if err != nil {
		return nil, err
	}
	v := &Views{DOT: d.Graph.String(), Depth: d.Depth, Expanded: d.Expanded, Groups: d.Groups,
		Roofline: Roofline{HBMBW: ceil.HBMBW, L2BW: ceil.L2BW, L2Assumed: ceil.L2Assumed, Peaks: map[string]float64{}}}
	if graphOnly {
		// The page's graph alone: LLaMA-70B's roofline points are a
		// megabyte of JSON, sent again on every click otherwise.
		v.Roofline.Points = []RoofPoint{}
		return v, nil
	}
	v.Roofline.Points = roofPoints(e.r, ceil, v.Roofline.Peaks)
	if e.r.Plan == "fused" {
		u := st
		u.Plan = "unfused"
		ue, err := s.drawEstimate(u)
		if err != nil {
			return nil, err
		}
		v.Roofline.Unfused = roofPoints(ue.r, ceil, v.Roofline.Peaks)
	}
	return v, nil
}

// drawEstimate is the estimate under st, kept for the next draw.
func (s *Session) drawEstimate(st Settings) (*drawnEstimate, error) {
	k, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	for _, e := range s.drawn {
		if e.key == string(k) {
			return &e, nil
		}
	}
	r, l, gpu, err := s.estimate(st)
	if err != nil {
		return nil, err
	}
	e := drawnEstimate{key: string(k), r: r, gpu: gpu}
	e.inputs, e.outputs = l.GraphIO()
	s.drawn = append(s.drawn, e)
	if len(s.drawn) > keptEstimates {
		s.drawn = s.drawn[1:]
	}
	return &e, nil
}

// roofPoints places every node that runs a kernel with FLOPs and bytes
// (log axes cannot show the others) and records the peaks it uses.
func roofPoints(r *report.Report, c viz.Ceilings, peaks map[string]float64) []RoofPoint {
	out := []RoofPoint{}
	for i := range r.Nodes {
		n := &r.Nodes[i]
		rf := c.RoofOf(n)
		if n.FLOPs <= 0 || n.BytesRead+n.BytesWritten <= 0 || rf.Achieved <= 0 || rf.AI <= 0 {
			continue
		}
		if n.Precision != "" {
			peaks[n.Precision] = c.Peak(n.Precision)
		}
		out = append(out, RoofPoint{Name: n.Name, OpType: ir.QualifiedOp(n.Domain, n.OpType), AI: rf.AI,
			Achieved: rf.Achieved, Roof: rf.Roof, Ceiling: string(rf.Ceiling), Precision: n.Precision, TimeS: n.TimeS})
	}
	return out
}

// Text is the report's totals as the CLI's text report writes them
// (cost/render), keyed by the JSON field (plus "bytes": read + written),
// so the page's cards read exactly as `report` prints; the lines under
// the header (memory verdict, runtime, training step, the time's 80%
// interval) and the node notes' lines ("node_notes", newline-separated)
// are render's own;
// training figures are keyed "train.FIELD" and "train.memory.FIELD".
func Text(r *report.Report) map[string]string {
	t := r.Totals
	out := map[string]string{
		"header":               render.Clean(render.Header(r)),
		"fit_line":             render.Clean(render.FitLine(r)),
		"runtime_line":         render.Clean(render.RuntimeLine(r)),
		"interval_line":        render.Clean(render.IntervalText(r)),
		"time_s":               render.Seconds(t.TimeS),
		"flops":                render.FLOPs(t.FLOPs),
		"macs":                 render.Count(t.MACs),
		"transcendentals":      render.Count(t.Transcendentals),
		"bytes":                render.Bytes(t.BytesRead + t.BytesWritten),
		"bytes_read":           render.Bytes(t.BytesRead),
		"bytes_written":        render.Bytes(t.BytesWritten),
		"launches":             render.Count(t.Launches),
		"peak_memory_bytes":    render.Bytes(t.PeakMemoryBytes),
		"energy_j":             render.Joules(t.EnergyJ),
		"params":               render.ParamsCount(t),
		"param_bytes":          render.Bytes(t.ParamBytes),
		"gemm_conv_time_share": render.Percent(t.GEMMConvTimeShare),
		"nodes":                render.Count(float64(t.Nodes)),
	}
	if lines, more := render.NodeNoteLines(r); len(lines) > 0 {
		// One line per note group, as the text report lists them under
		// the totals; the page shows them below its warnings.
		if more > 0 {
			lines = append(lines, render.MoreNotes(more))
		}
		out["node_notes"] = strings.Join(lines, "\n")
	}
	if t.GPUs > 1 {
		out["communication_time_s"] = render.Seconds(t.CommunicationTimeS)
		out["per_gpu_peak_memory_bytes"] = render.Bytes(t.PerGPUPeakMemoryBytes)
	}
	if tr := t.Train; tr != nil {
		out["train.step_line"] = render.Clean(render.TrainStepLine(tr))
		if line := render.EpochLine(tr, render.GPUsRunning(t)); line != "" {
			out["train.epoch_line"] = render.Clean(line)
		}
		for k, v := range map[string]float64{"step_time_s": tr.StepTimeS, "forward_time_s": tr.ForwardTimeS,
			"backward_time_s": tr.BackwardTimeS, "optimizer_time_s": tr.OptimizerTimeS, "recompute_time_s": tr.RecomputeTimeS} {
			out["train."+k] = render.Seconds(v)
		}
		for k, v := range map[string]float64{"forward_flops": tr.ForwardFLOPs, "backward_flops": tr.BackwardFLOPs, "optimizer_flops": tr.OptimizerFLOPs} {
			out["train."+k] = render.FLOPs(v)
		}
		m := tr.Memory
		for k, v := range map[string]float64{"weights_bytes": m.WeightsBytes, "master_weights_bytes": m.MasterWeightsBytes,
			"gradients_bytes": m.GradientsBytes, "optimizer_state_bytes": m.OptimizerStateBytes, "activations_bytes": m.ActivationsBytes,
			"workspace_bytes": m.WorkspaceBytes, "runtime_bytes": m.RuntimeBytes, "tensor_peak_bytes": m.TensorPeakBytes, "peak_bytes": m.PeakBytes} {
			out["train.memory."+k] = render.Bytes(v)
		}
	}
	return out
}

// Choices are the values the page's menus offer, from the lists the CLI
// checks its flags against, so that the two cannot disagree.
type Choices struct {
	DTypes      []string `json:"dtypes"`
	Optimizers  []string `json:"optimizers"`
	Checkpoints []string `json:"checkpoints"`
	// Plans are the values --plan takes besides the runtime's own ("").
	Plans []string `json:"plans"`
	// Defaults are the values of --runtime, --optimizer and --checkpoint
	// left out, by the Settings' JSON names.
	Defaults map[string]string `json:"defaults"`
	MaxGPUs  int               `json:"max_gpus"`
}

// AllChoices are the page's menus: --dtype, --optimizer, --checkpoint
// and --plan values, and the --gpus limit (the runtime menu is
// runtimeList's, which takes --runtime-file's profiles).
func AllChoices() Choices {
	return Choices{DTypes: cost.DTypes(), Optimizers: train.Optimizers(), Checkpoints: train.CheckpointModes(),
		MaxGPUs: pipeline.MaxGPUs, Plans: pipeline.PlanNames(),
		Defaults: map[string]string{"runtime": hwdb.DefaultRuntime, "contrib_runtime": pipeline.ContribRuntime, "train_runtime": train.Runtime, "optimizer": pipeline.DefaultOptimizer, "checkpoint": pipeline.DefaultCheckpoint}}
}
