package viz

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

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
//   - tid 0 is reserved for a host (CPU dispatch) track, tid 1+g for the
//     kernel stream of GPU g (one GPU today: tid 1), tid 51+g for the
//     launch gaps on that stream, tid 100 for phase slices
//     (forward/backward/optimizer) enclosing the kernels; tids 1 and 51
//     are always written, tid 100 with --train;
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
// the optimizer's OptimizerLaunches; phase slices on tid 100 enclose the
// three phases. The kernel launches are then Totals.Launches (which
// counts the forward only) + Σ Backward.Launches + OptimizerLaunches + the
// loss head's two, and the loss events are drawn only when the phase
// times exceed what the nodes carry.
//
// Timing follows the time model (cost/timemodel.go): a node's time is
// max(compute, memory) + LaunchS, where LaunchS is its launches × the
// in-plan per-kernel gap between dependent kernels (the GPU-side cost of
// issuing the next kernel). A node with n launches becomes n slices of
// TimeS/n each, back to back; each slice is one launch: its gap
// (LaunchS/n) and then its kernel. So the slices' durations alone add up
// to the report's total time and the last one ends there. The gap part is
// drawn on the stream's gap track (tid 51) as a begin/end ("B"/"E") slice
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
// share of the node's FLOPs and bytes (node total / n), the bound, the
// memory level, and the roofline fraction (the node's achieved FLOP/s over
// the classic roof at its intensity, RoofOf; omitted when the node has no
// FLOPs or the GPU's ceilings are unknown). Output is deterministic:
// fields are written in a fixed order and times are the report's floats.
func Trace(plans []*report.Report, c Ceilings) ([]byte, error) {
	if len(plans) == 0 {
		return nil, fmt.Errorf("trace: no plan to draw")
	}
	events := make([]traceEvent, 0, 16)
	for i, r := range plans {
		if r == nil {
			return nil, fmt.Errorf("trace: plan %d is empty", i+1)
		}
		events = appendPlanEvents(events, i+1, r, c)
	}
	doc := traceDoc{
		TraceEvents:     events,
		DisplayTimeUnit: "ns",
		OtherData:       traceOther(plans),
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
	TraceHostTID     = 0
	TraceGPU0TID     = 1
	TraceGPU0GapsTID = 51
	TracePhasesTID   = 100
)

type traceDoc struct {
	TraceEvents     []traceEvent `json:"traceEvents"`
	DisplayTimeUnit string       `json:"displayTimeUnit"`
	OtherData       any          `json:"otherData,omitempty"`
}

// traceEvent is one trace event. Ts and Dur are microseconds, as the
// format requires; pointers leave fields out of metadata events.
type traceEvent struct {
	Name string   `json:"name"`
	Cat  string   `json:"cat,omitempty"`
	Ph   string   `json:"ph"`
	Ts   *float64 `json:"ts,omitempty"`
	Dur  *float64 `json:"dur,omitempty"`
	Pid  int      `json:"pid"`
	Tid  int      `json:"tid"`
	Args any      `json:"args,omitempty"`
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
func traceOther(plans []*report.Report) map[string]any {
	type planInfo struct {
		Pid      int     `json:"pid"`
		Model    string  `json:"model"`
		GPU      string  `json:"gpu"`
		DType    string  `json:"dtype"`
		Plan     string  `json:"plan"`
		TimeS    float64 `json:"time_s"`
		Launches float64 `json:"launches"`
	}
	infos := make([]planInfo, len(plans))
	for i, r := range plans {
		infos[i] = planInfo{i + 1, r.Model, r.GPU, r.DType, r.Plan, r.Totals.TimeS, r.Totals.Launches}
	}
	return map[string]any{
		"generator":          "onnxcost " + plans[0].ToolVersion,
		"cost_model_version": plans[0].CostModelVersion,
		"plans":              infos,
	}
}

// appendPlanEvents adds one plan's process: its metadata, then its kernels.
func appendPlanEvents(ev []traceEvent, pid int, r *report.Report, c Ceilings) []traceEvent {
	pname := fmt.Sprintf("%s · %s · %s · plan %s (estimate)", r.Model, r.GPU, r.DType, r.Plan)
	ev = append(ev,
		traceEvent{Name: "process_name", Ph: "M", Pid: pid, Args: nameArg{pname}},
		traceEvent{Name: "process_sort_index", Ph: "M", Pid: pid, Args: sortArg{pid}},
		traceEvent{Name: "thread_name", Ph: "M", Pid: pid, Tid: TraceGPU0TID, Args: nameArg{"GPU 0 · stream 0 (kernels)"}},
		traceEvent{Name: "thread_sort_index", Ph: "M", Pid: pid, Tid: TraceGPU0TID, Args: sortArg{TraceGPU0TID}},
		traceEvent{Name: "thread_name", Ph: "M", Pid: pid, Tid: TraceGPU0GapsTID, Args: nameArg{"GPU 0 · stream 0 · launch gaps"}},
		traceEvent{Name: "thread_sort_index", Ph: "M", Pid: pid, Tid: TraceGPU0GapsTID, Args: sortArg{TraceGPU0GapsTID}},
	)
	st := &stream{ev: ev, pid: pid}
	tr := r.Totals.Train
	if tr != nil {
		ev = append(st.ev, traceEvent{Name: "thread_name", Ph: "M", Pid: pid, Tid: TracePhasesTID, Args: nameArg{"training step phases"}},
			traceEvent{Name: "thread_sort_index", Ph: "M", Pid: pid, Tid: TracePhasesTID, Args: sortArg{TracePhasesTID}})
		st.ev = ev
	}
	var host *hostPipeline
	if rt := r.Runtime; rt != nil && rt.DispatchS > 0 && tr == nil {
		host = &hostPipeline{dispatch: rt.DispatchS}
		st.ev = append(st.ev, traceEvent{Name: "thread_name", Ph: "M", Pid: pid, Tid: TraceHostTID, Args: nameArg{"host · " + rt.Name + " dispatch"}},
			traceEvent{Name: "thread_sort_index", Ph: "M", Pid: pid, Tid: TraceHostTID, Args: sortArg{TraceHostTID}})
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
		if host != nil {
			st.wait("idle: waiting on the host (host-bound)", r.Totals.TimeS*1e6-st.t)
		}
		return st.ev
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
	return st.ev
}

// hostPipeline replays the host/device pipeline of cost/runtime.go's
// pipelineTime on the trace: the host issues each node's launches,
// dispatch seconds each, drawn as one B/E slice per node on the host
// track (B/E, so X events stay the stream's); a node's kernels start
// when issued and when the previous node has finished, and the device's
// wait for the host is drawn as an "idle" X event before it. When the
// host's work per call exceeds the kernels' (HostBound), time_s is the
// host's, and the rest of it is one closing "idle" event: the stream
// still adds up to time_s.
type hostPipeline struct {
	dispatch, issued, finish float64 // seconds since the first issue
}

func (h *hostPipeline) issue(s *stream, n *report.NodeCost) {
	l := n.Launches
	if l <= 0 {
		h.finish += n.TimeS
		return
	}
	tau := n.TimeS / max(l, 1)
	start, end := h.issued*1e6, (h.issued+l*h.dispatch)*1e6
	s.ev = append(s.ev,
		traceEvent{Name: "dispatch " + nodeLabel(n), Cat: "host", Ph: "B", Ts: &start, Pid: s.pid, Tid: TraceHostTID, Args: map[string]float64{"launches": l, "dispatch_us": h.dispatch * 1e6}},
		traceEvent{Name: "dispatch " + nodeLabel(n), Cat: "host", Ph: "E", Ts: &end, Pid: s.pid, Tid: TraceHostTID})
	finish := max(h.finish+n.TimeS, h.issued+h.dispatch+n.TimeS, h.issued+l*h.dispatch+tau)
	s.wait("idle: waiting on the host's dispatch", (finish-h.finish-n.TimeS)*1e6)
	h.finish = finish
	h.issued += l * h.dispatch
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
// where the next one starts, in µs since the first launch.
type stream struct {
	ev  []traceEvent
	pid int
	t   float64
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
	for j := 0; j < k; j++ {
		a := args
		a.Launch = fmt.Sprintf("%d/%d", j+1, k)
		ts, next := s.t, s.t+slice*1e6
		dur := abutting(ts, next)
		s.ev = append(s.ev, traceEvent{Name: name, Cat: "kernel", Ph: "X", Ts: &ts, Dur: &dur, Pid: s.pid, Tid: TraceGPU0TID, Args: a})
		if gap > 0 {
			end := math.Min(ts+gap*1e6, next)
			s.ev = append(s.ev,
				traceEvent{Name: "launch gap", Cat: "launch", Ph: "B", Ts: &ts, Pid: s.pid, Tid: TraceGPU0GapsTID},
				traceEvent{Name: "launch gap", Cat: "launch", Ph: "E", Ts: &end, Pid: s.pid, Tid: TraceGPU0GapsTID})
		}
		s.t = next
	}
}

// remainder draws a phase's time that no node carries (the loss head
// train/train.go adds when the graph has none: one kernel each way) as
// one launch, so the slices still add up to the step; a remainder that is
// only float rounding (below 1e-12 of the step) is not drawn.
func (s *stream) remainder(name string, timeS, stepS float64) {
	if timeS <= 1e-12*stepS {
		return
	}
	n := report.NodeCost{Name: name, OpType: "loss", Launches: 1, Note: "not a graph node: the assumed softmax cross-entropy loss"}
	s.node(&n, name, timeS, 1, 0, Ceilings{}, 0)
}

// lumped draws time the report does not split into launches as one
// event of category cat (not "kernel"): it counts in the time, not as a
// launch.
func (s *stream) lumped(name, cat string, timeS float64) {
	ts, next := s.t, s.t+timeS*1e6
	dur := abutting(ts, next)
	s.ev = append(s.ev, traceEvent{Name: name, Cat: cat, Ph: "X", Ts: &ts, Dur: &dur, Pid: s.pid, Tid: TraceGPU0TID,
		Args: map[string]float64{"time_us": timeS * 1e6}})
	s.t = next
}

// phase draws a training phase from start to now on the phase track as a
// B/E slice (not X: X events are the stream's alone).
func (s *stream) phase(name string, start float64) {
	st, end := start, s.t
	s.ev = append(s.ev,
		traceEvent{Name: name, Cat: "phase", Ph: "B", Ts: &st, Pid: s.pid, Tid: TracePhasesTID},
		traceEvent{Name: name, Cat: "phase", Ph: "E", Ts: &end, Pid: s.pid, Tid: TracePhasesTID})
}

// abutting is the duration of a slice from ts to next such that ts+dur,
// computed in float64 as every viewer does, does not pass next: rounding
// must never make a slice overlap the one after it, which viewers read as
// nesting (a slice that never closes) rather than as a sequence.
func abutting(ts, next float64) float64 {
	dur := next - ts
	for dur > 0 && ts+dur > next {
		dur = math.Nextafter(dur, 0)
	}
	return dur
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
	// (category "communication", "recompute", "train-extra" or
	// "accumulation", see Trace);
	// Kernels counts the "kernel" ones, Waits the "idle" ones (the
	// device waiting on the host under --runtime). BusyUS covers all.
	Lumped int
	Waits  int
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
			case "communication", "recompute", "train-extra", "accumulation":
				s.Lumped++
			default: // "kernel", or a writer that names no category
				s.Kernels++
			}
			s.IdleUS += *e.Ts - s.EndUS
			s.BusyUS += *e.Dur
			s.EndUS = *e.Ts + *e.Dur
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
