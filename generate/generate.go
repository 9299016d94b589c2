// Package generate is the `onnxcost generate` command as a library: what
// serving one batch of LLM requests costs on a GPU, from a decoder with a
// key/value cache (a zoo decoder, or an ONNX export whose cache length is
// a symbolic dim such as past_sequence_length).
//
//	res, err := generate.Run(generate.Config{Model: "zoo:llama-7b", GPU: h100,
//		DType: "fp16", Batch: 8, Prompt: 512, Output: 128})
//	fmt.Println(res.TTFTS, res.TPOTS, res.OutputTokensPerS)
//
// The run is the prompt's step (Batch prompts of Prompt tokens over an
// empty cache: the time to the first token) and Output−1 decode steps of
// one token each over a cache growing from Prompt to Prompt+Output−2
// cached positions. Each step is the model with its cache length bound,
// priced by the cost model with the cache written as an in-place append
// (cost.Options.AppendKVCache), as serving runtimes do, instead of the
// exported Concat's copy of the whole cache.
//
// A decode step's time is nearly linear in its cache length: the weights
// are read once whatever the length, and attention reads the cache. So
// the decode steps are not all costed: a few are (Points, spread evenly
// from the first to the last), a least-squares line goes through them,
// and the line is summed over every step exactly. Result.Fit records the
// points and the largest residual; Config.Exact costs every step instead.
// On LLaMA-tiny and GPT-2 small the sum of the line is within 0.5% of the
// sum of every step (TestApproximation).
//
// Config.Concurrency adds the curve a server reaches with continuous
// batching at steady state, built on the same costed steps (serve.go).
package generate

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/onnxcost/onnxcost/calib"
	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/passes"
	"github.com/onnxcost/onnxcost/pipeline"
	"gonum.org/v1/gonum/stat"
)

// Points is how many decode steps are costed when not every one is;
// fewer steps than this are all costed.
const Points = 5

// Config is one generation run to cost.
type Config struct {
	// Model is a file path or "zoo:NAME?k=v"; a zoo decoder's decode,
	// past and seq parameters are set by the run, and batch by Batch.
	Model string
	// Data, when set, is the model's bytes, read instead of the file
	// Model names (which then only names it in messages and the result):
	// the browser holds a model dropped on it, with no file to open.
	Data []byte
	GPU  *hwdb.GPU
	// Runtime is the execution profile; nil is the model's
	// (pipeline.ModelRuntime: onnxruntime-iobinding for a decoder holding
	// operators only onnxruntime runs), looked up in Runtimes (nil: the
	// built-in profiles).
	Runtime  *hwdb.Runtime
	Runtimes *hwdb.RuntimeDB
	DType    string // "" is the model's own
	Plan     string // the plan priced ("" the runtime's own)
	Passes   passes.Options
	// Calibration, when set, corrects the kernel times (calib; applied
	// on GPU as in pipeline.Estimate).
	Calibration *calib.Calibration
	GPUs        int // tensor-parallel degree; 0 or 1 is one GPU
	// Power is a power cap or SM clock lock every step is priced under
	// (zero: the GPU's default), as report's --power-cap/--sm-clock.
	Power perf.PowerControl
	// Batch is the number of sequences (default 1); Prompt and Output
	// are each one's prompt and generated tokens, both at least 1.
	Batch, Prompt, Output int64
	// Dims binds the model's other symbols. Symbols of the inputs other
	// than batch, the new tokens' length and the cache length (an
	// attention mask's total_sequence_length) that Dims leaves unbound
	// are bound to the total length, cached plus new.
	Dims map[string]int64
	// Exact costs every decode step instead of fitting a line.
	Exact bool
	// Concurrency lists the concurrencies of the serving curve (serve.go);
	// none: no curve. TTFTSLOS and TPOTSLOS (0: no target) pick its best
	// point; PriceUSDPerGPUHour (0: none) prices its tokens.
	Concurrency        []int64
	TTFTSLOS, TPOTSLOS float64
	PriceUSDPerGPUHour float64
	ToolVersion        string
}

// Run costs the generation run of cfg. Bad input (no cache input, a
// length below 1, an unreadable model) is a *pipeline.Error naming the
// model.
func Run(cfg Config) (*Result, error) {
	r, err := newRunner(cfg)
	if err != nil {
		return nil, err
	}
	return r.run()
}

// runner holds what every step of one run shares.
type runner struct {
	cfg  Config
	path string // the model as loaded (a zoo path with decode set)
	spec cacheSpec
	// kvShare is the fraction of the cache one GPU holds (kvShare).
	kvShare float64
	// warnings collects the steps' warnings, each once, in order.
	warnings []string
	seen     map[string]bool
}

// cacheSpec is how a model takes its cache: the symbols to bind.
type cacheSpec struct {
	inputs int    // cache inputs
	past   string // the cached length
	seq    string // the new tokens' length
	totals []string
	// heads is the cache's key/value heads, from the cache inputs' head
	// dim; 0 when an input has none to read or the inputs disagree.
	heads int64
}

// kvShare is the fraction of a cache of heads key/value heads that one
// of gpus tensor-parallel GPUs holds. Serving runtimes split the cache by
// heads, each GPU keeping its attention heads' keys and values: ⌈heads /
// gpus⌉ heads each, which is 1/gpus when the heads divide evenly, one
// whole head (replicated) when there are fewer heads than GPUs, and the
// most loaded GPU's when they do not divide. Without a head count the
// cache counts whole on every GPU, the pessimistic side.
func kvShare(heads int64, gpus int) float64 {
	if gpus <= 1 || heads <= 0 {
		return 1
	}
	n := int64(gpus)
	return float64((heads+n-1)/n) / float64(heads)
}

// step is one costed step.
type step struct {
	// energyJ is one GPU's, as timeS is; lo and hi are timeS's 80%
	// interval (calib.Interval; 0, 0 when it has none).
	timeS, lo, hi, energyJ float64
	// peak is one GPU's peak memory, present the bytes of the cache the
	// step leaves (its present outputs), limit the usable memory.
	peak, present, limit float64
	// dtype is the report's: the compute dtype, or the model's own.
	dtype string
}

func inputErr(format string, args ...any) error {
	return &pipeline.Error{Err: fmt.Errorf(format, args...)}
}

func newRunner(cfg Config) (*runner, error) {
	name := cfg.Model
	switch {
	case cfg.GPU == nil:
		return nil, inputErr("%s: no GPU to price on", name)
	case cfg.Prompt < 1:
		return nil, inputErr("%s: --prompt must be at least 1 token, got %d", name, cfg.Prompt)
	case cfg.Output < 1:
		return nil, inputErr("%s: --output must be at least 1 token, got %d", name, cfg.Output)
	case cfg.Batch < 0:
		return nil, inputErr("%s: --batch must be at least 1, got %d", name, cfg.Batch)
	}
	if err := checkServing(cfg); err != nil {
		return nil, err
	}
	if _, err := pipeline.ResolvePlan(cfg.Plan, cfg.Runtime, nil); err != nil {
		return nil, err
	}
	r := &runner{cfg: cfg, path: name, seen: map[string]bool{}}
	if cfg.Data == nil && pipeline.IsZoo(name) {
		p, err := r.zooPath()
		if err != nil {
			return nil, err
		}
		r.path = p
	}
	if r.cfg.Batch == 0 {
		r.cfg.Batch = 1
	}
	cfg = r.cfg
	l, err := r.load(pipeline.Options{Batch: cfg.Batch, Dims: cfg.Dims})
	if err != nil {
		return nil, err
	}
	if r.spec, err = findCache(l.Model.Graph, cfg.Dims); err != nil {
		return nil, inputErr("%s: %v", name, err)
	}
	if err := r.pickRuntime(l); err != nil {
		return nil, err
	}
	r.kvShare = kvShare(r.spec.heads, cfg.GPUs)
	return r, nil
}

// load reads the model afresh (the passes rewrite what they plan): from
// Config.Data when set, else the file or zoo path.
func (r *runner) load(opt pipeline.Options) (*pipeline.Loaded, error) {
	if r.cfg.Data != nil {
		return pipeline.LoadBytes(r.path, r.cfg.Data, opt)
	}
	return pipeline.Load(r.path, opt)
}

// pickRuntime settles the runtime and plan once the model is read: with
// none named, the model's (a decoder holding operators only onnxruntime
// runs runs as onnxruntime-genai runs it, ContribCacheRuntime),
// and a warning where the runtime cannot run those operators.
func (r *runner) pickRuntime(l *pipeline.Loaded) error {
	byModel := r.cfg.Runtime == nil && pipeline.RequestedRuntime("", false, r.cfg.DType) == ""
	rt, plan, err := pipeline.SettleRuntime(l, r.cfg.Runtime, r.cfg.Runtimes, r.cfg.Plan, nil, r.cfg.DType)
	if err != nil {
		return err
	}
	r.cfg.Runtime, r.cfg.Plan = rt, plan
	if w := pipeline.ContribWarning(l, r.cfg.Runtime, byModel); w != "" {
		r.warn(w)
	}
	return nil
}

// zooPath makes a zoo path a decode step with symbolic cache and token
// lengths, so that a zoo decoder is bound as an export is. A zoo model
// without a cache is refused.
func (r *runner) zooPath() (string, error) {
	z, err := pipeline.ParseZoo(r.cfg.Model)
	if err != nil {
		return "", err
	}
	has := map[string]bool{}
	for _, p := range z.Entry.Params {
		has[p.Name] = true
	}
	if !has["decode"] || !has["past"] {
		return "", inputErr("%s: not a decoder with a key/value cache (no decode and past parameters); generate takes the zoo's GPT-2 and LLaMA decoders or an ONNX export with past_key_values inputs", r.cfg.Model)
	}
	if b, ok := z.Params["batch"]; ok && b > 0 {
		if r.cfg.Batch != 0 && r.cfg.Batch != b {
			return "", inputErr("%s: --batch %d conflicts with batch=%d in the zoo path", r.cfg.Model, r.cfg.Batch, b)
		}
		r.cfg.Batch = b
	}
	if pos, ok := z.Params["positions"]; ok || has["positions"] {
		if !ok {
			pos = zooDefault(z, "positions")
		}
		if total := r.cfg.Prompt + r.cfg.Output; total > pos {
			r.warn(fmt.Sprintf("prompt %d + output %d tokens exceed the model's %d learned positions; costed all the same", r.cfg.Prompt, r.cfg.Output, pos))
		}
	}
	params := map[string]int64{}
	for k, v := range z.Params {
		params[k] = v
	}
	delete(params, "batch")
	params["decode"], params["past"], params["seq"] = 1, -1, -1
	return pipeline.ZooPath(z.Entry.Name, params), nil
}

// zooDefault is a zoo parameter's default.
func zooDefault(z *pipeline.ZooSpec, name string) int64 {
	for _, p := range z.Entry.Params {
		if p.Name == name {
			return p.Default
		}
	}
	return 0
}

// generationLoop is g's onnxruntime generation node (BeamSearch,
// GreedySearch, Sampling, WhisperBeamSearch), nil when it has none.
func generationLoop(g *ir.Graph) *ir.Node {
	for _, n := range g.Nodes {
		switch n.OpType {
		case "BeamSearch", "GreedySearch", "Sampling", "WhisperBeamSearch":
			if n.Domain == "com.microsoft" {
				return n
			}
		}
	}
	return nil
}

// findCache finds the cache inputs (graph inputs of rank 3 or more whose
// name says past or cache: past_key_values.L.key, past_key_L, cache_v, …),
// the symbol of their cached length (the one that is not a batch dim),
// their key/value heads (cacheHeads) and the new tokens' length (a
// non-batch symbol of input_ids, else of the first other input that has
// one).
func findCache(g *ir.Graph, dims map[string]int64) (cacheSpec, error) {
	var spec cacheSpec
	pastSyms := map[string]bool{}
	var others, caches []*ir.Value
	for _, in := range g.Inputs {
		if in == nil || in.IsInitializer || in.Declared == nil || !in.Declared.Shape.Ranked {
			continue
		}
		if !pipeline.IsCacheInput(in) {
			others = append(others, in)
			continue
		}
		spec.inputs++
		caches = append(caches, in)
		for _, s := range lengthSyms(in) {
			pastSyms[s] = true
		}
	}
	if spec.inputs == 0 {
		if n := generationLoop(g); n != nil {
			return spec, fmt.Errorf("the model runs its own generation loop (com.microsoft %s node %q): price it with 'onnxcost report' and --dim max_length=N (and num_beams=N), which cost every step of it", n.OpType, n.Name)
		}
		return spec, fmt.Errorf("no key/value cache input (an input of rank 3 or more named past_* or *cache*); generate needs a decoder exported with its cache (zoo: decode=1, Optimum: with-past)")
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for s := range pastSyms {
			if !yield(s) {
				return
			}
		}
	})
	switch {
	case len(names) == 0:
		return spec, fmt.Errorf("the %d cache inputs have no symbolic length to bind (a static cache); export the cache length as a symbolic dim such as past_sequence_length", spec.inputs)
	case len(names) > 1:
		return spec, fmt.Errorf("the cache inputs have several symbolic lengths (%s); bind all but the cache length with --dim", strings.Join(names, ", "))
	}
	spec.past = names[0]
	for i, in := range caches {
		h := cacheHeads(in, spec.past)
		if i > 0 && h != spec.heads {
			h = 0
		}
		if spec.heads = h; h == 0 {
			break
		}
	}
	sort.SliceStable(others, func(i, j int) bool { return others[i].Name == "input_ids" && others[j].Name != "input_ids" })
	for _, in := range others {
		for _, s := range lengthSyms(in) {
			switch {
			case s == spec.past:
			case spec.seq == "" && !strings.Contains(strings.ToLower(s), "total") && !strings.Contains(s, "+"):
				spec.seq = s
			case s != spec.seq && !slices.Contains(spec.totals, s):
				if _, bound := dims[s]; !bound {
					spec.totals = append(spec.totals, s)
				}
			}
		}
	}
	if spec.seq == "" {
		return spec, fmt.Errorf("no input with a symbolic token length (input_ids [batch, sequence_length]); the prompt's step needs one")
	}
	return spec, nil
}

// cacheHeads reads a cache input's key/value heads: the known dim beside
// the cache length and before the head size, in the layouts exports use
// ([batch, heads, length, head size], Hugging Face's and the zoo's;
// [batch, length, heads, head size]; a leading key/value axis of 2 before
// either). 0 for a cache of rank 3, whose heads are folded into another
// dim.
func cacheHeads(in *ir.Value, past string) int64 {
	dims := in.Declared.Shape.Dims
	if len(dims) < 4 {
		return 0
	}
	for _, d := range dims[len(dims)-3 : len(dims)-1] {
		if d.Sym == past {
			continue
		}
		if d.IsKnown() && d.Value > 0 {
			return d.Value
		}
		return 0
	}
	return 0
}

// lengthSyms lists an input's symbolic dims that are not a batch dim.
func lengthSyms(in *ir.Value) []string {
	var out []string
	for _, d := range in.Declared.Shape.Dims {
		if !d.IsKnown() && d.Sym != "" && !pipeline.IsBatchName(d.Sym) && !slices.Contains(out, d.Sym) {
			out = append(out, d.Sym)
		}
	}
	return out
}

func (r *runner) warn(w string) {
	if !r.seen[w] {
		r.seen[w] = true
		r.warnings = append(r.warnings, w)
	}
}

// cost prices one step: batch sequences with past cached positions and
// seq new tokens each.
func (r *runner) cost(batch, past, seq int64) (step, error) {
	dims := map[string]int64{r.spec.past: past, r.spec.seq: seq}
	for _, s := range r.spec.totals {
		dims[s] = past + seq
	}
	for k, v := range r.cfg.Dims {
		if _, ok := dims[k]; !ok {
			dims[k] = v
		}
	}
	// EachBatch: a run prices several batches (the serving curve, the
	// largest batch that fits), so a static batch's rewrite is said once.
	l, err := r.load(pipeline.Options{Batch: batch, Dims: dims, BindAll: true, EachBatch: true})
	if err != nil {
		return step{}, err
	}
	if err := l.Plan(r.cfg.Plan, pipeline.ForDType(r.cfg.Passes, r.cfg.DType)); err != nil {
		return step{}, err
	}
	co := cost.Options{
		DType: r.cfg.DType, Plan: r.cfg.Plan, Runtime: r.cfg.Runtime, GPUs: r.cfg.GPUs, Power: r.cfg.Power,
		ToolVersion: r.cfg.ToolVersion, ModelName: r.cfg.Model, Bindings: l.Bindings,
		AppendKVCache: true,
	}
	if rt := r.cfg.Runtime; rt != nil && rt.CUDAGraph > 0 && past == 0 {
		// onnxruntime-genai captures the decode steps only: the prompt's
		// runs node by node (its first run sets gpu_graph_id -1).
		if u := rt.UncapturedProfile(); u != nil {
			co.Runtime = u
			r.warn(fmt.Sprintf("the prompt's step runs node by node, as %s prices it (a session captures its CUDA graph for the decode steps, whose shapes repeat; onnxruntime-genai runs the first step with capture off); the decode steps replay it under %s", co.Runtime.Name, rt.Name))
		}
	}
	co, applied := pipeline.WithCalibration(co, r.cfg.Calibration, r.cfg.GPU)
	rep, err := cost.Analyze(l.Model.Graph, l.Model, r.cfg.GPU, co)
	if err != nil {
		return step{}, inputErr("%s: %w", r.cfg.Model, err)
	}
	present, err := cost.CacheBytes(l.Model.Graph, r.cfg.DType)
	if err != nil {
		return step{}, inputErr("%s: %w", r.cfg.Model, err)
	}
	for _, w := range append(l.Warnings, rep.Warnings...) {
		r.warn(w)
	}
	t := rep.Totals
	peak := t.PeakMemoryBytes
	if t.GPUs > 1 {
		peak = t.PerGPUPeakMemoryBytes
	}
	lo, hi := calib.Interval(rep, r.cfg.GPU, applied)
	return step{timeS: t.TimeS, lo: lo, hi: hi, energyJ: t.EnergyJ, peak: peak, present: present, limit: t.MemoryLimitBytes, dtype: rep.DType}, nil
}

// memory prices the prompt's step and the last decode step at batch and
// returns the run's peak on one GPU and the whole cache: the cache is
// allocated at its final length (total positions) from the start, so each
// step's peak, which holds the cache it leaves, is raised to the full
// cache, of which one GPU holds its share (kvShare).
func (r *runner) memory(batch int64, prefill, last *step) (peak, kv float64, err error) {
	n, m := r.cfg.Prompt, r.cfg.Output
	total := float64(n + m)
	if prefill == nil {
		p, err := r.cost(batch, 0, n)
		if err != nil {
			return 0, 0, err
		}
		prefill = &p
	}
	if m > 1 && last == nil {
		s, err := r.cost(batch, n+m-2, 1)
		if err != nil {
			return 0, 0, err
		}
		last = &s
	}
	// The cache's bytes are proportional to its length.
	kv = prefill.present * total / float64(n)
	peak = prefill.peak - prefill.present + kv*r.kvShare
	if last != nil {
		kv = last.present * total / float64(n+m-1)
		peak = max(peak, last.peak-last.present+kv*r.kvShare)
	}
	return peak, kv, nil
}

func (r *runner) run() (*Result, error) {
	cfg := r.cfg
	n, m := cfg.Prompt, cfg.Output
	rtName := hwdb.DefaultRuntime
	if cfg.Runtime != nil {
		rtName = cfg.Runtime.Name
	}
	res := &Result{SchemaVersion: SchemaVersion, ToolVersion: cfg.ToolVersion, Model: cfg.Model, GPU: cfg.GPU.Name,
		DType: cfg.DType, Plan: cfg.Plan, Runtime: rtName, Calibration: describeCalibration(cfg), GPUs: max(cfg.GPUs, 1), Batch: cfg.Batch, Prompt: n, Output: m,
		PowerCapW: cfg.Power.CapW, SMClockMHz: cfg.Power.SMClockMHz,
		CacheDim: r.spec.past, CacheInputs: r.spec.inputs, Fit: StepFit{Points: []StepPoint{}}}
	prefill, err := r.cost(cfg.Batch, 0, n)
	if err != nil {
		return nil, err
	}
	if res.DType == "" {
		res.DType = prefill.dtype
	}
	res.TTFTS = prefill.timeS
	res.TTFTIntervalS = interval(prefill.lo, prefill.hi)
	var last *step
	if m > 1 {
		if err := r.decode(res); err != nil {
			return nil, err
		}
		s, err := r.cost(cfg.Batch, n+m-2, 1)
		if err != nil {
			return nil, err
		}
		last = &s
	} else {
		res.Fit.Method = "exact"
		res.Approximation = "one output token: the prompt's step alone, no decode step"
	}
	res.E2ES = res.TTFTS + float64(m-1)*res.TPOTS
	res.E2EIntervalS = res.TTFTIntervalS
	if m > 1 {
		res.E2EIntervalS = nil
		if res.TTFTIntervalS != nil && res.TPOTIntervalS != nil {
			// The steps run the same kernels on the same GPU: their
			// errors move together, so the bounds add.
			res.E2EIntervalS = []float64{calib.RoundBound(res.TTFTIntervalS[0] + float64(m-1)*res.TPOTIntervalS[0]),
				calib.RoundBound(res.TTFTIntervalS[1] + float64(m-1)*res.TPOTIntervalS[1])}
		}
	}
	if res.E2ES > 0 {
		res.OutputTokensPerS = float64(cfg.Batch*m) / res.E2ES
	}
	if res.PeakMemoryBytes, res.KVCacheBytes, err = r.memory(cfg.Batch, &prefill, last); err != nil {
		return nil, err
	}
	res.KVHeads = r.spec.heads
	res.KVCacheBytesPerGPU = res.KVCacheBytes * r.kvShare
	if res.GPUs > 1 {
		res.KVCacheSharding = r.sharding(res.GPUs)
	}
	res.MemoryLimitBytes = prefill.limit
	res.Fits = res.MemoryLimitBytes <= 0 || res.PeakMemoryBytes <= res.MemoryLimitBytes
	if res.MaxBatch, err = r.maxBatch(res); err != nil {
		return nil, err
	}
	if err := r.serve(res); err != nil {
		return nil, err
	}
	res.Warnings = r.warnings
	if res.Warnings == nil {
		res.Warnings = []string{}
	}
	return res, nil
}

// sharding states how the cache is split over gpus GPUs, and that
// everything else of the activations is not.
func (r *runner) sharding(gpus int) string {
	h := r.spec.heads
	if h <= 0 {
		return fmt.Sprintf("KV cache whole on each of the %d GPUs: the cache inputs' shapes show no key/value head count to split it by; activations replicated on every GPU", gpus)
	}
	per := (h + int64(gpus) - 1) / int64(gpus)
	var why string
	switch {
	case h < int64(gpus):
		why = ": fewer heads than GPUs, so one whole head each"
	case h%int64(gpus) != 0:
		why = ": the heads do not divide evenly, so the most loaded GPU's"
	}
	return fmt.Sprintf("KV cache split by heads over %d GPUs: each holds ⌈%d KV heads / %d⌉ = %d, %.4g of the cache%s (the rule: ⌈kv_heads / GPUs⌉ heads per GPU, at least one whole head); the other activations replicated on every GPU",
		gpus, h, gpus, per, r.kvShare, why)
}

// decode costs the decode steps (past = N … N+M−2, one token each) and
// sets TPOT, the first and last step and the fit.
func (r *runner) decode(res *Result) error {
	n, m := r.cfg.Prompt, r.cfg.Output
	steps := m - 1
	lo, hi := n, n+m-2
	var pasts []int64
	if r.cfg.Exact || steps <= Points {
		for p := lo; p <= hi; p++ {
			pasts = append(pasts, p)
		}
	} else {
		for i := range Points {
			p := lo + int64(math.Round(float64(i)*float64(hi-lo)/float64(Points-1)))
			if len(pasts) == 0 || pasts[len(pasts)-1] != p {
				pasts = append(pasts, p)
			}
		}
	}
	xs := make([]float64, len(pasts))
	ys := make([]float64, len(pasts))
	var sumT, sumLo, sumHi float64
	for i, p := range pasts {
		s, err := r.cost(r.cfg.Batch, p, 1)
		if err != nil {
			return err
		}
		xs[i], ys[i] = float64(p), s.timeS
		sumT, sumLo, sumHi = sumT+s.timeS, sumLo+s.lo, sumHi+s.hi
		if !(s.hi > 0) {
			sumHi = math.NaN() // a step without an interval: TPOT has none
		}
		res.Fit.Points = append(res.Fit.Points, StepPoint{Past: p, TimeS: s.timeS})
	}
	res.FirstStepS, res.LastStepS = ys[0], ys[len(ys)-1]
	// TPOT's interval: the costed steps' bounds in proportion to their
	// times (a sum of correlated errors), scaled to TPOT, so it holds
	// for the exact mean and the fitted line alike.
	setInterval := func() {
		if sumT > 0 && sumHi > 0 {
			res.TPOTIntervalS = interval(calib.RoundBound(res.TPOTS*sumLo/sumT), calib.RoundBound(res.TPOTS*sumHi/sumT))
		}
	}
	if int64(len(pasts)) == steps {
		var sum float64
		for _, y := range ys {
			sum += y
		}
		res.TPOTS = sum / float64(steps)
		res.Fit.Method = "exact"
		res.Approximation = fmt.Sprintf("every one of the %d decode steps costed", steps)
		setInterval()
		return nil
	}
	a, b := stat.LinearRegression(xs, ys, nil, false)
	res.Fit.Method, res.Fit.InterceptS, res.Fit.SlopeS = "linear", a, b
	for i, x := range xs {
		if ys[i] > 0 {
			res.Fit.MaxRelResidual = max(res.Fit.MaxRelResidual, math.Abs(ys[i]-(a+b*x))/ys[i])
		}
	}
	// Σ_{p=lo}^{hi} (a + b·p) = steps·(a + b·(lo+hi)/2): the line summed
	// over every step, which is the line at the mean cache length.
	res.TPOTS = a + b*float64(lo+hi)/2
	res.Approximation = fmt.Sprintf("decode time linear in the cache length: %d of %d steps costed (cache %d…%d), a least-squares line through them summed over every step; largest residual %.2g%%",
		len(pasts), steps, lo, hi, 100*res.Fit.MaxRelResidual)
	setInterval()
	return nil
}

// interval is [lo, hi] as a report carries it, nil where there is none.
func interval(lo, hi float64) []float64 {
	if !(hi > 0) || !(lo > 0) {
		return nil
	}
	return []float64{lo, hi}
}

// maxBatchLimit bounds the search: a batch past it is not a serving
// question.
const maxBatchLimit = 1 << 20

// maxBatch finds the largest batch whose run fits.
func (r *runner) maxBatch(res *Result) (int64, error) {
	return largestFitting(res.MemoryLimitBytes, res.Batch, res.PeakMemoryBytes, func(b int64) (float64, error) {
		p, _, err := r.memory(b, nil, nil)
		return p, err
	})
}

// largestFitting finds the largest batch b whose peak(b) is at most
// limit, given peak(b0) = p0 (0 when limit is unknown). Memory grows
// about linearly with batch, so a line through b0 and one other batch
// predicts it; the prediction is checked (it fits, one more does not)
// and, when wrong, the answer is found by doubling and bisecting between
// batches known to fit and not to.
func largestFitting(limit float64, b0 int64, p0 float64, peak func(int64) (float64, error)) (int64, error) {
	if limit <= 0 {
		return 0, nil // memory size unknown: no verdict
	}
	lo, hi := int64(0), int64(maxBatchLimit+1) // lo fits (0: none yet), hi does not
	peaks := map[int64]float64{}
	probe := func(b int64) error {
		if b <= lo || b >= hi {
			return nil // known already, peak memory being monotone in batch
		}
		p := p0
		if b != b0 {
			var err error
			if p, err = peak(b); err != nil {
				return err
			}
		}
		peaks[b] = p
		if p <= limit {
			lo = b
		} else {
			hi = b
		}
		return nil
	}
	b1 := 2 * b0
	if b0 > 1 {
		b1 = 1
	}
	for _, b := range []int64{b0, b1} {
		if err := probe(b); err != nil {
			return 0, err
		}
	}
	p0, ok0 := peaks[b0]
	p1, ok1 := peaks[b1]
	if slope := (p1 - p0) / float64(b1-b0); ok0 && ok1 && slope > 0 {
		guess := min(max(b0+int64(math.Floor((limit-p0)/slope)), 1), maxBatchLimit)
		for _, b := range []int64{guess, guess + 1} {
			if err := probe(b); err != nil {
				return 0, err
			}
		}
	}
	if err := probe(1); err != nil || lo == 0 {
		return 0, err
	}
	for hi > maxBatchLimit && lo < maxBatchLimit {
		if err := probe(min(2*lo, maxBatchLimit)); err != nil {
			return 0, err
		}
	}
	for hi-lo > 1 {
		if err := probe(lo + (hi-lo)/2); err != nil {
			return 0, err
		}
	}
	return lo, nil
}

// describeCalibration is the calibration line of the result ("" with none).
func describeCalibration(cfg Config) string {
	if a := cfg.Calibration.For(cfg.GPU); a != nil {
		return a.Describe()
	}
	return ""
}
