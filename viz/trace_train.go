package viz

import (
	"math"

	"github.com/onnxcost/onnxcost/cost/report"
)

// trainHost draws a training step under a runtime that dispatches from
// the host from the step's own dispatch sequence (Train.Dispatch, built
// by train/dispatch.go, which prices the step with it): entry by entry,
// the host track gets one B/E dispatch slice per kernel the stream draws
// (host-only work, such as the optimizer's Python loop or an autograd
// node that launches nothing, one slice; the gradient scaler's found-inf
// read a "wait" slice until the device drains), each kernel slice a flow
// from its dispatch, and the device's waits for the host "idle" events
// before the kernels they delay, replaying train.TrainPipeline. Phase
// slices enclose each run of one phase. A kernel-less entry's device
// time (the exposed all-reduce) is one lumped event, as is a forward
// node's all-reduce under tensor parallelism (the recompute's stays in
// its kernels). The stream ends
// at step_time_s (the host's tail, if any, one closing idle event).
func (s *stream) trainHost(r *report.Report, c Ceilings) {
	tr := r.Totals.Train
	syncS := r.Runtime.CallS
	var issued, finish float64 // seconds since the first issue
	phase, phaseStart := "", 0.0
	for _, e := range tr.Dispatch {
		if ph := trainPhaseName(e.Phase); ph != phase {
			if phase != "" {
				s.phase(phase, phaseStart)
			}
			phase, phaseStart = ph, s.t
		}
		if e.Sync {
			from := issued
			issued = max(issued, finish) + syncS
			s.be("wait: device drains (GradScaler's found_inf read)", "host", TraceHostTID, from*1e6, issued*1e6, hostArgs{Bound: "device"})
		}
		if e.Launches <= 0 {
			if e.HostS > 0 {
				s.be("host: "+e.Name, "host", TraceHostTID, issued*1e6, (issued+e.HostS)*1e6, hostArgs{DispatchUS: e.HostS * 1e6, Bound: "host"})
			}
			issued += e.HostS
			if e.DeviceS > 0 {
				s.lumped(e.Name, "communication", e.DeviceS)
				finish += e.DeviceS
			}
			continue
		}
		d, tau := e.HostS/e.Launches, e.DeviceS/e.Launches
		next := max(finish+e.DeviceS, issued+d+e.DeviceS, issued+e.HostS+tau)
		s.wait("idle: waiting on the host's dispatch", (next-finish-e.DeviceS)*1e6)
		s.dispatches(e, issued)
		s.trainEntry(r, e, c)
		finish = next
		issued += e.HostS
	}
	if phase != "" {
		s.phase(phase, phaseStart)
	}
	last := "idle: waiting on the host (training step)"
	if r.Runtime.HostBound {
		last = "idle: waiting on the host (host-bound)"
	}
	s.wait(last, tr.StepTimeS*1e6-s.t)
}

// dispatches draws entry e's per-kernel dispatch slices on the host
// track from issued on and sets the interval the kernels' flows start
// in (stream.flow splits it the same way).
func (s *stream) dispatches(e report.TrainDispatch, issued float64) {
	k := traceLaunchCount(e.Launches)
	from, to := issued*1e6, (issued+e.HostS)*1e6
	s.dispatchFrom, s.dispatchTo = from, to
	w := (to - from) / float64(k)
	args := hostArgs{Launches: 1, DispatchUS: w, Bound: "host"}
	for j := 0; j < k; j++ {
		end := from + float64(j+1)*w
		if j == k-1 {
			end = to
		}
		s.be("dispatch "+e.Name, "host", TraceHostTID, from+float64(j)*w, end, args)
	}
}

// trainEntry draws entry e's kernels on the stream: a node's forward
// (its training-only work folded in) or backward, or a step-wide kernel
// (loss head, gradient scaler, optimizer).
func (s *stream) trainEntry(r *report.Report, e report.TrainDispatch, c Ceilings) {
	if e.Node < 0 || e.Node >= len(r.Nodes) {
		n := report.NodeCost{Name: e.Name, OpType: "train", Launches: e.Launches, Bound: "memory", Note: "step-wide work of the training step (not a graph node)"}
		if e.Phase == "optimizer" && e.Name == "optimizer step ("+r.Totals.Train.Optimizer+")" {
			n.OpType, n.FLOPs = r.Totals.Train.Optimizer, r.Totals.Train.OptimizerFLOPs
		}
		s.node(&n, e.Name, e.DeviceS, e.Launches, 0, Ceilings{}, 0)
		return
	}
	n := &r.Nodes[e.Node]
	if e.Phase == "backward" {
		b := n.Backward
		if b == nil {
			b = &report.Backward{}
		}
		bn := *n
		bn.FLOPs, bn.BytesRead, bn.BytesWritten, bn.Launches = b.FLOPs, b.BytesRead, b.BytesWritten, b.Launches
		bn.TimeS, bn.MemLevel, bn.Note = e.DeviceS, "", b.Note
		bn.Bound = derivedBound(b.FLOPs, b.BytesRead+b.BytesWritten, n.Precision, c)
		s.node(&bn, nodeLabel(n)+" (backward)", e.DeviceS, e.Launches, n.LaunchS*e.Launches/math.Max(n.Launches, 1), c, 0)
		return
	}
	comm := 0.0
	if e.Phase == "forward" {
		comm = math.Min(math.Max(n.CommunicationS, 0), n.TimeS)
	}
	s.node(n, n.Name, e.DeviceS-comm, e.Launches, n.LaunchS, c, e.DeviceS-n.TimeS)
	if comm > 0 {
		s.lumped("all-reduce ("+nodeLabel(n)+")", "communication", comm)
	}
}

// trainPhaseName is the phase slice an entry of phase p falls in.
func trainPhaseName(p string) string {
	if p == "accumulate" {
		return "gradient accumulation"
	}
	return p
}
