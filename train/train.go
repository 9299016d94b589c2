// Package train prices one training step of a model on top of the cost
// model's forward analysis: the backward pass (backward.go, one rule per
// op), a loss when the graph has none, the optimizer update
// (optimizer.go), activation recomputation (checkpoint.go), gradient
// accumulation, data parallelism (dataparallel.go), host dispatch
// (dispatch.go) and the step's memory over its timeline (memory.go,
// allocator.go). cost.Analyze runs it through the cost.Training hook that
// Options implements; the results are report.Train and the per-node
// report.Backward.
package train

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/passes"
)

// Options turn cost.Analyze into the cost of one training step: forward,
// a loss, backward and an optimizer update, with the step's memory.
type Options struct {
	// Optimizer is one of Optimizers(); "" is adam.
	Optimizer string
	// Checkpoint is activation recomputation: "" or "none", "blocks" or
	// "sqrt" (checkpoint.go).
	Checkpoint string
	// DataParallel is data-parallel replicas (DistributedDataParallel,
	// dataparallel.go); 0 and 1 are none.
	DataParallel int
	// GradAccum is gradient accumulation: micro-batches (each the graph's
	// batch) per optimizer step; 0 and 1 are none.
	GradAccum int
}

// Runtime is the execution profile a training step runs under when the
// caller names none: training runs in PyTorch eager, whose host
// dispatch, kernel gap, CUDA context and library workspace the step and
// its memory then carry.
const Runtime = "pytorch"

// DefaultRuntime is Runtime, for cost.Analyze's choice of profile.
func (o *Options) DefaultRuntime() string { return Runtime }

// Step adds the training step to a forward analysis (cost.Training).
func (o *Options) Step(f *cost.Forward) error {
	_, err := o.price(f)
	return err
}

// Training is o as cost.Options.Train: nil when o is nil, because a nil
// *Options inside a non-nil interface would read as a training request.
func (o *Options) Training() cost.Training {
	if o == nil {
		return nil
	}
	return o
}

// lossOps are ops that compute a loss; a graph without one gets a
// cross-entropy head on its first output.
var lossOps = map[string]bool{"SoftmaxCrossEntropyLoss": true, "NegativeLogLikelihoodLoss": true}

// step is one training step being priced, filled in the order price runs
// its parts.
type step struct {
	o   Options
	f   *cost.Forward
	g   *ir.Graph
	rep *report.Report
	tr  *report.Train
	// c sizes tensors at the compute dtype, without warnings.
	c     *cost.RuleCtx
	opt   optimizer
	mixed bool
	// trainable are the parameters the optimizer updates; need marks
	// every value whose gradient backward computes.
	trainable []*ir.Value
	need      map[*ir.Value]bool
	// plans are the nodes' backward plans, in node order; missing counts
	// the differentiable nodes on the gradient path with no rule, by op.
	plans   []backwardPlan
	missing map[string]int
	ck      checkpointing
	accum   int
	// cast marks the weights autocast has cast this forward (amp.go);
	// agEdges counts each node's gradient edges in the backward (its
	// inputs' and its weights' casts'), which dispatch.go prices.
	cast    map[*ir.Value]bool
	agEdges []float64
	// convCalls counts each node's backward cuDNN convolution calls.
	convCalls []float64
	scaler    gradScaler
	// lossFwdS and lossBwdS are the assumed loss head's kernels (0 when
	// the graph has its own loss).
	lossFwdS, lossBwdS float64
	optOps             float64
	// fwdLaunches are each node's training-only forward launches.
	fwdLaunches []float64
	// timeline is the live tensor bytes at each time of the last memory
	// timeline priced (memory.go), kept for tests.
	timeline []float64
}

// price runs the step's parts in the order their results feed each
// other: the step time needs every kernel, the memory the backward plans
// and the checkpointing, the host dispatch the step time.
func (o *Options) price(f *cost.Forward) (*step, error) {
	s, err := newStep(o, f)
	if err != nil {
		return nil, err
	}
	s.backward()
	s.lossHead()
	s.optimizerUpdate()
	if err := s.recompute(); err != nil {
		return nil, err
	}
	if err := s.replicate(); err != nil {
		return nil, err
	}
	tr := s.tr
	tr.StepTimeS = float64(s.accum)*(tr.ForwardTimeS+tr.RecomputeTimeS+tr.BackwardTimeS) + tr.AccumulateTimeS + tr.GradAllReduceExposedS + tr.OptimizerTimeS
	if err := s.stepMemory(); err != nil {
		return nil, err
	}
	s.warn()
	s.finish()
	return s, nil
}

// newStep checks the options and sets up what every part reads.
func newStep(o *Options, f *cost.Forward) (*step, error) {
	optName := o.Optimizer
	if optName == "" {
		optName = "adam"
	}
	if o.GradAccum < 0 {
		return nil, fmt.Errorf("analyze: gradient accumulation %d: want 1 or more micro-batches", o.GradAccum)
	}
	if o.DataParallel < 0 {
		return nil, fmt.Errorf("analyze: data parallel %d: want 1 or more replicas", o.DataParallel)
	}
	opt, ok := lookupOptimizer(optName)
	if !ok {
		return nil, fmt.Errorf("analyze: unknown optimizer %q (want %s)", optName, strings.Join(Optimizers(), ", "))
	}
	dt := f.DType()
	mixed := dt == ir.Float16 || dt == ir.BFloat16
	s := &step{o: *o, f: f, g: f.Graph(), rep: f.Report(), opt: opt, mixed: mixed, c: f.Sizer(),
		tr: &report.Train{Optimizer: opt.name, MixedPrecision: mixed, Notes: []string{}}}
	s.trainable = trainableParams(f.Params(), s.g)
	// A tied head's copy is not a parameter of its own, but its weight
	// gradient is computed (and summed into the table's).
	grads := s.trainable
	s.trainable = slices.DeleteFunc(slices.Clone(s.trainable), f.TiedCopy)
	s.need = needGradients(s.g, grads)
	return s, nil
}

// backward plans and prices every node's backward, then adds the
// forward's own sums and, under tensor parallelism, the backward
// all-reduces.
func (s *step) backward() {
	tr := s.tr
	s.plans = make([]backwardPlan, len(s.g.Nodes))
	s.agEdges = make([]float64, len(s.g.Nodes))
	s.convCalls = make([]float64, len(s.g.Nodes))
	s.fwdLaunches = make([]float64, len(s.g.Nodes))
	s.missing = map[string]int{}
	for i, n := range s.g.Nodes {
		b, ok := s.nodeBackward(i, n)
		if !ok {
			continue
		}
		tr.BackwardFLOPs += b.FLOPs
		tr.BackwardTimeS += b.TimeS
		tr.ForwardTimeS += b.ForwardExtraS
		tr.BackwardEnergyJ += b.EnergyJ
		tr.ForwardEnergyJ += b.ForwardExtraJ
	}
	s.fanOutGrads()
	timeS, energyJ, flops := s.f.Sums()
	tr.ForwardTimeS += timeS
	tr.ForwardEnergyJ += energyJ
	tr.ForwardFLOPs = flops
	s.backwardAllReduces()
}

// needGrad reports whether v's gradient is computed.
func (s *step) needGrad(v *ir.Value) bool { return v != nil && s.need[v] }

// nodeBackward plans node i's backward with its op's rule and prices its
// kernels onto the node's row; ok is false when the node has no rule or
// the rule failed (a node on the gradient path with no rule is counted
// as missing).
func (s *step) nodeBackward(i int, n *ir.Node) (b report.Backward, ok bool) {
	est := s.f.Estimate(i)
	key := ir.QualifiedOp(n.Domain, n.OpType)
	rule := backwardRules[key]
	if rule == nil {
		anyIn := false
		for _, in := range n.Inputs {
			anyIn = anyIn || s.needGrad(in)
		}
		if reason, listed := NoBackward[key]; anyIn && (!listed || missingBackward(reason)) && !est.View {
			s.missing[key]++
		}
		return b, false
	}
	p, err := runBackward(rule, &bwCtx{n: n, fwd: est, c: s.c, needGrad: s.needGrad, layout: s.layoutTransposes(n),
		eager: s.f.Runtime().PlanOrFused() == "eager"})
	if err != nil {
		s.f.Warnf("%s node %q: backward rule failed: %v; its backward not counted", n.OpType, n.Name, err)
		return b, false
	}
	// Each cast autocast adds is a node with one edge (to the weight's
	// AccumulateGrad, or the next cast's).
	s.agEdges[i] = s.autogradEdges(n) + float64(s.autocastCasts(i, n, &p)+s.autocastWiden(i, n, &p))
	s.plans[i] = p
	var names []string
	for _, k := range p.Kernels {
		if k.Conv != nil {
			s.convCalls[i] += k.Launches
		}
		kt, ke := s.priceBackward(n, k)
		b.EnergyJ += ke
		b.FLOPs += k.FLOPs
		b.BytesRead += k.BytesRead
		b.BytesWritten += k.BytesWritten
		b.TimeS += kt
		b.Launches += k.Launches
		if k.Library {
			b.LibraryLaunches += k.Launches
		}
		names = append(names, k.Name)
	}
	for _, k := range p.Forward {
		s.fwdLaunches[i] += k.Launches
		kt, ke := s.priceBackward(n, k)
		b.ForwardExtraS += kt
		b.ForwardExtraJ += ke
	}
	b.SavedBytes = p.SavedExtra
	b.Kernels = strings.Join(names, "+")
	b.Note = p.Note
	if len(p.Kernels) > 0 || len(p.Forward) > 0 {
		bc := b
		s.rep.Nodes[i].Backward = &bc
	}
	return b, true
}

// lossHead adds a softmax cross-entropy on the first float output of a
// graph that computes no loss, forward and backward.
func (s *step) lossHead() {
	if hasLoss(s.g) {
		return
	}
	y := firstFloatOutput(s.g)
	if y == nil {
		return
	}
	tr, c := s.tr, s.c
	n := c.Numel(y)
	fwd := bwKernel{Name: "xent-fwd", Class: perf.ClassReduction, FLOPs: 5 * n, BytesRead: c.Bytes(y), BytesWritten: c.Bytes(y) / max(n, 1), Launches: 1}
	bwd := bwKernel{Name: "xent-bwd", Class: perf.ClassElementwise, FLOPs: 3 * n, BytesRead: c.Bytes(y), BytesWritten: c.Bytes(y), Launches: 1}
	ft, fe := s.priceBackward(nil, fwd)
	tr.ForwardTimeS += ft
	tr.ForwardEnergyJ += fe
	tr.ForwardFLOPs += fwd.FLOPs
	s.lossFwdS = ft
	bt, be := s.priceBackward(nil, bwd)
	s.lossBwdS = bt
	tr.BackwardTimeS += bt
	tr.BackwardEnergyJ += be
	tr.BackwardFLOPs += bwd.FLOPs
	tr.Notes = append(tr.Notes, fmt.Sprintf("the graph has no loss: a softmax cross-entropy loss on output %q is assumed (forward and backward counted)", y.Name))
}

// optimizerUpdate prices the optimizer's update of every trainable
// parameter.
func (s *step) optimizerUpdate() {
	tr := s.tr
	os := s.optimizerStep()
	s.optOps = os.ops
	tr.OptimizerFLOPs, tr.OptimizerTimeS, tr.OptimizerLaunches = os.flops, os.timeS, os.launches
	tr.OptimizerEnergyJ = os.energyJ
	tr.Notes = append(tr.Notes, os.note)
	// The fp16 GradScaler's kernels run around the optimizer (the loss
	// scaling before backward is one tiny launch): counted with it.
	if g := s.priceGradScaler(); g.on {
		s.scaler = g
		tr.OptimizerTimeS += g.scaleS + g.unscaleS + g.updateS
		tr.OptimizerEnergyJ += g.scaleJ + g.unscaleJ + g.updateJ
		tr.OptimizerLaunches += g.launches()
		tr.Notes = append(tr.Notes, g.note)
	}
}

// recompute cuts the nodes into checkpointed segments and charges every
// recomputed node's forward (with its training-only forward work) again.
func (s *step) recompute() error {
	tr := s.tr
	ck, err := newCheckpointing(s.o.Checkpoint, s.g.Nodes)
	if err != nil {
		return err
	}
	s.ck = ck
	tr.Checkpoint = "none"
	if m := s.o.Checkpoint; m != "" && m != "none" {
		tr.Checkpoint = m
		tr.Notes = append(tr.Notes, ck.how)
	}
	for i := range s.g.Nodes {
		if !ck.recomputed(i) {
			continue
		}
		nc := &s.rep.Nodes[i]
		tr.RecomputeTimeS += nc.TimeS
		tr.RecomputeEnergyJ += nc.EnergyJ
		if b := nc.Backward; b != nil {
			tr.RecomputeTimeS += b.ForwardExtraS
			tr.RecomputeEnergyJ += b.ForwardExtraJ
		}
	}
	return nil
}

// replicate prices gradient accumulation over micro-batches and the
// data-parallel gradient all-reduce.
func (s *step) replicate() error {
	tr := s.tr
	s.accum = max(s.o.GradAccum, 1)
	tr.GradAccum = s.accum
	if s.accum > 1 {
		var note string
		tr.AccumulateTimeS, tr.AccumulateEnergyJ, note = s.accumulateGrads(s.accum)
		tr.Notes = append(tr.Notes, note)
	}
	tr.DataParallel = 1
	if dp := s.o.DataParallel; dp > 1 {
		return s.dataParallel(dp, s.gradientBytes())
	}
	return nil
}

// stepMemory prices the step's memory; under tensor parallelism the
// report's is one GPU's, with its share of the split weights.
func (s *step) stepMemory() error {
	tr, f := s.tr, s.f
	mem, err := s.memory(nil)
	if err != nil {
		return err
	}
	tr.Memory = mem
	if n := f.GPUs(); n > 1 {
		// One GPU's memory: its share of the split weights, their
		// gradients and optimizer state; peak_memory_bytes stays the
		// whole model's peak on one GPU.
		per, err := s.memory(f.ParamShare)
		if err != nil {
			return err
		}
		tr.Memory = per
		f.SetPerGPUPeak(per.PeakBytes)
		tr.Notes = append(tr.Notes, fmt.Sprintf("tensor-parallel over %d GPUs: train.memory is one GPU's (split weights, their gradients and optimizer state divided by %d); peak_memory_bytes is the whole model on one GPU", n, n))
	}
	s.rep.Totals.PeakMemoryBytes = mem.PeakBytes
	return nil
}

// warn reports what the step could not price: ops with no backward
// model, a model with nothing to train, an inference-mode export; and
// notes the passes a training plan leaves out.
func (s *step) warn() {
	tr := s.tr
	if len(s.missing) > 0 {
		keys := make([]string, 0, len(s.missing))
		for k := range s.missing {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s (%d)", k, s.missing[k])
		}
		msg := "no backward model for " + strings.Join(parts, ", ") + ": their backward time and memory are not counted"
		s.f.Warnf("training: %s", msg)
		tr.Notes = append(tr.Notes, msg)
	}
	if len(s.trainable) == 0 {
		s.f.Warnf("training: the model has no floating-point weights: nothing to train")
	}
	warnInferenceExport(s.f, s.g)
	if msg := noDropoutAttention(s.g); msg != "" {
		s.f.Warnf("training: %s", msg)
		tr.Notes = append(tr.Notes, msg)
	}
	tr.Notes = append(tr.Notes, "passes that do not run under training: "+strings.Join(passes.InferenceOnly(), ", ")+" (BatchNormalization keeps its batch statistics)")
}

// finish prices the host's dispatch of the step and sets the report's
// totals to the step's.
func (s *step) finish() {
	tr := s.tr
	s.dispatchStep()
	s.rep.Totals.Train = tr
	// The step's energy: every kernel as often as it runs, and the idle
	// GPU while it waits on the host or on the exposed all-reduce.
	tr.WaitEnergyJ = s.f.GPU().IdleWatts * (tr.HostWaitS + tr.GradAllReduceExposedS)
	tr.StepEnergyJ = float64(s.accum)*(tr.ForwardEnergyJ+tr.RecomputeEnergyJ+tr.BackwardEnergyJ) +
		tr.AccumulateEnergyJ + tr.OptimizerEnergyJ + tr.WaitEnergyJ
	s.f.SetTotals(tr.StepTimeS, tr.StepEnergyJ)
}

// runBackward calls a backward rule, turning a panic into an error.
func runBackward(r BackwardRule, b *bwCtx) (p backwardPlan, err error) {
	defer func() {
		if x := recover(); x != nil {
			err = fmt.Errorf("internal error: %v", x)
		}
	}()
	return r(b), nil
}

// priceBackward times one backward kernel of node n (nil: the loss head
// or a step-wide kernel) with the forward's kernel model, and returns its
// time and energy (cost.Forward.PriceKernel).
func (s *step) priceBackward(n *ir.Node, k bwKernel) (timeS, energyJ float64) {
	f := s.f
	prec := f.Precision(n, k.Class)
	bytes := k.BytesRead + k.BytesWritten
	dram := s.backwardDRAM(n, k)
	pk := perf.Kernel{Class: k.Class, FLOPs: k.FLOPs, Bytes: bytes, Precision: prec,
		M: k.M, N: k.N, K: k.K, Batch: k.Batch, Steps: k.Steps, InputK: k.InputK,
		WorkingSet: bytes, Launches: k.Launches, Grad: k.Grad,
		Resident: true, DRAMBytes: dram, Vectorized: k.Vectorized, TransposeElements: k.TransposeElements}
	if n != nil {
		pk.ElemBytes = f.ElemBytes(n)
	}
	if k.Conv != nil && n != nil {
		// A convolution's gradient, priced as calibrated on DeepBench's
		// backward rows (internal/calibrate/backward.go): the cheaper
		// algorithm is chosen in a plan under the report's runtime, whose
		// library may not split a convolution over K (hwdb.Runtime.
		// ConvSplitK), then priced under the report's cap like every step
		// kernel. Chosen where splits were allowed, a batch-1 data
		// gradient took implicit GEMM, fast only split: AlexNet's 13×13
		// layers under `graph` on an RTX 4090 cost 84 µs at batch 1 and
		// 37 µs at batch 2, where Winograd was chosen.
		eb := f.ElemBytes(n)
		po := perf.PlanOptions()
		po.Runtime = f.Runtime()
		ck, _ := perf.EstimateConvGrad(f.GPU(), *k.Conv, k.Grad, prec, eb, eb, po)
		ck.Resident, ck.DRAMBytes = true, dram*ck.Bytes/max(bytes, 1)
		return f.PriceKernel(ck)
	}
	if k.Class == perf.ClassRNN {
		pk.Launches = 1
	}
	return f.PriceKernel(pk)
}

// layoutTransposes reports whether n's gradient convolutions run between
// NCHW↔NHWC transposes: a runtime that hands NCHW tensors to cuDNN
// (hwdb.Runtime.ConvLayoutTransposes) and a precision on tensor cores,
// whose cuDNN kernels are NHWC (an fp16 NCHW training step's profile,
// apache/mxnet issue #17665, spends 11% of its GPU time in
// nchwToNhwcKernel around turing_s1688cudnn_fp16 wgrad kernels).
func (s *step) layoutTransposes(n *ir.Node) bool {
	rt := s.f.Runtime()
	return rt != nil && rt.ConvLayoutTransposes > 0 && perf.Kernel{Precision: s.f.Precision(n, perf.ClassConv)}.OnTensorCores()
}

// backwardDRAM is the DRAM traffic of a backward kernel of node n. The
// backward pass is not followed tensor by tensor: the upstream gradient
// (the size of n's output) was written by the kernel just before and is
// read from L2 when it fits the L2's reuse capacity, from DRAM whole when
// it does not (perf.WarmBytes); everything else it reads (the saved activations and the
// weights, last touched in the forward pass) comes from DRAM, and what it
// writes stays in L2 as far as it fits, the rest streaming out. A kernel
// with no node (the loss head) reads from DRAM. Unlike the forward plan
// (cost/residency.go), a write that stays is not charged to its writer:
// charged, our H100 AMP training steps' priced device time, already above
// their profiled kernel sums (ResNet-50 15.8 against 14.3 ms), grew
// further and the device-bound VGG-16 step went +1.8% → +3.1%; the
// backward's write-backs evidently hide in its compute-bound kernels.
func (s *step) backwardDRAM(n *ir.Node, k bwKernel) float64 {
	l2 := s.f.GPU().L2ReuseBytes()
	if n == nil {
		return k.BytesRead + max(k.BytesWritten-l2, 0)
	}
	warm := min(perf.WarmBytes(s.f.GPU(), s.f.OutBytes(n)), k.BytesRead)
	return k.BytesRead - warm + max(k.BytesWritten-(l2-warm), 0)
}

// trainableParams are the floating-point weights the rules read, in first
// use order: the parameters the optimizer updates.
// BatchNormalization's running mean and variance (inputs 3 and 4) are
// buffers, not parameters: the batch statistics update them in the
// forward and no optimizer touches them (torch.nn.BatchNorm2d registers
// them with register_buffer).
func trainableParams(params []*ir.Value, g *ir.Graph) []*ir.Value {
	buffers := map[*ir.Value]bool{}
	for _, n := range g.Nodes {
		if n.Domain == "" && n.OpType == "BatchNormalization" {
			buffers[n.In(3)], buffers[n.In(4)] = true, true
		}
	}
	var out []*ir.Value
	for _, v := range params {
		if v.IsInitializer && v.DType.IsFloat() && !buffers[v] {
			out = append(out, v)
		}
	}
	return out
}

// needGradients marks every value whose gradient backward computes: the
// trainable parameters and every floating-point output of a
// differentiable node with such an input. The graph inputs need none, so
// the first layer computes no data gradient.
func needGradients(g *ir.Graph, trainable []*ir.Value) map[*ir.Value]bool {
	need := make(map[*ir.Value]bool, len(g.Nodes))
	for _, v := range trainable {
		need[v] = true
	}
	for _, n := range g.Nodes {
		key := ir.QualifiedOp(n.Domain, n.OpType)
		if NoBackward[key] == nonDiff || NoBackward[key] == inferenceOnly {
			continue
		}
		any := false
		for _, in := range n.Inputs {
			any = any || (in != nil && need[in])
		}
		if !any {
			continue
		}
		for _, o := range n.Outputs {
			if o != nil && o.Kind == ir.TensorValue && o.DType.IsFloat() {
				need[o] = true
			}
		}
	}
	return need
}

// noDropoutAttention says when a graph with attention (a Softmax beside
// LayerNormalization) has no Dropout: BERT-style models train with
// dropout on the attention probabilities and after each sublayer, whose
// masks (forward) and their backward an eval export leaves out.
func noDropoutAttention(g *ir.Graph) string {
	softmax, norm := 0, 0
	for _, n := range g.Nodes {
		switch ir.QualifiedOp(n.Domain, n.OpType) {
		case "Dropout":
			return ""
		case "Softmax":
			softmax++
		case "LayerNormalization", "onnxcost.LayerNormalization", "com.microsoft.SkipLayerNormalization", "onnxcost.SkipLayerNormalization":
			norm++
		}
	}
	if softmax == 0 || norm == 0 {
		return ""
	}
	return fmt.Sprintf("the graph has attention (%d Softmax, %d LayerNormalization) and no Dropout: if the model trains with dropout (BERT: on the attention probabilities and after each sublayer), its masks and their backward are not counted; export with %s", softmax, norm, ExportAdvice)
}

func hasLoss(g *ir.Graph) bool {
	for _, n := range g.Nodes {
		if n.Domain == "" && lossOps[n.OpType] {
			return true
		}
	}
	return false
}

func firstFloatOutput(g *ir.Graph) *ir.Value {
	for _, o := range g.Outputs {
		if o != nil && o.Kind == ir.TensorValue && o.DType.IsFloat() {
			return o
		}
	}
	return nil
}
