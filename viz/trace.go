package viz

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

// Trace writes the estimated execution of one or more plans as a Chrome
// trace-event JSON file (the "JSON Object Format": {"traceEvents": [...]}),
// which chrome://tracing, Perfetto (ui.perfetto.dev) and speedscope open,
// the same viewers nsys and the PyTorch profiler export to.
//
// Layout, so later tracks slot in without renumbering:
//
//   - one process (pid 1, 2, …) per plan, in the order given (compare
//     passes unfused then fused);
//   - tracks are numbered from 1, each its own id (older Perfetto merged
//     tid 0 into tid 1): TraceHostTID for the host's dispatch under a
//     runtime that dispatches from the host (inference, and under --train
//     the step's own dispatch sequence, Train.Dispatch: trace_train.go),
//     TracePhasesTID for phase slices (forward/backward/optimizer)
//     enclosing the kernels under --train, TraceGPU0TID for GPU 0's
//     kernel stream and TraceGPU0GapsTID for the launch gaps on it (both
//     always written); further GPUs' tracks would follow;
//   - on the host track each node's dispatch is a B/E slice, and a flow
//     (ph "s" on the host, "f" with bp "e" on the stream, one id each)
//     runs from the dispatch of each launch to the kernel slice it
//     issued; otherData's host_s is the host's work per call;
//   - on a GPU stream track every event is a complete ("X") event, back
//     to back, and no other track has X events, so their durations add up
//     to the report's time_s. An X event of category "kernel" is one
//     kernel launch; the only others are an all-reduce under --gpus
//     ("communication": a node's CommunicationS, cut from the end of its
//     time, one event per node) and checkpointing's recompute under
//     --train ("recompute": one event, as the report does not split it
//     into launches), and under --train a kernel-less node's training
//     forward work ("train-extra"), under --data-parallel the gradient
//     all-reduce's exposed part ("communication"), and under --grad-accum the further
//     micro-batches ("accumulation": one event), and under --runtime the device waiting
//     on the host ("idle", see hostPipeline). Counting "kernel" X events
//     counts launches.
//
// With --train the stream is the whole step (time_s is step_time_s):
// the forward kernels (each node's training-only forward work,
// Backward.ForwardExtraS, folded into its slices and shown in args), the
// loss head train/train.go assumes when the graph has none (one launch),
// then the recompute, the loss head's backward (one launch), each node's
// Backward.Launches in reverse node order named "<node> (backward)", and
// the optimizer's OptimizerLaunches; phase slices on TracePhasesTID enclose the
// three phases. Under a runtime that dispatches from the host the step
// is drawn from its own dispatch sequence instead (Train.Dispatch,
// trace_train.go): every kernel it issues, the device's waits for the
// host where they fall, and micro-batches and the recompute in full.
// Otherwise the kernel launches are Totals.Launches (which
// counts the forward only) + Σ Backward.Launches + OptimizerLaunches + the
// loss head's two, and the loss events are drawn only when the phase
// times exceed what the nodes carry.
//
// Timing follows the time model (cost/timemodel.go): a node's time is
// max(compute, memory) + LaunchS (a little more for a GEMM whose two
// terms are close: perf.BodyS), where LaunchS is its launches × the
// in-plan per-kernel gap between dependent kernels (the GPU-side cost of
// issuing the next kernel). A node with n launches becomes n slices of
// TimeS/n each, back to back; each slice is one launch: its gap
// (LaunchS/n) and then its kernel. So the slices' durations alone add up
// to the report's total time and the last one ends there. The gap part is
// drawn on the stream's gap track (TraceGPU0GapsTID) as a begin/end ("B"/"E") slice
// under the start of each launch, and its length is in the launch's args
// (launch_gap_us, kernel_us), so the launch overhead is visible without
// breaking either count. Nodes follow the report's order (topological),
// back to back on one stream, as an inference engine issues them.
//
// Launch counts are whole numbers for every rule today; a fractional count
// is rounded to the nearest whole launch (at least one when the node takes
// time), and a node with more than MaxTraceLaunchesPerNode launches (a
// long Loop) is drawn as one event carrying its launch count in args, so a
// file stays loadable; both cases are rare and keep the total time exact.
//
// Each event's args carry the node name, op, fused-from list, the launch's
// share of the node's FLOPs and bytes (node total / n), the bound (for
// kernels the report gives none, a backward's or the loss head's, from
// their intensity against the GPU's ridge point; every slice has one), the
// memory level, and the roofline fraction (the node's achieved FLOP/s over
// the classic roof at its intensity, RoofOf; omitted when the node has no
// FLOPs or the GPU's ceilings are unknown). Output is deterministic:
// fields are written in a fixed order. Times are on an integer-nanosecond
// grid (traceNS): each slice boundary is the report's time rounded once
// to the nanosecond, so no viewer's rounding makes neighbours overlap;
// the totals then hold to half a nanosecond. otherData's launches is the
// kernel slices drawn, the whole step's under --train.
func Trace(plans []*report.Report, c Ceilings) ([]byte, error) {
	if len(plans) == 0 {
		return nil, fmt.Errorf("trace: no plan to draw")
	}
	events := make([]traceEvent, 0, 16)
	kernels := make([]int, len(plans))
	flows := 0
	for i, r := range plans {
		if r == nil {
			return nil, fmt.Errorf("trace: plan %d is empty", i+1)
		}
		events, kernels[i] = appendPlanEvents(events, i+1, r, c, &flows)
	}
	doc := traceDoc{
		TraceEvents:     events,
		DisplayTimeUnit: "ns",
		OtherData:       traceOther(plans, kernels),
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	return buf.Bytes(), nil
}

// MaxTraceLaunchesPerNode bounds the events one node contributes (see
// Trace): above it the node is drawn as one event.
const MaxTraceLaunchesPerNode = 1 << 16

// Track ids within a plan's process (see Trace).
const (
	TraceHostTID     = 1
	TracePhasesTID   = 2
	TraceGPU0TID     = 3
	TraceGPU0GapsTID = 4
)

type traceDoc struct {
	TraceEvents     []traceEvent `json:"traceEvents"`
	DisplayTimeUnit string       `json:"displayTimeUnit"`
	OtherData       any          `json:"otherData,omitempty"`
}

// traceEvent is one trace event. Ts and Dur are microseconds, as the
// format requires, on the nanosecond grid (traceNS); pointers leave
// fields out of metadata events. ID and BP are a flow event's.
type traceEvent struct {
	Name string   `json:"name"`
	Cat  string   `json:"cat,omitempty"`
	Ph   string   `json:"ph"`
	Ts   *traceNS `json:"ts,omitempty"`
	Dur  *traceNS `json:"dur,omitempty"`
	Pid  int      `json:"pid"`
	Tid  int      `json:"tid"`
	ID   int      `json:"id,omitempty"`
	BP   string   `json:"bp,omitempty"`
	Args any      `json:"args,omitempty"`
}

// traceNS is a trace time in whole nanoseconds, written as microseconds
// with exactly three decimals. Perfetto's JSON importer rounds ts and dur
// to nanoseconds each on its own and drops a slice that overlaps the one
// before it on its track; float microseconds can round so that
// back-to-back slices overlap by a nanosecond. On this grid each boundary
// is rounded once, dur is end − start, and rounding ts·1000 and dur·1000
// gives those integers back exactly, so slices that abut stay abutting.
type traceNS int64

// gridNS places a time in µs on the nanosecond grid.
func gridNS(us float64) traceNS { return traceNS(math.Round(us * 1000)) }

// MarshalJSON writes n ns as n/1000 µs with three decimals when that
// decimal's float times 1000 is not below n, and otherwise as the
// shortest decimal just above it: an importer that truncates ts·1000
// instead of rounding it then reads the same n too.
func (v traceNS) MarshalJSON() ([]byte, error) {
	n := float64(v)
	x := n / 1000
	if x*1000 >= n {
		return []byte(strconv.FormatFloat(x, 'f', 3, 64)), nil
	}
	for x*1000 < n {
		x = math.Nextafter(x, math.Inf(1))
	}
	return []byte(strconv.FormatFloat(x, 'f', -1, 64)), nil
}

// kernelArgs are a kernel event's args, in a fixed order.
type kernelArgs struct {
	Node         string   `json:"node"`
	Op           string   `json:"op"`
	FusedFrom    []string `json:"fused_from"`
	Launch       string   `json:"launch"` // "k/n": which of the node's launches
	Launches     float64  `json:"launches"`
	FLOPs        float64  `json:"flops"`
	Bytes        float64  `json:"bytes"`
	Bound        string   `json:"bound"`
	MemLevel     string   `json:"mem_level,omitempty"`
	Precision    string   `json:"precision,omitempty"`
	RooflineFrac *float64 `json:"roofline_fraction,omitempty"`
	GapUS        float64  `json:"launch_gap_us"`
	KernelUS     float64  `json:"kernel_us"`
	NodeTimeUS   float64  `json:"node_time_us"`
	TrainExtraUS float64  `json:"train_forward_extra_us,omitempty"`
	Note         string   `json:"note,omitempty"`
}

type nameArg struct {
	Name string `json:"name"`
}

type sortArg struct {
	SortIndex int `json:"sort_index"`
}

// traceOther is the file's otherData: what each process estimates.
// Launches is the kernel slices drawn (under --train the whole step's,
// not Totals.Launches, which counts the forward); HostS and DispatchS
// are the host's work per call and per kernel under a runtime that
// dispatches from the host.
func traceOther(plans []*report.Report, kernels []int) map[string]any {
	type planInfo struct {
		Pid       int     `json:"pid"`
		Model     string  `json:"model"`
		GPU       string  `json:"gpu"`
		DType     string  `json:"dtype"`
		Plan      string  `json:"plan"`
		Runtime   string  `json:"runtime,omitempty"`
		TimeS     float64 `json:"time_s"`
		Launches  float64 `json:"launches"`
		HostS     float64 `json:"host_s,omitempty"`
		DispatchS float64 `json:"dispatch_s,omitempty"`
	}
	infos := make([]planInfo, len(plans))
	for i, r := range plans {
		infos[i] = planInfo{Pid: i + 1, Model: r.Model, GPU: r.GPU, DType: r.DType, Plan: r.Plan, TimeS: r.Totals.TimeS, Launches: float64(kernels[i])}
		if rt := r.Runtime; rt != nil {
			infos[i].Runtime = rt.Name
			if rt.DispatchS > 0 {
				infos[i].HostS, infos[i].DispatchS = rt.HostS, rt.DispatchS
			}
		}
	}
	return map[string]any{
		"generator":          "onnxcost " + plans[0].ToolVersion,
		"cost_model_version": plans[0].CostModelVersion,
		"plans":              infos,
	}
}

// appendPlanEvents adds one plan's process: its metadata, then its
// kernels; it returns the events and how many kernel slices it drew.
// flows numbers the host→kernel flow events across the file.
func appendPlanEvents(ev []traceEvent, pid int, r *report.Report, c Ceilings, flows *int) ([]traceEvent, int) {
	pname := fmt.Sprintf("%s · %s · %s · plan %s (estimate)", r.Model, r.GPU, r.DType, r.Plan)
	if r.Runtime != nil {
		pname = fmt.Sprintf("%s · %s · %s · runtime %s, plan %s%s%s (estimate)", r.Model, r.GPU, r.DType, r.Runtime.Name, r.Plan,
			render.PowerSetting(r.Totals.PowerCapW, r.Totals.SMClockCapMHz, ", "), render.WarmSetting(r.Warm, ", "))
	}
	ev = append(ev,
		// Process metadata ignores tid; it names the stream's, not 0,
		// so no event in the file is on a tid some viewers merge.
		traceEvent{Name: "process_name", Ph: "M", Pid: pid, Tid: TraceGPU0TID, Args: nameArg{pname}},
		traceEvent{Name: "process_sort_index", Ph: "M", Pid: pid, Tid: TraceGPU0TID, Args: sortArg{pid}},
		traceEvent{Name: "thread_name", Ph: "M", Pid: pid, Tid: TraceGPU0TID, Args: nameArg{"GPU 0 · stream 0 (kernels)"}},
		traceEvent{Name: "thread_sort_index", Ph: "M", Pid: pid, Tid: TraceGPU0TID, Args: sortArg{TraceGPU0TID}},
		traceEvent{Name: "thread_name", Ph: "M", Pid: pid, Tid: TraceGPU0GapsTID, Args: nameArg{"GPU 0 · stream 0 · launch gaps"}},
		traceEvent{Name: "thread_sort_index", Ph: "M", Pid: pid, Tid: TraceGPU0GapsTID, Args: sortArg{TraceGPU0GapsTID}},
	)
	st := &stream{ev: ev, pid: pid, flows: flows}
	tr := r.Totals.Train
	if tr != nil {
		ev = append(st.ev, traceEvent{Name: "thread_name", Ph: "M", Pid: pid, Tid: TracePhasesTID, Args: nameArg{"training step phases"}},
			traceEvent{Name: "thread_sort_index", Ph: "M", Pid: pid, Tid: TracePhasesTID, Args: sortArg{TracePhasesTID}})
		st.ev = ev
	}
	var host *hostPipeline
	if rt := r.Runtime; rt != nil && rt.DispatchS > 0 && (tr == nil || len(tr.Dispatch) > 0) {
		host = &hostPipeline{}
		st.host = true
		st.ev = append(st.ev, traceEvent{Name: "thread_name", Ph: "M", Pid: pid, Tid: TraceHostTID, Args: nameArg{"host · " + rt.Name + " dispatch"}},
			traceEvent{Name: "thread_sort_index", Ph: "M", Pid: pid, Tid: TraceHostTID, Args: sortArg{TraceHostTID}})
	}
	if host != nil && tr != nil {
		st.trainHost(r, c)
		return st.ev, st.kernels
	}
	if rt := r.Runtime; rt != nil && tr == nil && rt.InputCopyS > 0 {
		// The inputs' copy comes before the first kernel, the host
		// blocked on it before it issues any.
		st.lumped(hostCopies(rt)[0].name, "host-copy", rt.InputCopyS)
		if host != nil {
			host.issued, host.finish = rt.InputCopyS, rt.InputCopyS
		}
	}
	phase := st.t
	var fwd float64
	for i := range r.Nodes {
		n := &r.Nodes[i]
		extra := 0.0
		if tr != nil && n.Backward != nil {
			extra = n.Backward.ForwardExtraS
		}
		if n.TimeS <= 0 && n.Launches <= 0 && extra <= 0 {
			if host != nil && n.HostS > 0 {
				host.issue(st, n) // a view's call, on the host alone
			}
			continue // no kernel: a view, a constant, a folded op
		}
		fwd += n.TimeS + extra
		if n.TimeS <= 0 && n.Launches <= 0 {
			// Training-only work on a node with no inference kernel
			// (a Dropout): the report gives it no launch count.
			st.lumped(nodeLabel(n)+" (training forward work)", "train-extra", extra)
			continue
		}
		if host != nil {
			host.issue(st, n)
		}
		comm := math.Min(math.Max(n.CommunicationS, 0), n.TimeS)
		st.node(n, n.Name, n.TimeS-comm+extra, n.Launches, n.LaunchS, c, extra)
		if comm > 0 {
			st.lumped("all-reduce ("+nodeLabel(n)+")", "communication", comm)
		}
	}
	if tr == nil {
		if rt := r.Runtime; rt != nil && rt.OutputCopyS > 0 {
			st.lumped(hostCopies(rt)[1].name, "host-copy", rt.OutputCopyS)
		}
		if host != nil {
			st.wait(closingWaitName(r.Runtime), r.Totals.TimeS*1e6-st.t)
		}
		return st.ev, st.kernels
	}
	st.remainder("loss head (forward)", tr.ForwardTimeS-fwd, tr.StepTimeS)
	st.phase("forward", phase)
	phase = st.t
	if tr.RecomputeTimeS > 0 {
		st.lumped("recompute (activation checkpointing)", "recompute", tr.RecomputeTimeS)
	}
	var bwd float64
	for i := range r.Nodes {
		bwd += backwardTime(&r.Nodes[i])
	}
	st.remainder("loss head (backward)", tr.BackwardTimeS-bwd, tr.StepTimeS)
	for i := len(r.Nodes) - 1; i >= 0; i-- {
		n := &r.Nodes[i]
		b := n.Backward
		if b == nil || (b.TimeS <= 0 && b.Launches <= 0) {
			continue
		}
		bn := *n
		bn.FLOPs, bn.BytesRead, bn.BytesWritten, bn.Launches = b.FLOPs, b.BytesRead, b.BytesWritten, b.Launches
		// The forward's bound and memory level do not describe the
		// backward kernels; the roofline fraction uses this time.
		bn.TimeS, bn.Bound, bn.MemLevel, bn.Note = b.TimeS, "", "", b.Note
		bn.Bound = derivedBound(b.FLOPs, b.BytesRead+b.BytesWritten, n.Precision, c)
		st.node(&bn, nodeLabel(n)+" (backward)", b.TimeS, b.Launches, n.LaunchS*b.Launches/math.Max(n.Launches, 1), c, 0)
	}
	st.phase("backward", phase)
	if more := float64(tr.GradAccum-1)*(tr.ForwardTimeS+tr.RecomputeTimeS+tr.BackwardTimeS) + tr.AccumulateTimeS; more > 0 {
		phase = st.t
		st.lumped(fmt.Sprintf("micro-batches 2..%d (gradient accumulation)", tr.GradAccum), "accumulation", more)
		st.phase("gradient accumulation", phase)
	}
	if tr.GradAllReduceExposedS > 0 {
		st.lumped("gradient all-reduce (data parallel, not hidden behind the backward)", "communication", tr.GradAllReduceExposedS)
	}
	phase = st.t
	if tr.OptimizerTimeS > 0 || tr.OptimizerLaunches > 0 {
		opt := report.NodeCost{Name: "optimizer step", OpType: tr.Optimizer, Launches: tr.OptimizerLaunches, Bound: "memory", Note: "multi-tensor apply over every parameter"}
		opt.FLOPs = tr.OptimizerFLOPs
		st.node(&opt, "optimizer step ("+tr.Optimizer+")", tr.OptimizerTimeS, tr.OptimizerLaunches, 0, Ceilings{}, 0)
	}
	st.phase("optimizer", phase)
	// Under a runtime that dispatches from the host, the device's wait
	// for it over the step (Train.HostWaitS), as one closing event.
	st.wait("idle: waiting on the host's dispatch (training step)", tr.HostWaitS*1e6)
	return st.ev, st.kernels
}

// hostPipeline replays the host/device pipeline of cost/runtime.go's
// pipelineTime on the trace: the host issues each node's launches in
// its host_s (a view's call, with none, too), drawn as one B/E slice per node on the host
// track (B/E, so X events stay the stream's); a node's kernels start
// when issued and when the previous node has finished, and the device's
// wait for the host is drawn as an "idle" X event before it. When the
// host's work per call exceeds the kernels' (HostBound), time_s is the
// host's, and the rest of it is one closing "idle" event: the stream
// still adds up to time_s.
type hostPipeline struct {
	issued, finish float64 // seconds since the first issue
}

func (h *hostPipeline) issue(s *stream, n *report.NodeCost) {
	l := n.Launches
	if l <= 0 || n.HostS <= 0 {
		// A view's call takes the host's time and launches nothing.
		if n.HostS > 0 {
			s.be("call "+nodeLabel(n), "host", TraceHostTID, h.issued*1e6, (h.issued+n.HostS)*1e6, hostArgs{DispatchUS: n.HostS * 1e6, Bound: "host"})
		}
		h.finish += n.TimeS
		h.issued += n.HostS
		return
	}
	dispatch := n.HostS / l
	tau := n.TimeS / max(l, 1)
	start, end := h.issued*1e6, (h.issued+l*dispatch)*1e6
	s.be("dispatch "+nodeLabel(n), "host", TraceHostTID, start, end, hostArgs{Launches: l, DispatchUS: dispatch * 1e6, Bound: "host"})
	s.dispatchFrom, s.dispatchTo = start, end
	finish := max(h.finish+n.TimeS, h.issued+dispatch+n.TimeS, h.issued+l*dispatch+tau)
	s.wait("idle: waiting on the host's dispatch", (finish-h.finish-n.TimeS)*1e6)
	h.finish = finish
	h.issued += l * dispatch
}

// hostCopy is one direction of a call's copies between host and device
// memory (report.Runtime's InputCopyS, OutputCopyS).
type hostCopy struct {
	name  string
	timeS float64
}

// hostCopies are rt's input and output copies, in that order.
func hostCopies(rt *report.Runtime) [2]hostCopy {
	return [2]hostCopy{
		{"copy inputs from host memory (MemcpyHtoD)", rt.InputCopyS},
		{"copy outputs to host memory (MemcpyDtoH)", rt.OutputCopyS},
	}
}

// closingWaitName names the device's wait on the host that closes a
// call's stream under rt: a call that waits for its kernels
// (SyncEachCall) then spends its fixed work (call_s) with the device
// idle; otherwise the host's issue outlasted the kernels.
func closingWaitName(rt *report.Runtime) string {
	if rt.SyncEachCall {
		return "idle: the call's fixed host work (call_s) and its synchronize"
	}
	return "idle: waiting on the host (host-bound)"
}

// wait draws us microseconds of device idle time as an "idle" X event
// (see hostPipeline); nothing below a femtosecond (float rounding).
func (s *stream) wait(name string, us float64) {
	if us <= 1e-9 {
		return
	}
	s.lumped(name, "idle", us/1e6)
}

// nodeLabel is a node's name, or its op when it has none.
func nodeLabel(n *report.NodeCost) string {
	if n.Name != "" {
		return n.Name
	}
	return ir.QualifiedOp(n.Domain, n.OpType)
}

// backwardTime is a node's backward kernels' time (0 without one).
func backwardTime(n *report.NodeCost) float64 {
	if n.Backward == nil {
		return 0
	}
	return n.Backward.TimeS
}

// stream lays slices back to back on one process's GPU 0 stream: t is
// where the next one starts, in µs since the first launch. With host
// set, each kernel slice gets a flow from the host dispatch slice
// [dispatchFrom, dispatchTo] that issued it; kernels counts the kernel
// slices drawn.
type stream struct {
	ev                       []traceEvent
	pid                      int
	t                        float64
	host                     bool
	dispatchFrom, dispatchTo float64
	flows                    *int
	kernels                  int
}

// hostArgs are a host dispatch slice's args.
type hostArgs struct {
	Launches   float64 `json:"launches"`
	DispatchUS float64 `json:"dispatch_us"`
	Bound      string  `json:"bound"`
}

// lumpedArgs are the args of a stream slice that is not one launch.
type lumpedArgs struct {
	TimeUS float64 `json:"time_us"`
	Bound  string  `json:"bound"`
}

// x appends a complete event from µs from to to, both on the grid.
func (s *stream) x(name, cat string, from, to float64, args any) *traceEvent {
	ts := gridNS(from)
	dur := gridNS(to) - ts
	s.ev = append(s.ev, traceEvent{Name: name, Cat: cat, Ph: "X", Ts: &ts, Dur: &dur, Pid: s.pid, Tid: TraceGPU0TID, Args: args})
	return &s.ev[len(s.ev)-1]
}

// be appends a B/E slice on track tid from µs from to to.
func (s *stream) be(name, cat string, tid int, from, to float64, args any) {
	b, e := gridNS(from), gridNS(to)
	s.ev = append(s.ev,
		traceEvent{Name: name, Cat: cat, Ph: "B", Ts: &b, Pid: s.pid, Tid: tid, Args: args},
		traceEvent{Name: name, Cat: cat, Ph: "E", Ts: &e, Pid: s.pid, Tid: tid})
}

// flow links the host's dispatch of launch j of k to the kernel slice
// [ts, ts+dur] it issued: a flow start inside the dispatch slice and a
// flow end bound to the enclosing kernel slice (bp "e"), both strictly
// inside their slices where the grid allows, so viewers bind them.
func (s *stream) flow(name string, j, k int, ts, dur traceNS) {
	*s.flows++
	id := *s.flows
	from := gridNS(s.dispatchFrom + (float64(j)+0.5)*(s.dispatchTo-s.dispatchFrom)/float64(k))
	to := ts + dur/2
	s.ev = append(s.ev,
		traceEvent{Name: name, Cat: "dispatch", Ph: "s", Ts: &from, Pid: s.pid, Tid: TraceHostTID, ID: id},
		traceEvent{Name: name, Cat: "dispatch", Ph: "f", Ts: &to, Pid: s.pid, Tid: TraceGPU0TID, ID: id, BP: "e"})
}

// node draws k launch slices of timeS/k each for one node (see Trace);
// extraS is training-only forward work folded into the node's slices.
func (s *stream) node(n *report.NodeCost, name string, timeS, launches, launchS float64, c Ceilings, extraS float64) {
	k := traceLaunchCount(launches)
	slice := timeS / float64(k)
	gap := math.Min(launchS/float64(k), slice)
	args := kernelArgs{
		Node: n.Name, Op: ir.QualifiedOp(n.Domain, n.OpType), FusedFrom: nonNilStrings(n.FusedFrom),
		Launches: launches, FLOPs: n.FLOPs / float64(k), Bytes: (n.BytesRead + n.BytesWritten) / float64(k),
		Bound: n.Bound, MemLevel: n.MemLevel, Precision: n.Precision,
		RooflineFrac: rooflineFraction(n, c), GapUS: gap * 1e6, KernelUS: (slice - gap) * 1e6,
		NodeTimeUS: timeS * 1e6, TrainExtraUS: extraS * 1e6, Note: n.Note,
	}
	if name == "" {
		name = args.Op
	}
	if args.Bound == "" {
		args.Bound = derivedBound(n.FLOPs, n.BytesRead+n.BytesWritten, n.Precision, c)
	}
	for j := 0; j < k; j++ {
		a := args
		a.Launch = fmt.Sprintf("%d/%d", j+1, k)
		ts, next := s.t, s.t+slice*1e6
		e := s.x(name, "kernel", ts, next, a)
		s.kernels++
		if s.host {
			s.flow(name, j, k, *e.Ts, *e.Dur)
		}
		if gap > 0 {
			s.be("launch gap", "launch", TraceGPU0GapsTID, ts, math.Min(ts+gap*1e6, next), nil)
		}
		s.t = next
	}
}

// derivedBound is the bound of kernels the report gives none for (a
// node's backward, the assumed loss head): their intensity against the
// GPU's ridge point at HBM bandwidth, "memory" or "compute" when they
// move no bytes or do no FLOPs, and "unknown" without the GPU's roofs.
func derivedBound(flops, bytes float64, precision string, c Ceilings) string {
	peak, bw := c.Peak(precision), c.BW("hbm")
	switch {
	case flops <= 0:
		return "memory"
	case bytes <= 0:
		return "compute"
	case peak <= 0 || bw <= 0:
		return "unknown"
	case flops/bytes >= peak/bw:
		return "compute"
	}
	return "memory"
}

// remainder draws a phase's time that no node carries (the loss head
// train/train.go adds when the graph has none: one kernel each way) as
// one launch, so the slices still add up to the step; a remainder that is
// only float rounding (below 1e-12 of the step) is not drawn.
func (s *stream) remainder(name string, timeS, stepS float64) {
	if timeS <= 1e-12*stepS {
		return
	}
	n := report.NodeCost{Name: name, OpType: "loss", Launches: 1, Bound: "memory", Note: "not a graph node: the assumed softmax cross-entropy loss"}
	s.node(&n, name, timeS, 1, 0, Ceilings{}, 0)
}

// lumped draws time the report does not split into launches as one
// event of category cat (not "kernel"): it counts in the time, not as a
// launch.
func (s *stream) lumped(name, cat string, timeS float64) {
	next := s.t + timeS*1e6
	s.x(name, cat, s.t, next, lumpedArgs{TimeUS: timeS * 1e6, Bound: lumpedBound[cat]})
	s.t = next
}

// lumpedBound is what bounds each kind of lumped slice: the device
// waiting on the host, on the interconnect, or a mix of kernels.
var lumpedBound = map[string]string{
	"idle":          "host",
	"host-copy":     "host-link",
	"communication": "communication",
	"recompute":     "mixed",
	"accumulation":  "mixed",
	"train-extra":   "memory",
}

// phase draws a training phase from start to now on the phase track as a
// B/E slice (not X: X events are the stream's alone).
func (s *stream) phase(name string, start float64) {
	s.be(name, "phase", TracePhasesTID, start, s.t, nil)
}

// traceLaunchCount is how many kernel events a node with this many
// launches gets (see Trace).
func traceLaunchCount(launches float64) int {
	k := math.Round(launches)
	switch {
	case k < 1 || math.IsNaN(k):
		return 1
	case k > MaxTraceLaunchesPerNode:
		return 1
	}
	return int(k)
}

// rooflineFraction is achieved FLOP/s over the roof at the node's
// intensity, or nil when either is unknown.
func rooflineFraction(n *report.NodeCost, c Ceilings) *float64 {
	rf := c.RoofOf(n)
	if rf.Achieved <= 0 || rf.Roof <= 0 {
		return nil
	}
	f := rf.Achieved / rf.Roof
	return &f
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// TraceSummary is what SummarizeTrace finds on one process's GPU 0
// stream (microseconds from the start): the kernel launch events, their
// summed durations, the idle time between them (0 as Trace writes them),
// where the last one ends, and the launch gaps drawn on the gap track.
type TraceSummary struct {
	Pid         int
	Kernels     int
	BusyUS      float64
	IdleUS      float64
	EndUS       float64
	LaunchGapUS float64
	// Lumped counts the stream's X events that are not one kernel launch
	// (category "communication", "recompute", "train-extra",
	// "accumulation" or "host-copy", see Trace);
	// Kernels counts the "kernel" ones, Waits the "idle" ones (the
	// device waiting on the host under --runtime). BusyUS covers all.
	Lumped int
	Waits  int
	// Flows counts the host→kernel flows (their "f" ends).
	Flows int
}

// SummarizeTrace reads a trace written by Trace back as a viewer would,
// checks the parts of the trace-event format the viewers rely on (every
// event named, with pid and tid; X events with ts and a non-negative dur
// on a named thread; B/E pairs matched per thread; M events without
// times; kernels in time order, not overlapping) and summarizes each process's kernel stream, in pid order.
// Tests and users check a trace's totals with it.
func SummarizeTrace(data []byte) ([]TraceSummary, error) {
	var doc struct {
		TraceEvents []struct {
			Name string   `json:"name"`
			Cat  string   `json:"cat"`
			Ph   string   `json:"ph"`
			Ts   *float64 `json:"ts"`
			Dur  *float64 `json:"dur"`
			Pid  *int     `json:"pid"`
			Tid  *int     `json:"tid"`
			ID   *int     `json:"id"`
			Args struct {
				Name *string `json:"name"`
			} `json:"args"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("trace: not trace-event JSON: %w", err)
	}
	if doc.TraceEvents == nil {
		return nil, fmt.Errorf("trace: no traceEvents array")
	}
	type track struct{ pid, tid int }
	named := map[track]bool{}
	byPid := map[int]*TraceSummary{}
	var pids []int
	summary := func(pid int) *TraceSummary {
		s := byPid[pid]
		if s == nil {
			s = &TraceSummary{Pid: pid}
			byPid[pid] = s
			pids = append(pids, pid)
		}
		return s
	}
	open := map[track]float64{} // a "B" gap slice's start, until its "E"
	for i, e := range doc.TraceEvents {
		if e.Name == "" || e.Pid == nil || e.Tid == nil {
			return nil, fmt.Errorf("trace: event %d lacks a name, pid or tid", i)
		}
		switch e.Ph {
		case "M":
			if e.Ts != nil || e.Dur != nil {
				return nil, fmt.Errorf("trace: metadata event %d has a time", i)
			}
			if (e.Name == "process_name" || e.Name == "thread_name") && (e.Args.Name == nil || *e.Args.Name == "") {
				return nil, fmt.Errorf("trace: %s event %d names nothing", e.Name, i)
			}
			if e.Name == "thread_name" {
				named[track{*e.Pid, *e.Tid}] = true
			}
		case "X":
			if e.Ts == nil || e.Dur == nil || *e.Dur < 0 || math.IsNaN(*e.Ts) || math.IsInf(*e.Ts, 0) || math.IsNaN(*e.Dur) {
				return nil, fmt.Errorf("trace: complete event %d (%s) has a bad ts or dur", i, e.Name)
			}
			if !named[track{*e.Pid, *e.Tid}] {
				return nil, fmt.Errorf("trace: event %d is on thread %d/%d, which has no thread_name", i, *e.Pid, *e.Tid)
			}
			if *e.Tid != TraceGPU0TID {
				continue
			}
			s := summary(*e.Pid)
			if *e.Ts < s.EndUS-1e-9*math.Max(1, s.EndUS) {
				return nil, fmt.Errorf("trace: kernel %d (%s) at %v µs starts before the previous one ends (%v µs)", i, e.Name, *e.Ts, s.EndUS)
			}
			switch e.Cat {
			case "idle":
				s.Waits++
			case "communication", "recompute", "train-extra", "accumulation", "host-copy":
				s.Lumped++
			default: // "kernel", or a writer that names no category
				s.Kernels++
			}
			s.IdleUS += *e.Ts - s.EndUS
			s.BusyUS += *e.Dur
			s.EndUS = *e.Ts + *e.Dur
		case "s", "f":
			if e.Ts == nil || e.ID == nil || !named[track{*e.Pid, *e.Tid}] {
				return nil, fmt.Errorf("trace: flow event %d has no ts or id or is on an unnamed thread", i)
			}
			if e.Ph == "f" {
				summary(*e.Pid).Flows++
			}
		case "B", "E":
			tr := track{*e.Pid, *e.Tid}
			if e.Ts == nil || math.IsNaN(*e.Ts) || !named[tr] {
				return nil, fmt.Errorf("trace: %s event %d has no ts or is on an unnamed thread", e.Ph, i)
			}
			start, isOpen := open[tr]
			switch {
			case e.Ph == "B" && isOpen:
				return nil, fmt.Errorf("trace: B event %d opens a slice inside another on thread %d/%d", i, tr.pid, tr.tid)
			case e.Ph == "B":
				open[tr] = *e.Ts
			case !isOpen || *e.Ts < start:
				return nil, fmt.Errorf("trace: E event %d closes no slice or ends before it starts", i)
			default:
				delete(open, tr)
				if tr.tid == TraceGPU0GapsTID {
					summary(tr.pid).LaunchGapUS += *e.Ts - start
				}
			}
		default:
			return nil, fmt.Errorf("trace: event %d has phase %q, which Trace does not write", i, e.Ph)
		}
	}
	if len(open) > 0 {
		return nil, fmt.Errorf("trace: %d B slice(s) never end", len(open))
	}
	out := make([]TraceSummary, 0, len(pids))
	for _, p := range pids {
		out = append(out, *byPid[p])
	}
	return out, nil
}
