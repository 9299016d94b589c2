package sweep

import (
	"fmt"
	"maps"
	"strings"

	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/passes"
	"github.com/onnxcost/onnxcost/pipeline"
	"github.com/onnxcost/onnxcost/train"
)

// Config says what Run sweeps. Errors name the flags of `onnxcost sweep`
// (--batch, --dim, --param, --fit, --find-max-batch), the vocabulary its
// users share.
type Config struct {
	// Model is a file path or a zoo path (zoo:NAME?k=v).
	Model string
	// GPUs are costed at every point, in this order; at least one.
	GPUs []*hwdb.GPU
	// Axes are the swept params and dims (ParseAxes); params need a zoo
	// model.
	Axes []Axis
	// Batches are the batch sizes, fastest-varying; empty keeps the
	// model's own batch (Row.Batch is then ItemsPerRun's answer).
	Batches []int64
	// FindMaxBatch searches each GPU's largest fitting batch (one point
	// only).
	FindMaxBatch bool
	// Fit, "linear" or "quadratic", fits cost against FitX (default: the
	// one swept dimension); "" fits nothing.
	Fit, FitX string
	// Plan is the plan priced ("" the runtime's own; passes.PlanNames); Passes select its passes
	// (training disables those pipeline.ForTraining names).
	Plan   string
	Passes passes.Options
	// Load holds what every point loads with besides its bindings
	// (InputDataDir, Counted); Batch, Dims and BindAll are set per point.
	Load pipeline.Options
	// Estimate holds what every GPU is costed with (DType, Runtime,
	// ToolVersion, Power, Train, GPUs); Plan and ModelName are set per
	// point. Train makes every row one training step. A nil Runtime
	// outside training is the model's (pipeline.ModelRuntime), looked up
	// in Runtimes (nil: the built-in profiles) once the model is read.
	Estimate pipeline.EstimateOptions
	Runtimes *hwdb.RuntimeDB
	// Progress, when set, is called before each point is costed with the
	// points done so far and the total.
	Progress func(done, total int)
	// Warnings are what choosing GPUs raised (those of --gpu all that a
	// power cap or clock lock leaves out), said before the estimates'.
	Warnings []string

	// keyByModel names the model in the warnings that name a GPU, as
	// RunModels keys a sweep of several models' results ("MODEL on GPU").
	keyByModel bool
}

// Sweeper costs the points of one model's sweep, collecting the warnings
// of every estimate once each.
type Sweeper struct {
	cfg   Config
	zoo   *pipeline.ZooSpec
	warns []string
	seen  map[string]bool
	// byModel is set while the runtime waits for the model to name it
	// (settle, at the first point read).
	byModel bool
}

// NewSweeper prepares cfg.Model's sweep (a zoo path is parsed here).
func NewSweeper(cfg Config) (*Sweeper, error) {
	plan, err := pipeline.ResolvePlan(cfg.Plan, cfg.Estimate.Runtime, cfg.Estimate.Train)
	if err != nil {
		return nil, err
	}
	s := &Sweeper{cfg: cfg, seen: map[string]bool{}}
	if s.byModel = cfg.Estimate.Runtime == nil && cfg.Estimate.Train == nil; !s.byModel {
		s.cfg.Plan = plan
	}
	for _, w := range cfg.Warnings {
		s.warn(w)
	}
	if pipeline.IsZoo(cfg.Model) {
		z, err := pipeline.ParseZoo(cfg.Model)
		if err != nil {
			return nil, err
		}
		s.zoo = z
	}
	return s, nil
}

// Zoo is the parsed zoo path, nil for a file.
func (s *Sweeper) Zoo() *pipeline.ZooSpec { return s.zoo }

// Warnings are the warnings so far, each once, in order.
func (s *Sweeper) Warnings() []string { return s.warns }

// warn records a warning once: a warning every batch of the sweep
// repeats (a static batch's rewrite: Eval loads with EachBatch) is said
// once for all of them.
func (s *Sweeper) warn(w string) {
	if !s.seen[w] {
		s.seen[w] = true
		s.warns = append(s.warns, w)
	}
}

// ModelPath is the path of the model at a point: the zoo path with the
// point's parameters over the path's own.
func (s *Sweeper) ModelPath(p Point) string {
	if s.zoo == nil || len(p.Params) == 0 {
		return s.cfg.Model
	}
	params := make(map[string]int64, len(s.zoo.Params)+len(p.Params))
	for k, v := range s.zoo.Params {
		params[k] = v
	}
	for k, v := range p.Params {
		params[k] = v
	}
	return pipeline.ZooPath(s.zoo.Entry.Name, params)
}

// Eval costs one point at one batch (0: the model's own) on every GPU.
func (s *Sweeper) Eval(p Point, batch int64) ([]*report.Report, *pipeline.Loaded, error) {
	path := s.ModelPath(p)
	lo := s.cfg.Load
	lo.Batch, lo.Dims, lo.BindAll, lo.EachBatch = batch, p.Dims, true, true
	l, err := pipeline.Load(path, lo)
	if err != nil {
		return nil, nil, err
	}
	if err := s.settle(l); err != nil {
		return nil, nil, err
	}
	po := pipeline.ForDType(s.cfg.Passes, s.cfg.Estimate.DType)
	if s.cfg.Estimate.Train != nil {
		po = pipeline.ForTraining(po)
	}
	if err := l.Plan(s.cfg.Plan, po); err != nil {
		return nil, nil, err
	}
	reps := make([]*report.Report, len(s.cfg.GPUs))
	for i, g := range s.cfg.GPUs {
		eo := s.cfg.Estimate
		eo.Plan, eo.ModelName = s.cfg.Plan, path
		r, err := pipeline.Estimate(l, g, eo)
		if err != nil {
			return nil, nil, err
		}
		reps[i] = r
		for _, w := range r.Warnings {
			s.warn(w)
		}
	}
	return reps, l, nil
}

// settle names the runtime and plan from the first point read, when the
// model decides them: every point of one model holds the same operators.
func (s *Sweeper) settle(l *pipeline.Loaded) error {
	if !s.byModel {
		return nil
	}
	rt, plan, err := pipeline.SettleRuntime(l, nil, s.cfg.Runtimes, s.cfg.Plan, nil, s.cfg.Estimate.DType)
	if err != nil {
		return err
	}
	// The model named it unless the dtype did (autocast: PyTorch).
	byModel := pipeline.RequestedRuntime("", false, s.cfg.Estimate.DType) == ""
	s.cfg.Estimate.Runtime, s.cfg.Estimate.RuntimeByModel, s.cfg.Plan = rt, byModel, plan
	s.byModel = false
	return nil
}

// RuntimeName is the runtime the sweep prices (the default's until the
// first point is read, when the model may name another).
func (s *Sweeper) RuntimeName() string {
	if rt := s.cfg.Estimate.Runtime; rt != nil {
		return rt.Name
	}
	if s.cfg.Estimate.Train != nil {
		return s.cfg.Estimate.Train.DefaultRuntime()
	}
	return hwdb.DefaultRuntime
}

// Run sweeps one model.
func Run(cfg Config) (*Result, error) {
	s, err := NewSweeper(cfg)
	if err != nil {
		return nil, err
	}
	degree, fitX, err := s.check()
	if err != nil {
		return nil, err
	}
	cfg = s.cfg
	res := &Result{SchemaVersion: SchemaVersion, ToolVersion: cfg.Estimate.ToolVersion, Model: cfg.Model,
		Swept: swept(cfg), MaxBatch: map[string]*int64{}, Knee: map[string]*int64{}}
	for _, g := range cfg.GPUs {
		res.GPUs = append(res.GPUs, GPU{Name: g.Name, MemoryBytes: g.MemBytes})
	}
	if degree > 0 {
		if fitX, err = fitAxis(res.Swept, fitX); err != nil {
			return nil, err
		}
	}
	pts := Points(cfg.Axes)
	rows, err := s.rows(pts, res)
	if err != nil {
		return nil, err
	}
	// The first point read settled the runtime and its plan.
	res.Runtime, res.Plan = s.RuntimeName(), s.cfg.Plan
	for i, g := range cfg.GPUs {
		res.Rows = append(res.Rows, rows[i]...)
		res.Knee[g.Name] = knee(rows[i])
		if cfg.Estimate.Train != nil {
			s.warnReserveDip(s.key(g), rows[i])
		}
		s.warnThroughputDip(g, rows[i])
	}
	if cfg.FindMaxBatch {
		if len(pts) > 1 {
			return nil, fmt.Errorf("--find-max-batch needs one value per --dim and --param (got %d combinations)", len(pts))
		}
		if err := s.findMaxBatch(pts[0], res); err != nil {
			return nil, err
		}
	}
	if degree > 0 {
		if res.Fit, err = s.fit(rows, degree, fitX); err != nil {
			return nil, err
		}
	}
	names := make([]string, len(cfg.GPUs))
	for i, g := range cfg.GPUs {
		names[i] = g.Name
	}
	res.Warnings = mergeGPUWarnings(s.warns, names)
	res.PowerCapW, res.SMClockMHz, res.Warm = cfg.Estimate.Power.CapW, cfg.Estimate.Power.SMClockMHz, cfg.Estimate.Warm
	if t, ok := cfg.Estimate.Train.(*train.Options); ok && t != nil {
		o, c := t.Optimizer, t.Checkpoint
		if err := pipeline.CheckTrain(&o, &c); err != nil {
			return nil, err
		}
		res.Train = &report.TrainSetting{Optimizer: o, Checkpoint: c, GradAccum: max(t.GradAccum, 1), DataParallel: max(t.DataParallel, 1)}
	}
	if a := cfg.Estimate.Calibration; a != nil && len(cfg.GPUs) > 0 {
		res.Calibration = a.For(cfg.GPUs[0]).Describe()
		if len(cfg.GPUs) > 1 {
			res.Calibration += fmt.Sprintf(" (each GPU as `report --gpu` applies it: in full on %s, transferred on the others)", a.Source.GPU)
		}
	}
	return res, nil
}

// check refuses a configuration the model cannot be swept with, and
// returns the fit's degree (0: none) and the dimension it is asked
// against.
func (s *Sweeper) check() (int, string, error) {
	cfg := s.cfg
	degree := 0
	if cfg.Fit != "" {
		d, err := Degree(cfg.Fit)
		if err != nil {
			return 0, "", fmt.Errorf("--%v", err)
		}
		degree = d
	}
	if len(cfg.GPUs) == 0 {
		return 0, "", fmt.Errorf("no GPU to sweep")
	}
	varyBatch := len(cfg.Batches) > 0 || cfg.FindMaxBatch
	if z := s.zoo; z != nil {
		if _, set := z.Params["batch"]; set && varyBatch {
			return 0, "", fmt.Errorf("%s sets batch in the path; drop it to sweep --batch", cfg.Model)
		}
		hasBatch := false
		for _, p := range z.Entry.Params {
			hasBatch = hasBatch || p.Name == "batch"
		}
		if !hasBatch && varyBatch {
			return 0, "", fmt.Errorf("zoo model %s has no batch parameter: --batch cannot vary it", z.Entry.Name)
		}
	} else {
		for _, a := range cfg.Axes {
			if a.Kind == KindParam {
				return 0, "", fmt.Errorf("--param sweeps zoo parameters: MODEL must be zoo:NAME (got %s)", cfg.Model)
			}
		}
	}
	return degree, cfg.FitX, nil
}

// fitAxis is the dimension a fit runs against: fitX when given, else the
// one swept. A fit needs exactly one swept dimension.
func fitAxis(swept []string, fitX string) (string, error) {
	all := strings.Join(swept, ", ")
	switch {
	case fitX == "" && len(swept) != 1:
		return "", fmt.Errorf("--fit needs exactly one swept dimension (swept: %s); name it with --fit-x or sweep one", all)
	case fitX == "":
		return swept[0], nil
	case len(swept) == 0:
		return "", fmt.Errorf("--fit-x %s: nothing is swept (give it more than one value)", fitX)
	case len(swept) > 1:
		return "", fmt.Errorf("--fit needs exactly one swept dimension, got %s", all)
	case fitX != swept[0]:
		return "", fmt.Errorf("--fit-x %s: not the swept dimension (%s)", fitX, all)
	}
	return fitX, nil
}

// swept names the dimensions that take more than one value, in row order.
func swept(cfg Config) []string {
	out := []string{}
	for _, a := range cfg.Axes {
		if len(a.Values) > 1 {
			out = append(out, a.Name)
		}
	}
	if len(cfg.Batches) > 1 {
		out = append(out, "batch")
	}
	return out
}

// batches are the batch values rows run at: 0 binds nothing, keeping the
// model's own batch.
func (cfg *Config) batches() []int64 {
	if len(cfg.Batches) == 0 {
		return []int64{0}
	}
	return cfg.Batches
}

// rows costs every point at every batch: one slice of rows per GPU.
func (s *Sweeper) rows(pts []Point, res *Result) ([][]Row, error) {
	cfg := s.cfg
	batches := cfg.batches()
	rows := make([][]Row, len(cfg.GPUs))
	checkedBatch := false
	total := len(pts) * len(batches)
	for _, p := range pts {
		for _, b := range batches {
			if cfg.Progress != nil {
				cfg.Progress(len(rows[0]), total)
			}
			reps, l, err := s.Eval(p, b)
			if err != nil {
				return nil, err
			}
			if err := s.checkBinds(l, &checkedBatch); err != nil {
				return nil, err
			}
			items := s.ItemsPerRun(b, p, l)
			for i, r := range reps {
				row := s.row(r, items, p, res.Swept)
				row.GPU = cfg.GPUs[i].Name
				res.DType = r.DType
				rows[i] = append(rows[i], row)
			}
		}
	}
	return rows, nil
}

// checkBinds refuses a swept symbol that binds nothing, and a swept batch
// of a file with no symbolic batch, either of which would repeat one row.
func (s *Sweeper) checkBinds(l *pipeline.Loaded, checkedBatch *bool) error {
	cfg := s.cfg
	for _, a := range cfg.Axes {
		if a.Kind == KindDim && len(a.Values) > 1 {
			if _, ok := l.Bindings[a.Name]; !ok {
				return fmt.Errorf("--dim %s: %s has no symbolic dim %s to sweep", a.Name, cfg.Model, a.Name)
			}
		}
	}
	if !*checkedBatch && s.zoo == nil && (len(cfg.Batches) > 1 || cfg.FindMaxBatch) {
		if !BatchBinds(l) {
			return fmt.Errorf("%s: no graph input has a symbolic leading dim or a static batch of 1, so --batch cannot vary it (sweep a symbol with --dim NAME=LIST)", cfg.Model)
		}
		*checkedBatch = true
	}
	return nil
}

// row is one GPU's report at point p as a row of items per run (GPU
// left for the caller).
func (s *Sweeper) row(r *report.Report, items int64, p Point, swept []string) Row {
	row := Row{Batch: items, Bindings: r.Bindings, TimeS: r.Totals.TimeS, TimeIntervalS: r.Totals.TimeIntervalS, IntervalBasis: r.Totals.IntervalBasis, PeakMemoryBytes: r.Totals.PeakMemoryBytes,
		Fits: r.Totals.Fits, FLOPs: r.Totals.FLOPs, GEMMFLOPs: GEMMFLOPs(r), EnergyJ: r.Totals.EnergyJ, MemoryBoundS: memoryBoundS(r)}
	row.X = float64(items)
	if len(swept) > 0 {
		name := swept[len(swept)-1]
		if v, ok := p.Params[name]; ok {
			row.X = float64(v)
		} else if v, ok := p.Dims[name]; ok {
			row.X = float64(v)
		}
	}
	if row.Bindings == nil {
		row.Bindings = map[string]int64{}
	}
	if len(p.Params) > 0 {
		row.Params = p.Params
	}
	if r.Totals.TimeS > 0 {
		// A step trains K micro-batches (grad accumulation) on each of
		// the data-parallel replicas.
		k, n := 1, 1
		if t := r.Totals.Train; t != nil {
			k, n = max(t.GradAccum, 1), max(t.DataParallel, 1)
		}
		row.ThroughputPerS = float64(row.Batch) * float64(k*n) / r.Totals.TimeS
	}
	return row
}

// knee is one GPU's knee among its fitting rows; nil when batch is not
// swept: with one batch there is no curve to bend.
func knee(rows []Row) *int64 {
	if !batchSwept(rows) {
		return nil
	}
	var bs []int64
	var tp []float64
	for _, r := range rows {
		if r.Fits {
			bs, tp = append(bs, r.Batch), append(tp, r.ThroughputPerS)
		}
	}
	if k, ok := Knee(bs, tp); ok {
		return &k
	}
	return nil
}

// findMaxBatch searches each GPU's largest batch. Loads are shared across
// GPUs through a cache, since only the memory limit differs.
func (s *Sweeper) findMaxBatch(p Point, res *Result) error {
	cache := map[int64][]*report.Report{}
	for i, g := range s.cfg.GPUs {
		var evalErr error
		probe := func(b int64) (float64, bool, error) {
			reps, ok := cache[b]
			if !ok {
				reps, _, evalErr = s.Eval(p, b)
				if evalErr != nil {
					return 0, false, evalErr
				}
				cache[b] = reps
			}
			return searchPeak(reps[i]), reps[i].Totals.Fits, nil
		}
		mb, err := FindMaxBatch(probe)
		if evalErr != nil {
			return evalErr
		}
		if err != nil {
			return fmt.Errorf("--find-max-batch on %s: %v", g.Name, err)
		}
		res.MaxBatch[g.Name] = nil
		if mb.Batch > 0 {
			n := mb.Batch
			res.MaxBatch[g.Name] = &n
		}
		if mb.Unbounded {
			s.warns = append(s.warns, fmt.Sprintf("%s: every batch up to %d fits (peak memory does not grow with batch?)", g.Name, MaxBatchLimit))
		}
	}
	return nil
}

// warnReserveDip says, once per GPU, where a training sweep's peak
// memory falls as the batch grows, and why: the peak is the caching
// allocator's reserve (train/allocator.go), whose segments pack each
// batch's tensors differently, while the live tensors under it never
// fall (internal/physics). Rows are compared with the previous one of
// the same point, the batch varying fastest.
func (s *Sweeper) warnReserveDip(gpu string, rows []Row) {
	for i := 1; i < len(rows); i++ {
		lo, hi := rows[i-1], rows[i]
		if hi.Batch <= lo.Batch || !maps.Equal(hi.Params, lo.Params) || hi.Model != lo.Model ||
			!(hi.PeakMemoryBytes < lo.PeakMemoryBytes) {
			continue
		}
		s.warn(fmt.Sprintf("%s: peak memory falls from batch %d (%s) to %d (%s): a training step's peak is the caching allocator's reserve, whose segments pack each batch's tensors differently; the live tensors under it do not fall",
			gpu, lo.Batch, render.Bytes(lo.PeakMemoryBytes), hi.Batch, render.Bytes(hi.PeakMemoryBytes)))
		return
	}
}

// dipShare is how far throughput must fall below a smaller batch's
// before warnThroughputDip says so: less is the rounding of a wave's
// edge, which the estimates keep (internal/physics lets throughput step
// down there; time never falls).
const dipShare = 0.01

// warnThroughputDip says, once per GPU, where throughput falls as the
// batch grows (by dipShare or more below the best of a smaller batch of
// the same point), what running the larger batch as calls of the
// smaller keeps (the smaller's throughput: what a server splitting its
// batches gets), and what the estimate charges for the fall: per item,
// the memory-bound kernels' time and the rest's. Where the memory-bound
// kernels carry the fall, it is the L2 the model credits with the
// tensors one kernel leaves for the next: they fit at the smaller batch
// and not at the larger, so they are read back from DRAM (cost/
// residency.go). The model's L2 is an LRU, under which a tensor larger
// than the cache finds none of itself; a real L2 keeps part of one, so
// a measured fall may be smaller. It is largest on the GPUs whose L2 is
// big beside their DRAM bandwidth (Ada: the L4, L40S, RTX 4090), e.g.
// ResNet-50 in fp16 on an L4, 29% from batch 16 to 1,024 under the
// graph runtime. No measurement here crosses that point (our H100 and
// H200 rows' throughput rises at every batch they have, and so does its
// estimate); a published T4/L4 study (arXiv 2604.14552, DEEP-GAP) finds
// the L4's ResNets at peak efficiency at batch 16-32. Otherwise it is
// the GEMM and convolution tiles' last wave, which the model's tile set,
// smaller than a library's, fills less well at the larger batch; where
// neither carries two thirds of the change per item, both are named.
func (s *Sweeper) warnThroughputDip(g *hwdb.GPU, rows []Row) {
	gpu := s.key(g)
	lo, hi, fall := -1, -1, dipShare
	for i, r := range rows {
		if !(r.ThroughputPerS > 0) || r.Batch <= 0 {
			continue
		}
		for j, q := range rows[:i] {
			if q.Batch >= r.Batch || !maps.Equal(q.Params, r.Params) || q.Model != r.Model || q.Batch <= 0 {
				continue
			}
			if f := 1 - r.ThroughputPerS/q.ThroughputPerS; f > fall {
				lo, hi, fall = j, i, f
			}
		}
	}
	if hi < 0 {
		return
	}
	a, b := rows[lo], rows[hi]
	perItem := func(r Row, v float64) float64 { return v / float64(r.Batch) }
	mem := perItem(b, b.MemoryBoundS) - perItem(a, a.MemoryBoundS)
	rest := perItem(b, b.TimeS-b.MemoryBoundS) - perItem(a, a.TimeS-a.MemoryBoundS)
	l2 := fmt.Sprintf("at batch %d the tensors each kernel leaves for the next fit in the %.0f MiB of L2 the model credits, at %d they are read back from DRAM; the model's L2 is an LRU, where a tensor larger than it keeps none of itself, so a measured fall may be smaller",
		a.Batch, g.L2ReuseBytes()/(1<<20), b.Batch)
	tiles := fmt.Sprintf("the GEMM and convolution kernels' tiles and K splits suit batch %d better than %d (a wave's tail, a split on offer at one size and not the other), which a library's larger set of kernels may soften", a.Batch, b.Batch)
	var why string
	switch share := mem / (max(mem, 0) + max(rest, 0)); {
	case share >= 2.0/3:
		why = l2
	case share <= 1.0/3:
		why = tiles
	default:
		why = l2 + "; and " + tiles
	}
	s.warn(fmt.Sprintf("%s: throughput falls %.0f%% from batch %d (%s/s) to %d (%s/s; run as calls of %d, a batch of %d keeps the %s/s): per item, memory-bound kernels take %s, the rest %s; %s",
		gpu, 100*fall, a.Batch, render.Count(a.ThroughputPerS), b.Batch, render.Count(b.ThroughputPerS), a.Batch, b.Batch, render.Count(a.ThroughputPerS),
		moreOrLess(mem), moreOrLess(rest), why))
}

// key is how a warning names GPU g: "MODEL on GPU" in a sweep of
// several models, else the GPU.
func (s *Sweeper) key(g *hwdb.GPU) string {
	if s.cfg.keyByModel {
		return s.cfg.Model + " on " + g.Name
	}
	return g.Name
}

// moreOrLess renders a change of time per item as "X more" or "X less".
func moreOrLess(d float64) string {
	if d < 0 {
		return render.Seconds(-d) + " less"
	}
	return render.Seconds(d) + " more"
}

// memoryBoundS is the time of r's memory-bound kernels.
func memoryBoundS(r *report.Report) float64 {
	var s float64
	for _, n := range r.Nodes {
		if n.Bound == "memory" {
			s += n.TimeS
		}
	}
	return s
}

// searchPeak is the memory FindMaxBatch orders batches by: one that
// never falls as the batch grows. A training step's reported peak is the
// caching allocator's reserve, which wobbles with how freed activations
// and the optimizer state pack its segments (VGG-16 TF32 Adam: 3.17 GB
// at batch 4, 2.92 GB at batch 8, train/allocator.go); the live tensors
// under it never fall (internal/physics), and whether a batch fits
// already accounts for the packing (the simulation releases its cache
// and retries at the device's limit, as the allocator does).
func searchPeak(r *report.Report) float64 {
	if tr := r.Totals.Train; tr != nil && tr.Memory.TensorPeakBytes > 0 {
		return tr.Memory.TensorPeakBytes
	}
	return r.Totals.PeakMemoryBytes
}

// fit fits each GPU's rows against fitX.
func (s *Sweeper) fit(rows [][]Row, degree int, fitX string) ([]CostFit, error) {
	var out []CostFit
	for i, g := range s.cfg.GPUs {
		ft, err := fitRows(rows[i], degree)
		if err != nil {
			return nil, fmt.Errorf("--fit: %v", err)
		}
		ft.GPU, ft.X, ft.Degree = g.Name, fitX, s.cfg.Fit
		out = append(out, ft)
	}
	return out, nil
}

// fitRows fits time, FLOPs and GEMM FLOPs of one GPU's rows against X.
func fitRows(rows []Row, degree int) (CostFit, error) {
	xs := make([]float64, len(rows))
	ys := [3][]float64{}
	for i, r := range rows {
		xs[i] = r.X
		ys[0] = append(ys[0], r.TimeS)
		ys[1] = append(ys[1], r.FLOPs)
		ys[2] = append(ys[2], r.GEMMFLOPs)
	}
	var out [3]FitTerms
	for k := range ys {
		ft, err := PolyFit(xs, ys[k], degree)
		if err != nil {
			return CostFit{}, err
		}
		out[k] = FitTerms{Baseline: ft.Coef[0], Slope: ft.Coef[1], R2: ft.R2, MaxRelResidual: ft.MaxRelResidual}
		if degree == 2 {
			q := ft.Coef[2]
			out[k].Quadratic = &q
		}
	}
	return CostFit{TimeS: out[0], FLOPs: out[1], GEMMFLOPs: out[2]}, nil
}

// RunModels sweeps each model alike. With several, their results merge:
// rows name their model, max_batch, knee and fits are keyed "MODEL on
// GPU", warnings are deduplicated in order.
func RunModels(models []string, cfg Config) (*Result, error) {
	var out *Result
	seen := map[string]bool{}
	for _, m := range models {
		c := cfg
		c.Model, c.keyByModel = m, len(models) > 1
		res, err := Run(c)
		if err != nil || len(models) == 1 {
			return res, err
		}
		for i := range res.Rows {
			res.Rows[i].Model = m
		}
		if out == nil {
			out = &Result{SchemaVersion: res.SchemaVersion, ToolVersion: res.ToolVersion, Model: strings.Join(models, ","), DType: res.DType,
				Runtime: res.Runtime, Plan: res.Plan, PowerCapW: res.PowerCapW, SMClockMHz: res.SMClockMHz, Warm: res.Warm, Train: res.Train, Swept: res.Swept, GPUs: res.GPUs,
				MaxBatch: map[string]*int64{}, Knee: map[string]*int64{}, Warnings: []string{}}
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
