package cost

import (
	"fmt"
	"sort"
	"strings"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
)

// TrainOptions turn Analyze into the cost of one training step: forward,
// a loss, backward (backward.go) and an optimizer update (optimizer.go),
// with its memory over the step's timeline (train_memory.go).
type TrainOptions struct {
	// Optimizer is one of Optimizers(); "" is adam.
	Optimizer string
	// Checkpoint is activation recomputation: "" or "none", "blocks" or
	// "sqrt" (train_checkpoint.go).
	Checkpoint string
	// DataParallel is data-parallel replicas (DistributedDataParallel,
	// train_dataparallel.go); 0 and 1 are none.
	DataParallel int
	// GradAccum is gradient accumulation: micro-batches (each the graph's
	// batch) per optimizer step; 0 and 1 are none.
	GradAccum int
}

// TrainRuntime is the execution profile a training step runs under when
// the caller names none (runtime.go, runtimeOf): training runs in PyTorch
// eager, whose host dispatch, kernel gap, CUDA context and library
// workspace the step and its memory then carry.
const TrainRuntime = "pytorch"

// PassesNotForTraining are the fusion passes that must not run before a
// training estimate: folding BatchNormalization into the Conv before it is
// valid only with frozen statistics (inference). Every other pass
// (epilogues, elementwise chains, attention, Winograd) has a training
// counterpart whose backward is the sum of its parts' backward.
var PassesNotForTraining = []string{"fold-bn"}

// lossOps are ops that compute a loss; a graph without one gets a
// cross-entropy head on its first output.
var lossOps = map[string]bool{"SoftmaxCrossEntropyLoss": true, "NegativeLogLikelihoodLoss": true}

// train adds the backward pass, optimizer step and training memory to a
// forward report.
func (a *analyzer) train(g *ir.Graph, rep *report.Report, gc *graphCost) error {
	optName := a.opt.Train.Optimizer
	if optName == "" {
		optName = "adam"
	}
	if a.opt.Train.GradAccum < 0 {
		return fmt.Errorf("analyze: gradient accumulation %d: want 1 or more micro-batches", a.opt.Train.GradAccum)
	}
	if a.opt.Train.DataParallel < 0 {
		return fmt.Errorf("analyze: data parallel %d: want 1 or more replicas", a.opt.Train.DataParallel)
	}
	opt, ok := lookupOptimizer(optName)
	if !ok {
		return fmt.Errorf("analyze: unknown optimizer %q (want %s)", optName, strings.Join(Optimizers(), ", "))
	}
	mixed := a.dtype == ir.Float16 || a.dtype == ir.BFloat16
	tr := &report.Train{Optimizer: opt.name, MixedPrecision: mixed, Notes: []string{}}
	c := &RuleCtx{DType: a.dtype, unknown: true}

	trainable := a.trainableParams()
	need := needGradients(g, trainable)
	needGrad := func(v *ir.Value) bool { return v != nil && need[v] }

	plans := make([]backwardPlan, len(g.Nodes))
	missing := map[string]int{}
	for i, n := range g.Nodes {
		est := gc.ests[i]
		anyIn := false
		for _, in := range n.Inputs {
			anyIn = anyIn || needGrad(in)
		}
		key := ir.QualifiedOp(n.Domain, n.OpType)
		rule := backwardTable[key]
		if rule == nil {
			if reason, listed := NoBackward[key]; anyIn && (!listed || missingBackward(reason)) && !est.View {
				missing[key]++
			}
			continue
		}
		bc := &bwCtx{n: n, fwd: est, c: c, needGrad: needGrad}
		p, err := runBackward(rule, bc)
		if err != nil {
			a.warnf("%s node %q: backward rule failed: %v; its backward not counted", n.OpType, n.Name, err)
			continue
		}
		plans[i] = p
		nc := &rep.Nodes[i]
		var b report.Backward
		var names []string
		for _, k := range p.Kernels {
			kt, ke := a.priceBackward(n, k)
			b.EnergyJ += ke
			b.FLOPs += k.FLOPs
			b.BytesRead += k.BytesRead
			b.BytesWritten += k.BytesWritten
			b.TimeS += kt
			b.Launches += k.Launches
			names = append(names, k.Name)
		}
		for _, k := range p.Forward {
			kt, ke := a.priceBackward(n, k)
			b.ForwardExtraS += kt
			b.ForwardExtraJ += ke
		}
		b.SavedBytes = p.SavedExtra
		b.Kernels = strings.Join(names, "+")
		b.Note = p.Note
		if len(p.Kernels) > 0 || len(p.Forward) > 0 {
			nc.Backward = &b
		}
		tr.BackwardFLOPs += b.FLOPs
		tr.BackwardTimeS += b.TimeS
		tr.ForwardTimeS += b.ForwardExtraS
		tr.BackwardEnergyJ += b.EnergyJ
		tr.ForwardEnergyJ += b.ForwardExtraJ
	}
	tr.ForwardTimeS += gc.agg.TimeS
	tr.ForwardEnergyJ += gc.agg.EnergyJ
	tr.ForwardFLOPs = gc.est.FLOPs
	a.backwardAllReduces(rep, tr)

	// The loss head.
	if !hasLoss(g) {
		if y := firstFloatOutput(g); y != nil {
			n := c.Numel(y)
			fwd := bwKernel{Name: "xent-fwd", Class: perf.ClassReduction, FLOPs: 5 * n, BytesRead: c.Bytes(y), BytesWritten: c.Bytes(y) / max(n, 1), Launches: 1}
			bwd := bwKernel{Name: "xent-bwd", Class: perf.ClassElementwise, FLOPs: 3 * n, BytesRead: c.Bytes(y), BytesWritten: c.Bytes(y), Launches: 1}
			ft, fe := a.priceBackward(nil, fwd)
			tr.ForwardTimeS += ft
			tr.ForwardEnergyJ += fe
			tr.ForwardFLOPs += fwd.FLOPs
			bt, be := a.priceBackward(nil, bwd)
			tr.BackwardTimeS += bt
			tr.BackwardEnergyJ += be
			tr.BackwardFLOPs += bwd.FLOPs
			tr.Notes = append(tr.Notes, fmt.Sprintf("the graph has no loss: a softmax cross-entropy loss on output %q is assumed (forward and backward counted)", y.Name))
		}
	}

	// The optimizer step.
	os := a.optimizerStep(opt, trainable, mixed)
	tr.OptimizerFLOPs, tr.OptimizerTimeS, tr.OptimizerLaunches = os.flops, os.timeS, os.launches
	tr.OptimizerEnergyJ = os.energyJ
	tr.Notes = append(tr.Notes, os.note)
	// Recomputation: every checkpointed segment's forward runs again.
	ck, err := newCheckpointing(a.opt.Train.Checkpoint, g.Nodes)
	if err != nil {
		return err
	}
	tr.Checkpoint = "none"
	if m := a.opt.Train.Checkpoint; m != "" && m != "none" {
		tr.Checkpoint = m
		tr.Notes = append(tr.Notes, ck.how)
	}
	for i := range g.Nodes {
		if ck.recomputed(i) {
			tr.RecomputeTimeS += rep.Nodes[i].TimeS
			tr.RecomputeEnergyJ += rep.Nodes[i].EnergyJ
			if b := rep.Nodes[i].Backward; b != nil {
				tr.RecomputeTimeS += b.ForwardExtraS
				tr.RecomputeEnergyJ += b.ForwardExtraJ
			}
		}
	}
	accum := max(a.opt.Train.GradAccum, 1)
	tr.GradAccum = accum
	if accum > 1 {
		var note string
		tr.AccumulateTimeS, tr.AccumulateEnergyJ, note = a.accumulateGrads(trainable, accum)
		tr.Notes = append(tr.Notes, note)
	}
	tr.DataParallel = 1
	if dp := a.opt.Train.DataParallel; dp > 1 {
		if err := a.dataParallel(tr, dp, a.gradientBytes(trainable)); err != nil {
			return err
		}
	}
	tr.StepTimeS = float64(accum)*(tr.ForwardTimeS+tr.RecomputeTimeS+tr.BackwardTimeS) + tr.AccumulateTimeS + tr.GradAllReduceExposedS + tr.OptimizerTimeS

	// Memory.
	mem, err := a.trainMemory(g, plans, trainable, need, opt, mixed, ck, accum > 1, nil)
	if err != nil {
		return err
	}
	tr.Memory = mem
	if a.tp != nil {
		// One GPU's memory: its share of the split weights, their
		// gradients and optimizer state (parallel.go); mem stays the
		// whole model's peak on one GPU, as peak_memory_bytes is.
		per, err := a.trainMemory(g, plans, trainable, need, opt, mixed, ck, accum > 1, a.tp.share)
		if err != nil {
			return err
		}
		tr.Memory = per
		a.tp.trainPeak = per.PeakBytes
		tr.Notes = append(tr.Notes, fmt.Sprintf("tensor-parallel over %d GPUs: train.memory is one GPU's (split weights, their gradients and optimizer state divided by %d); peak_memory_bytes is the whole model on one GPU", a.tp.n, a.tp.n))
	}

	if len(missing) > 0 {
		keys := make([]string, 0, len(missing))
		for k := range missing {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s (%d)", k, missing[k])
		}
		msg := "no backward model for " + strings.Join(parts, ", ") + ": their backward time and memory are not counted"
		a.warnf("training: %s", msg)
		tr.Notes = append(tr.Notes, msg)
	}
	if len(trainable) == 0 {
		a.warnf("training: the model has no floating-point weights: nothing to train")
	}
	a.warnInferenceExport(g)
	tr.Notes = append(tr.Notes, "passes that do not run under training: "+strings.Join(PassesNotForTraining, ", ")+" (BatchNormalization keeps its batch statistics)")

	a.dispatchStep(rep, tr, ck, len(trainable))
	t := &rep.Totals
	t.Train = tr
	// The step's energy: every kernel as often as it runs, and the idle
	// GPU while it waits on the host or on the exposed all-reduce.
	tr.WaitEnergyJ = a.gpu.IdleWatts * (tr.HostWaitS + tr.GradAllReduceExposedS)
	tr.StepEnergyJ = float64(accum)*(tr.ForwardEnergyJ+tr.RecomputeEnergyJ+tr.BackwardEnergyJ) +
		tr.AccumulateEnergyJ + tr.OptimizerEnergyJ + tr.WaitEnergyJ
	setTimeEnergy(t, tr.StepTimeS, tr.StepEnergyJ)
	t.PeakMemoryBytes = mem.PeakBytes
	return nil
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
// time and energy (stepKernel).
func (a *analyzer) priceBackward(n *ir.Node, k bwKernel) (timeS, energyJ float64) {
	var prec hwdb.Precision
	if n != nil {
		prec = a.precisionFor(n, k.Class)
	} else {
		name := a.opt.DType
		if name == "" {
			name = "fp32"
		}
		prec = perf.ResolvePrecision(a.gpu, perf.WantedPrecision(name, k.Class))
	}
	bytes := k.BytesRead + k.BytesWritten
	dram := a.backwardDRAM(n, k)
	pk := perf.Kernel{Class: k.Class, FLOPs: k.FLOPs, Bytes: bytes, Precision: prec,
		M: k.M, N: k.N, K: k.K, Batch: k.Batch, Steps: k.Steps, InputK: k.InputK,
		WorkingSet: bytes, Launches: k.Launches, Grad: k.Grad,
		Resident: true, DRAMBytes: dram}
	if n != nil {
		pk.ElemBytes = a.elemBytes(n)
	}
	if k.Conv != nil && n != nil {
		// A convolution's gradient, priced as calibrated on DeepBench's
		// backward rows (internal/calibrate/backward.go): the cheaper
		// algorithm is chosen at the default setting, then priced under
		// the report's cap like every step kernel.
		eb := a.elemBytes(n)
		ck, _ := perf.EstimateConvGrad(a.gpu, *k.Conv, k.Grad, prec, eb, eb, perf.PlanOptions())
		ck.Resident, ck.DRAMBytes = true, dram*ck.Bytes/max(bytes, 1)
		return a.stepKernel(ck)
	}
	if k.Class == perf.ClassRNN {
		pk.Launches = 1
	}
	return a.stepKernel(pk)
}

// trainableParams are the floating-point weights the rules read, in first
// use order: the parameters the optimizer updates.
func (a *analyzer) trainableParams() []*ir.Value {
	var out []*ir.Value
	for _, v := range a.paramOrder {
		if v.IsInitializer && v.DType.IsFloat() {
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
