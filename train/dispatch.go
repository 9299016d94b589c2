package train

import (
	"fmt"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/cost/report"
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

// dispatchStep prices the training step under the runtime profile's host
// dispatch (cost.PipelineTime): the host issues every kernel of
// the step in order, dispatch seconds each (PyTorch eager: the forward's
// ops from Python, the backward's from autograd's engine, taken at the
// same per-kernel cost), while the device runs them. The sequence is the
// forward (each node with its training-only work), the loss head, the
// recompute of checkpointed nodes, the backward in reverse node order,
// repeated for each micro-batch, then the gradient adds and the optimizer.
// When the host's issue is slower than the device, the device waits:
// Train.HostWaitS, added to the step. A profile with no dispatch (a CUDA
// graph replay of the step) leaves the step as the device sum.
func (s *step) dispatchStep() {
	rep, tr, ck, params := s.rep, s.tr, s.ck, len(s.trainable)
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
	var seq []report.NodeCost
	// name is the forward node's (its module scope prices the Python
	// around it: report.NodeDispatchS); the backward's kernels are issued
	// by autograd's engine, with no module code between them.
	kn := func(name string, timeS, launches float64) {
		if timeS > 0 || launches > 0 {
			seq = append(seq, report.NodeCost{Name: name, TimeS: timeS, Launches: launches})
		}
	}
	k := func(timeS, launches float64) { kn("", timeS, launches) }
	var fwdNodes, bwdNodes, recNodes float64
	for i := range rep.Nodes {
		n := &rep.Nodes[i]
		extra := 0.0
		if n.Backward != nil {
			extra = n.Backward.ForwardExtraS
		}
		fwdNodes += n.TimeS + extra
		if ck.recomputed(i) {
			recNodes += n.TimeS + extra
		}
		if n.Backward != nil {
			bwdNodes += n.Backward.TimeS
		}
	}
	micro := func() {
		for i := range rep.Nodes {
			n := &rep.Nodes[i]
			l := n.Launches
			if n.Backward != nil && n.Backward.ForwardExtraS > 0 && l <= 0 {
				l = 1
			}
			extra := 0.0
			if n.Backward != nil {
				extra = n.Backward.ForwardExtraS
			}
			kn(n.Name, n.TimeS+extra, l)
		}
		k(tr.ForwardTimeS-fwdNodes, 1) // the loss head's forward, if any
		for i := range rep.Nodes {
			if n := &rep.Nodes[i]; ck.recomputed(i) {
				k(n.TimeS, n.Launches)
			}
		}
		k(tr.RecomputeTimeS-recNodes, 0)
		k(tr.BackwardTimeS-bwdNodes, 1) // the loss head's backward
		for i := len(rep.Nodes) - 1; i >= 0; i-- {
			if b := rep.Nodes[i].Backward; b != nil {
				k(b.TimeS, b.Launches)
			}
		}
	}
	for m := 0; m < tr.GradAccum; m++ {
		micro()
		if m > 0 {
			k(tr.AccumulateTimeS/float64(tr.GradAccum-1), float64(params))
		}
	}
	k(tr.GradAllReduceExposedS, 0) // NCCL's wait, issued with the backward
	k(tr.OptimizerTimeS, tr.OptimizerLaunches)
	finish, issue, _ := cost.PipelineTime(seq, rt.DispatchS, rt.ModuleS)
	host := rt.CallS + issue
	step := cost.SteadyTime(finish, host)
	if step > device {
		tr.HostWaitS = step - device
		tr.StepTimeS = step
	}
	if ri != nil {
		ri.DeviceS, ri.HostS, ri.HostBound = device, host, host > finish
		ri.LatencyS = rt.CallS + finish
		ri.Notes = append(ri.Notes, fmt.Sprintf("training step: the host issues its %.0f kernels (forward, backward, optimizer) in %s vs the device's %s; the device waits %s (train.host_wait_s)",
			launchesOf(seq), cost.USText(issue), cost.USText(device), cost.USText(tr.HostWaitS)))
	}
}

func launchesOf(seq []report.NodeCost) float64 {
	var l float64
	for _, n := range seq {
		l += n.Launches
	}
	return l
}
