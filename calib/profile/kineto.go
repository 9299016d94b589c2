package profile

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/onnxcost/onnxcost/calib"
)

// PyTorch's profiler (torch.profiler.profile(...).export_chrome_trace)
// writes Kineto's Chrome trace, {"traceEvents": [...]} (libkineto's
// ChromeTraceLogger): "X" events with cat "kernel" (GPU, args
// "correlation"), "cuda_runtime"/"cuda_driver" (cudaLaunchKernel & co.
// on the launching host thread, same "correlation"), "cpu_op" (aten::
// ops, args "External id"), "user_annotation" (record_function ranges;
// "ProfilerStep#N" per schedule step) and "python_function"
// ("nn.Module: <Class>_<i>" with with_stack/with_modules).
//
// Each GPU kernel is charged to the innermost user_annotation or
// nn.Module range around its launch on the launching thread, with the
// innermost cpu_op giving its kind; without GPU kernels the unit is each
// top-level cpu_op and its own duration. An annotation named like an
// ONNX node, or like a module path ("layer1.0.conv1"), lets MatchReport
// find the node; otherwise the op kind places it in execution order.

// kinetoRange is a host range on one thread.
type kinetoRange struct {
	span
	name, cat string
}

// kinetoUnit is one measured piece before aggregation.
type kinetoUnit struct {
	label, op string
	us        float64
	kernels   int
	step      int
	ts        float64
}

// parseKineto reads a Kineto trace: its traceEvents (raw) and, for the
// device it ran on, the rest of its top level.
func parseKineto(raw json.RawMessage, top map[string]json.RawMessage) (*Profile, error) {
	return parseKinetoWith(raw, top, nil)
}

// parseKinetoWith is parseKineto with each kernel's time taken from a
// CUDA-graph replay of the traced call (replay.go), when rt is not nil.
func parseKinetoWith(raw json.RawMessage, top map[string]json.RawMessage, rt *replayTimes) (*Profile, error) {
	evs, err := kinetoTraceEvents(raw)
	if err != nil {
		return nil, err
	}
	threads, steps, launches := kinetoIndex(evs)
	if rt != nil {
		if len(steps) > 1 {
			return nil, fmt.Errorf("%d profiler steps: a replay is aligned with one eager call's kernels, so profile one call", len(steps))
		}
		if err := alignReplay(evs, rt); err != nil {
			return nil, err
		}
	}
	var units []kinetoUnit
	// byOp is the unit of each op call that launched kernels: one call
	// is one unit, however many kernels it runs (cuBLAS's split-K fp32
	// GEMM at batch 1 is a memset, a scaling kernel, the GEMM and a bias
	// epilogue under one aten::addmm), so the k-th call of a module's op
	// stays the k-th event.
	byOp := map[launchOp]int{}
	gpu := false
	for _, e := range evs {
		if isKernelEvent(&e) {
			gpu = true
			l, ok := launches[e.arg("correlation")]
			if !ok {
				units = append(units, kinetoUnit{label: e.Name, us: e.Dur, kernels: 1, step: -1, ts: e.Ts})
				continue
			}
			label, op, at := enclosing(threads[l.thread], l.ts, nil)
			key := launchOp{l.thread, at}
			if i, ok := byOp[key]; ok && at >= 0 {
				units[i].us += e.Dur
				units[i].kernels++
				units[i].ts = min(units[i].ts, l.ts)
				continue
			}
			byOp[key] = len(units)
			units = append(units, kinetoUnit{label: label, op: op, us: e.Dur, kernels: 1, step: stepOf(steps, l.ts), ts: l.ts})
		}
	}
	if !gpu {
		units = topLevelOps(threads, steps)
	}
	if len(units) == 0 {
		return nil, fmt.Errorf("no kernel or cpu_op events: not a PyTorch profiler trace with ops")
	}
	p := &Profile{Format: PyTorch, Runs: max(len(steps), 1), Device: kinetoProvenance(top, gpu)}
	p.Events = kinetoEvents(units, p.Runs)
	switch {
	case rt != nil:
		// The events keep the eager call's order and attribution; their
		// times are the replay's, averaged over its runs.
		p.Runs, p.Replayed = rt.runs, true
		avg := ""
		if rt.runs > 1 {
			avg = fmt.Sprintf(", averaged over %d replays", rt.runs)
		}
		p.Notes = append(p.Notes, fmt.Sprintf("time is the CUDA-graph replay's kernel time (%s: %d kernels in the eager call's order%s), charged to the innermost annotation or module around the eager call's launch", rt.path, len(rt.us)/rt.runs, avg))
	case gpu:
		p.Notes = append(p.Notes, "time is GPU kernel time, charged to the innermost annotation or module around each launch")
	default:
		p.Notes = append(p.Notes, "no GPU kernels: time is each top-level cpu_op's duration")
	}
	if len(steps) > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("averaged over %d ProfilerStep ranges", len(steps)))
	}
	return p, nil
}

// kinetoTraceEvents decodes a Kineto trace's traceEvents list.
func kinetoTraceEvents(raw json.RawMessage) ([]chromeEvent, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("traceEvents is not a list of events")
	}
	return decodeEvents(items)
}

// launchOp is one call of an op on a thread: the index of its innermost
// cpu_op range in the thread's sorted ranges (-1: none).
type launchOp struct {
	thread string
	at     int
}

// launch is where a kernel was launched.
type launch struct {
	thread string
	ts     float64
}

// kinetoIndex sorts host ranges per thread (start ascending, longer
// first so parents precede children), lists ProfilerStep spans, and maps
// correlation ids to their launches.
func kinetoIndex(evs []chromeEvent) (map[string][]kinetoRange, []span, map[string]launch) {
	threads := map[string][]kinetoRange{}
	launches := map[string]launch{}
	var steps []span
	for _, e := range evs {
		if e.Ph != "X" {
			continue
		}
		thread := string(e.Pid) + "/" + string(e.Tid)
		switch e.Cat {
		case "cuda_runtime", "cuda_driver":
			if c := e.arg("correlation"); c != "" {
				launches[c] = launch{thread, e.Ts}
			}
		case "user_annotation", "cpu_op", "python_function":
			if strings.HasPrefix(e.Name, "ProfilerStep#") {
				steps = append(steps, span{e.Ts, e.Ts + e.Dur})
				continue
			}
			if e.Cat == "python_function" && !strings.HasPrefix(e.Name, "nn.Module: ") {
				continue
			}
			threads[thread] = append(threads[thread], kinetoRange{span{e.Ts, e.Ts + e.Dur}, e.Name, e.Cat})
		}
	}
	for _, rs := range threads {
		sort.SliceStable(rs, func(i, j int) bool {
			if rs[i].start != rs[j].start {
				return rs[i].start < rs[j].start
			}
			return rs[i].end > rs[j].end
		})
	}
	sort.Slice(steps, func(i, j int) bool { return steps[i].start < steps[j].start })
	return threads, steps, launches
}

// enclosing names the innermost annotation or module range and the
// innermost cpu_op around ts on a thread, skipping self, and gives that
// cpu_op's index in rs (-1: none). Ranges nest, so the last range
// starting at or before ts that still covers it is the innermost of its
// kind.
func enclosing(rs []kinetoRange, ts float64, self *kinetoRange) (label, op string, at int) {
	at = -1
	end := sort.Search(len(rs), func(i int) bool { return rs[i].start > ts })
	for i := end - 1; i >= 0 && (label == "" || op == ""); i-- {
		r := &rs[i]
		if r == self || r.end < ts {
			continue
		}
		if r.cat == "cpu_op" {
			if op == "" && label == "" {
				op, at = r.name, i
			}
		} else if label == "" {
			label = r.name
		}
	}
	return label, op, at
}

// topLevelOps are the cpu_ops not inside another cpu_op, each a unit.
func topLevelOps(threads map[string][]kinetoRange, steps []span) []kinetoUnit {
	var units []kinetoUnit
	names := make([]string, 0, len(threads))
	for t := range threads {
		names = append(names, t)
	}
	sort.Strings(names)
	for _, t := range names {
		rs := threads[t]
		var open []span // enclosing cpu_ops
		for i := range rs {
			r := &rs[i]
			if r.cat != "cpu_op" {
				continue
			}
			for len(open) > 0 && open[len(open)-1].end <= r.start {
				open = open[:len(open)-1]
			}
			top := len(open) == 0
			open = append(open, r.span)
			if !top {
				continue
			}
			label, _, _ := enclosing(rs, r.start, r)
			units = append(units, kinetoUnit{label: label, op: r.name, us: r.end - r.start, step: stepOf(steps, r.start), ts: r.start})
		}
	}
	sort.SliceStable(units, func(i, j int) bool { return units[i].ts < units[j].ts })
	return units
}

// stepOf is the ProfilerStep containing ts: 0 with no steps, -1 outside.
func stepOf(steps []span, ts float64) int {
	return runOf(steps, ts)
}

// kinetoEvents aggregates units over steps like aggregate: the k-th unit
// of a (label, op) pair in a step is one event.
func kinetoEvents(units []kinetoUnit, runs int) []Event {
	sort.SliceStable(units, func(i, j int) bool { return units[i].ts < units[j].ts })
	nodes := make([]ortNode, 0, len(units))
	for _, u := range units {
		if u.step < 0 {
			u.step = 0
		}
		name := u.label
		if name == "" {
			name = u.op
		}
		nodes = append(nodes, ortNode{name: name + "\x00" + u.op, op: u.op, kernelUS: u.us, hostUS: u.us, kernels: u.kernels, run: u.step})
	}
	evs := aggregate(nodes, 0, runs, false)
	for i := range evs {
		name, aten, _ := strings.Cut(evs[i].Name, "\x00")
		evs[i].Name = name
		evs[i].OpType = atenOp(aten)
		if evs[i].OpType == "" {
			evs[i].OpType = aten
		}
	}
	return evs
}

// kinetoDevice is the first entry of a Kineto trace's deviceProperties
// (libkineto writes one per GPU the trace touched, from cudaDeviceProp).
type kinetoDevice struct {
	Name           string  `json:"name"`
	NumSMs         int     `json:"numSms"`
	TotalGlobalMem float64 `json:"totalGlobalMem"`
}

// kinetoProvenance is what a Kineto trace's top level says of its
// machine: the first device's name, SMs and memory, and the CUDA driver's
// API version (cuda_driver_version, cudaDriverGetVersion's 1000·major +
// 10·minor: 13000 is "CUDA 13.0"), and the software, PyTorch's profiler
// with the CUDA runtime it was built against (cuda_runtime_version, the
// same encoding; without it, what the format alone tells is the caller's:
// loop.ProfileSoftware). Fields it lacks or cannot read stay
// unknown: a trace that says nothing is still a trace. A trace with
// neither deviceProperties nor GPU kernels (gpu false) ran on the CPU.
func kinetoProvenance(top map[string]json.RawMessage, gpu bool) calib.Provenance {
	var p calib.Provenance
	if _, ok := top["deviceProperties"]; !ok && !gpu {
		// No device and no GPU kernel: the profiler ran on the CPU
		// (scripts/measure_gpu.py --device cpu writes such traces).
		return calib.Provenance{Device: "cpu"}
	}
	var devs []kinetoDevice
	if json.Unmarshal(top["deviceProperties"], &devs) == nil && len(devs) > 0 {
		d := devs[0]
		p.Device = calib.CleanField(d.Name)
		if d.NumSMs > 0 && d.NumSMs < 1<<20 {
			p.SMs = d.NumSMs
		}
		if d.TotalGlobalMem > 0 && d.TotalGlobalMem < 1<<50 {
			p.MemoryGiB = math.Round(d.TotalGlobalMem/(1<<30)*10) / 10
		}
	}
	var v int
	if json.Unmarshal(top["cuda_driver_version"], &v) == nil && v >= 1000 && v < 1000000 {
		p.Driver = fmt.Sprintf("CUDA %d.%d driver API", v/1000, v%1000/10)
	}
	if json.Unmarshal(top["cuda_runtime_version"], &v) == nil && v >= 1000 && v < 1000000 {
		p.Software = fmt.Sprintf("PyTorch (Kineto trace, CUDA runtime %d.%d)", v/1000, v%1000/10)
	}
	return p
}
