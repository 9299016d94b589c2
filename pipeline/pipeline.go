// Package pipeline is onnxcost's Go API: what an ONNX model costs on a
// GPU, in one call.
//
//	r, err := pipeline.Run("model.onnx", pipeline.Config{GPU: "A100", Batch: 8})
//	fmt.Println(r.Totals.FLOPs, r.Totals.TimeS)
//
//	// No GPU: the counts alone. Symbolic dims are bound by name.
//	c, err := pipeline.Count("model.onnx", pipeline.Config{Dims: map[string]int64{"seq": 512}})
//	fmt.Println(c.Totals.FLOPs, c.Totals.BytesRead+c.Totals.BytesWritten)
//
// Run reads the model (a file, or "zoo:NAME?k=v" for a built-in model;
// RunBytes for one held in memory), binds its symbolic dims and infers
// every shape, runs the fusion passes of the plan, and prices every node
// on the GPU: a *report.Report, the document `onnxcost report --format
// json` writes. Count does the same with no GPU: the exact MACs, FLOPs,
// bytes, parameters and launches, nothing priced. Config has one field
// per option of `onnxcost report`; the command line goes through
// Analyze, which is Run or Count keeping the loaded model; the browser
// build shares the steps below, so a model gives the same numbers in all.
//
// The package's examples, which go test runs and checks, price ResNet-50
// on an A100 (Run), count BERT-base with no GPU (Count) and bind GPT-2's
// symbolic sequence length (Config.Dims).
//
// The steps are exported too, for a caller that reuses one of them: Load
// (or LoadBytes) reads and infers, Loaded.Plan runs the passes, Estimate
// prices a planned model (again, under other settings), CountLoaded
// counts it.
//
// Every error for bad input (an unreadable model, a bad binding, an
// unknown GPU, pass or setting) is an *Error whose message names the
// file or the setting; IsInputError tells it from anything else.
//
// # Stability
//
// Run, RunBytes, Count, CountBytes, Config's fields and report.Report's
// JSON schema (cost/report's report.schema.json: fields are added, never
// renamed) are stable. The numbers are not: they follow the cost model,
// whose version each report carries (cost_model_version). Analyze,
// Result, the step functions and Options may change with the command
// line's needs.
package pipeline

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/onnxcost/onnxcost/calib"
	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/safefile"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/passes"
)

// Error is bad input: an unreadable or invalid model, a bad binding, a
// bad pass selection. Its message already names the file when there is one.
type Error struct{ Err error }

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// inputErr builds an *Error.
func inputErr(format string, args ...any) error {
	return &Error{Err: fmt.Errorf(format, args...)}
}

// IsInputError reports whether err is (or wraps) bad input.
func IsInputError(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// Options say how to bind a model's symbolic dims.
type Options struct {
	// Batch, when > 0, binds the leading symbolic dim of every graph input.
	Batch int64
	// EachBatch says the caller loads the model at many batches (sweep,
	// generate):
	// a static batch-1 input's rewrite is then warned about in words that
	// hold for all of them ("… --batch rewrote it to each batch"), so the
	// caller can say it once instead of once per batch.
	EachBatch bool
	// Dims binds symbols by name.
	Dims map[string]int64
	// InputDataDir, when set, binds graph inputs to the tensors in
	// DIR/input_<i>.pb (graph-input order). File reads only.
	InputDataDir string
	// InputData binds graph inputs by name to tensors (used instead of
	// InputDataDir when the caller already holds them).
	InputData map[string]*ir.Tensor
	// BindAll gives unbound input symbols the value 1 (with a warning) so
	// that a cost can be computed; `shapes` keeps them symbolic instead.
	BindAll bool
	// DropFilePages gives the pages of a memory-mapped model file back to
	// the system (ir.Model.DropFilePages) once nodes are named, and again
	// after inference (which reads the declared types back), for a graph
	// of dropFromNodes nodes or more: for a caller that goes on to the
	// passes and the cost model, which read back only the names they
	// print. On a 112k-node graph `report` peaked at 189 MB resident with
	// the pages kept, 177 MB with them dropped after inference (median of
	// 5 fresh runs, /usr/bin/time -f %M; 2-core VM); dropping them before
	// inference too took the reading phase's peak from 141 to 128 MB. A
	// caller that prints every name (`shapes`) touches them all again.
	DropFilePages bool
	// Counted is ir.ReadOptions.Counted for a model read from a file.
	Counted func(nodes int)
}

// dropFromNodes is the smallest graph whose file pages Options.DropFilePages
// drops. A smaller graph's touched pages are a few MB (DenseNet-121's
// initializer headers: ~8 MB of a 32 MB file), and each drop, an madvise
// over the whole mapping, cost it ~0.45 ms of a 47 ms `report`.
const dropFromNodes = 8192

// Loaded is a model after reading, function inlining and shape inference.
type Loaded struct {
	// Path names the model in messages (the file path, or the name given
	// to LoadBytes).
	Path  string
	Model *ir.Model
	Infer *ir.InferResult
	// Bindings holds every symbol given a value, by the user or by the
	// assume-1 default (those also produce a warning).
	Bindings map[string]int64
	Warnings []string
	// StaticBatch is set when Options.Batch rewrote the leading 1 of a
	// static model's inputs (bind.go, case 3): the batch varies the
	// model although no input has a symbol for it.
	StaticBatch bool

	// contrib and ortDefault (the default domain's, tensorRTLacks) count
	// the model's operators only onnxruntime runs, by op type, as read
	// (contrib.go): they decide the runtime priced when none is named.
	// trt counts those some release of TensorRT's parser does not import
	// (pluginWarning under TensorRT).
	contrib, ortDefault, trt map[string]int

	// inferOpt is how Model was inferred (bindings, input data): the
	// onnxruntime plan infers it again without the bindings to see the
	// shapes onnxruntime builds its graph with (passes.ORTSession).
	inferOpt ir.InferOptions
}

// Load reads, inlines and infers the model at path. Every error names the
// file. A path "zoo:NAME?k=v" builds a zoo model instead (see loadZoo).
func Load(path string, opt Options) (*Loaded, error) {
	if opt.Batch < 0 {
		return nil, inputErr("--batch must be positive, got %d", opt.Batch)
	}
	if IsZoo(path) {
		return loadZoo(path, opt)
	}
	m, err := ir.ReadFile(path, ir.ReadOptions{Counted: opt.Counted})
	if err != nil {
		if isSavedReport(fileHead(path)) {
			return nil, inputErr("%s: %w", path, errSavedReport)
		}
		return nil, inputErr("%s: %w", path, err)
	}
	if m.Graph == nil || len(m.Graph.Nodes) < dropFromNodes {
		opt.DropFilePages = false
	}
	m.TiedCopies = ir.TransposedCopies(m)
	l, err := finish(path, m, opt)
	if opt.DropFilePages {
		m.DropFilePages()
	}
	return l, err
}

// LoadBytes is Load for a model held in memory (a browser upload); name
// stands for the path in messages. External data cannot be resolved, so
// tensors stored outside the file are marked missing.
func LoadBytes(name string, data []byte, opt Options) (*Loaded, error) {
	if opt.Batch < 0 {
		return nil, inputErr("--batch must be positive, got %d", opt.Batch)
	}
	m, err := ir.Read(data, ir.ReadOptions{})
	if err != nil {
		if isSavedReport(data) {
			return nil, inputErr("%s: %w", name, errSavedReport)
		}
		return nil, inputErr("%s: %w", name, err)
	}
	m.Path = name
	m.TiedCopies = ir.TransposedCopiesIn(m, data)
	return finish(name, m, opt)
}

// errSavedReport says what to do with a saved report given as a model.
var errSavedReport = errors.New("a saved onnxcost JSON report, not an ONNX model: diff, graph, html and roofline take a saved report (and check takes one with --base-report); report, compare and shapes need the .onnx model")

// fileHead returns the first bytes of a file (nil when unreadable). Only
// a regular file is opened: the reader has already refused anything else,
// and a named pipe opened here would block until a writer came.
func fileHead(path string) []byte {
	fh, _, err := safefile.Open(path)
	if err != nil {
		return nil
	}
	defer fh.Close()
	head := make([]byte, 256)
	n, _ := io.ReadFull(fh, head)
	return head[:n]
}

// isSavedReport reports whether data opens like a JSON report.
func isSavedReport(data []byte) bool {
	t := bytes.TrimLeft(data, " \t\r\n\xef\xbb\xbf")
	return len(t) > 0 && t[0] == '{' && bytes.Contains(data[:min(len(data), 4096)], []byte(`"schema_version"`))
}

// finish inlines, names, binds and infers a model that was just read.
func finish(path string, m *ir.Model, opt Options) (*Loaded, error) {
	if err := ir.InlineFunctions(m); err != nil {
		return nil, inputErr("%s: %w", path, err)
	}
	ir.NameNodes(m.Graph)
	if opt.DropFilePages {
		// Naming was the last step to read every node's name; inference
		// reads the declared types, a third of the file.
		m.DropFilePages()
	}
	iopt := ir.InferOptions{Bindings: map[string]int64{}, InputData: opt.InputData}
	for k, v := range opt.Dims {
		iopt.Bindings[k] = v
	}
	if opt.InputDataDir != "" {
		var err error
		iopt.InputData, err = readInputData(opt.InputDataDir, m.Graph)
		if err != nil {
			return nil, err
		}
	}
	if err := checkInputData(m.Graph, iopt.InputData); err != nil {
		return nil, inputErr("%s: %w", path, err)
	}
	l := &Loaded{Path: path, Model: m, Bindings: map[string]int64{}}
	l.contrib, l.ortDefault, l.trt = ortOnlyOps(m.Graph)
	var rewritten []*ir.Value // outputs a static rewrite must reach
	rewrote := false
	var restore func() // undoes the rewrite
	if opt.Batch > 0 {
		bp, err := planBatch(m.Graph, opt.Batch, iopt.InputData)
		if err != nil {
			return nil, inputErr("%s: %w", path, exportedDefect(m, iopt, nil, err))
		}
		for sym, n := range bp.bind {
			if v, ok := iopt.Bindings[sym]; ok && v != n {
				return nil, inputErr("%s: --batch %d and --dim %s=%d bind the same dim to different values", path, n, sym, v)
			}
			iopt.Bindings[sym] = n
		}
		if bp.note != "" {
			l.Warnings = append(l.Warnings, bp.note)
		}
		if len(bp.rewritten) > 0 {
			restore = saveDeclared(m.Graph)
			rewritten = rewriteStatic(m.Graph, bp.rewritten, opt.Batch)
			rewrote = true
			if opt.Batch != 1 { // batch 1 is what the model was exported for
				l.Warnings = append(l.Warnings, staticBatchWarning(bp.rewritten, opt))
			}
		}
	}
	if opt.BindAll {
		iopt.Assume = 1
	}
	l.inferOpt = iopt
	res, err := ir.InferShapes(m, iopt)
	if err != nil {
		if rewrote {
			if d := exportedDefect(m, iopt, restore, nil); d != nil {
				return nil, inputErr("%s: %w", path, d)
			}
			return nil, inputErr("%s: --batch %d: the model has a static batch of 1 and rewriting it fails shape inference (%w); re-export it with a dynamic batch axis", path, opt.Batch, err)
		}
		return nil, inputErr("%s: %w", path, err)
	}
	if err := checkRewrite(rewritten, opt.Batch); err != nil {
		return nil, inputErr("%s: %w", path, err)
	}
	// The assumed symbols come first: they explain the numbers most.
	var assumed []string
	for _, s := range res.Assumed {
		how := fmt.Sprintf("--dim %s=N", s)
		if IsBatchName(s) {
			how = "--batch N or " + how
		}
		assumed = append(assumed, fmt.Sprintf("symbol %s is unbound; assumed 1 (bind it with %s)", s, how))
	}
	l.Warnings = append(assumed, l.Warnings...)
	l.Warnings = shortenAll(l.Warnings)
	l.Infer = res
	for k, v := range res.Bound {
		l.Bindings[k] = v
	}
	if rewrote {
		// A static model has no symbol to show; the rewritten batch is
		// shown under the name users asked for (the warnings say how).
		l.Bindings["batch"] = opt.Batch
		l.StaticBatch = true
	}
	l.Warnings = append(l.Warnings, res.Warnings...)
	for _, op := range res.UnknownOps {
		l.Warnings = append(l.Warnings, fmt.Sprintf("no shape rule for op %s; its outputs have unknown shapes", strings.TrimPrefix(op, "::")))
	}
	return l, nil
}

// BatchRewritable reports whether a batch would rewrite this model's
// static leading 1 (bind.go, case 3), whatever batch it was loaded at:
// what lets a command that loads it at its own batch first (sweep
// --find-max-batch) know that other batches vary it.
func (l *Loaded) BatchRewritable() bool {
	if l.StaticBatch {
		return true
	}
	bp, err := planBatch(l.Model.Graph, 2, l.inferOpt.InputData)
	return err == nil && len(bp.rewritten) > 0
}

// staticBatchWarning is the one warning a rewrite of static batch-1
// inputs gives (a decoder's dozens of cache inputs are named by count
// after the first three): the batch they were rewritten to, or, for a
// caller loading at each of many batches (Options.EachBatch), words that
// hold for all of them.
func staticBatchWarning(inputs []string, opt Options) string {
	const named = 3
	what, has, them := "input "+inputs[0], "has", "it"
	if len(inputs) > 1 {
		list := inputs[:min(len(inputs), named)]
		what, has, them = "inputs "+strings.Join(list, ", "), "have", "them"
		if more := len(inputs) - len(list); more > 0 {
			what += fmt.Sprintf(" and %d more", more)
		}
	}
	to := fmt.Sprintf("%d rewrote %s to %d", opt.Batch, them, opt.Batch)
	if opt.EachBatch {
		to = "rewrote " + them + " to each batch"
	}
	return fmt.Sprintf("%s %s a static batch dim of 1 (the model was exported for batch 1); --batch %s", what, has, to)
}

// checkInputData refuses an input tensor that contradicts the input's
// declared dtype, rank or static dims, before inference would fail on it
// somewhere deep inside the graph.
func checkInputData(g *ir.Graph, data map[string]*ir.Tensor) error {
	for i, in := range g.Inputs {
		t, ok := data[in.Name]
		if !ok || in.Declared == nil {
			continue
		}
		d := in.Declared
		got := t.Shape()
		what := fmt.Sprintf("input data for input %d (%s)", i, in.Name)
		if d.DType != ir.Undefined && t.DType != d.DType {
			return fmt.Errorf("%s is %s, the model declares %s", what, t.DType, d.DType)
		}
		if !d.Shape.Ranked {
			continue
		}
		if len(got.Dims) != len(d.Shape.Dims) {
			return fmt.Errorf("%s has rank %d %s, the model declares rank %d %s", what, len(got.Dims), got, len(d.Shape.Dims), d.Shape)
		}
		for k, dd := range d.Shape.Dims {
			if dd.IsKnown() && !got.Dims[k].Is(dd.Value) {
				return fmt.Errorf("%s has shape %s, the model declares %s (dim %d differs)", what, got, d.Shape, k)
			}
		}
	}
	return nil
}

// readInputData reads DIR/input_<i>.pb for each graph input, in order.
// A missing file leaves that input unbound; an unreadable one is an error.
func readInputData(dir string, g *ir.Graph) (map[string]*ir.Tensor, error) {
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return nil, inputErr("--input-data %s: not a readable folder", dir)
	}
	out := map[string]*ir.Tensor{}
	for i, in := range g.Inputs {
		p := filepath.Join(dir, fmt.Sprintf("input_%d.pb", i))
		if _, err := os.Stat(p); err != nil {
			continue
		}
		t, err := ir.ReadTensorFile(p)
		if err != nil {
			return nil, inputErr("%s: %w", p, err)
		}
		out[in.Name] = t
	}
	return out, nil
}

// GraphIO names the main graph's inputs (less initializers) and outputs,
// the boxes a drawn graph starts and ends at; the CLI and the browser
// build draw the same. Outputs is never nil (an empty list, not null, in
// JSON).
func (l *Loaded) GraphIO() (inputs, outputs []string) {
	for _, v := range l.Model.Graph.Inputs {
		if v != nil && !v.IsInitializer {
			inputs = append(inputs, v.Name)
		}
	}
	outputs = []string{}
	for _, v := range l.Model.Graph.Outputs {
		if v != nil {
			outputs = append(outputs, v.Name)
		}
	}
	return inputs, outputs
}

// Plan runs the named plan's passes ("" is the fused plan; see
// passes.Plans): the unfused plan costs the graph as read. The pass
// selection is checked whatever the plan, so a typo is an error whichever
// plan is asked for; --passes (opt.Only) replaces the plan's own list.
func (l *Loaded) Plan(plan string, opt passes.Options) error {
	if _, err := passes.Selected(opt); err != nil {
		return &Error{Err: err}
	}
	p, err := passes.LookupPlan(cmp.Or(plan, "fused"))
	if err != nil {
		return inputErr("--plan: %w", err)
	}
	if plan == "unfused" {
		return nil
	}
	opt, run := p.Options(opt)
	if !run {
		return nil
	}
	if p.Name == "onnxruntime" {
		// onnxruntime fuses with the dims the file has, not the bound ones.
		if err := passes.ORTSession(l.Model, l.inferOpt); err != nil {
			return inputErr("%s: %w", l.Path, err)
		}
		if w := l.sessionShapesWarning(); w != "" {
			l.Warnings = append(l.Warnings, w)
		}
	}
	st, err := passes.Run(l.Model.Graph, opt)
	if err != nil {
		return inputErr("%s: %w", l.Path, err)
	}
	// A quarter of a big LLM graph's nodes survive the fused plan; moved
	// together, the storage the rest shared with them can go (see
	// ir.Graph.CompactNodes).
	l.Model.Graph.CompactNodes()
	if p.Name == "onnxruntime" {
		passes.ORTCopies(l.Model.Graph, l.Model.Opset(""))
	}
	if !st.Converged {
		l.Warnings = append(l.Warnings, fmt.Sprintf("fusion passes did not reach a fixpoint in %d iterations (still changing: %s); the fused plan may be incompletely optimised", st.Iterations, ChangedList(st)))
	}
	return nil
}

// ResolvePlan is the plan a model is priced under: plan when given (it
// must be one of passes.PlanNames), else the runtime's own; when rt is
// nil, the default runtime's (tr's own when costing a training step).
func ResolvePlan(plan string, rt *hwdb.Runtime, tr cost.Training) (string, error) {
	if plan == "" {
		if rt == nil {
			r, err := defaultRuntime(tr)
			if err != nil {
				return "", err
			}
			rt = r
		}
		plan = rt.PlanOrFused()
	}
	if _, err := passes.LookupPlan(plan); err != nil {
		return "", inputErr("--plan: %w", err)
	}
	return plan, nil
}

// PlanNames lists the plans --plan accepts.
func PlanNames() []string { return passes.PlanNames() }

// ChangedList names the passes that changed the graph, sorted.
func ChangedList(st *passes.Stats) string {
	names := make([]string, 0, len(st.Changed))
	for n := range st.Changed {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// Warning length limits: a symbolic dim can grow into an expression of
// hundreds of characters through a chain of shape arithmetic; a warning
// needs only to identify it.
const (
	maxWordRunes    = 80
	maxWarningRunes = 400
)

// shortenAll applies shorten to every warning.
func shortenAll(ws []string) []string {
	for i, w := range ws {
		ws[i] = shorten(w)
	}
	return ws
}

// shorten cuts every over-long word (a symbolic expression, a shape) to
// its head and tail, and the warning to maxWarningRunes.
func shorten(w string) string {
	words := strings.Split(w, " ")
	for i, word := range words {
		if r := []rune(word); len(r) > maxWordRunes {
			words[i] = string(r[:maxWordRunes-16]) + "…" + string(r[len(r)-15:])
		}
	}
	w = strings.Join(words, " ")
	if r := []rune(w); len(r) > maxWarningRunes {
		w = string(r[:maxWarningRunes-1]) + "…"
	}
	return w
}

// EstimateOptions choose what Estimate costs.
type EstimateOptions struct {
	DType string // "" is the model's own
	Plan  string // the plan priced (passes.PlanNames), recorded in the report
	// Runtime is the execution profile; nil is the cost model's default
	// (hwdb.DefaultRuntime; the training step's own under training).
	Runtime     *hwdb.Runtime
	ToolVersion string
	ModelName   string // "" is the Loaded's Path
	// Power is a power cap or SM clock lock (zero: the GPU's default).
	Power perf.PowerControl
	// Train, when set, costs one training step (plan with ForTraining).
	Train cost.Training
	// GPUs is the tensor-parallel degree (cost.Options.GPUs); 0 or 1 is
	// one GPU.
	GPUs int
	// Calibration, when set, corrects the kernel times by measurements
	// (--calibration; package calib): in full on the GPU it was fitted
	// on, its kernel-relative part on another.
	Calibration *calib.Calibration
	// Warm prices a call repeated back to back (cost.Options.Warm).
	Warm bool
	// RuntimeByModel says Runtime is the model's default (ModelRuntime),
	// none having been named: a report of a model with operators only
	// onnxruntime runs then says why it is priced under onnxruntime.
	RuntimeByModel bool
}

// WithCalibration applies cal, as it applies to gpu, to what co prices:
// its kernel factors and its host factor for co's runtime (a training
// step's where co trains). It returns the applied calibration, nil
// without one, for the estimate's interval. Every pricing of a model
// goes through here, so that none applies one part and not the other.
func WithCalibration(co cost.Options, cal *calib.Calibration, gpu *hwdb.GPU) (cost.Options, *calib.Applied) {
	applied := cal.For(gpu)
	if applied != nil { // a nil *Applied in the interface would not be nil
		co.Calibration = applied
		co.Runtime = applied.ScaleHost(co.Runtime, co.Train != nil)
	}
	return co, applied
}

// Estimate runs the cost model on a loaded (and planned) model and
// attaches its bindings and warnings to the report.
func Estimate(l *Loaded, gpu *hwdb.GPU, opt EstimateOptions) (*report.Report, error) {
	name := opt.ModelName
	if name == "" {
		name = l.Path
	}
	co := cost.Options{
		DType:       opt.DType,
		Plan:        opt.Plan,
		Runtime:     opt.Runtime,
		ToolVersion: opt.ToolVersion,
		ModelName:   name,
		Power:       opt.Power,
		Train:       opt.Train,
		GPUs:        opt.GPUs,
		Warm:        opt.Warm,
	}
	co, applied := WithCalibration(co, opt.Calibration, gpu)
	r, err := cost.Analyze(l.Model.Graph, l.Model, gpu, co)
	if err != nil {
		return nil, inputErr("%s: %w", l.Path, err)
	}
	if lo, hi := calib.Interval(r, gpu, applied); hi > 0 {
		r.Totals.TimeIntervalS = []float64{lo, hi}
		if !applied.Fitted() {
			r.Totals.IntervalBasis = calib.IntervalBasis(gpu)
		}
	}
	r.Bindings = l.Bindings
	rt := opt.Runtime
	if rt == nil {
		if rt, err = defaultRuntime(opt.Train); err != nil {
			return nil, err
		}
	}
	if w := ContribWarning(l, rt, opt.RuntimeByModel); w != "" {
		r.Warnings = append(r.Warnings, w)
	}
	r.Warnings = shortenAll(append(append([]string{}, l.Warnings...), r.Warnings...))
	return r, nil
}

// sessionShapesWarning says, for a model priced under the onnxruntime
// plan with dims the file has symbolic or the graph computes at run time,
// that onnxruntime built its graph without them, and what that cost in
// fusions: the MatMuls whose bias Add its MatMulAddFusion could not take
// (their input's dims were not all numbers to it; passes.ORTSession),
// which, for symbolic dims, a static export or free dimension overrides
// would fuse. "" when there are none.
func (l *Loaded) sessionShapesWarning() string {
	g := l.Model.Graph
	if g.Session == nil {
		return ""
	}
	var syms []string
	for s := range l.Infer.Bound {
		syms = append(syms, s)
	}
	slices.Sort(syms)
	n := passes.ORTBiasesApart(g)
	if n == 0 {
		return ""
	}
	const apart = "%d MatMul+bias pairs stay apart (no Gemm), and residual Adds after Reshapes shaped at run time stay out of SkipLayerNormalization"
	if len(syms) == 0 {
		// No dim of the file is symbolic: the dims onnxruntime lacks are
		// computed by the graph (a Slice to a computed end, NonZero), which
		// no static export or override gives it.
		return fmt.Sprintf("priced as onnxruntime builds the graph, with the dims the model computes at run time unknown to it: "+apart, n)
	}
	return fmt.Sprintf("priced as onnxruntime builds the graph, with %s symbolic as in the file: "+apart+"; export with static dims or set free dimension overrides for the fused graph",
		strings.Join(syms, ", "), n)
}
