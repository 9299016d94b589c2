package cost

import (
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
)

// Training is a training-step model (package train implements it). The
// cost model holds only this hook: Analyze runs the step after the
// forward's pricing and before the passes that read its results (the
// tensor-parallel totals, warnings, sanitising, fit), which is why the
// step is called from here rather than applied to a finished report.
type Training interface {
	// DefaultRuntime names the execution profile the step runs under
	// when the caller names none.
	DefaultRuntime() string
	// Step adds the training step to the forward analysis f.
	Step(f *Forward) error
}

// Forward is the forward analysis a training step builds on, with the
// pricing it must share so that a step's kernels answer to the same
// runtime, power setting, residency and tensor parallelism as the
// forward's nodes. Its methods are the whole surface package train sees
// of the analyzer.
type Forward struct {
	a   *analyzer
	g   *ir.Graph
	rep *report.Report
	gc  *graphCost
}

// Graph is the planned graph the forward priced.
func (f *Forward) Graph() *ir.Graph { return f.g }

// Report is the forward report the step adds its backward and totals to.
func (f *Forward) Report() *report.Report { return f.rep }

// Estimate is node i's forward estimate: the backward rules derive their
// kernels from the forward's GEMM view and counts.
func (f *Forward) Estimate(i int) NodeEstimate { return f.gc.ests[i] }

// Sums are the forward pass's time, energy and FLOPs, which the step
// repeats per micro-batch.
func (f *Forward) Sums() (timeS, energyJ, flops float64) {
	return f.gc.agg.TimeS, f.gc.agg.EnergyJ, f.gc.est.FLOPs
}

// DType is the storage dtype float tensors are costed at (Undefined: the
// model's own), which gradients, optimizer reads and saved tensors share.
func (f *Forward) DType() ir.DType { return f.a.dtype }

// Sizer sizes tensors at DType without warnings: the forward already
// warned about every unknown shape once.
func (f *Forward) Sizer() *RuleCtx { return &RuleCtx{DType: f.a.dtype, unknown: true} }

// GPU is the device the report prices.
func (f *Forward) GPU() *hwdb.GPU { return f.a.gpu }

// Runtime is the execution profile (dispatch, context, workspace) the
// report prices under.
func (f *Forward) Runtime() *hwdb.Runtime { return f.a.runtime }

// Params are the initializers the rules read, in first-use order: the
// candidates for training.
func (f *Forward) Params() []*ir.Value { return f.a.paramOrder }

// TiedCopy reports whether param v is the file's transposed copy of an
// embedding table the forward also reads (a tied LM head): one parameter
// in the framework, with one gradient and one optimizer state.
func (f *Forward) TiedCopy(v *ir.Value) bool { return f.a.tiedCopy(v) }

// Warnf adds a report warning, in order with the forward's.
func (f *Forward) Warnf(format string, args ...any) { f.a.warnf(format, args...) }

// Precision is the precision a kernel of class cl runs at for node n, or,
// for a step-wide kernel with no node (n nil: the loss head, the
// optimizer's adds), at the report's compute dtype.
func (f *Forward) Precision(n *ir.Node, cl perf.KernelClass) hwdb.Precision {
	if n != nil {
		return f.a.precisionFor(n, cl)
	}
	name := f.a.opt.DType
	if name == "" {
		name = "fp32"
	}
	return perf.ResolvePrecision(f.a.gpu, perf.WantedPrecision(name, cl))
}

// ElemBytes is node n's operand element size as its rule costs it, which
// the gradient kernels of n read and write at.
func (f *Forward) ElemBytes(n *ir.Node) float64 { return f.a.elemBytes(n) }

// OutBytes is the size of n's first output as costed: the incoming
// gradient of n's backward, still in L2 when it runs.
func (f *Forward) OutBytes(n *ir.Node) float64 { return f.a.outBytes(n) }

// PriceKernel prices a training-step kernel that is not a forward node (a
// backward kernel, the loss head, the optimizer update) exactly as the
// forward's nodes are priced (analyze.go): the runtime profile's kernel
// gap, the report's power cap or clock lock (perf.UnderControl; at the
// default setting it is perf.EstimateKernel), and under tensor
// parallelism a GEMM-like kernel's share of one GPU (parallel.go), so
// that a step's time and energy answer to the same setting. It returns
// the kernel's time and energy, cleaned like a node's.
func (f *Forward) PriceKernel(k perf.Kernel) (timeS, energyJ float64) {
	a := f.a
	if a.tp != nil && k.Class.GEMMLike() {
		a.tp.shardKernel(&k)
	}
	pk := a.underControl(k)
	timeS, _ = clean(pk.TimeS)
	energyJ, _ = clean(pk.EnergyJ())
	return timeS, energyJ
}

// SetTotals replaces the report's time and energy (and the power and EDP
// derived from them) with the step's: a training report's totals are one
// step.
func (f *Forward) SetTotals(timeS, energyJ float64) { setTimeEnergy(&f.rep.Totals, timeS, energyJ) }

// GPUs is the tensor-parallel degree, 1 on one GPU: the step's memory is
// then one GPU's.
func (f *Forward) GPUs() int {
	if f.a.tp == nil {
		return 1
	}
	return f.a.tp.n
}

// ParamShare is the fraction of parameter v one GPU holds under tensor
// parallelism (1 on one GPU): its gradient and optimizer state split with
// it.
func (f *Forward) ParamShare(v *ir.Value) float64 {
	if f.a.tp == nil {
		return 1
	}
	return f.a.tp.share(v)
}

// AddAllReduce counts one backward all-reduce of s seconds in the
// tensor-parallel communication totals, beside the forward's.
func (f *Forward) AddAllReduce(s float64) {
	f.a.tp.commS += s
	f.a.tp.reduces++
}

// SetPerGPUPeak records one GPU's training peak for the tensor-parallel
// totals (per_gpu_peak_memory_bytes).
func (f *Forward) SetPerGPUPeak(bytes float64) { f.a.tp.trainPeak = bytes }

// GateInput is FusedGemm's gate operand slot, whose gradient a fused
// epilogue's backward computes.
const GateInput = gateInput

// SteadyTime is a call's pace from its finish and the host's issue
// (runtime.go), so that a training step and an inference call agree.
func SteadyTime(finish, host float64) float64 { return steadyTime(finish, host) }

// USText prints seconds as every note of the report does.
func USText(s float64) string { return usText(s) }

// ClampInt converts a float count to a GEMM-view dimension as the rules
// do, so that the backward's views match the forward's.
func ClampInt(f float64) int64 { return clampInt(f) }

// ElemBytes is the storage size of one element of v as costed, which the
// backward rules size saved tensors and gradients at.
func (c *RuleCtx) ElemBytes(v *ir.Value) float64 { return c.elemBytes(v) }

// setTimeEnergy sets a report's total time and energy and the figures
// derived from them: average power = energy / time and EDP = energy × time.
func setTimeEnergy(t *report.Totals, timeS, energyJ float64) {
	t.TimeS, t.EnergyJ = timeS, energyJ
	t.AvgPowerW = 0
	if timeS > 0 {
		t.AvgPowerW = energyJ / timeS
	}
	t.EDPJS = energyJ * timeS
}

// underControl prices kernel k with the report's runtime profile (kernel
// gap) under its clock lock: the one pricing of forward nodes (analyze.go)
// and training-step kernels (Forward.PriceKernel). A power cap reaches it
// as the lock the run settles at (powercap.go).
func (a *analyzer) underControl(k perf.Kernel) perf.PoweredKernel {
	return perf.UnderControl(a.gpu, k, a.planOptions(), a.opt.Power)
}

// planOptions are the options a node's kernels are priced with: the
// committed parameters, in plan, under the report's runtime.
func (a *analyzer) planOptions() perf.Options {
	po := perf.PlanOptions()
	po.Runtime = a.runtime
	return po
}

// libraryHelpers counts, among a GEMM-like node's launches, the kernels
// its library launches around the one the time model plans for it
// (perf.GEMMPlan.Helpers: cuBLAS's largek zeroing and epilogue) and
// onnxruntime's bias pass (perf.Kernel.BiasPassBytes), whose time the
// kernel's already holds. They are issued inside the node's own call:
// no host time of their own (report.NodeHosts).
func (a *analyzer) libraryHelpers(nc *report.NodeCost, est *NodeEstimate, k perf.Kernel) {
	var n int64
	if pl, ok := perf.ChooseGEMM(a.gpu, k, a.planOptions()); ok {
		n = pl.Helpers
	}
	if k.BiasPassBytes > 0 {
		n++ // its host work is in the node's dispatch
	}
	if n <= 0 {
		return
	}
	est.Launches += float64(n)
	nc.Launches = est.Launches
	nc.LibraryLaunches += float64(n)
	nc.HelperLaunches += float64(n)
}
