package train

import (
	"fmt"
	"math"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
)

// optimizer is one update rule's cost per parameter element. All state
// and the master weights are fp32 (4 bytes), as PyTorch keeps them even
// under mixed precision.
type optimizer struct {
	name string
	// flops per parameter element of one update.
	flops float64
	// states is the number of fp32 state tensors the size of the
	// parameter (momentum: 1; Adam: exp_avg and exp_avg_sq). Adafactor's
	// factored second moment is priced by factoredState instead.
	states float64
	// factored marks Adafactor: the second moment of a matrix is a row
	// and a column vector, no first moment (beta1 = None, its default).
	factored bool
	// depth is the number of tensor lists the multi-tensor kernel walks
	// (PyTorch's foreach/fused kernels: params, grads, states).
	depth int
	// foreach lists the multi-tensor ops of one step as PyTorch 2.x's
	// default (foreach) implementation issues them, each a pass over
	// every parameter; nil is one fused pass (Adafactor).
	foreach []foreachOp
}

// foreachOp is one torch._foreach_* call of an optimizer step: the
// fp32 tensors of parameter size it reads and writes per element.
type foreachOp struct {
	name          string
	reads, writes float64
}

// The foreach ops of each optimizer's default implementation
// (torch/optim/sgd.py _multi_tensor_sgd, adam.py _multi_tensor_adam with
// capturable=False: the step counters and bias corrections stay on the
// CPU; adamw.py adds the decoupled decay; LAMB is apex's FusedLAMB,
// csrc/multi_tensor_lamb.cu: the gradient norm, stage 1, the weight and
// update norms, stage 2). Each op reads and writes its lists whole, so
// the unfused step moves several times the bytes a fused kernel would.
var (
	sgdOps      = []foreachOp{{"add_(params, grads)", 2, 1}}
	momentumOps = []foreachOp{{"mul_(bufs)", 1, 1}, {"add_(bufs, grads)", 2, 1}, {"add_(params, bufs)", 2, 1}}
	adamOps     = []foreachOp{{"lerp_(exp_avgs, grads)", 2, 1}, {"mul_(exp_avg_sqs)", 1, 1},
		{"addcmul_(exp_avg_sqs, grads, grads)", 3, 1}, {"sqrt(exp_avg_sqs)", 1, 1}, {"div_(sqrt)", 1, 1},
		{"add_(sqrt, eps)", 1, 1}, {"addcdiv_(params, exp_avgs, sqrt)", 3, 1}}
	adamwOps = append([]foreachOp{{"mul_(params, 1-lr*wd)", 1, 1}}, adamOps...)
	lambOps  = []foreachOp{{"l2norm(grads)", 1, 0}, {"lamb stage 1", 4, 3}, {"l2norm(params)", 1, 0},
		{"l2norm(updates)", 1, 0}, {"lamb stage 2", 2, 1}}
)

// The FLOP counts spell out each update (g gradient, w weight, lr rate):
//
//	sgd:      w -= lr·g                                    2
//	momentum: v = μ·v + g; w -= lr·v                       4
//	adam:     m = β1·m + (1−β1)·g (3); v = β2·v + (1−β2)·g² (4);
//	          denom = √v / √bc2 + ε (3); w -= (lr/bc1)·m / denom (3)   13
//	adamw:    adam + decoupled decay w -= lr·λ·w (2)       15
//	lamb:     adam's direction + λ·w (2), ‖w‖² and ‖u‖² (4),
//	          trust-ratio scale and update (2)            21
//	adafactor: g² (1), row/column means of g² (2), v̂ = r·cᵀ/Σr (2),
//	          u = g/√v̂ (2), RMS(u) clip (3), w -= lr·u (2) 12
var optimizers = []optimizer{
	{name: "sgd", flops: 2, states: 0, depth: 2, foreach: sgdOps},
	{name: "momentum", flops: 4, states: 1, depth: 3, foreach: momentumOps},
	{name: "adam", flops: 13, states: 2, depth: 4, foreach: adamOps},
	{name: "adamw", flops: 15, states: 2, depth: 4, foreach: adamwOps},
	{name: "lamb", flops: 21, states: 2, depth: 4, foreach: lambOps},
	{name: "adafactor", flops: 12, factored: true, depth: 3},
}

// Optimizers lists the --optimizer values.
func Optimizers() []string {
	out := make([]string, len(optimizers))
	for i, o := range optimizers {
		out[i] = o.name
	}
	return out
}

func lookupOptimizer(name string) (optimizer, bool) {
	for _, o := range optimizers {
		if o.name == name {
			return o, true
		}
	}
	return optimizer{}, false
}

// maxTensorsPerLaunch is PyTorch's multi_tensor_apply limit on the tensors
// of one list per launch, by list depth (depth_to_max_tensors in
// aten/src/ATen/native/cuda/MultiTensorApply.cuh: 110, 64, 48, 36, 30);
// a launch also covers at most 320 blocks of 65536-element chunks.
var maxTensorsPerLaunch = [...]float64{110, 64, 48, 36, 30}

const multiTensorLaunchElems = 320 * 65536

// stateElems is the fp32 state elements of one parameter tensor.
func (o optimizer) stateElems(v *ir.Value, numel float64) float64 {
	if !o.factored {
		return o.states * numel
	}
	// Adafactor: a matrix [.., r, c] keeps r + c per leading slice.
	d := v.Shape.Dims
	if len(d) < 2 {
		return numel
	}
	r, cc := d[len(d)-2].Value, d[len(d)-1].Value
	if !d[len(d)-2].IsKnown() || !d[len(d)-1].IsKnown() || r <= 0 || cc <= 0 {
		return numel
	}
	lead := numel / (float64(r) * float64(cc))
	return lead * float64(r+cc)
}

// optStep is the priced optimizer update.
type optStep struct {
	flops, timeS, launches float64
	energyJ                float64
	stateBytes             float64
	// ops is the foreach calls the host makes (dispatch.go).
	ops  float64
	note string
}

// optimizerStep prices the update of every trainable parameter as
// PyTorch's default multi-tensor (foreach) implementation runs it: each
// foreach op of the optimizer is its own pass over every parameter (its
// launch groups of multi_tensor_apply), reading and writing fp32
// tensors. Under torch.amp the parameters are the fp32 master weights and
// their .grad is fp32 (autocast's cast backward writes it, amp.go), so
// the update touches no fp16 copy: autocast re-casts the weights in the
// next forward.
func (st *step) optimizerStep() optStep {
	o, params := st.opt, st.trainable
	c := st.f.Sizer()
	var s optStep
	// Under tensor parallelism one GPU updates its share of the split
	// weights (time); the FLOPs stay the whole model's, as every FLOP
	// count of the report does.
	var elems, shareElems, stateElems float64
	for _, v := range params {
		f := st.f.ParamShare(v)
		n := f * c.Numel(v)
		se := o.stateElems(v, n)
		elems += c.Numel(v)
		shareElems += n
		stateElems += se
		s.stateBytes += 4 * se
	}
	s.flops = float64(o.flops) * elems
	if len(params) == 0 {
		s.note = "optimizer " + o.name + ": no trainable parameters"
		return s
	}
	ops := o.foreach
	var bytes float64
	if ops == nil {
		// One fused pass: read w, g and the state; write w and the state.
		bytes = 4*shareElems*3 + 8*stateElems
		ops = []foreachOp{{name: o.name, reads: 2, writes: 1}}
	} else {
		for _, op := range ops {
			bytes += 4 * shareElems * (op.reads + op.writes)
		}
	}
	depth := min(max(o.depth, 1), len(maxTensorsPerLaunch))
	perOp := math.Max(math.Ceil(float64(len(params))/maxTensorsPerLaunch[depth-1]), math.Ceil(shareElems/multiTensorLaunchElems))
	s.launches = perOp * float64(len(ops))
	s.ops = float64(len(ops))
	prec := perf.ResolvePrecision(st.f.GPU(), perf.WantedPrecision("fp32", perf.ClassElementwise))
	s.timeS, s.energyJ = st.f.PriceKernel(perf.Kernel{Class: perf.ClassElementwise, FLOPs: float64(o.flops) * shareElems, Bytes: bytes,
		Precision: prec, WorkingSet: bytes / float64(len(ops)), Launches: s.launches,
		// Master weights, gradients and optimizer state stream from and
		// back to DRAM: each op walks lists far larger than L2.
		Resident: true, DRAMBytes: bytes})
	s.note = fmt.Sprintf("optimizer %s: %.0f FLOPs and %.0f bytes per parameter element over %d foreach ops (PyTorch's default multi-tensor implementation): %.0f launches for %d parameter tensors",
		o.name, o.flops, bytes/math.Max(shareElems, 1), len(ops), s.launches, len(params))
	return s
}

// accumulateGrads prices gradient accumulation over k micro-batches: from
// the second micro-batch on, autograd's AccumulateGrad adds each new
// parameter gradient into the existing .grad in place (grad += new: one
// FLOP, two reads and a write per element, one launch per parameter
// tensor), k−1 times per optimizer step.
func (s *step) accumulateGrads(k int) (timeS, energyJ float64, note string) {
	c := s.f.Sizer()
	params := s.trainable
	var elems, bytes float64
	for _, v := range params {
		elems += c.Numel(v)
		bytes += 3 * c.Bytes(v)
	}
	kt, ke := s.priceBackward(nil, bwKernel{Name: "accumulate-grad", Class: perf.ClassElementwise, FLOPs: elems,
		BytesRead: 2 * bytes / 3, BytesWritten: bytes / 3, Launches: float64(len(params))})
	t := float64(k-1) * kt
	return t, float64(k-1) * ke, fmt.Sprintf("gradient accumulation: %d micro-batches per optimizer step (effective batch %d × the graph's batch); forward and backward run %d times, the %d in-place gradient adds take %s, the optimizer runs once; memory is one micro-batch's plus the gradient buffer held across micro-batches", k, k, k, k-1, cost.USText(t))
}
