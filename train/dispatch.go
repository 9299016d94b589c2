package train

import (
	"fmt"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

// backwardAllReduces adds, under tensor parallelism, the backward
// counterpart of every forward all-reduce (cost/parallel.go): in Megatron's
// split each row-parallel GEMM's output all-reduce (the g operator) is
// paired with an all-reduce of the input gradient of the column-parallel
// GEMMs that open the same block (the f operator), of the same activation
// size. It is charged to the node whose forward all-reduce it pairs,
// on its backward, on the critical path like the forward's.
func (s *step) backwardAllReduces() {
	if s.f.GPUs() <= 1 {
		return
	}
	rep, tr := s.rep, s.tr
	for i := range rep.Nodes {
		n := &rep.Nodes[i]
		if n.CommunicationS <= 0 || n.Backward == nil {
			continue
		}
		n.Backward.TimeS += n.CommunicationS
		tr.BackwardTimeS += n.CommunicationS
		s.f.AddAllReduce(n.CommunicationS)
	}
}

// autogradEdges counts the gradient edges node n adds to the backward:
// one per input a gradient flows to (each occurrence; a weight's goes to
// its AccumulateGrad, or to autocast's cast of it). The engine's host
// work follows the edges more than the nodes
// (torch/csrc/autograd/engine.cpp, evaluate_function: each output of a
// node is validated, handed to its consumer's input buffer, summed there
// when it is not the first, and counted off its dependencies), and a
// node's backward formula makes one gradient per edge (a concatenation's
// backward one narrow per input): in PyTorch's own graphs ResNet-50 and
// a BERT have 1.04 and 1.05 edges per node, DenseNet-121, whose every
// layer concatenates all earlier ones, 1.67 (1,331 for 797 nodes;
// torch.autograd graph walk, torchvision 0.14).
func (s *step) autogradEdges(n *ir.Node) float64 {
	var c float64
	for _, in := range n.Inputs {
		if in != nil && s.needGrad(in) {
			c++
		}
	}
	return c
}

// dispatchStep prices the training step under the runtime profile's host
// dispatch: the host issues every kernel of the step in order while the
// device runs them (the pipeline of cost.PipelineTime, entry by entry
// with each entry's own host cost, stepHost), and where the host is
// slower the device waits: Train.HostWaitS, added to the step. The
// sequence (stepSequence) is kept on Train.Dispatch for the trace. A
// profile with no dispatch (a CUDA graph replay of the step) leaves the
// step as the device sum.
func (s *step) dispatchStep() {
	rep, tr := s.rep, s.tr
	rt := s.f.Runtime()
	ri := rep.Runtime
	if ri != nil {
		// The forward call's wait is not the step's: Train.HostWaitS is.
		ri.WaitS, ri.WaitEnergyJ = 0, 0
	}
	device := tr.StepTimeS
	if rt == nil || rt.DispatchS <= 0 {
		if ri != nil {
			ri.DeviceS, ri.HostS, ri.HostBound = device, rt.CallS, rt.CallS > device
			ri.LatencyS = rt.CallS + device
		}
		return
	}
	// The forward's calls pay op_call_scale as an inference call's do
	// (report.CallsScale: all but the first).
	scale := report.NodesCallsScale(rt.OpCallScale, s.rep.Nodes)
	seq := s.stepSequence(stepHost{dispatch: rt.DispatchS, module: rt.ModuleS, autograd: rt.AutogradS, param: rt.OptimParamS, cudnn: rt.CudnnS, scale: scale})
	tr.Dispatch = seq
	finish, issue := TrainPipeline(seq, rt.CallS)
	host := rt.CallS + issue
	step := cost.SteadyTime(finish, host)
	if step > device {
		tr.HostWaitS = step - device
		tr.StepTimeS = step
	}
	if ri != nil {
		// runtime.host_s is the host's work; issue also holds its wait
		// for the device at a sync.
		work := rt.CallS
		for _, e := range seq {
			work += e.HostS
			if e.Sync {
				work += rt.CallS
			}
		}
		ri.DeviceS, ri.HostS, ri.HostBound = device, work, host > finish
		ri.LatencyS = rt.CallS + finish
		ri.Notes = append(ri.Notes, fmt.Sprintf("training step: the host issues its %.0f kernels (forward %s, backward %s at %s per gradient edge, optimizer %s) in %s vs the device's %s; the device waits %s (train.host_wait_s)",
			launchesOf(seq), cost.USText(hostOf(seq, "forward")), cost.USText(hostOf(seq, "backward")), cost.USText(rt.AutogradS),
			cost.USText(hostOf(seq, "optimizer")), cost.USText(work-rt.CallS), cost.USText(device), cost.USText(tr.HostWaitS)))
	}
}

// stepHost are the host costs of an eager step (hwdb.Runtime): per
// kernel of a bare op, per module call, per gradient edge, per parameter
// tensor of the optimizer's Python loops, per backward cuDNN call, and
// the forward's calls by kind (scale: OpCallScale).
type stepHost struct{ dispatch, module, autograd, param, cudnn, scale float64 }

// call is the host time of a forward call of kind from a module's
// forward (the loss head's): its kind's cost and one module call, as
// report.NodeHosts prices the forward's nodes.
func (h stepHost) call(kind string) float64 {
	return report.HostCallS(h.dispatch, h.scale, kind) + report.ModuleCallS(h.module, h.scale)
}

// stepSequence is the step's host issue in order: the forward (each node
// with its training-only work: batch statistics, masks, autocast's weight
// casts, issued from inside the op at a bare op's dispatch), the loss
// head and the loss scaling, the recompute of checkpointed nodes, the
// backward in reverse node order (autograd's engine: its host work per
// gradient edge, a weight cast's own edge included, each kernel at a
// bare op's dispatch),
// repeated for each micro-batch, then the gradient adds, the exposed
// all-reduce, the gradient scaler's unscale, its found-inf read (the host
// waits for the device), the optimizer's Python loops, its foreach ops
// and the scale update.
func (s *step) stepSequence(h stepHost) []report.TrainDispatch {
	rep, tr := s.rep, s.tr
	var seq []report.TrainDispatch
	add := func(e report.TrainDispatch) {
		if e.DeviceS > 0 || e.Launches > 0 || e.HostS > 0 {
			seq = append(seq, e)
		}
	}
	micro := func() {
		for i := range rep.Nodes {
			add(s.forwardEntry("forward", i, h))
		}
		if s.lossFwdS > 0 {
			add(report.TrainDispatch{Phase: "forward", Node: -1, Name: "loss head (forward)", DeviceS: s.lossFwdS, Launches: 1, HostS: h.call("softmax")})
		}
		if s.scaler.on {
			add(report.TrainDispatch{Phase: "forward", Node: -1, Name: "loss scaling (GradScaler)", DeviceS: s.scaler.scaleS, Launches: 1, HostS: h.dispatch})
		}
		for i := range rep.Nodes {
			if s.ck.recomputed(i) {
				add(s.forwardEntry("recompute", i, h))
			}
		}
		if s.lossBwdS > 0 {
			add(report.TrainDispatch{Phase: "backward", Node: -1, Name: "loss head (backward)", DeviceS: s.lossBwdS, Launches: 1, HostS: h.autograd + h.dispatch})
		}
		for i := len(rep.Nodes) - 1; i >= 0; i-- {
			e := report.TrainDispatch{Phase: "backward", Node: i, Name: nodeName(&rep.Nodes[i]) + " (backward)", HostS: s.agEdges[i]*h.autograd + s.convCalls[i]*h.cudnn}
			if b := rep.Nodes[i].Backward; b != nil {
				e.DeviceS, e.Launches = b.TimeS, b.Launches
				e.HostS += (b.Launches-b.LibraryLaunches)*h.dispatch + b.LibraryLaunches*report.LibraryLaunchHost(h.dispatch)
			}
			add(e)
		}
	}
	params := float64(len(s.trainable))
	for m := 0; m < tr.GradAccum; m++ {
		micro()
		if m > 0 {
			add(report.TrainDispatch{Phase: "accumulate", Node: -1, Name: "gradient accumulation", DeviceS: tr.AccumulateTimeS / float64(tr.GradAccum-1), Launches: params, HostS: params * h.dispatch})
		}
	}
	add(report.TrainDispatch{Phase: "communication", Node: -1, Name: "gradient all-reduce (exposed)", DeviceS: tr.GradAllReduceExposedS})
	return s.optimizerSequence(seq, h, params)
}

// optimizerSequence appends the scaler and the optimizer to seq.
func (s *step) optimizerSequence(seq []report.TrainDispatch, h stepHost, params float64) []report.TrainDispatch {
	tr, g := s.tr, s.scaler
	optS, optL := tr.OptimizerTimeS, tr.OptimizerLaunches
	sync := false
	if g.on {
		seq = append(seq, report.TrainDispatch{Phase: "optimizer", Node: -1, Name: "unscale and inf check (GradScaler)", DeviceS: g.unscaleS, Launches: g.unscaleL, HostS: g.unscaleL * h.dispatch})
		optS -= g.scaleS + g.unscaleS + g.updateS
		optL -= g.launches()
		sync = true
	}
	if params > 0 {
		seq = append(seq, report.TrainDispatch{Phase: "optimizer", Node: -1, Name: "optimizer Python (zero_grad, state, per parameter)", HostS: params * h.param, Sync: sync})
	}
	seq = append(seq, report.TrainDispatch{Phase: "optimizer", Node: -1, Name: "optimizer step (" + tr.Optimizer + ")", DeviceS: optS, Launches: optL, HostS: optL * h.dispatch})
	if g.on {
		seq = append(seq, report.TrainDispatch{Phase: "optimizer", Node: -1, Name: "scale update (GradScaler)", DeviceS: g.updateS, Launches: 1, HostS: h.dispatch})
	}
	return seq
}

// forwardEntry is node i's forward in the step: its call as the
// forward priced it (report.NodeHosts: its kind, its module calls) and
// its training-only kernels at a bare op's.
func (s *step) forwardEntry(phase string, i int, h stepHost) report.TrainDispatch {
	n := s.rep.Nodes[i]
	extraL := s.fwdLaunches[i]
	host := n.HostS + extraL*h.dispatch
	return report.TrainDispatch{Phase: phase, Node: i, Name: nodeName(&n), DeviceS: n.TimeS + s.forwardExtra(i), Launches: n.Launches + extraL, HostS: host}
}

func (s *step) forwardExtra(i int) float64 {
	if b := s.rep.Nodes[i].Backward; b != nil {
		return b.ForwardExtraS
	}
	return 0
}

func nodeName(n *report.NodeCost) string {
	if n.Name != "" {
		return n.Name
	}
	return n.OpType
}

// TrainPipeline is a training step's host/device pipeline over its
// dispatch sequence (cost.PipelineTime's, with each entry's own host
// cost): an entry's kernels start when the host has issued the first of
// them and the device has finished the previous entry, and the last
// cannot finish before the host has issued it; an entry marked Sync
// first waits for the device to drain, and the host's read costs syncS
// (the runtime's synchronize, call_us). It returns when the device
// finishes and when the host has issued everything.
func TrainPipeline(seq []report.TrainDispatch, syncS float64) (finish, issued float64) {
	for _, e := range seq {
		if e.Sync {
			issued = max(issued, finish) + syncS
		}
		if e.Launches <= 0 {
			issued += e.HostS
			finish += e.DeviceS
			continue
		}
		d, tau := e.HostS/e.Launches, e.DeviceS/e.Launches
		finish = max(finish+e.DeviceS, issued+d+e.DeviceS, issued+e.HostS+tau)
		issued += e.HostS
	}
	return finish, issued
}

func launchesOf(seq []report.TrainDispatch) float64 {
	var l float64
	for _, e := range seq {
		l += e.Launches
	}
	return l
}

func hostOf(seq []report.TrainDispatch, phase string) float64 {
	var h float64
	for _, e := range seq {
		if e.Phase == phase {
			h += e.HostS
		}
	}
	return h
}
