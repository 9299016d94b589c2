package cost

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"sort"
	"strconv"
	"strings"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
)

// CostModelVersion names the rule set and power model; it changes when a
// convention changes, so that reports from different versions are not
// compared as equals.
const CostModelVersion = "rules-1"

// Options controls Analyze.
type Options struct {
	// DType is the compute dtype: fp32|tf32|fp16|bf16|fp8|int8, or
	// fp16-amp|bf16-amp for the model run under torch.autocast
	// (autocast.go); "" = the model's own dtypes.
	DType string
	// Plan is the plan priced (passes.PlanNames), recorded; it also says
	// whether ATen's kernel latencies apply (eagerPlan).
	Plan        string
	ToolVersion string
	ModelName   string
	// Bindings are the symbol values the caller bound before inference;
	// recorded in the report.
	Bindings map[string]int64
	// Runtime is the execution profile (hwdb/runtimes.yaml); nil is the
	// default, hwdb.DefaultRuntime.
	Runtime *hwdb.Runtime
	// Power is a power cap or SM clock lock; zero is the GPU's default
	// (see perf.UnderControl).
	Power perf.PowerControl
	// Train, when set, costs one training step instead of inference
	// (package train).
	Train Training
	// GPUs is the tensor-parallel degree (see parallel.go); 0 and 1 are
	// one GPU.
	GPUs int
	// Calibration, when set, corrects each kernel's body time by what
	// measurements of such kernels showed (package calib); its
	// Describe() is recorded in the report.
	Calibration KernelCalibration
	// AppendKVCache prices each KV-cache Concat(past, new) -> present as
	// an in-place append (kvappend.go), as a serving runtime runs a
	// generation loop; off, the graph is priced as exported.
	AppendKVCache bool
	// Warm prices a call repeated back to back (a benchmark loop, CUDA
	// graph replays): L2 holds at its start what the previous call left
	// there (Analyze runs the call once to find it). Off, the call is
	// the first: every weight and graph input is read from DRAM, the rule
	// the physics suite holds. Ignored for a training step, whose
	// backward prices its own traffic.
	Warm bool
}

// KernelCalibration is a measured correction of the time model (package
// calib implements it, bound to the GPU priced).
type KernelCalibration interface {
	// TermFactor multiplies one term of a kernel's time: term is
	// "compute", "latency" or "memory" (perf.KernelTime's), class the
	// kernel's (report.NodeCost.KernelClass), precision its path
	// (hwdb.Precision: a class runs other code on the tensor cores),
	// op the node's op type
	// (report.NodeCost.OpType: kernels of one class run different
	// code), shape its kernel's shape (report.NodeCost.KernelShape: a
	// GEMM's N×K, a row kernel's row length; "" for none),
	// terms the kernel's uncalibrated compute, latency and memory
	// seconds. A term × TermFactor never falls as any term grows, and
	// shape is a kernel's dims that no batch size changes, so a
	// calibrated time still grows with batch.
	TermFactor(class, precision, op, shape, term string, terms [3]float64) float64
	// Describe is one line for the report: which calibration, fitted on
	// what, applied how.
	Describe() string
	// Name is the calibration's file as the user gave it, for headers.
	Name() string
}

// computeDTypes are the values of Options.DType, in the order help and
// error texts list them, each with the storage dtype float tensors are
// costed at. tf32 is stored as fp32; int8 quantised tensors are 1 byte.
var computeDTypes = []struct {
	name string
	dt   ir.DType
}{
	{"fp32", ir.Float32},
	{"tf32", ir.Float32},
	{"fp16", ir.Float16},
	{"bf16", ir.BFloat16},
	{"fp8", ir.Float8E4M3FN},
	{"int8", ir.Int8},
	// Autocast (autocast.go): tensors at the dtypes torch.autocast gives
	// them, the weights as stored.
	{"fp16-amp", ir.Undefined},
	{"bf16-amp", ir.Undefined},
}

// DTypes lists the compute dtypes Options.DType accepts ("" aside: the
// model's own dtypes).
func DTypes() []string {
	out := make([]string, len(computeDTypes))
	for i, d := range computeDTypes {
		out[i] = d.name
	}
	return out
}

// computeDType is the storage dtype of compute dtype name.
func computeDType(name string) (ir.DType, bool) {
	for _, d := range computeDTypes {
		if d.name == name {
			return d.dt, true
		}
	}
	return ir.Undefined, false
}

// Analyze estimates the cost of every node of g (shapes already inferred)
// on gpu. It never panics on a model: a rule that fails lists its node
// under unsupported_ops with a warning.
func Analyze(g *ir.Graph, m *ir.Model, gpu *hwdb.GPU, opt Options) (*report.Report, error) {
	if gpu == nil {
		return nil, fmt.Errorf("analyze: no GPU")
	}
	if opt.Power.CapW > 0 {
		return analyzeUnderCap(g, m, gpu, opt)
	}
	return analyze(g, m, gpu, opt)
}

// Count is Analyze without a GPU: the counts every rule gives (MACs,
// FLOPs, executed work, bytes read and written, parameters, launches,
// peak activation memory), none of the pricing (times, energy, bound,
// memory level, precision, fit), and CountOnly set so that a reader
// cannot take its zero times for a price. The counts are those Analyze
// reports on any GPU, but for one case: a convolution substituted by
// Winograd counts its executed work as on a GPU with the tensor path its
// compute dtype implies (a GPU without one, Pascal at fp16, keeps
// Winograd). A training step and tensor parallelism are shaped by the
// GPU, so Count refuses Train and GPUs above 1; Runtime and Power price
// and are ignored.
func Count(g *ir.Graph, m *ir.Model, opt Options) (*report.Report, error) {
	if opt.Train != nil {
		return nil, fmt.Errorf("analyze: a training step is costed on a GPU; counting needs none")
	}
	if opt.GPUs > 1 {
		return nil, fmt.Errorf("analyze: tensor parallelism over %d GPUs is costed on a GPU; counting needs none", opt.GPUs)
	}
	opt.Runtime, opt.Power, opt.GPUs = nil, perf.PowerControl{}, 0
	return analyze(g, m, nil, opt)
}

// analyze is Analyze, or Count when gpu is nil.
func analyze(g *ir.Graph, m *ir.Model, gpu *hwdb.GPU, opt Options) (*report.Report, error) {
	if g == nil {
		return nil, fmt.Errorf("analyze: no graph")
	}
	if opt.Train != nil {
		// A training step at fp16 or bf16 runs under autocast already
		// (train/amp_step.go): fp16-amp names the same step.
		opt.DType = strings.TrimSuffix(opt.DType, "-amp")
	}
	var rt *hwdb.Runtime
	var err error
	if gpu != nil {
		if rt, err = runtimeOf(opt); err != nil {
			return nil, err
		}
		if rt.CUDAGraph > 0 {
			if err := captureRefusal(g); err != nil {
				return nil, fmt.Errorf("runtime %s: %w", rt.Name, err)
			}
		}
		// A board the runtime's own memory fills holds no model at any
		// batch; its size is a slip of units, not a verdict to print.
		if floor := rt.MemoryFloor(); gpu.MemBytes > 0 && opt.Train == nil && gpu.UsableMem(floor) <= 0 {
			return nil, fmt.Errorf("GPU %s: its %.3g GB of memory is no more than runtime %s's own %.3g GB (CUDA context and library workspaces), so no model fits; is its memory size in the right unit (mem_gib)?",
				gpu.Name, gpu.CUDAMem()/1e9, rt.Name, floor/1e9)
		}
	}
	a, err := setUp(g, m, gpu, opt, rt)
	if err != nil {
		return nil, err
	}
	if opt.Warm && gpu != nil && opt.Train == nil {
		// The call before: what its traffic leaves in L2 is there when
		// this one starts.
		prev, err := setUp(g, m, gpu, opt, rt)
		if err != nil {
			return nil, err
		}
		if _, err := prev.graph(g, 0); err != nil {
			return nil, err
		}
		a.l2 = prev.l2
		a.l2.countReaders(g) // this call's readers, the last call's lines
	}
	gc, err := a.graph(g, 0)
	if err != nil {
		return nil, err
	}
	rep := &report.Report{Header: report.Header{SchemaVersion: report.SchemaVersion, ToolVersion: opt.ToolVersion}, CostModelVersion: CostModelVersion, Model: opt.ModelName, DType: opt.DType, Plan: opt.Plan, Bindings: opt.Bindings, FLOPConvention: FLOPConvention, Nodes: gc.nodes, Warnings: []string{}, UnsupportedOps: []report.Unsupported{}}
	if gpu != nil {
		rep.GPU, rep.GPUSpecHash = gpu.Name, hwdb.SpecHash(gpu)
		if opt.Calibration != nil {
			rep.Calibration, rep.CalibrationFile = opt.Calibration.Describe(), opt.Calibration.Name()
		}
		rep.Warm = opt.Warm && opt.Train == nil
	} else {
		rep.CountOnly = true
	}
	if rep.Model == "" && m != nil {
		rep.Model = m.Path
	}
	rep.Quantized = modelQuantized(g)
	if rep.DType == "" {
		rep.DType = cmp.Or(rep.Quantized, modelDType(g))
	}
	if rep.Bindings == nil {
		rep.Bindings = map[string]int64{}
	}
	t := &rep.Totals
	t.Counts, t.Launches = gc.est.Counts, gc.est.Launches
	setTimeEnergy(t, gc.agg.TimeS, gc.agg.EnergyJ)
	t.PowerCapW, t.SMClockCapMHz = opt.Power.CapW, opt.Power.SMClockMHz
	if t.TimeS > 0 {
		t.GEMMConvTimeShare = gc.agg.GEMMTimeS / t.TimeS
	}
	t.Nodes = len(gc.nodes)
	if t.Partial = a.partial.summary(t.Nodes); t.Partial != nil {
		a.warnf("the totals are partial: %d of %d nodes were not costed in full: %s", t.Partial.UncostedNodes+t.Partial.UnsizedNodes, t.Nodes, t.Partial.Reason)
	}
	for _, v := range a.paramOrder {
		if a.tiedCopy(v) {
			t.TiedParams += a.paramElems(v)
			if !a.holdsTiedOnce() {
				t.ParamBytes += a.paramBytes(v)
			}
			continue
		}
		t.Params += a.paramElems(v)
		t.ParamBytes += a.paramBytes(v)
	}
	t.PeakActivationBytes = gc.peakAct
	t.PeakMemoryBytes = gc.peakAct + t.ParamBytes
	if gpu == nil {
		rep.Warnings = append(rep.Warnings, a.warnings...)
		rep.UnsupportedOps = a.unsupportedList()
		a.sanitizeTotals(rep)
		return rep, nil
	}
	// The runtime profile prices one inference call (host dispatch, per-call
	// overhead); a training step then replaces time_s with the step, whose
	// kernels are priced on the device alone (host dispatch under training
	// is not modelled yet).
	applyRuntime(rep, gpu, rt, hostIO(g, rt, opt))
	if a.tracesArena() {
		a.applyArena(rep)
	}
	if opt.Train != nil {
		if err := opt.Train.Step(&Forward{a: a, g: g, rep: rep, gc: gc}); err != nil {
			return nil, err
		}
	}
	if a.tp != nil {
		a.applyParallel(rep)
	}
	a.finishWarnings()
	a.alignmentAdvice()
	rep.Warnings = append(rep.Warnings, a.warnings...)
	rep.UnsupportedOps = a.unsupportedList()
	a.sanitizeTotals(rep)
	applyFit(rep, gpu, leadingBatch(g))
	return rep, nil
}

// aggregate is the timing of a group of nodes run one after another on one
// stream: the sum of their times.
type aggregate struct {
	ComputeS, LatencyS, MemoryS, RampS, LaunchS, TimeS, EnergyJ float64
	// GEMMTimeS is the part of TimeS spent in GEMM-like nodes.
	GEMMTimeS float64
}

func (g *aggregate) add(o aggregate) {
	for i, p := range g.fields() {
		*p += *o.fields()[i]
	}
}

func (g *aggregate) scale(f float64) {
	for _, p := range g.fields() {
		*p *= f
	}
}

// fields lists every term of g, in one place so that add, scale and the
// sanitizer cannot disagree about which terms a group sums.
func (g *aggregate) fields() [8]*float64 {
	return [...]*float64{&g.ComputeS, &g.LatencyS, &g.MemoryS, &g.RampS, &g.LaunchS, &g.TimeS, &g.EnergyJ, &g.GEMMTimeS}
}

// bound names the term that dominates a group's time.
func (g *aggregate) bound() string {
	return report.SequenceBound(g.TimeS, g.ComputeS, g.LatencyS, g.MemoryS, g.RampS+g.LaunchS)
}

// graphCost is the analysis of one graph (the main graph or a body).
type graphCost struct {
	nodes   []report.NodeCost
	est     NodeEstimate // sums (perf.Params not deduplicated)
	agg     aggregate
	peakAct float64
	// ests are the nodes' estimates, in node order (training reads them).
	ests []NodeEstimate
}

// estimate turns a subgraph's sums into a control-flow node's estimate.
func (gc *graphCost) estimate() NodeEstimate {
	e := gc.est
	e.Class = ""
	e.M, e.N, e.K, e.Batch = 0, 0, 0, 0
	agg := gc.agg
	e.composite = &agg
	return e
}

type analyzer struct {
	gpu     *hwdb.GPU
	runtime *hwdb.Runtime
	// arenaEvents is the main graph's allocation order when the runtime
	// allocates from onnxruntime's arena (tracesArena).
	arenaEvents []arenaEvent
	model       *ir.Model
	opt         Options
	dtype       ir.DType
	// lone marks a graph of one node: priced as a call repeated back to
	// back, its kernel follows itself (perf.Kernel.TensorIterator).
	lone bool
	// oneLoop marks a graph of one node, or of one and a pointwise node
	// (a convolution and its bias, as the plans split them): repeated,
	// its main kernel follows itself but for that small one
	// (perf.Kernel.FollowsItself).
	oneLoop bool

	warnings    []string
	unsupported map[string]*report.Unsupported
	unsOrder    []string
	seenParams  map[*ir.Value]bool
	paramOrder  []*ir.Value
	fallbacks   map[string]int // "want->got" precision fallbacks, counted
	// misaligned are the GEMM nodes priced at cuBLAS's alignment-1
	// fallback (alignmentAdvice).
	misaligned []misalignedGEMM
	// ownFP32 counts the convolutions and other GEMM-like nodes priced at
	// the model's own fp32 (no --dtype), for tf32Warning.
	ownFP32 struct {
		conv, gemm int
		// seen holds the nodes counted: a generation op prices its
		// decoder's nodes once a run.
		seen map[*ir.Node]bool
	}
	tp *tensorParallel // nil on one GPU
	// l2 follows what each kernel finds in L2 (residency.go).
	l2   *l2Residency
	ctxs []*RuleCtx // rule contexts by nesting depth (ruleCtx)
	// partial follows the nodes not costed in full (partial.go).
	partial partialTracker
	// appends are the cache appends priced in place (AppendKVCache).
	appends map[*ir.Node]bool
	// autocast is the dtype flow of --dtype fp16-amp/bf16-amp (nil
	// otherwise: autocast.go).
	autocast *autocastFlow
	// orders are the memory orders of the eager plan's permuted tensors
	// (eager_order.go); nil until one is met.
	orders map[*ir.Value]dimOrder
}

// setUp is the analyzer analyze runs: newAnalyzer with its tensor
// parallelism, compute dtype and autocast flow.
func setUp(g *ir.Graph, m *ir.Model, gpu *hwdb.GPU, opt Options, rt *hwdb.Runtime) (*analyzer, error) {
	a := newAnalyzer(g, m, gpu, opt, rt)
	if gpu != nil {
		var err error
		if a.tp, err = newTensorParallel(gpu, opt.GPUs); err != nil {
			return nil, err
		}
	}
	if opt.DType != "" {
		dt, ok := computeDType(opt.DType)
		if !ok {
			return nil, fmt.Errorf("analyze: unknown dtype %q (want %s)", opt.DType, strings.Join(DTypes(), ", "))
		}
		a.dtype = dt
		if half, ok := autocastHalf[opt.DType]; ok {
			a.autocast = newAutocastFlow(g, half)
		}
	}
	return a, nil
}

// released counts node n's reads of its inputs where no kernel of its
// own read them through the L2 (a shape query, a folded or unpriced
// node, a control-flow node whose body read what it needed), so that a
// tensor such a node reads is still reclaimed after its last reader.
func (a *analyzer) released(n *ir.Node) {
	if a.l2 == nil {
		return
	}
	for _, v := range n.Inputs {
		a.l2.read(v)
	}
}

// oneLoop reports whether g is one node, or one and a pointwise node
// (analyzer.oneLoop).
func oneLoop(g *ir.Graph) bool {
	switch len(g.Nodes) {
	case 1:
		return true
	case 2:
		a, b := g.Nodes[0], g.Nodes[1]
		return a != nil && b != nil && StreamOp(a.Domain, a.OpType) != StreamOp(b.Domain, b.OpType)
	}
	return false
}

// newAnalyzer is an analyzer of g on gpu with an empty L2; with no GPU,
// one that counts (Count).
func newAnalyzer(g *ir.Graph, m *ir.Model, gpu *hwdb.GPU, opt Options, rt *hwdb.Runtime) *analyzer {
	a := &analyzer{
		gpu: gpu, model: m, opt: opt, runtime: rt, lone: len(g.Nodes) == 1, oneLoop: oneLoop(g),
		unsupported: map[string]*report.Unsupported{},
		seenParams:  map[*ir.Value]bool{},
		fallbacks:   map[string]int{},
	}
	if gpu != nil { // counting follows no cache
		a.l2 = newL2Residency(gpu.L2ReuseBytes(), g)
		if opt.Train == nil {
			a.l2.countReaders(g)
		}
	}
	if opt.AppendKVCache {
		a.appends = cacheAppends(g)
	}
	return a
}

func (a *analyzer) warnf(format string, args ...any) {
	a.warnings = append(a.warnings, fmt.Sprintf(format, args...))
}

// graph costs every node of g in topological order.
func (a *analyzer) graph(g *ir.Graph, depth int) (*graphCost, error) {
	if depth > ir.DefaultLimits.MaxDepth {
		return nil, fmt.Errorf("analyze: subgraphs nested deeper than %d", ir.DefaultLimits.MaxDepth)
	}
	// The lists are sized up front: NodeCost and NodeEstimate are large
	// structs, and growing a list by doubling allocated 90 MB on a
	// 112k-node graph. Estimates are kept only where training reads them
	// (the main graph): a third of what the rows take.
	gc := &graphCost{nodes: make([]report.NodeCost, len(g.Nodes))}
	keepEsts := a.opt.Train != nil && depth == 0
	if keepEsts {
		gc.ests = make([]NodeEstimate, len(g.Nodes))
	}
	infos := newInfoSlab(g.Nodes)
	subPeak := make([]float64, len(g.Nodes))
	views := make([]bool, len(g.Nodes))
	for i, n := range g.Nodes {
		nc := &gc.nodes[i]
		est, agg, sp := a.node(nc, n, g, depth)
		nc.Inputs, nc.Outputs = infos.describe(n.Inputs), infos.describe(n.Outputs)
		subPeak[i], views[i] = sp, est.View
		if keepEsts {
			gc.ests[i] = est
		}
		if depth == 0 {
			a.partial.endNode(n)
		}
		gc.est.add(est)
		gc.agg.add(agg)
	}
	gc.peakAct = a.peakActivations(g, views, subPeak, depth == 0)
	return gc, nil
}

// infoSlab carves the report's per-node input and output lists from one
// array sized for the whole graph: one allocation instead of two per
// node (56k fewer on a 112k-node LLaMA-shaped graph).
type infoSlab struct{ free []report.TensorInfo }

func newInfoSlab(nodes []*ir.Node) infoSlab {
	n := 0
	for _, nd := range nodes {
		n += present(nd.Inputs) + present(nd.Outputs)
	}
	return infoSlab{free: make([]report.TensorInfo, 0, n)}
}

// describe is report.TensorInfos(vs), taken from the slab. Its capacity
// is clipped, so an append to one node's list cannot reach the next's.
func (s *infoSlab) describe(vs []*ir.Value) []report.TensorInfo {
	start := len(s.free)
	s.free = report.AppendTensorInfos(s.free, vs)
	return s.free[start:len(s.free):len(s.free)]
}

// sharedList is the report's view of a node's list of names: the node's
// own array, capacity clipped so that an append copies, and empty but
// not nil when there is none (JSON writes [], not null).
func sharedList(ss []string) []string {
	if len(ss) == 0 {
		return []string{}
	}
	return ss[:len(ss):len(ss)]
}

// present counts the values of vs that are not absent (nil).
func present(vs []*ir.Value) int {
	n := 0
	for _, v := range vs {
		if v != nil {
			n++
		}
	}
	return n
}

// node costs one node into its report row nc (all but its input and
// output lists) and returns its estimate (for sums), its timing and the
// peak activation memory of its subgraphs. The row is filled in place:
// NodeCost is a large struct, and returning it by value copied it twice
// per node.
func (a *analyzer) node(nc *report.NodeCost, n *ir.Node, g *ir.Graph, depth int) (NodeEstimate, aggregate, float64) {
	nc.Name, nc.OpType, nc.Domain, nc.Module = n.Name, n.OpType, n.Domain, n.ModulePath()
	nc.FusedFrom = sharedList(n.FusedFrom)
	a.noteOrder(n, g)
	est, subPeak, ok := a.estimate(n, g, depth)
	if !ok {
		nc.Note = "no cost rule: not counted"
		a.released(n)
		return NodeEstimate{}, aggregate{}, 0
	}
	a.sanitizeEstimate(n, &est)
	a.checkView(n, &est)
	if why := a.noKernel(n, g, est.View); why != "" {
		est.View, est.Launches = true, 0
		est.Note = why
	}
	// A node the plan folded others into (BN into its convolution) keeps
	// their arithmetic in the model's FLOPs; no kernel executes it.
	est.FLOPs += n.FoldedFLOPs()
	nc.Counts, nc.Params, nc.Launches = est.Counts, est.Params, est.Launches
	nc.Note = est.Note
	nc.OnHost = est.Host
	// Intensity and time are those of what the kernel executes: the
	// roofline a kernel sits under is set by the work it really does.
	if bytes := est.Bytes(); bytes > 0 {
		nc.ArithmeticIntensity = est.ExecutedFLOPs / bytes
	}
	var agg aggregate
	switch {
	case est.composite != nil:
		agg = *est.composite
		nc.Bound = agg.bound()
		a.released(n)
	case est.View || est.Launches == 0:
		// No kernel: no time. A view's output is its input's bytes.
		if est.View && !folded(g, n) && !est.Host && !n.BuildTime() && a.l2 != nil {
			a.l2.view(n)
		} else {
			a.released(n)
		}
	case a.gpu == nil:
		// Counting only: a kernel, but no GPU to price it on.
	default:
		prec := a.precisionFor(n, est.Class)
		a.countOwnFP32(n, est.Class)
		own := est.lessTrailer()
		dram, warm := a.dramBytes(n, own)
		k := own.Kernel(prec, a.elemBytes(n), dram, vectorizedOps[n.OpType])
		k.OperandsWarm = warm
		k.Strided, k.ReduceTree = a.stridedOperand(n, g), a.eagerReduction(n)
		k.WarpRows = k.ReduceTree && lastAxisSoftmax(n) && WarpSoftmax(k.RowLen, k.ElemBytes)
		k.Stream = StreamOp(n.Domain, n.OpType) && !k.Strided
		// A lone kernel repeated follows itself and pays no first load
		// (perf's pointwiseLoadCycles): our single-kernel tables.
		pointwise := a.eagerPointwise(n)
		k.TensorIterator = pointwise && !a.lone
		k.Transcendental = pointwise && transcendentalNode(n)
		k.FollowsItself = a.oneLoop
		if copied, strided := a.eagerCopy(n, g, est.Class); copied {
			k.TensorIterator, k.Strided = !a.lone, strided
		}
		// PyTorch 2.8's gather loads its slices as a TensorIterator copy
		// does, after its index (perf indexedCopyTime).
		k.SmallCTAs, k.SmallCTAThreads = a.smallCTAs(n, k.RowLen)
		if k.Indexed.Indices > 0 && a.eagerPlan() {
			k.TensorIterator = !a.lone && perf.GathersIndexSelect(a.runtime)
			if ctas := perf.GatherCTAs(k, a.runtime); ctas > 0 {
				k.SmallCTAs, k.SmallCTAThreads = clampInt(ctas), perf.GatherCTAThreads(k)
			}
			nc.Note = appendNote(nc.Note, perf.IndexedCopyKernel(k, a.runtime))
		}
		k.MaxPoolOutputs = a.eagerMaxPoolOutputs(n)
		k.ChannelsLastCatElements = a.eagerChannelsLastCatElements(n)
		k.TransposedB = est.Class == perf.ClassGEMM && a.transposedB(n)
		// The node's own GEMM, before a library's algorithm replaces
		// it: cuDNN's Winograd choice changes with batch, the shape a
		// calibration keys by must not.
		shape := kernelShape(k, est.RowInSample)
		k = a.libraryWinograd(n, &est, k)
		k = a.libraryFFT(n, &est, k)
		k = a.nativeDepthwise(nc, n, &est, k)
		// After the library's algorithm: the bias pass is the runtime's,
		// whichever kernel cuDNN runs.
		k.BiasPassBytes = a.ortBiasPassBytes(n, est.Class)
		split := a.tp != nil && est.Class.GEMMLike() && depth == 0
		if split {
			a.tp.shardKernel(&k)
			a.tp.markWeights(n)
			nc.GPUShare = 1 / float64(a.tp.n) // the tables show one GPU's bytes beside its time
		}
		pk := a.underControl(k)
		if pk.AlignmentFallback {
			a.noteMisaligned(nc, k, pk.TimeS)
		}
		pk = a.calibrated(pk, k, est.Class, n.OpType, shape)
		kt := pk.KernelTime
		agg = aggregate{ComputeS: kt.ComputeS, LatencyS: kt.LatencyS, MemoryS: kt.MemoryS, RampS: kt.RampS, LaunchS: kt.LaunchS, TimeS: kt.TimeS}
		agg.EnergyJ = pk.EnergyJ()
		nc.SMClockMHz = pk.ClockMHz
		if est.Class.GEMMLike() {
			agg.GEMMTimeS = agg.TimeS
		}
		a.libraryHelpers(nc, &est, k)
		a.bnPrepKernels(nc, n, &est, prec, &agg)
		a.winogradFilter(nc, n, &est, &agg)
		subPeak = max(subPeak, a.fftTransforms(nc, &est, &agg))
		// The copies live in the cuDNN call's workspace while it runs.
		subPeak = max(subPeak, a.layoutTransposes(nc, n, k, &est, &agg))
		a.autocastCasts(nc, n, &est, &agg)
		a.sessionCopies(nc, n, g, &est, &agg)
		a.matmulOperandCopies(nc, n, &est, &agg)
		a.priceTrailer(nc, n, &est, prec, split, &agg)
		// The all-reduce after a row-parallel GEMM: on the critical path.
		if split && needsAllReduce(n) {
			c := a.tp.allReduceTime(a.outBytes(n))
			nc.CommunicationS = c
			agg.TimeS += c
			a.tp.commS += c
			a.tp.reduces++
		}
		nc.Bound = kt.Bound
		nc.KernelClass = string(est.Class)
		nc.KernelShape = shape
		nc.MemLevel = kt.Level
		nc.Precision = string(prec)
	}
	a.sanitizeAggregate(n, &agg)
	nc.ComputeS, nc.LatencyS, nc.MemoryS, nc.TimeS, nc.RampS, nc.LaunchS, nc.EnergyJ = agg.ComputeS, agg.LatencyS, agg.MemoryS, agg.TimeS, agg.RampS, agg.LaunchS, agg.EnergyJ
	if agg.TimeS > 0 {
		nc.AvgPowerW = agg.EnergyJ / agg.TimeS
	}
	nc.EDPJS = agg.EnergyJ * agg.TimeS
	return est, agg, subPeak
}

// estimate finds and runs the node's rule, returning its estimate, the
// peak activation memory of its subgraphs and ok: false when the node has
// no rule (or its rule failed), when it is listed as unsupported.
func (a *analyzer) estimate(n *ir.Node, g *ir.Graph, depth int) (NodeEstimate, float64, bool) {
	if n.Domain == "" && n.OpType == "Constant" {
		return NodeEstimate{View: true, Note: "constant: no run-time cost"}, 0, true
	}
	if folded(g, n) {
		return NodeEstimate{View: true, Note: "constant-folded: output known before run time"}, 0, true
	}
	if onHost(g, n) {
		return NodeEstimate{View: true, Host: true, Note: "on the host: the runtime computes this shape arithmetic on the CPU, no kernel"}, 0, true
	}
	rule := LookupRule(n.Domain, n.OpType)
	if a.appends[n] {
		rule = appendRule
	}
	if rule == nil {
		a.addUnsupported(n, NoCostRule[ir.QualifiedOp(n.Domain, n.OpType)])
		return NodeEstimate{}, 0, false
	}
	ctx := a.ruleCtx(n, g, depth)
	est, err := runRule(rule, n, ctx)
	est.fillExecuted()
	if n.BuildTime() && err == nil {
		est = builtEstimate(est)
	}
	a.warnings = append(a.warnings, ctx.warnings...)
	if err != nil {
		a.warnf("%s node %q: cost rule failed: %v; node not counted", n.OpType, n.Name, err)
		a.addUnsupported(n, "cost rule failed")
		return NodeEstimate{}, 0, false
	}
	if ctx.unknown {
		// The rule counted a tensor of unknown shape as 0 (and warned):
		// the row says so and the totals are marked partial.
		a.partial.note(partialUnsized)
		est.Note = unsizedNote(est.Note)
	}
	for _, v := range ctx.params {
		if !a.seenParams[v] {
			a.seenParams[v] = true
			a.paramOrder = append(a.paramOrder, v)
		}
	}
	return est, ctx.subPeak, true
}

// ruleCtx is the context for running node n's rule: one per nesting depth,
// reset for each node, serves every node at that depth (a rule keeps no
// pointer to its context; a subgraph's nodes use the next depth's while
// their control-flow node's is in use). A fresh context and closure per
// node were 3 MB of Analyze's allocations on a 112k-node graph.
func (a *analyzer) ruleCtx(n *ir.Node, g *ir.Graph, depth int) *RuleCtx {
	for len(a.ctxs) <= depth {
		a.ctxs = append(a.ctxs, a.newRuleCtx(len(a.ctxs)))
	}
	c := a.ctxs[depth]
	comp, dt := a.computeFor(n)
	*c = RuleCtx{Graph: g, Model: a.model, DType: dt, Compute: comp, node: n,
		sub: c.sub, warnings: c.warnings[:0], params: c.params[:0]}
	c.flow, c.converted = a.flowDTypes(n)
	if comp != "" && a.gpu != nil {
		pr := perf.ResolvePrecision(a.gpu, perf.WantedPrecision(comp, perf.ClassConv))
		c.NoConvTensorCores = !perf.Kernel{Precision: pr}.OnTensorCores()
	}
	if a.model != nil {
		c.Opset = a.model.Opset(n.Domain)
	}
	return c
}

// newRuleCtx is the context of depth: its sub costs a subgraph one level
// deeper and keeps the peak activation memory of the costliest.
func (a *analyzer) newRuleCtx(depth int) *RuleCtx {
	c := &RuleCtx{}
	c.sub = func(sg *ir.Graph) (*graphCost, error) {
		sc, err := a.graph(sg, depth+1)
		if err == nil && sc.peakAct > c.subPeak {
			c.subPeak = sc.peakAct
		}
		return sc, err
	}
	return c
}

// runRule calls a rule, turning a panic (a bug in a rule meeting an odd
// model) into an error, so a model can never crash the tool.
func runRule(r Rule, n *ir.Node, c *RuleCtx) (e NodeEstimate, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error: %v", p)
		}
	}()
	return r(n, c)
}

// folded reports whether every output of n is a constant known before run
// time (Shape, Size, shape arithmetic computed by inference): no kernel runs.
// builtEstimate is the estimate of a node the plan has the engine compute
// when it is built (ir.Node.BuildTime, passes' fold-constants): its
// arithmetic stays the model's (FLOPs and transcendentals, which are the
// same under every plan) and so do the weights it reads (parameters), but
// no kernel runs it: nothing executed, moved or launched.
func builtEstimate(e NodeEstimate) NodeEstimate {
	return NodeEstimate{
		Counts: report.Counts{MACs: e.MACs, FLOPs: e.FLOPs, Transcendentals: e.Transcendentals},
		Params: e.Params, View: true,
		Note: "computed when the engine is built (constant inputs): no run-time cost",
	}
}

// folded reports whether every output of n is a tensor whose contents
// were known before the run: computed by inference and, under a runtime
// that optimized the graph with symbolic dims (ir.Graph.Session), one
// that runtime could compute when it built the session.
func folded(g *ir.Graph, n *ir.Node) bool {
	return len(n.Subgraphs()) == 0 && n.AllOutputs(func(o *ir.Value) bool {
		return o.Const != nil && o.Const.HasData && (g.Session == nil || g.Session.Ahead(o))
	})
}

// onHost reports whether the runtime computes every output of n on the
// CPU at run time (ir.Session.Host): shape arithmetic of a dim symbolic in
// the file, which onnxruntime's CUDA provider keeps off the GPU.
func onHost(g *ir.Graph, n *ir.Node) bool { return g.Session != nil && g.Session.OnHost(n) }

func (a *analyzer) addUnsupported(n *ir.Node, reason string) {
	k := ir.QualifiedOp(n.Domain, n.OpType)
	u, ok := a.unsupported[k]
	if !ok {
		u = &report.Unsupported{Domain: n.Domain, OpType: n.OpType}
		a.unsupported[k] = u
		a.unsOrder = append(a.unsOrder, k)
		msg := fmt.Sprintf("op %s has no cost rule; its nodes are listed under unsupported_ops and not counted", ir.QualifiedOp(n.Domain, n.OpType))
		if reason != "" && reason != "cost rule failed" {
			msg += " (" + reason + ")"
		}
		a.warnf("%s", msg)
	}
	u.Count++
	u.Nodes = append(u.Nodes, n.Name)
	a.partial.note(partialUncosted)
	// Weights read by an unsupported node are still parameters.
	for _, in := range n.Inputs {
		if in != nil && in.IsInitializer && !a.seenParams[in] {
			a.seenParams[in] = true
			a.paramOrder = append(a.paramOrder, in)
		}
	}
}

func (a *analyzer) unsupportedList() []report.Unsupported {
	keys := append([]string(nil), a.unsOrder...)
	sort.Strings(keys)
	out := make([]report.Unsupported, 0, len(keys))
	for _, k := range keys {
		out = append(out, *a.unsupported[k])
	}
	return out
}

func (a *analyzer) paramElems(v *ir.Value) float64 {
	c := RuleCtx{DType: a.dtype}
	c.unknown = true // no warnings from totals
	return c.Numel(v)
}

// tiedCopy reports whether v is a transposed copy of an embedding table
// the plan also reads (ir.Model.TiedCopies): the same parameter twice in
// the file, once in the framework.
func (a *analyzer) tiedCopy(v *ir.Value) bool {
	if a.model == nil {
		return false
	}
	table := a.model.TiedCopies[v]
	return table != nil && a.seenParams[table]
}

// holdsTiedOnce reports whether the runtime priced runs the framework's
// own model, whose tied head and embedding are one tensor; an engine
// built from the ONNX file (TensorRT, ONNX Runtime) holds both of the
// file's copies.
func (a *analyzer) holdsTiedOnce() bool { return a.pytorchPlan() }

// pytorchPlan reports whether the runtime priced runs PyTorch's eager or
// Inductor plan (pytorch, graph, pytorch-compile and their variants).
func (a *analyzer) pytorchPlan() bool {
	return a.runtime != nil && (a.runtime.Plan == "eager" || a.runtime.Plan == "inductor")
}

func (a *analyzer) paramBytes(v *ir.Value) float64 {
	c := RuleCtx{DType: a.dtype}
	c.unknown = true
	return c.Bytes(v)
}

// elemBytes is the operand element size of n as costed: its first
// input's, or for a Where its data's (the first is the boolean
// condition: PyTorch's where kernel runs over the result's elements, two
// bytes each for a half-precision mask fill, not one).
func (a *analyzer) elemBytes(n *ir.Node) float64 {
	x := n.In(0)
	if n.Domain == "" && n.OpType == "Where" && n.In(1) != nil {
		x = n.In(1)
	}
	if x != nil {
		c := a.sizer(n)
		if b := c.elemBytes(x); b > 0 {
			return b
		}
	}
	return 4
}

// sizer sizes n's tensors as its rule costs them (at the node's compute
// dtype), without warnings: a context for Bytes and elemBytes only.
func (a *analyzer) sizer(n *ir.Node) RuleCtx {
	_, dt := a.computeFor(n)
	c := RuleCtx{DType: dt, unknown: true}
	c.flow, c.converted = a.flowDTypes(n)
	return c
}

// clean returns x when it is a finite non-negative number; otherwise it
// returns a safe value (0 for NaN or negative, MaxFloat64 for +Inf) and ok
// false, so nothing NaN, infinite or negative reaches a report.
func clean(x float64) (float64, bool) {
	switch {
	case math.IsNaN(x), x < 0:
		return 0, false
	case math.IsInf(x, 1):
		return math.MaxFloat64, false
	}
	return x, true
}

// WeightTranspose reports whether n transposes a 2-D weight: torch.onnx
// writes F.linear of a 3-D input, exported without constant folding, as
// MatMul(x, Transpose(W)), where PyTorch's W.t() is a view that cuBLAS
// reads with a transposed flag, and whose gradient the GEMM's backward
// writes in W's own layout (train's movement backward reads it too).
func WeightTranspose(n *ir.Node) bool {
	if n.OpType != "Transpose" || n.Domain != "" {
		return false
	}
	w := n.In(0)
	return w != nil && w.IsInitializer && w.Shape.Rank() == 2
}

// weightTransposeView reports whether n is a WeightTranspose under a
// PyTorch runtime (the eager and Inductor plans), where it runs no
// kernel. The other runtimes fold it when they build the engine or
// session (fold-constants).
func (a *analyzer) weightTransposeView(n *ir.Node) bool {
	return a.pytorchPlan() && WeightTranspose(n)
}

// noKernel says why n, which its rule prices as a kernel, runs none where
// its input is already what it would write ("" when it runs one): a
// weight's transpose under the PyTorch plans, a cast to its input's own
// dtype, or a view of its input read with other strides. A node the
// rule already made a view (view) keeps its own reason, but for the
// weight's transpose.
func (a *analyzer) noKernel(n *ir.Node, g *ir.Graph, view bool) string {
	switch {
	case a.weightTransposeView(n):
		return "a weight's transpose: W.t() is a view that the GEMM reads transposed; no kernel"
	case view:
		return ""
	case a.noOpCast(n):
		return "a cast to the dtype its input already has: no kernel"
	}
	return a.strideView(n, g)
}

// noOpCast reports whether n is a Cast (or CastLike) to the dtype its
// input already has when it runs: the dtype autocast gives it, the
// --dtype a model is priced at, else its own. PyTorch's .to() then
// returns the tensor itself (Hugging Face's RMSNorm and softmax call
// .to(torch.float32) on fp32 tensors: two casts a norm in an fp32
// LLaMA), and onnxruntime and TensorRT remove such a cast when they
// build the session or engine. Under --dtype fp16 a cast to fp32 is
// kept: the model run in half precision converts there; but a cast of a
// cast's output to the dtype that cast wrote is not (Hugging Face's
// LLaMA exported in fp32 writes softmax(…, dtype=torch.float32) and
// .to(query.dtype) as two casts to fp32 after the Softmax; priced at
// fp16 the first converts, and our H200 trace of it runs one copy).
func (a *analyzer) noOpCast(n *ir.Node) bool {
	if n.Domain != "" || n.OpType != "Cast" && n.OpType != "CastLike" {
		return false
	}
	in, out := n.In(0), n.Out(0)
	if in == nil || out == nil || in.DType == ir.Undefined {
		return false
	}
	have := in.DType
	switch {
	case castOutput(in):
		// A cast's output has the dtype it converted to, whatever
		// --dtype prices the model's other floats at.
	case a.autocast != nil:
		have = a.autocast.of(in)
	case a.dtype != ir.Undefined && have.IsFloat():
		have = a.dtype
	}
	return have == out.DType
}

// castOutput reports whether v is written by a standard Cast (not
// CastLike, whose target is another tensor's type).
func castOutput(v *ir.Value) bool {
	p := v.Producer
	return p != nil && p.Domain == "" && p.OpType == "Cast"
}

// strideView says why n runs no kernel, its output being its input read
// with other strides, or "" when n is a kernel:
//   - a Transpose that moves only dims of size 1 ([b,1,h,d] to
//     [b,h,1,d], a decode step's heads) leaves every byte where it was:
//     PyTorch's result is contiguous, TensorRT's shuffle a no-op; not
//     under onnxruntime (ortRuns), which keeps the node and copies;
//   - under the PyTorch plans, a Transpose of the last two axes that
//     only matmuls read (q·kᵀ): torch.matmul hands it to cuBLAS as a
//     transposed operand; or any Transpose only matmuls read whose
//     result is a strided batch of matrices (stridedBatch: BERT's
//     [1,s,h,d] → [1,h,s,d] heads at batch 1, not at 8): torch.matmul's
//     reshape to [batch, m, k] is then a view and cuBLAS's strided
//     batched GEMM reads it where it lies;
//   - under the eager plan, a Slice or a select (Gather of a constant
//     scalar index) that keeps one contiguous block of its input
//     (contiguousSlice, selectView), whatever reads it; a select only
//     2-D GEMMs read; a Slice or Transpose whose readers take any
//     strides (readStrided: rotate_half's halves, LLaMA's heads that
//     rotary reads): basic slicing and permute are views, and cuBLAS,
//     TensorIterator and cat read them strided.
//
// A Transpose or Slice read by anything else stays a kernel: it stands
// for the copy its reader makes (.contiguous(), a reshape that cannot
// view, a convolution). Our H100 LLaMA-7B decode step ran 1,287 kernels
// at batch 8 (1,415 at batch 1) where its zoo graph priced 1,579 under
// the eager plan; these views are 288 of them.
func (a *analyzer) strideView(n *ir.Node, g *ir.Graph) string {
	if n.Domain != "" {
		return ""
	}
	pytorch := a.pytorchPlan()
	switch n.OpType {
	case "Transpose":
		perm, ok := transposePerm(n)
		if !ok {
			return ""
		}
		if unitTranspose(n.In(0), perm) && !a.ortRuns() {
			return "a transpose that moves only dims of size 1: the same bytes in the same order; no kernel"
		}
		if pytorch && readOnlyBy(g, n.Out(0), func(c *ir.Node) bool { return c.Domain == "" && c.OpType == "MatMul" }) {
			if lastAxesSwap(perm) {
				return "a transpose of the last two axes that a matmul reads: cuBLAS takes it transposed; no kernel"
			}
			sz := a.sizer(n)
			if d, ok := sz.Dims(n.In(0)); ok && stridedBatch(d, perm) {
				return "a transpose a matmul reads as a strided batch of matrices (its batch dims one stride apart): cuBLAS takes it as is; no kernel"
			}
		}
		if a.eagerPlan() && readStrided(g, n.Out(0), 0) {
			return "a transpose whose readers take any strides (pointwise ops, concatenation, slices, expands): a view in PyTorch; no kernel"
		}
	case "Slice":
		if !a.eagerPlan() {
			return ""
		}
		if a.contiguousSlice(n) {
			return "a slice that keeps one contiguous block of its input: a view at an offset in PyTorch; no kernel"
		}
		if readStrided(g, n.Out(0), 0) {
			return "a slice whose readers take any strides (pointwise ops, concatenation, slices, expands): a view in PyTorch; no kernel"
		}
	case "Gather":
		if !a.eagerPlan() {
			return ""
		}
		switch a.selectView(n, g) {
		case selectContiguous:
			return "a select (x[:, i]) that keeps one contiguous block of its input: a view at an offset in PyTorch; no kernel"
		case selectRows:
			return "a select (x[:, i]) a GEMM reads as rows one stride apart: cuBLAS takes its leading dimension; no kernel"
		}
	}
	return ""
}

// readStrided reports whether every reader of v, a view of another
// tensor's bytes, takes it with any strides, so that the view owes no
// copy: pointwise ops (TensorIterator), Concat (cat's batched copy), an
// Expand (whose own kernel stands for the copy its reader makes) and a
// Slice (a view again, or a copy that reads strided); Shape reads no
// byte; Unsqueeze and Squeeze are views whose readers must do the same.
// A Reshape, a matmul, a convolution and a graph output are not: they
// ask for the contiguous tensor the view's copy makes. Our H200 trace of
// the Hugging Face LLaMA (llama_hf_small_fp16_b8) runs no kernel for its
// heads' [b,s,h,d] → [b,h,s,d] transposes, which rotary's pointwise ops
// and rotate_half's slices read (and repeat_kv's expand, for v), nor for
// the rotary table's freqs transpose that cat reads.
func readStrided(g *ir.Graph, v *ir.Value, depth int) bool {
	if v == nil || len(v.Consumers) == 0 || g.IsGraphOutput(v) || depth > maxViewChain {
		return false
	}
	for _, c := range v.Consumers {
		if c.Domain != "" {
			return false
		}
		switch c.OpType {
		case "Shape", "Size", "Concat", "Expand", "Slice":
		case "Unsqueeze", "Squeeze":
			if !readStrided(g, c.Out(0), depth+1) {
				return false
			}
		default:
			if !ir.OpHas("", c.OpType, ir.Elementwise) {
				return false
			}
		}
	}
	return true
}

// maxViewChain bounds how many views in a row readStrided follows.
const maxViewChain = 4

// stridedView reports whether node p's output is a view the eager plan
// keeps with strides of its own (a Slice or a Transpose that runs no
// kernel and is not one contiguous block), which a pointwise reader
// walks in TensorIterator's non-vectorized loop.
func (a *analyzer) stridedView(p *ir.Node, g *ir.Graph) bool {
	switch p.OpType {
	case "Slice":
		return !a.contiguousSlice(p) && a.strideView(p, g) != ""
	case "Transpose":
		perm, ok := transposePerm(p)
		return ok && !unitTranspose(p.In(0), perm) && a.strideView(p, g) != ""
	}
	return false
}

// contiguousSlice reports whether Slice n keeps one contiguous block of
// its input: unit steps, a single axis cut, and every axis before it of
// size 1 (BERT's position_ids[:, :s] of a [1, 512] buffer, a rotary
// table's first s rows). PyTorch's slice is then a view at an offset
// that reads as a contiguous tensor, whatever reads it: our H100 and
// H200 profiles of BERT run no kernel for it.
func (a *analyzer) contiguousSlice(n *ir.Node) bool {
	if steps := n.In(4); steps != nil {
		if steps.Const == nil || !steps.Const.HasData {
			return false
		}
		for _, st := range steps.Const.Ints {
			if st != 1 {
				return false
			}
		}
	}
	sz := a.sizer(n)
	in, ok1 := sz.Dims(n.In(0))
	out, ok2 := sz.Dims(n.Out(0))
	if !ok1 || !ok2 || len(in) != len(out) {
		return false
	}
	cut := -1
	for i := range in {
		if in[i] == out[i] {
			continue
		}
		if cut >= 0 {
			return false // two axes cut: rows of a block, not one block
		}
		cut = i
	}
	return unitPrefix(in, cut)
}

// unitPrefix reports whether every dim of d before axis has size 1: the
// block from axis on is then one contiguous run of a row-major tensor.
func unitPrefix(d []float64, axis int) bool {
	for _, x := range d[:max(axis, 0)] {
		if x != 1 {
			return false
		}
	}
	return true
}

// selectKind is how eager PyTorch reads a Gather that selects one index.
type selectKind int

const (
	selectCopy       selectKind = iota // a kernel
	selectContiguous                   // a contiguous block at an offset
	selectRows                         // a matrix of rows one stride apart
)

// selectView classifies Gather n: a constant scalar index is x[:, i],
// basic indexing, which PyTorch returns as a view. Where every axis
// before the gathered one has size 1 the view is one contiguous block;
// where n is a matrix with its last axis intact that only GEMMs read
// (BERT's pooler, hidden[:, 0] at any batch), cuBLAS reads its rows with
// a leading dimension. Our H100 and H200 profiles of BERT run the pooler's
// GEMM straight after the last layer norm at batch 1, 8 and 32.
func (a *analyzer) selectView(n *ir.Node, g *ir.Graph) selectKind {
	idx := n.In(1)
	if idx == nil || idx.Const == nil || !idx.Const.HasData || len(idx.Const.Dims) != 0 {
		return selectCopy
	}
	sz := a.sizer(n)
	in, ok := sz.Dims(n.In(0))
	if !ok || len(in) == 0 {
		return selectCopy
	}
	axis, ok := gatherAxis(n, len(in))
	if !ok {
		return selectCopy
	}
	if unitPrefix(in, axis) {
		return selectContiguous
	}
	if len(in) == 3 && axis < 2 && readOnlyBy(g, n.Out(0), func(c *ir.Node) bool { return twoDimGEMM(c, &sz) }) {
		return selectRows
	}
	return selectCopy
}

// twoDimGEMM reports whether c is a GEMM of two matrices (Gemm, the fused
// Gemm, or a MatMul of 2-D operands): torch.mm and addmm hand a strided
// operand to cuBLAS with its leading dimension, where a batched matmul's
// reshape might copy it.
func twoDimGEMM(c *ir.Node, sz *RuleCtx) bool {
	switch {
	case c.Domain == "" && c.OpType == "Gemm", ir.IsFused(c, ir.OpFusedGemm):
		return true
	case c.Domain == "" && c.OpType == "MatMul":
		for _, v := range []*ir.Value{c.In(0), c.In(1)} {
			if d, ok := sz.Dims(v); !ok || len(d) != 2 {
				return false
			}
		}
		return true
	}
	return false
}

// stridedOperand reports whether eager PyTorch runs pointwise node n in
// TensorIterator's non-vectorized loop (perf.Kernel.Strided): under the
// eager plan, a standard pointwise op (ATen's own, not a fused or library
// kernel such as RotaryEmbedding or the vectorized norms) with an operand
// broadcast to the output (of more than one element and fewer than the
// output's: a scalar becomes a kernel argument) or read through a slice
// the plan keeps as a strided view (strideView).
func (a *analyzer) stridedOperand(n *ir.Node, g *ir.Graph) bool {
	if !a.eagerPlan() || !StreamOp(n.Domain, n.OpType) {
		return false
	}
	sz := a.sizer(n)
	out, ok := sz.Dims(n.Out(0))
	if !ok {
		return false
	}
	outN := prod(out)
	for _, v := range n.Inputs {
		if v == nil {
			continue
		}
		if p := v.Producer; p != nil && p.Domain == "" && a.stridedView(p, g) {
			return true
		}
		if d, ok := sz.Dims(v); ok {
			if x := prod(d); x > 1 && x < outN {
				return true
			}
		}
	}
	return a.mixedOrders(n)
}

// eagerCopy reports whether eager PyTorch runs data node n (of kernel
// class class) as one of ATen's copies, through TensorIterator's loops
// (a transpose or a broadcast made contiguous: direct_copy_kernel_cuda)
// or its cat kernel (CatArrayBatchedCopy), which pay the pointwise
// kernels' first load (perf.Kernel.TensorIterator), and whether it reads
// its source through strides (perf.Kernel.Strided): a transpose's
// permuted source, an expand's broadcast one, a concatenation of a
// strided view. Those run the non-vectorized loop. In our H200's Kineto
// trace of a small LLaMA (fp16, batch 8; calib/profile/testdata/
// kineto_h200) the attention's copies, repeat_kv's two expands made
// contiguous, the output's transpose and rotate_half's two cats of a
// slice, lasted 2.3-2.9 µs over 64-256 KB, like the strided pointwise
// kernels beside them (2.1-2.9), where a copy was priced as a stream
// (0.65-0.70 µs); the rotary table's cat of two contiguous rows lasted
// 1.73 µs (priced 0.64). With the copies' loops the trace's data kernels
// are priced within a median 7.7% (was 23.3%). A channels_last cat keeps
// its own rule (eagerChannelsLastCatElements), which its fit holds.
func (a *analyzer) eagerCopy(n *ir.Node, g *ir.Graph, class perf.KernelClass) (copied, strided bool) {
	if !a.eagerPlan() || class != perf.ClassData || n.Domain != "" {
		return false, false
	}
	switch n.OpType {
	case "Transpose":
		// A kernel runs only for a transpose the plan does not keep as
		// a view.
		return true, true
	case "Expand":
		// Its kernel writes the broadcast; a scalar's is a fill.
		sz := a.sizer(n)
		in, ok := sz.Dims(n.In(0))
		return true, !ok || prod(in) > 1
	case "Concat":
		if a.eagerChannelsLastCatElements(n) > 0 {
			return false, false
		}
		for _, v := range n.Inputs {
			if v != nil && v.Producer != nil && v.Producer.Domain == "" && a.stridedView(v.Producer, g) {
				return true, true
			}
		}
		return true, false
	}
	return false, false
}

// eagerPointwise reports whether eager PyTorch runs n as one of ATen's
// pointwise kernels (perf.Kernel.TensorIterator): under the eager plan,
// a standard elementwise op (vectorized or not: StreamOp's set and
// ONNX's own Gelu), or a module op the plan
// recomposed from its exported pieces, F.gelu, F.silu (a QuickGelu at
// alpha 1) and torch.rsqrt (fuse-rsqrt's FusedElementwise), which run
// TensorIterator's vectorized loop all the same and pay its first load:
// in our H200 traces GeluCUDAKernelImpl over BERT-base fp32's [128,
// 3072] lasted 1.73-1.82 µs (priced 1.43 without it), the small LLaMA
// fp16's silu_kernel 1.73-1.86 (0.99) and its rsqrt 1.15 (0.64). ONNX's
// own Gelu (opset 20, what newer exporters write for F.gelu) is the same
// kernel as the recomposed one; StreamOp leaves it out only because its
// rate is the vectorized library's.
func (a *analyzer) eagerPointwise(n *ir.Node) bool {
	if !a.eagerPlan() {
		return false
	}
	return (n.Domain == "" && ir.OpHas("", n.OpType, ir.Elementwise)) || ir.IsFused(n, ir.OpFusedGelu) || ir.IsFused(n, ir.OpFusedQuickGelu) || ir.IsFused(n, ir.OpFusedElementwise)
}

// transcendentalOps are the pointwise ops whose every element ATen
// computes through a transcendental function's dependent chain
// (perf.Kernel.Transcendental). Sqrt and Reciprocal are one
// special-function instruction each, and Pow is left out: ATen computes a
// square or another small integer power by multiplication.
var transcendentalOps = map[string]bool{
	"Tanh": true, "Sigmoid": true, "Swish": true, "Exp": true, "Log": true, "Erf": true, "Gelu": true,
	"Sin": true, "Cos": true, "Tan": true, "Asin": true, "Acos": true, "Atan": true,
	"Sinh": true, "Cosh": true, "Asinh": true, "Acosh": true, "Atanh": true,
	"Softplus": true, "Mish": true, "Elu": true, "Selu": true, "Celu": true,
}

// transcendentalNode reports whether pointwise node n runs a
// transcendental function on every element: one of transcendentalOps, or
// a fused GELU, SiLU (QuickGelu) or elementwise chain with one among the
// parts it replaced.
func transcendentalNode(n *ir.Node) bool {
	switch {
	case n.Domain == "":
		return transcendentalOps[n.OpType]
	case ir.IsFused(n, ir.OpFusedGelu), ir.IsFused(n, ir.OpFusedQuickGelu):
		return true
	case ir.IsFused(n, ir.OpFusedElementwise):
		if a := n.Attr(ir.KeyPartOps); a != nil && a.Type == ir.AttrStrings {
			for _, op := range a.Strings {
				if transcendentalOps[op] {
					return true
				}
			}
		}
	}
	return false
}

// WarpSoftmax reports whether ATen runs a softmax over the last axis with
// rows of rowLen elements of elemBytes each in softmax_warp_forward
// (perf.Kernel.WarpRows): host_softmax's test, at most 1,024 elements
// and 4,096 bytes a row, on the input's element type.
func WarpSoftmax(rowLen int64, elemBytes float64) bool {
	return rowLen > 0 && rowLen <= 1024 && float64(rowLen)*elemBytes <= 4096
}

// lastAxisSoftmax reports whether n is a softmax (Softmax, LogSoftmax, or
// the plan's recomposed Softmax) over its input's last axis, where
// host_softmax's inner size is 1.
func lastAxisSoftmax(n *ir.Node) bool {
	switch {
	case n.Domain == "" && (n.OpType == "Softmax" || n.OpType == "LogSoftmax"), ir.IsFused(n, ir.OpFusedSoftmax):
	default:
		return false
	}
	x := n.In(0)
	if x == nil || !x.Shape.Ranked || x.Shape.Rank() == 0 {
		return false
	}
	r := int64(x.Shape.Rank())
	axis := n.AttrInt("axis", -1)
	if axis < 0 {
		axis += r
	}
	return axis == r-1
}

// eagerReduction reports whether eager PyTorch runs n as one of ATen's
// row kernels (perf.Kernel.ReduceTree): under the eager plan, an
// ATenRowOp, or a layer norm or softmax the plan recomposed from its
// exported pieces (fuse-layernorm, fuse-softmax), which eager runs as the
// module's one row kernel (vectorized_layer_norm_kernel,
// softmax_warp_forward) all the same.
func (a *analyzer) eagerReduction(n *ir.Node) bool {
	if !a.eagerPlan() {
		return false
	}
	return (n.Domain == "" && ATenRowOp(n.OpType)) || ir.IsFused(n, ir.OpFusedLayerNorm) || ir.IsFused(n, ir.OpFusedSoftmax)
}

// smallCTAs is the small CTAs of the library kernel eager PyTorch runs
// for n and the threads of each (perf.Kernel.SmallCTAs, SmallCTAThreads):
// cuDNN's NCHW batch norm, ATen's layer norm, NCHW mean and adaptive
// average pool; 0, 0 for any other node.
func (a *analyzer) smallCTAs(n *ir.Node, rowLen int64) (ctas, threads int64) {
	if planes, plane := a.cudnnNCHWBatchNormPlanes(n); planes > 0 {
		return planes, cudnnBatchNormThreads(plane)
	}
	if rows := a.atenLayerNormRows(n, rowLen); rows > 0 {
		return rows, atenLayerNormThreads
	}
	if ctas, threads := a.atenNCHWPlaneMean(n); ctas > 0 {
		return ctas, threads
	}
	if planes := a.atenAdaptiveAvgPoolPlanes(n); planes > 0 {
		return planes, atenAdaptiveAvgPoolThreads
	}
	return 0, 0
}

// cudnnBatchNormThreads is the CTA size cuDNN's bn_fw_inf_1C11_kernel_NCHW
// takes for planes of plane elements, as our H200's MobileNet-V2 trace
// shows it (kineto_h200/mobilenet_v2_fp32_b128.json.gz: 64 threads for
// planes of 49 and 196 elements, 256 for 784, 512 for 3,136 and 12,544):
// a thread per 4 elements, rounded up to a power of two, within 64-512.
// The rule is read off those five sizes, not cuDNN's source.
func cudnnBatchNormThreads(plane int64) int64 {
	t := int64(64)
	for t < 512 && 4*t < plane {
		t *= 2
	}
	return t
}

// atenLayerNormThreads is vectorized_layer_norm_kernel's CTA, [32, 4]
// threads (our H200 traces of GPT-2-small and BERT-base).
const atenLayerNormThreads = 128

// atenAdaptiveAvgPoolThreads is adaptive_average_pool's CTA, [32, 8]
// threads (our H200 trace of VGG-16 fp32).
const atenAdaptiveAvgPoolThreads = 256

// atenNCHWPlaneMean is the CTAs and threads of ATen's reduce_kernel for
// a mean over each (n, c) plane of an NCHW map, which is how eager
// PyTorch runs a GlobalAveragePool (AdaptiveAvgPool2d(1) is aten::mean)
// and a ReduceMean over axes 2 and 3 under a runtime that keeps NCHW: the
// reduction runs along the contiguous plane, a block of min(plane, 32)
// lanes (rounded down to a power of two) a row and as many rows as fill
// 512 threads (setReduceConfig). Our H200's MobileNet-V2 fp32 trace: 49-
// element planes, [32, 16] threads, 10,240 CTAs for 163,840 planes,
// 40.3 µs against the 10.8 its bytes take. 0, 0 for anything else, and
// for planes of 8,192 elements or more, which the kernel splits across
// its rows (and its bytes hold anyway).
func (a *analyzer) atenNCHWPlaneMean(n *ir.Node) (ctas, threads int64) {
	switch n.OpType {
	case "GlobalAveragePool":
	case "ReduceMean":
		if reduced, ok := trailingAxes(n, 4); !ok || reduced != 2 {
			return 0, 0
		}
	default:
		return 0, 0
	}
	dims, ok := a.eagerNCHWMap(n)
	if !ok {
		return 0, 0
	}
	rows, plane := clampInt(dims[0]*dims[1]), clampInt(dims[2]*dims[3])
	if rows <= 0 || plane <= 0 || plane >= 8192 {
		return 0, 0
	}
	width := min(floorPow2(plane), 32)
	height := min(floorPow2(rows), 512/width)
	return (rows + height - 1) / height, width * height
}

// floorPow2 is the largest power of two at most x (x ≥ 1).
func floorPow2(x int64) int64 { return 1 << (bits.Len64(uint64(x)) - 1) }

// eagerNCHWMap is the dims of n's 4-D input where eager PyTorch runs n
// over an NCHW map: a standard op under the eager plan of a runtime that
// keeps NCHW; ok false otherwise.
func (a *analyzer) eagerNCHWMap(n *ir.Node) (dims []float64, ok bool) {
	if !a.eagerPlan() || !a.keepsNCHW() || n.Domain != "" {
		return nil, false
	}
	sz := a.sizer(n)
	dims, ok = sz.Dims(n.In(0))
	return dims, ok && len(dims) == 4
}

// atenAdaptiveAvgPoolPlanes is the (n, c) planes of an AveragePool eager
// PyTorch runs as adaptive_average_pool, one CTA each: the exporter
// writes AdaptiveAvgPool2d over a map as large as its output (VGG's 7×7
// at 224) as an AveragePool of kernel 1 and stride 1, which nothing else
// writes; under a runtime that keeps NCHW. 0 for anything else (an
// AvgPool2d, or adaptive pooling of a larger map, runs avg_pool2d's
// elementwise kernel).
func (a *analyzer) atenAdaptiveAvgPoolPlanes(n *ir.Node) int64 {
	if n.OpType != "AveragePool" {
		return 0
	}
	all := func(attr string, want int64) bool {
		vs, _ := n.AttrInts(attr)
		for _, v := range vs {
			if v != want {
				return false
			}
		}
		return true
	}
	if ks, _ := n.AttrInts("kernel_shape"); len(ks) != 2 || !all("kernel_shape", 1) || !all("strides", 1) || !all("dilations", 1) || !all("pads", 0) {
		return 0
	}
	dims, ok := a.eagerNCHWMap(n)
	if !ok {
		return 0
	}
	return clampInt(dims[0] * dims[1])
}

// cudnnNCHWBatchNormPlanes is the (n, c) planes of an inference
// BatchNormalization eager PyTorch runs on cuDNN's NCHW kernel, one CTA
// each (perf.Kernel.SmallCTAs): under the eager plan of a runtime that
// keeps PyTorch's default NCHW format (conv_layout_transposes marks it);
// 0 for anything else, a channels_last runtime's included.
func (a *analyzer) cudnnNCHWBatchNormPlanes(n *ir.Node) (planes, plane int64) {
	if !a.eagerPlan() || !a.keepsNCHW() || n.Domain != "" || n.OpType != "BatchNormalization" ||
		n.AttrInt("training_mode", 0) != 0 {
		return 0, 0
	}
	sz := a.sizer(n)
	dims, ok := sz.Dims(n.In(0))
	if !ok || len(dims) < 3 {
		return 0, 0
	}
	p := 1.0
	for _, d := range dims[2:] {
		p *= d
	}
	return clampInt(dims[0] * dims[1]), clampInt(p)
}

// atenLayerNormRows is the rows of a layer norm eager PyTorch runs in
// ATen's kernels, one CTA each (vectorized_layer_norm_kernel, grid [rows];
// the unvectorized path's two kernels likewise), rows of rowLen elements:
// short rows make them the small CTAs perf.Kernel.SmallCTAs prices. In
// our H200's trace of GPT-2-small fp16 at batch 32 (calib/profile/
// testdata/kineto_h200) its norms over 2,048 rows of 256 elements ran
// 4.32-4.38 µs, priced 3.30 µs by their bytes and tree, 3.61 with their
// CTAs; BERT-base's over 128 rows of 768, 3.58-3.94 µs, are priced
// 3.57 µs either way. 0 for anything else.
func (a *analyzer) atenLayerNormRows(n *ir.Node, rowLen int64) int64 {
	if !a.eagerPlan() || rowLen <= 0 || !((n.Domain == "" && n.OpType == "LayerNormalization") || ir.IsFused(n, ir.OpFusedLayerNorm)) {
		return 0
	}
	sz := a.sizer(n)
	out := sz.Numel(n.Out(0))
	if !(out > 0) {
		return 0
	}
	return clampInt(out / float64(rowLen))
}

// eagerMaxPoolOutputs is the output elements of a MaxPool eager PyTorch
// runs in its own kernels (perf.Kernel MaxPoolOutputs): under the eager
// plan of a runtime that keeps NCHW (max_pool_forward_nchw, any
// precision) or, at half precision, of a channels_last one
// (max_pool_forward_nhwc; conv_layout_transposes 0: pytorch-nhwc,
// graph-nhwc); 0 otherwise, channels_last fp32 included (perf's pool.go
// says why).
func (a *analyzer) eagerMaxPoolOutputs(n *ir.Node) float64 {
	if !a.eagerPlan() || n.Domain != "" || n.OpType != "MaxPool" || (!a.keepsNCHW() && a.elemBytes(n) != 2) {
		return 0
	}
	sz := a.sizer(n)
	return sz.Numel(n.Out(0))
}

// eagerChannelsLastCatElements is the output elements of a Concat eager
// PyTorch runs over channels_last tensors (perf.Kernel
// ChannelsLastCatElements): under the eager plan of a runtime that runs
// the model channels_last (pytorch-nhwc, graph-nhwc), a concatenation of
// 4-D feature maps along their channels, each input a convolution's
// output or derived from one (channels_last is what convolutions and the
// ops after them propagate; a transformer's 4-D key/value tensors are
// contiguous and their cache append is the plain copy); 0 otherwise.
func (a *analyzer) eagerChannelsLastCatElements(n *ir.Node) float64 {
	if !a.eagerPlan() || a.runtime == nil || a.keepsNCHW() || n.Domain != "" || n.OpType != "Concat" || len(n.Inputs) < 2 {
		return 0
	}
	out := n.Out(0)
	if out == nil || !out.Shape.Ranked || out.Shape.Rank() != 4 {
		return 0
	}
	if axis := n.AttrInt("axis", 0); axis != 1 && axis != -3 {
		return 0
	}
	for _, in := range n.Inputs {
		if !convFeatureMap(in) {
			return 0
		}
	}
	sz := a.sizer(n)
	return sz.Numel(out)
}

// maxFeatureMapChain bounds how far convFeatureMap walks back, and
// maxFeatureMapVisits how many values it looks at: nested many-input
// concatenations would otherwise make the walk exponential.
const (
	maxFeatureMapChain  = 8
	maxFeatureMapVisits = 256
)

// convFeatureMap reports whether v is a convolution's output or comes
// from one through ops that keep a feature map's layout (pointwise ops,
// normalization, pooling, concatenation), within maxFeatureMapChain
// producers: a breadth-first walk back over at most maxFeatureMapVisits
// values, each once.
func convFeatureMap(v *ir.Value) bool {
	seen := map[*ir.Value]bool{}
	level := []*ir.Value{v}
	for depth := 0; depth < maxFeatureMapChain && len(level) > 0; depth++ {
		var next []*ir.Value
		for _, u := range level {
			if u == nil || seen[u] || u.Producer == nil || u.Producer.Domain != "" {
				continue
			}
			if seen[u] = true; len(seen) > maxFeatureMapVisits {
				return false
			}
			p := u.Producer
			switch p.OpType {
			case "Conv", "ConvTranspose":
				return true
			case "BatchNormalization", "InstanceNormalization", "MaxPool", "AveragePool", "Concat":
			default:
				if !ir.OpHas("", p.OpType, ir.Elementwise) {
					continue
				}
			}
			next = append(next, p.Inputs...)
		}
		level = next
	}
	return false
}

// keepsNCHW reports whether the runtime hands PyTorch's default NCHW
// tensors to its kernels, as conv_layout_transposes marks (the
// channels_last profiles, pytorch-nhwc and graph-nhwc, have none).
func (a *analyzer) keepsNCHW() bool {
	return a.runtime != nil && a.runtime.ConvLayoutTransposes > 0
}

// eagerPlan reports whether the kernels priced are PyTorch's eager ones:
// the runtime runs them (pytorch, and graph, its CUDA-graph replay) and
// the plan keeps ATen's kernels (eager's own, or unfused: one ATen op per
// node). A fused plan named under such a runtime (--plan fused
// --runtime graph) prices TensorRT's, Inductor's or onnxruntime's
// kernels, which carry none of ATen's latencies.
func (a *analyzer) eagerPlan() bool {
	if a.runtime == nil || a.runtime.Plan != "eager" {
		return false
	}
	return a.opt.Plan == "" || a.opt.Plan == "eager" || a.opt.Plan == "unfused"
}

// ortRuns reports whether onnxruntime executes the graph. Its
// optimizer keeps a Transpose that moves only dims of size 1 (1.23.2's
// saved graphs at every level, shapes static or symbolic), and its CUDA
// kernel, after dropping those dims, copies the tensor whole with
// cudaMemcpyAsync (core/providers/cuda/tensor/transpose.cc, DoTranspose:
// new_rank <= 1): a kernel's bytes, where PyTorch has a view.
func (a *analyzer) ortRuns() bool { return a.runtime != nil && a.runtime.Plan == "onnxruntime" }

// ATenRowOp reports whether PyTorch runs a standard op of opType in one of
// ATen's reduction or row kernels, whose combining tree adds a fixed
// latency (perf.Kernel.ReduceTree): a reduction (Reduce*, ArgMax, ArgMin;
// not CumSum, a scan), a layer norm or a softmax.
func ATenRowOp(opType string) bool {
	if _, ok := reductionOps[opType]; ok {
		return opType != "CumSum"
	}
	return opType == "LayerNormalization" || opType == "Softmax" || opType == "LogSoftmax"
}

// transposePerm is n's permutation (the reversed axes by default), ok
// false when its input's rank is unknown or perm does not fit it.
func transposePerm(n *ir.Node) ([]int64, bool) {
	x := n.In(0)
	if x == nil || !x.Shape.Ranked {
		return nil, false
	}
	r := int64(x.Shape.Rank())
	perm, _ := n.AttrInts("perm")
	if perm == nil {
		for i := r - 1; i >= 0; i-- {
			perm = append(perm, i)
		}
	}
	if int64(len(perm)) != r {
		return nil, false
	}
	for _, p := range perm {
		if p < 0 || p >= r {
			return nil, false
		}
	}
	return perm, true
}

// unitTranspose reports whether perm keeps every dim of x that is not 1
// (or not known to be 1) in its order.
func unitTranspose(x *ir.Value, perm []int64) bool {
	last := int64(-1)
	for _, p := range perm {
		if d := x.Shape.Dims[p]; d.IsKnown() && d.Value == 1 {
			continue
		}
		if p < last {
			return false
		}
		last = p
	}
	return true
}

// stridedBatch reports whether the transpose by perm of a contiguous
// tensor of dims d is what cuBLAS's strided batched GEMM reads without a
// copy, as PyTorch's bmm asks (one of the last two dims of unit stride;
// the batch dims, those of size 1 aside, collapsing to one stride, so
// that matmul's reshape to [batch, m, k] is a view). Our H100 and H200
// profiles of BERT-base fp32 count 36 kernels fewer at batch 1 than at 8
// beyond cuBLAS's largek helpers: its 12 layers' query, key and value
// heads ([1,128,12,64] → [1,12,128,64], the key's to [1,12,64,128]),
// copied at batch 8, where [8,12] does not collapse, and read in place
// at 1 (calib/profile/testdata/kineto_h200/bert_base_fp32_b1.json.gz: 24
// strided copies, the 12 context permutes a Reshape reads and the 12
// mask adds).
func stridedBatch(d []float64, perm []int64) bool {
	r := len(perm)
	if r < 3 || len(d) != r {
		return false
	}
	stride := make([]float64, r)
	acc := 1.0
	for i := r - 1; i >= 0; i-- {
		stride[i] = acc
		acc *= d[i]
	}
	at := func(j int) (size, st float64) { return d[perm[j]], stride[perm[j]] }
	if _, s1 := at(r - 1); s1 != 1 {
		if sz2, s2 := at(r - 2); s2 != 1 && sz2 != 1 {
			return false
		}
	}
	// The batch dims collapse: each of size > 1 lies one whole next
	// batch dim (of size > 1) from the next.
	prevSize, prevStride := 0.0, 0.0
	for j := r - 3; j >= 0; j-- {
		size, st := at(j)
		if size == 1 {
			continue
		}
		if prevSize > 0 && st != prevStride*prevSize {
			return false
		}
		prevSize, prevStride = size, st
	}
	return true
}

// lastAxesSwap reports whether perm swaps the last two axes and keeps
// the others.
func lastAxesSwap(perm []int64) bool {
	r := len(perm)
	if r < 2 || perm[r-2] != int64(r-1) || perm[r-1] != int64(r-2) {
		return false
	}
	for i := 0; i < r-2; i++ {
		if perm[i] != int64(i) {
			return false
		}
	}
	return true
}

// readOnlyBy reports whether v has readers, all of which ok accepts, and
// is no graph output.
func readOnlyBy(g *ir.Graph, v *ir.Value, ok func(*ir.Node) bool) bool {
	if v == nil || len(v.Consumers) == 0 || g.IsGraphOutput(v) {
		return false
	}
	for _, c := range v.Consumers {
		if !ok(c) {
			return false
		}
	}
	return true
}

func (a *analyzer) sanitizeEstimate(n *ir.Node, e *NodeEstimate) {
	bad := false
	for _, p := range []*float64{&e.MACs, &e.FLOPs, &e.ExecutedMACs, &e.ExecutedFLOPs, &e.Transcendentals, &e.BytesRead, &e.BytesWritten, &e.Params, &e.Launches, &e.DequantFLOPs} {
		var ok bool
		if *p, ok = clean(*p); !ok {
			bad = true
		}
	}
	if bad {
		a.warnf("%s node %q: a count was NaN, infinite or negative and was clamped", n.OpType, n.Name)
	}
}

// checkView warns, once per node, when a size of the node is one the
// model cannot count exactly, so that a time built on it is never taken
// for an exact one: a tensor past 2^62 elements (ir's exact element
// count), a kernel view size past 2^53 (tile counts round in float64),
// or one a rule saturated at math.MaxInt64 (it stands for a larger size;
// the time model prices that kernel from its FLOPs instead).
func (a *analyzer) checkView(n *ir.Node, e *NodeEstimate) {
	k := perf.Kernel{M: e.M, N: e.N, K: e.K, Batch: e.Batch, Steps: e.Steps, InputK: e.InputK, Rows: e.Rows, RowLen: e.RowLen}
	var what string
	switch {
	case k.ViewSaturated():
		what = "its kernel's GEMM view (M %d, N %d, K %d, batch %d) is past int64 and saturated at 2^63-1; its compute time is at least its FLOPs over the peak rate"
	case k.ViewInexact():
		what = "its kernel's view (M %d, N %d, K %d, batch %d) is past 2^53, where the time model's tile counts are rounded"
	default:
		v := hugeTensor(n)
		if v == nil {
			return
		}
		a.warnf("%s node %q: tensor %q (%s) has more than 2^62 elements; its counts are float64 estimates", n.OpType, n.Name, v.Name, v.Shape)
		return
	}
	a.warnf("%s node %q: "+what, n.OpType, n.Name, e.M, e.N, e.K, e.Batch)
}

// hugeTensor is the first input or output of n with a known shape whose
// element count ir cannot hold exactly (past 2^62), or nil.
func hugeTensor(n *ir.Node) *ir.Value {
	for _, vs := range [2][]*ir.Value{n.Inputs, n.Outputs} {
		for _, v := range vs {
			if v == nil || !v.Shape.IsKnown() {
				continue
			}
			if _, ok := v.Shape.NumElements(); !ok {
				return v
			}
		}
	}
	return nil
}

func (a *analyzer) sanitizeAggregate(n *ir.Node, g *aggregate) {
	bad := false
	for _, p := range g.fields() {
		var ok bool
		if *p, ok = clean(*p); !ok {
			bad = true
		}
	}
	if bad {
		a.warnf("%s node %q: a time or energy was NaN, infinite or negative and was clamped", n.OpType, n.Name)
	}
}

func (a *analyzer) sanitizeTotals(r *report.Report) {
	t := &r.Totals
	for _, p := range []*float64{&t.MACs, &t.FLOPs, &t.ExecutedMACs, &t.ExecutedFLOPs, &t.Transcendentals, &t.BytesRead, &t.BytesWritten,
		&t.Params, &t.ParamBytes, &t.Launches, &t.TimeS, &t.EnergyJ, &t.PeakMemoryBytes,
		&t.PeakActivationBytes, &t.GEMMConvTimeShare, &t.CommunicationTimeS, &t.PerGPUPeakMemoryBytes} {
		var ok bool
		if *p, ok = clean(*p); !ok {
			r.Warnings = append(r.Warnings, "a total overflowed float64 or was not a number and was clamped")
		}
	}
}

// calibrated is pk, kernel k of class cl run by an op of type op and
// kernel shape shape, under the calibration in force (pk itself when
// none): its compute, latency and memory terms scaled by the
// calibration's factors for that kernel.
func (a *analyzer) calibrated(pk perf.PoweredKernel, k perf.Kernel, cl perf.KernelClass, op, shape string) perf.PoweredKernel {
	c := a.opt.Calibration
	if c == nil {
		return pk
	}
	ts := [3]float64{pk.ComputeS, pk.LatencyS, pk.MemoryS}
	prec := string(k.Precision)
	return pk.Calibrated(a.gpu, k, c.TermFactor(string(cl), prec, op, shape, "compute", ts), c.TermFactor(string(cl), prec, op, shape, "latency", ts),
		c.TermFactor(string(cl), prec, op, shape, "memory", ts), a.opt.Power.CapW)
}

// kernelShape is a kernel's shape as a calibration keys it (report.
// NodeCost.KernelShape), "NxK", dims no batch size changes, so that a
// shape cell's factor is the same at every batch (internal/physics checks
// it on every model it prices): a GEMM-like kernel's N (a GEMM's output
// columns, a convolution's output channels) by its K (reduction length),
// where a batch binds M (or a convolution's N·P·Q) or Batch; a row-wise
// kernel's (a norm, a softmax, a reduction over trailing axes) 1 by its
// row length when its rows split the leading axis (rowInSample), so that
// a batch adds rows, not length. "" for other kernels; recurrent layers
// are left out (their step GEMM's N is the batch).
func kernelShape(k perf.Kernel, rowInSample bool) string {
	switch k.Class {
	case perf.ClassGEMM, perf.ClassConv, perf.ClassWinograd:
		if k.N > 0 && k.K > 0 {
			return strconv.FormatInt(k.N, 10) + "x" + strconv.FormatInt(k.K, 10)
		}
	case perf.ClassReduction:
		if rowInSample && k.RowLen > 0 {
			return "1x" + strconv.FormatInt(k.RowLen, 10)
		}
	}
	return ""
}
