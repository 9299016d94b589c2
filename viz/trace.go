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
//     are written today;
//   - on a GPU stream track every event is a complete ("X") event for one
//     kernel launch, and nothing else is, and no other track has X
//     events: counting X events counts launches.
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
	var t float64 // µs since the first launch: where the next slice starts
	for i := range r.Nodes {
		n := &r.Nodes[i]
		if n.TimeS <= 0 && n.Launches <= 0 {
			continue // no kernel: a view, a constant, a folded op
		}
		k := traceLaunches(n)
		slice := n.TimeS / float64(k)
		gap := math.Min(n.LaunchS/float64(k), slice)
		args := kernelArgs{
			Node: n.Name, Op: ir.QualifiedOp(n.Domain, n.OpType), FusedFrom: nonNilStrings(n.FusedFrom),
			Launches: n.Launches, FLOPs: n.FLOPs / float64(k), Bytes: (n.BytesRead + n.BytesWritten) / float64(k),
			Bound: n.Bound, MemLevel: n.MemLevel, Precision: n.Precision,
			RooflineFrac: rooflineFraction(n, c), GapUS: gap * 1e6, KernelUS: (slice - gap) * 1e6,
			NodeTimeUS: n.TimeS * 1e6, Note: n.Note,
		}
		name := n.Name
		if name == "" {
			name = args.Op
		}
		for j := 0; j < k; j++ {
			a := args
			a.Launch = fmt.Sprintf("%d/%d", j+1, k)
			ts, next := t, t+slice*1e6
			dur := abutting(ts, next)
			ev = append(ev, traceEvent{Name: name, Cat: "kernel", Ph: "X", Ts: &ts, Dur: &dur, Pid: pid, Tid: TraceGPU0TID, Args: a})
			if gap > 0 {
				end := math.Min(ts+gap*1e6, next)
				ev = append(ev,
					traceEvent{Name: "launch gap", Cat: "launch", Ph: "B", Ts: &ts, Pid: pid, Tid: TraceGPU0GapsTID},
					traceEvent{Name: "launch gap", Cat: "launch", Ph: "E", Ts: &end, Pid: pid, Tid: TraceGPU0GapsTID})
			}
			t = next
		}
	}
	return ev
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

// traceLaunches is how many kernel events a node gets (see Trace).
func traceLaunches(n *report.NodeCost) int {
	k := math.Round(n.Launches)
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
			s.Kernels++
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
