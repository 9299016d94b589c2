package train

import (
	"fmt"
	"math"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

// The kernels mixed precision adds to an eager PyTorch step (torch.amp,
// what a training step under --dtype fp16/bf16 prices; memory_amp.go
// has its memory): the parameters stay fp32 and are the master weights;
// autocast casts each weight an fp16-listed op reads (convolutions,
// linear layers, matmuls) to fp16 once per forward, its cache holding the
// copy for the rest of the forward (torch.amp docs, "CUDA Ops that can
// autocast to float16"), and the cast's backward (ToCopyBackward0) turns
// the fp16 weight gradient back into the fp32 .grad the optimizer reads.
// Under fp16 a GradScaler scales the loss, then unscales and checks
// every gradient for inf/NaN before the optimizer and reads the found-inf
// flag on the host (.item(), a synchronisation; torch/amp/grad_scaler.py).

// castKernels are the autocast cast of weight v (fp32 → the compute
// dtype: read 4 bytes, write the copy per element) and its backward (the
// fp16 gradient to fp32): one elementwise launch each, no FLOPs (a
// conversion, as the Cast rule counts it: cost/rules_elementwise.go).
func (s *step) castKernels(v *ir.Value) (fwd, bwd bwKernel) {
	n, half := s.c.Numel(v), s.c.Bytes(v)
	fwd = bwKernel{Name: "autocast-cast", Class: perf.ClassElementwise, BytesRead: 4 * n, BytesWritten: half, Launches: 1}
	bwd = bwKernel{Name: "cast-bwd", Class: perf.ClassElementwise, BytesRead: half, BytesWritten: 4 * n, Launches: 1}
	return fwd, bwd
}

// autocastCasts adds to node i's plan the casts of the weights it reads
// under autocast, each weight once per forward; it returns how many it
// added (each cast is one more autograd node in the backward).
func (s *step) autocastCasts(i int, n *ir.Node, p *backwardPlan) int {
	if !s.mixed || !s.f.Estimate(i).Class.GEMMLike() {
		return 0
	}
	if s.cast == nil {
		s.cast = map[*ir.Value]bool{}
	}
	added := 0
	for _, in := range n.Inputs {
		if in == nil || !in.IsInitializer || !in.DType.IsFloat() || !s.needGrad(in) || s.cast[in] {
			continue
		}
		s.cast[in] = true
		f, b := s.castKernels(in)
		p.Forward = append(p.Forward, f)
		p.Kernels = append(p.Kernels, b)
		added++
	}
	return added
}

// gradScaler is the fp16 GradScaler's work in one step: the loss scaling
// before backward, then the unscale and inf check of every gradient
// before the optimizer and the scale update after it.
type gradScaler struct {
	on                 bool
	scaleS, scaleJ     float64 // scaler.scale(loss): one multiply
	unscaleS, unscaleJ float64
	unscaleL           float64
	updateS, updateJ   float64 // _amp_update_scale_: one launch
	note               string
}

// scalerTensorsPerLaunch is multi_tensor_apply's tensors per launch for
// one tensor list (depth_to_max_tensors[0] = 110 in
// aten/src/ATen/native/cuda/MultiTensorApply.cuh), the depth of
// _amp_foreach_non_finite_check_and_unscale_.
const scalerTensorsPerLaunch = 110

// scalerSmallLaunches are the scaler's small kernels before the unscale
// (torch/amp/grad_scaler.py _unscale_grads_: the scale's reciprocal in
// double, its cast to float, and the found_inf buffer filled with zero).
const scalerSmallLaunches = 3

// priceGradScaler prices the fp16 GradScaler; bf16 runs without one
// (its range is fp32's; the torch.amp docs scale fp16 gradients only).
func (s *step) priceGradScaler() gradScaler {
	var g gradScaler
	if !s.mixed || s.f.DType() != ir.Float16 || len(s.trainable) == 0 {
		return g
	}
	g.on = true
	tiny := bwKernel{Name: "grad-scaler", Class: perf.ClassElementwise, FLOPs: 1, BytesRead: 4, BytesWritten: 4, Launches: 1}
	g.scaleS, g.scaleJ = s.priceBackward(nil, tiny)
	g.updateS, g.updateJ = s.priceBackward(nil, tiny)
	var elems float64
	for _, v := range s.trainable {
		elems += s.f.ParamShare(v) * s.c.Numel(v)
	}
	// Each fp32 gradient is read, checked and multiplied by 1/scale in
	// place: 8 bytes and 2 FLOPs per element.
	launches := math.Max(math.Ceil(float64(len(s.trainable))/scalerTensorsPerLaunch), math.Ceil(elems/multiTensorLaunchElems))
	t, e := s.priceBackward(nil, bwKernel{Name: "unscale", Class: perf.ClassElementwise, FLOPs: 2 * elems, BytesRead: 4 * elems, BytesWritten: 4 * elems, Launches: launches})
	small := bwKernel{Name: "scaler-small", Class: perf.ClassElementwise, FLOPs: scalerSmallLaunches, BytesRead: 4 * scalerSmallLaunches, BytesWritten: 4 * scalerSmallLaunches, Launches: scalerSmallLaunches}
	st, se := s.priceBackward(nil, small)
	g.unscaleS, g.unscaleJ, g.unscaleL = t+st, e+se, launches+scalerSmallLaunches
	g.note = fmt.Sprintf("fp16 GradScaler (counted with the optimizer): loss scaling (1 launch), unscale and inf check of every gradient (%.0f launches, %s), the host's read of found_inf (a synchronisation before the optimizer) and the scale update (1 launch)", g.unscaleL, cost.USText(g.unscaleS))
	return g
}

// launches is the scaler's kernels in one step.
func (g gradScaler) launches() float64 {
	if !g.on {
		return 0
	}
	return 2 + g.unscaleL
}

// fanOutGrads adds autograd's gradient sums: a value read by k nodes
// whose backward returns a gradient for it gets k gradients, which the
// engine adds into one buffer (torch/csrc/autograd/input_buffer.cpp,
// InputBuffer::add) before the producer's backward reads it: k−1 adds of
// the value's size (two reads and a write per element), charged to the
// producer's backward, which they precede; the engine issues them
// without an autograd node of their own.
func (s *step) fanOutGrads() {
	producer := map[*ir.Value]int{}
	for i, n := range s.g.Nodes {
		for _, o := range n.Outputs {
			if o != nil {
				producer[o] = i
			}
		}
	}
	uses := map[*ir.Value]int{}
	var order []*ir.Value
	for i, n := range s.g.Nodes {
		if len(s.plans[i].Kernels) == 0 && !s.plans[i].Views {
			continue
		}
		for _, in := range n.Inputs {
			if in == nil || in.IsInitializer || !s.needGrad(in) {
				continue
			}
			if uses[in] == 0 {
				order = append(order, in)
			}
			uses[in]++
		}
	}
	for _, v := range order {
		pi, ok := producer[v]
		if uses[v] < 2 || !ok {
			continue
		}
		s.addGradSum(pi, v, float64(uses[v]-1))
	}
}

// addGradSum prices adds sums of v's gradient onto producer pi's
// backward row.
func (s *step) addGradSum(pi int, v *ir.Value, adds float64) {
	b := s.c.Bytes(v)
	kern := bwKernel{Name: "grad-sum", Class: perf.ClassElementwise, FLOPs: adds * s.c.Numel(v),
		BytesRead: 2 * adds * b, BytesWritten: adds * b, Launches: adds}
	t, e := s.priceBackward(s.g.Nodes[pi], kern)
	nc := &s.rep.Nodes[pi]
	if nc.Backward == nil {
		nc.Backward = &report.Backward{Kernels: "grad-sum"}
	} else {
		nc.Backward.Kernels += "+grad-sum"
	}
	nb := nc.Backward
	nb.TimeS += t
	nb.EnergyJ += e
	nb.Launches += adds
	nb.FLOPs += kern.FLOPs
	nb.BytesRead += kern.BytesRead
	nb.BytesWritten += kern.BytesWritten
	s.tr.BackwardTimeS += t
	s.tr.BackwardEnergyJ += e
	s.tr.BackwardFLOPs += kern.FLOPs
}

// autocastWiden adds to node i's plan what running an fp32-listed op
// (cost.AutocastFP32: torch.amp's fp32 list, which inference prices too) in
// fp32 costs over the fp16 graph's pricing: in the forward the cast of
// its first input up and of its output down (one launch each) and the
// op's own doubled traffic (the same kernel, so no launch); in the
// backward the mirror image (the output gradient cast up, the op's
// backward at fp32, the input gradient cast down). It returns the casts'
// autograd nodes (each cast is one).
func (s *step) autocastWiden(i int, n *ir.Node, p *backwardPlan) int {
	if !s.mixed || !cost.AutocastFP32(ir.QualifiedOp(n.Domain, n.OpType)) {
		return 0
	}
	x, y := n.In(0), n.Out(0)
	if x == nil || y == nil {
		return 0
	}
	hx, hy := s.c.Bytes(x), s.c.Bytes(y)
	// Casts are conversions: no FLOPs, as the Cast rule counts them.
	up := func(name string, half float64) bwKernel {
		return bwKernel{Name: name, Class: perf.ClassElementwise, BytesRead: half, BytesWritten: 2 * half, Launches: 1}
	}
	down := func(name string, half float64) bwKernel {
		return bwKernel{Name: name, Class: perf.ClassElementwise, BytesRead: 2 * half, BytesWritten: half, Launches: 1}
	}
	// The op's reads and writes at 4 bytes where the graph priced 2: the
	// difference, carried by the op's own kernel (no launch of its own).
	wider := bwKernel{Name: "fp32-traffic", Class: perf.ClassElementwise, BytesRead: hx, BytesWritten: hy}
	p.Forward = append(p.Forward, up("autocast-up", hx), wider, down("autocast-down", hy))
	if len(p.Kernels) == 0 {
		return 0
	}
	bw := bwKernel{Name: "fp32-traffic-bwd", Class: perf.ClassElementwise, BytesRead: hx + hy, BytesWritten: hx}
	p.Kernels = append(p.Kernels, up("cast-bwd", hy), bw, down("cast-bwd", hx))
	return 2
}
