package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/pipeline"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/sweep"
	"github.com/spf13/cobra"
)

func init() { register("sweep", newSweepCmd) }

// SweepSchemaVersion versions the JSON contract of `onnxcost sweep`
// (cmd/onnxcost/sweep.schema.json).
const SweepSchemaVersion = 1

// sweepJSON is `sweep --format json`.
type sweepJSON struct {
	SchemaVersion int    `json:"schema_version"`
	ToolVersion   string `json:"tool_version"`
	Model         string `json:"model"`
	DType         string `json:"dtype"`
	Plan          string `json:"plan"`
	// Swept names the dimensions that take more than one value, in the
	// order rows vary them (params, then dims, then batch fastest).
	Swept []string `json:"swept"`
	// GPUs gives each GPU's canonical name and memory, in the order asked.
	GPUs     []sweepGPU        `json:"gpus"`
	Rows     []sweepRow        `json:"rows"`
	MaxBatch map[string]*int64 `json:"max_batch"`
	Knee     map[string]*int64 `json:"knee"`
	Fit      []sweepFit        `json:"fit,omitempty"`
	Warnings []string          `json:"warnings"`
}

type sweepGPU struct {
	Name        string  `json:"name"`
	MemoryBytes float64 `json:"memory_bytes"`
}

// sweepRow is one GPU at one point of the sweep.
type sweepRow struct {
	GPU      string           `json:"gpu"`
	Batch    int64            `json:"batch"`
	Bindings map[string]int64 `json:"bindings"`
	// Model is the row's model when the sweep compares several.
	Model string `json:"model,omitempty"`
	// Params holds the zoo parameters of the point (--param), if any.
	Params          map[string]int64 `json:"params,omitempty"`
	TimeS           float64          `json:"time_s"`
	ThroughputPerS  float64          `json:"throughput_per_s"`
	PeakMemoryBytes float64          `json:"peak_memory_bytes"`
	Fits            bool             `json:"fits"`
	FLOPs           float64          `json:"flops"`
	// GEMMFLOPs counts the FLOPs of Conv, Gemm, MatMul and recurrent
	// nodes (and fused nodes built around them): the work the seed's
	// scaling formulas describe.
	GEMMFLOPs float64 `json:"gemm_flops"`

	x       float64 // the swept value, for fits and charts
	energyJ float64 // for gpus compare
}

// sweepFit is one GPU's least-squares fit against the swept dimension.
type sweepFit struct {
	GPU       string   `json:"gpu"`
	X         string   `json:"x"`
	Degree    string   `json:"degree"`
	TimeS     fitTerms `json:"time_s"`
	FLOPs     fitTerms `json:"flops"`
	GEMMFLOPs fitTerms `json:"gemm_flops"`
}

// fitTerms are y ≈ baseline + slope·x (+ quadratic·x²).
type fitTerms struct {
	Baseline       float64  `json:"baseline"`
	Slope          float64  `json:"slope"`
	Quadratic      *float64 `json:"quadratic,omitempty"`
	R2             float64  `json:"r2"`
	MaxRelResidual float64  `json:"max_rel_residual"`
}

// sweepFlags are the flags of `sweep`.
type sweepFlags struct {
	gpus, gpuFile, dtype, plan, inputData string
	batch                                 string
	dims, params                          []string
	findMax                               bool
	format, out, fit, fitX                string
	// chart is the -o metric (--chart): "", throughput, time or memory.
	chart string
	passFlags
	trainFlags
	// shared holds the settings declared by report's own flag code
	// (borrowReportFlags): --runtime, --runtime-file, --gpus, --power-cap,
	// --sm-clock. Its zero value (roofline --time builds sweepFlags in
	// code) is the default runtime, one GPU, no cap or lock.
	shared costFlags
}

// addCostFlags declares the cost settings sweep and gpus compare share
// (every GPU in the list is costed with them).
func (f *sweepFlags) addCostFlags(c *cobra.Command) {
	c.Flags().StringVar(&f.gpuFile, "gpu-file", "", "YAML or JSON file with your own GPU specs")
	c.Flags().StringVar(&f.dtype, "dtype", "", "compute dtype: fp32|tf32|fp16|bf16|fp8|int8 (default: the model's own)")
	c.Flags().StringVar(&f.plan, "plan", "fused", "execution plan to cost: fused|unfused")
	c.Flags().StringVar(&f.inputData, "input-data", "", "bind graph inputs to the tensors in `DIR`/input_<i>.pb")
	f.borrowReportFlags(c, "runtime", "runtime-file", "gpus", "power-cap", "sm-clock")
}

// borrowReportFlags declares the named flags exactly as report declares
// them (help, default, and parse-time checks such as --gpus's range), so
// that the commands cannot drift apart: report's flag code runs on a
// scratch command and the named flags move to c, their values landing in
// f.shared. f.shared.given still sees them set, since a flag's Changed
// mark lives on the flag that both flag sets share.
func (f *sweepFlags) borrowReportFlags(c *cobra.Command, names ...string) {
	scratch := &cobra.Command{Use: c.Name()}
	f.shared.add(scratch)
	for _, n := range names {
		c.Flags().AddFlag(scratch.Flags().Lookup(n))
	}
}

// runtime resolves --runtime as report does: a training step runs in
// PyTorch eager unless told otherwise.
func (f *sweepFlags) runtime() (*hwdb.Runtime, error) {
	name := f.shared.runtime
	if f.train && !f.shared.given("runtime") {
		name = cost.TrainRuntime
	}
	return resolveRuntime(name, f.shared.runtimeFile)
}

// axis is one swept dimension: a zoo parameter, a symbol or the batch.
type axis struct {
	name   string
	kind   string // "param" | "dim" | "batch"
	values []int64
	tie    string // a param that takes another param's value
}

// point is one combination of values; batch is separate.
type sweepPoint struct {
	params map[string]int64
	dims   map[string]int64
}

func newSweepCmd(stdout, stderr io.Writer) *cobra.Command {
	var f sweepFlags
	c := &cobra.Command{
		Use:   "sweep MODEL [MODEL...] --gpu A[,B...] --batch LIST [--dim NAME=LIST] [--param K=LIST]",
		Short: "Sweep batch, symbols or zoo parameters across GPUs: time, throughput, memory, fit",
		Long: `sweep costs a model at every combination of the swept values on every GPU
given, and prints one row per GPU and point: latency (the time of one
batch), throughput (items/s = batch / time), peak memory and whether it
fits in the GPU's memory. Rows past the memory limit are marked, never
dropped. Per GPU it also reports the knee, the smallest batch reaching 90%
of the best throughput (only when batch is swept), and with
--find-max-batch the largest integer batch that fits (doubling then
bisection; peak memory must not fall as batch grows, which is checked).
Without --batch, throughput counts the model's own batch: a zoo model's
batch parameter, the bound batch symbol, or a static export's batch dim.

--runtime, --gpus, --power-cap and --sm-clock are report's, applied to
every GPU and point.

LIST is a comma list (1,8,32) or a range a..b of powers of two (1..1024).
--batch binds the leading symbolic dim of the inputs as report's --batch
does (for a zoo model, its batch parameter); --dim NAME=LIST binds a
symbol; --param K=LIST sets a zoo parameter (the model is rebuilt per
value), and --param K=OTHER ties K to the swept parameter OTHER
(--param hidden=128..1024 --param embed=hidden).

--fit linear|quadratic fits time, FLOPs and GEMM FLOPs against the one
swept dimension by least squares and prints baseline, slope and quadratic
term. -o FILE.svg|png|pdf draws throughput (or time, when the swept
dimension is not batch; or what --chart names: throughput, time, memory)
with one line per GPU, hollow markers past the memory limit.

Several MODELs are swept alike and drawn on one chart, one line per model
and GPU; each row then names its model, and max_batch and knee are keyed
"MODEL on GPU".

  onnxcost sweep zoo:resnet50 --gpu V100,T4 --batch 1..256 --find-max-batch -o r50.png
  onnxcost sweep zoo:lstm-ptb --gpu V100 --param hidden=256,512,1024 --param embed=hidden --fit quadratic
  onnxcost sweep zoo:alexnet zoo:vgg16 --gpu V100-SXM2-32GB --train --batch 64,128,256 --chart memory -o mem.svg`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) < 1 {
				return usageErr("%s: want MODEL [MODEL...], got no argument (see '%s --help')", c.Name(), c.CommandPath())
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			f.dumpTo = stderr
			if err := f.trainFlags.validate(); err != nil {
				return err
			}
			if err := checkValue("--chart", f.chart, "", "throughput", "time", "memory"); err != nil {
				return err
			}
			res, err := runSweeps(args, &f, stderr)
			if err != nil {
				return err
			}
			if f.train {
				res.Warnings = append([]string{"--train: latency is one training step (optimizer " + f.optimizer + ", checkpoint " + f.checkpoint + "), peak memory the step's device peak (nvidia-smi view: caching-allocator reserve + CUDA context)"}, res.Warnings...)
			}
			printWarnings(stderr, res.Warnings)
			if f.out != "" {
				if err := writeSweepChart(f.out, res, f.chart); err != nil {
					return err
				}
			}
			return writeAs(stdout, f.format, res, writeSweepCSV, writeSweepText)
		},
	}
	c.Flags().StringVar(&f.gpus, "gpu", "", "target GPUs, comma-separated (see 'onnxcost gpus'); required")
	f.addCostFlags(c)
	c.Flags().StringVar(&f.batch, "batch", "", "batch sizes: `LIST` (1,8,32 or 1..256 in powers of two); default: the model's own")
	c.Flags().StringArrayVar(&f.dims, "dim", nil, "sweep or bind a symbol: `NAME=LIST` (repeatable)")
	c.Flags().StringArrayVar(&f.params, "param", nil, "sweep a zoo parameter: `K=LIST`, or K=OTHER to tie it to another (repeatable)")
	c.Flags().BoolVar(&f.findMax, "find-max-batch", false, "find the largest batch that fits on each GPU")
	c.Flags().StringVar(&f.format, "format", "text", "output format: text|json|csv")
	c.Flags().StringVarP(&f.out, "output", "o", "", "draw the sweep to `FILE` (.svg, .png or .pdf)")
	c.Flags().StringVar(&f.chart, "chart", "", "what -o draws against the swept dimension: throughput|time|memory (default: throughput against batch, else time)")
	c.Flags().StringVar(&f.fit, "fit", "", "fit cost against the swept dimension: linear|quadratic")
	c.Flags().StringVar(&f.fitX, "fit-x", "", "the dimension to fit against (default: the only one swept)")
	f.passFlags.add(c)
	f.trainFlags.add(c)
	return c
}

// parseAxes reads the --param, --dim and --batch flags into axes.
func parseAxes(f *sweepFlags) ([]axis, axis, error) {
	var axes []axis
	seen := map[string]bool{}
	read := func(flag, kind string, vals []string) error {
		for _, v := range vals {
			k, list, ok := strings.Cut(v, "=")
			k = strings.TrimSpace(k)
			if !ok || k == "" {
				return usageErr("%s %q: want NAME=LIST", flag, v)
			}
			if seen[kind+":"+k] {
				return usageErr("%s %s given twice", flag, k)
			}
			seen[kind+":"+k] = true
			a := axis{name: k, kind: kind}
			if kind == "param" && isName(list) {
				a.tie = strings.TrimSpace(list)
			} else {
				xs, err := sweep.ParseList(list)
				if err != nil {
					return usageErr("%s %s: %v", flag, k, err)
				}
				a.values = xs
			}
			axes = append(axes, a)
		}
		return nil
	}
	if err := read("--param", "param", f.params); err != nil {
		return nil, axis{}, err
	}
	if err := read("--dim", "dim", f.dims); err != nil {
		return nil, axis{}, err
	}
	for _, a := range axes {
		if a.tie == "" {
			continue
		}
		ok := false
		for _, b := range axes {
			ok = ok || (b.kind == "param" && b.name == a.tie && b.tie == "")
		}
		if !ok {
			return nil, axis{}, usageErr("--param %s=%s: %s is not a swept --param with values", a.name, a.tie, a.tie)
		}
	}
	// Without --batch the model's own batch stands (0: bind nothing).
	batch := axis{name: "batch", kind: "batch", values: []int64{0}}
	if f.batch != "" {
		xs, err := sweep.ParseList(f.batch)
		if err != nil {
			return nil, axis{}, usageErr("--batch: %v", err)
		}
		batch.values = xs
	}
	return axes, batch, nil
}

// isName reports whether s is an identifier (a tie), not a list.
func isName(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// points expands the axes into every combination, the last axis fastest.
func points(axes []axis) []sweepPoint {
	out := []sweepPoint{{params: map[string]int64{}, dims: map[string]int64{}}}
	for _, a := range axes {
		if a.tie != "" {
			continue
		}
		var next []sweepPoint
		for _, p := range out {
			for _, v := range a.values {
				q := sweepPoint{params: copyMap(p.params), dims: copyMap(p.dims)}
				if a.kind == "param" {
					q.params[a.name] = v
				} else {
					q.dims[a.name] = v
				}
				next = append(next, q)
			}
		}
		out = next
	}
	for _, a := range axes {
		if a.tie != "" {
			for _, p := range out {
				p.params[a.name] = p.params[a.tie]
			}
		}
	}
	return out
}

func copyMap(m map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// sweeper evaluates points of one sweep.
type sweeper struct {
	f     *sweepFlags
	model string
	zoo   *pipeline.ZooSpec
	gpus  []*hwdb.GPU
	// rt is --runtime's profile; nil is the cost model's default.
	rt    *hwdb.Runtime
	warns []string
	seen  map[string]bool
}

// modelPath is the path of the model at a point: the zoo path with the
// point's parameters over the path's own.
func (s *sweeper) modelPath(p sweepPoint) string {
	if s.zoo == nil || len(p.params) == 0 {
		return s.model
	}
	params := copyMap(s.zoo.Params)
	for k, v := range p.params {
		params[k] = v
	}
	return pipeline.ZooPath(s.zoo.Entry.Name, params)
}

// eval costs one point at one batch on every GPU.
func (s *sweeper) eval(p sweepPoint, batch int64) ([]*report.Report, *pipeline.Loaded, error) {
	path := s.modelPath(p)
	l, err := pipeline.Load(path, pipeline.Options{Batch: batch, Dims: p.dims, InputDataDir: s.f.inputData, BindAll: true, Counted: sizeHeap})
	if err != nil {
		return nil, nil, pipeErr(err)
	}
	if s.f.train {
		if err := s.f.passFlags.validate(); err != nil {
			return nil, nil, err
		}
		if err := pipeErr(l.Plan(s.f.plan, pipeline.ForTraining(s.f.passFlags.options()))); err != nil {
			return nil, nil, err
		}
	} else if err := applyPlan(l, s.f.plan, &s.f.passFlags); err != nil {
		return nil, nil, err
	}
	reps := make([]*report.Report, len(s.gpus))
	for i, g := range s.gpus {
		r, err := pipeline.Estimate(l, g, pipeline.EstimateOptions{DType: s.f.dtype, Plan: s.f.plan, Runtime: s.rt, ToolVersion: version, ModelName: path,
			Power: s.f.shared.powerControl(), Train: s.f.trainFlags.options(), GPUs: int(s.f.shared.gpus)})
		if err != nil {
			return nil, nil, pipeErr(err)
		}
		reps[i] = r
		for _, w := range r.Warnings {
			s.warn(w)
		}
	}
	return reps, l, nil
}

// gemmFLOPs sums the FLOPs of GEMM-like nodes (fused ones included: a
// fused node is named for what it is built around).
func gemmFLOPs(r *report.Report) float64 {
	t := 0.0
	for _, n := range r.Nodes {
		op := n.OpType
		for _, k := range []string{"Conv", "Gemm", "MatMul", "LSTM", "GRU", "RNN", "Attention"} {
			if strings.Contains(op, k) {
				t += n.FLOPs
				break
			}
		}
	}
	return t
}

// hasSymbolicBatch reports whether --batch binds anything in the model:
// some graph input with a symbolic leading dim.
func hasSymbolicBatch(l *pipeline.Loaded) bool {
	for _, in := range l.Model.Graph.Inputs {
		if in.Declared != nil && len(in.Declared.Shape.Dims) > 0 && !in.Declared.Shape.Dims[0].IsKnown() {
			return true
		}
	}
	return false
}

func runSweep(model string, f *sweepFlags, stderr io.Writer) (*sweepJSON, error) {
	if err := checkFormat(f.format, "text", "json", "csv"); err != nil {
		return nil, err
	}
	if err := checkValue("--dtype", f.dtype, validDTypes...); err != nil {
		return nil, err
	}
	if err := checkValue("--plan", f.plan, "fused", "unfused"); err != nil {
		return nil, err
	}
	degree := 0
	if f.fit != "" {
		d, err := sweep.Degree(f.fit)
		if err != nil {
			return nil, usageErr("--%v", err)
		}
		degree = d
	}
	if f.out != "" {
		if _, err := outFormat(f.out, "svg", "png", "pdf"); err != nil {
			return nil, err
		}
	}
	if strings.TrimSpace(f.gpus) == "" {
		return nil, usageErr("--gpu is required: one or more GPUs, comma-separated (see 'onnxcost gpus')")
	}
	s := &sweeper{f: f, model: model, seen: map[string]bool{}}
	names := map[string]bool{}
	for _, name := range strings.Split(f.gpus, ",") {
		g, err := resolveGPU(strings.TrimSpace(name), f.gpuFile)
		if err != nil {
			return nil, err
		}
		if names[g.Name] {
			return nil, usageErr("--gpu: %s given twice", g.Name)
		}
		names[g.Name] = true
		if err := checkPowerControl(g, f.shared.powerControl()); err != nil {
			return nil, err
		}
		s.gpus = append(s.gpus, g)
	}
	rt, err := f.runtime()
	if err != nil {
		return nil, err
	}
	s.rt = rt
	axes, batch, err := parseAxes(f)
	if err != nil {
		return nil, err
	}
	if pipeline.IsZoo(model) {
		z, err := pipeline.ParseZoo(model)
		if err != nil {
			return nil, pipeErr(err)
		}
		s.zoo = z
		if _, set := z.Params["batch"]; set && (f.batch != "" || f.findMax) {
			return nil, usageErr("%s sets batch in the path; drop it to sweep --batch", model)
		}
		hasBatch := false
		for _, p := range z.Entry.Params {
			hasBatch = hasBatch || p.Name == "batch"
		}
		if !hasBatch && (f.batch != "" || f.findMax) {
			return nil, usageErr("zoo model %s has no batch parameter: --batch cannot vary it", z.Entry.Name)
		}
	} else if len(f.params) > 0 {
		return nil, usageErr("--param sweeps zoo parameters: MODEL must be zoo:NAME (got %s)", model)
	}

	// The swept dimensions, in row order.
	res := &sweepJSON{SchemaVersion: SweepSchemaVersion, ToolVersion: version, Model: model, Plan: f.plan,
		Swept: []string{}, MaxBatch: map[string]*int64{}, Knee: map[string]*int64{}}
	for _, a := range axes {
		if len(a.values) > 1 {
			res.Swept = append(res.Swept, a.name)
		}
	}
	if len(batch.values) > 1 {
		res.Swept = append(res.Swept, "batch")
	}
	for _, g := range s.gpus {
		res.GPUs = append(res.GPUs, sweepGPU{Name: g.Name, MemoryBytes: g.MemBytes})
	}
	fitX := f.fitX
	if degree > 0 && fitX == "" {
		if len(res.Swept) != 1 {
			return nil, usageErr("--fit needs exactly one swept dimension (swept: %s); name it with --fit-x or sweep one", strings.Join(res.Swept, ", "))
		}
		fitX = res.Swept[0]
	}
	if degree > 0 && len(res.Swept) > 1 {
		return nil, usageErr("--fit needs exactly one swept dimension, got %s", strings.Join(res.Swept, ", "))
	}
	if degree > 0 && fitX != res.Swept[0] {
		return nil, usageErr("--fit-x %s: not the swept dimension (%s)", fitX, strings.Join(res.Swept, ", "))
	}

	pts := points(axes)
	xOf := func(p sweepPoint, b int64) float64 {
		name := "batch"
		if len(res.Swept) > 0 {
			name = res.Swept[len(res.Swept)-1]
		}
		if v, ok := p.params[name]; ok {
			return float64(v)
		}
		if v, ok := p.dims[name]; ok {
			return float64(v)
		}
		return float64(b)
	}
	rows := make([][]sweepRow, len(s.gpus))
	checkedBatch := false
	prog := startProgress("sweep", len(pts)*len(batch.values))
	defer prog.Stop()
	for _, p := range pts {
		for _, b := range batch.values {
			prog.Add(1)
			reps, l, err := s.eval(p, b)
			if err != nil {
				return nil, err
			}
			// A swept symbol that binds nothing would repeat one row.
			for _, a := range axes {
				if a.kind == "dim" && len(a.values) > 1 {
					if _, ok := l.Bindings[a.name]; !ok {
						return nil, usageErr("--dim %s: %s has no symbolic dim %s to sweep", a.name, model, a.name)
					}
				}
			}
			if !checkedBatch && s.zoo == nil && (len(batch.values) > 1 || f.findMax) {
				if !hasSymbolicBatch(l) {
					return nil, usageErr("%s: no graph input has a symbolic leading dim, so --batch cannot vary it (sweep a symbol with --dim NAME=LIST)", model)
				}
				checkedBatch = true
			}
			items := s.itemsPerRun(b, p, l)
			for i, r := range reps {
				row := sweepRow{GPU: s.gpus[i].Name, Batch: items, Bindings: r.Bindings, TimeS: r.Totals.TimeS,
					PeakMemoryBytes: r.Totals.PeakMemoryBytes, Fits: r.Totals.Fits, FLOPs: r.Totals.FLOPs,
					GEMMFLOPs: gemmFLOPs(r)}
				row.x, row.energyJ = xOf(p, row.Batch), r.Totals.EnergyJ
				if row.Bindings == nil {
					row.Bindings = map[string]int64{}
				}
				if len(p.params) > 0 {
					row.Params = p.params
				}
				if r.Totals.TimeS > 0 {
					// A step trains K micro-batches (--grad-accum) on each
					// of the --data-parallel replicas.
					row.ThroughputPerS = float64(row.Batch) * float64(max(s.f.gradAccum, 1)*max(s.f.dataParallel, 1)) / r.Totals.TimeS
				}
				res.DType = r.DType
				rows[i] = append(rows[i], row)
			}
		}
	}
	for i, g := range s.gpus {
		res.Rows = append(res.Rows, rows[i]...)
		var bs []int64
		var tp []float64
		for _, r := range rows[i] {
			if r.Fits {
				bs, tp = append(bs, r.Batch), append(tp, r.ThroughputPerS)
			}
		}
		res.Knee[g.Name] = nil
		// A knee is a point on the batch axis: with one batch (--batch,
		// --dim or --param of the batch not swept) there is no curve to
		// bend, only that batch.
		if !batchSwept(rows[i]) {
			continue
		}
		if k, ok := sweep.Knee(bs, tp); ok {
			res.Knee[g.Name] = &k
		}
	}
	if f.findMax {
		if len(pts) > 1 {
			return nil, usageErr("--find-max-batch needs one value per --dim and --param (got %d combinations)", len(pts))
		}
		if err := s.findMaxBatch(pts[0], res); err != nil {
			return nil, err
		}
	}
	if degree > 0 {
		for i, g := range s.gpus {
			ft, err := fitRows(rows[i], degree)
			if err != nil {
				return nil, usageErr("--fit: %v", err)
			}
			ft.GPU, ft.X, ft.Degree = g.Name, fitX, f.fit
			res.Fit = append(res.Fit, ft)
		}
	}
	res.Warnings = nonNil(s.warns)
	return res, nil
}

// runSweeps sweeps each model alike; with several, their results are
// merged: rows name their model, max_batch and knee are keyed "MODEL on
// GPU", warnings are deduplicated in order.
func runSweeps(models []string, f *sweepFlags, stderr io.Writer) (*sweepJSON, error) {
	if len(models) == 1 {
		return runSweep(models[0], f, stderr)
	}
	var out *sweepJSON
	seen := map[string]bool{}
	for _, m := range models {
		res, err := runSweep(m, f, stderr)
		if err != nil {
			return nil, err
		}
		for i := range res.Rows {
			res.Rows[i].Model = m
		}
		if out == nil {
			out = &sweepJSON{SchemaVersion: res.SchemaVersion, ToolVersion: res.ToolVersion, Model: strings.Join(models, ","), DType: res.DType,
				Plan: res.Plan, Swept: res.Swept, GPUs: res.GPUs, MaxBatch: map[string]*int64{}, Knee: map[string]*int64{}, Warnings: []string{}}
		}
		out.Rows = append(out.Rows, res.Rows...)
		for g, v := range res.MaxBatch {
			out.MaxBatch[m+" on "+g] = v
		}
		for g, v := range res.Knee {
			out.Knee[m+" on "+g] = v
		}
		for _, ft := range res.Fit {
			ft.GPU = m + " on " + ft.GPU
			out.Fit = append(out.Fit, ft)
		}
		for _, w := range res.Warnings {
			if !seen[w] {
				seen[w] = true
				out.Warnings = append(out.Warnings, w)
			}
		}
	}
	return out, nil
}

// itemsPerRun is the batch one run of the model at point p processes:
// what every per-item figure (throughput, energy per item, cost per
// million) divides by. It is --batch when given (b > 0), else the model's
// own batch, from the first of these that exists:
//
//  1. a zoo model's batch parameter;
//  2. the value bound to an input dim named batch (batch, batch_size, N,
//     …, the names --batch binds);
//  3. the batch dim of a recurrent op's input (LSTM, GRU, RNN: dim 1 of a
//     layout-0 [seq, batch, input] X, dim 0 of a layout-1 one), as in a
//     seq-first LM's static [32,128] tokens;
//  4. the value every ranked input has at one position, the lowest first
//     (a static [4,3,224,224] export gives 4), warning when rank-3 inputs
//     tell [seq, batch, …] from [batch, seq, …] only by guess.
//
// Failing all, it counts one item per run, and says so.
func (s *sweeper) itemsPerRun(b int64, p sweepPoint, l *pipeline.Loaded) int64 {
	if b > 0 {
		return b
	}
	if s.zoo != nil {
		v, set := p.params["batch"]
		if !set {
			v, set = s.zoo.Params["batch"]
		}
		for _, q := range s.zoo.Entry.Params {
			if q.Name == "batch" && !set {
				v, set = q.Default, true
			}
		}
		// batch=-1 builds a symbolic batch: the binding below holds it.
		if set && v > 0 {
			return v
		}
	}
	g := l.Model.Graph
	var ins []*ir.Value
	for _, in := range g.Inputs {
		if in == nil || in.IsInitializer || !in.Shape.Ranked || len(in.Shape.Dims) == 0 {
			continue
		}
		ins = append(ins, in)
		if in.Declared == nil {
			continue
		}
		for _, d := range in.Declared.Shape.Dims {
			if v, ok := l.Bindings[d.Sym]; ok && !d.IsKnown() && pipeline.IsBatchName(d.Sym) && v > 0 {
				return v
			}
		}
	}
	for _, n := range g.Nodes {
		if n.Domain != "" && n.Domain != "ai.onnx" || n.OpType != "LSTM" && n.OpType != "GRU" && n.OpType != "RNN" || len(n.Inputs) == 0 || n.Inputs[0] == nil {
			continue
		}
		x := n.Inputs[0].Shape
		pos := 1
		if n.AttrInt("layout", 0) == 1 {
			pos = 0
		}
		if x.Ranked && len(x.Dims) == 3 && x.Dims[pos].IsKnown() && x.Dims[pos].Value > 0 {
			return x.Dims[pos].Value
		}
	}
	if v, pos, used, ok := sharedDim(ins); ok {
		if pos == 0 && !slices.ContainsFunc(used, func(in *ir.Value) bool { return len(in.Shape.Dims) != 3 }) {
			// A leading 1 is batch 1 as --batch reads static exports; a
			// one-step sequence of many items is too rare to warn about.
			if d := used[0].Shape.Dims; d[0].Value > 1 && d[0] != d[1] {
				s.warn(fmt.Sprintf("%s: per-item figures take the leading dim of input %s %s as the batch (%d); a sequence-first model's batch is its second dim (%d)",
					s.modelPath(p), used[0].Name, used[0].Shape, d[0].Value, d[1].Value))
			}
		}
		return v
	}
	s.warn(fmt.Sprintf("%s: no input dim is recognizably the batch, so throughput and per-item figures count one item per run", s.modelPath(p)))
	return 1
}

// sharedDim finds the value every input of rank ≥ 2 (of rank ≥ 1 when
// there is none) has at one position, the lowest such position first,
// and returns it with that position and the inputs compared.
func sharedDim(ins []*ir.Value) (int64, int, []*ir.Value, bool) {
	minRank := 2
	if !slices.ContainsFunc(ins, func(v *ir.Value) bool { return len(v.Shape.Dims) >= 2 }) {
		minRank = 1
	}
	var use []*ir.Value
	for _, in := range ins {
		if len(in.Shape.Dims) >= minRank {
			use = append(use, in)
		}
	}
	if len(use) == 0 {
		return 0, 0, nil, false
	}
	for pos, d := range use[0].Shape.Dims {
		if !d.IsKnown() || d.Value < 1 {
			continue
		}
		all := true
		for _, in := range use[1:] {
			all = all && pos < len(in.Shape.Dims) && in.Shape.Dims[pos].Is(d.Value)
		}
		if all {
			return d.Value, pos, use, true
		}
	}
	return 0, 0, nil, false
}

// batchSwept reports whether rows (one GPU's) hold more than one batch.
func batchSwept(rows []sweepRow) bool {
	for _, r := range rows {
		if r.Batch != rows[0].Batch {
			return true
		}
	}
	return false
}

// warn records a warning once.
func (s *sweeper) warn(w string) {
	if !s.seen[w] {
		s.seen[w] = true
		s.warns = append(s.warns, w)
	}
}

// findMaxBatch searches each GPU's largest batch. Loads are shared across
// GPUs through a cache, since only the memory limit differs.
func (s *sweeper) findMaxBatch(p sweepPoint, res *sweepJSON) error {
	cache := map[int64][]*report.Report{}
	for i, g := range s.gpus {
		probe := func(b int64) (float64, bool, error) {
			reps, ok := cache[b]
			if !ok {
				var err error
				reps, _, err = s.eval(p, b)
				if err != nil {
					return 0, false, err
				}
				cache[b] = reps
			}
			return reps[i].Totals.PeakMemoryBytes, reps[i].Totals.Fits, nil
		}
		mb, err := sweep.FindMaxBatch(probe)
		if err != nil {
			var ee *exitError
			if errors.As(err, &ee) {
				return err
			}
			return usageErr("--find-max-batch on %s: %v", g.Name, err)
		}
		res.MaxBatch[g.Name] = nil
		if mb.Batch > 0 {
			n := mb.Batch
			res.MaxBatch[g.Name] = &n
		}
		if mb.Unbounded {
			s.warns = append(s.warns, fmt.Sprintf("%s: every batch up to %d fits (peak memory does not grow with batch?)", g.Name, sweep.MaxBatchLimit))
		}
	}
	return nil
}

// fitRows fits time, FLOPs and GEMM FLOPs of one GPU's rows against x.
func fitRows(rows []sweepRow, degree int) (sweepFit, error) {
	xs := make([]float64, len(rows))
	ys := [3][]float64{}
	for i, r := range rows {
		xs[i] = r.x
		ys[0] = append(ys[0], r.TimeS)
		ys[1] = append(ys[1], r.FLOPs)
		ys[2] = append(ys[2], r.GEMMFLOPs)
	}
	var out [3]fitTerms
	for k := range ys {
		ft, err := sweep.PolyFit(xs, ys[k], degree)
		if err != nil {
			return sweepFit{}, err
		}
		out[k] = fitTerms{Baseline: ft.Coef[0], Slope: ft.Coef[1], R2: ft.R2, MaxRelResidual: ft.MaxRelResidual}
		if degree == 2 {
			q := ft.Coef[2]
			out[k].Quadratic = &q
		}
	}
	return sweepFit{TimeS: out[0], FLOPs: out[1], GEMMFLOPs: out[2]}, nil
}

// pointLabel names a row's point: its params and dims, sorted.
func pointLabel(r sweepRow, swept []string) string {
	var parts []string
	for _, k := range swept {
		if k == "batch" {
			continue
		}
		if v, ok := r.Params[k]; ok {
			parts = append(parts, k+"="+strconv.FormatInt(v, 10))
		} else if v, ok := r.Bindings[k]; ok {
			parts = append(parts, k+"="+strconv.FormatInt(v, 10))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}
