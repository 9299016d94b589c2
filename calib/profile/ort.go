package profile

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/onnxcost/onnxcost/calib"
)

// onnxruntime's profile (SessionOptions.enable_profiling) is a JSON array
// of Chrome trace events, written by onnxruntime/core/common/profiler.cc:
//   - cat "Session": "model_loading_uri", "session_initialization", and
//     one "model_run" per InferenceSession::Run (with a nested
//     "SequentialExecutor::Execute");
//   - cat "Node": "<node>_kernel_time" per node execution (older builds
//     add zero-length "<node>_fence_before"/"_fence_after"), args
//     op_name (op type), provider, node_index, input/output shapes;
//   - cat "Kernel" (CUDA/ROCm EP with profiling): one per GPU kernel,
//     named by the demangled kernel, dur its GPU time. GPUProfilerBase::
//     MergeEvents (onnxruntime/core/common/gpu_profiler_common.h) puts
//     each kernel right after the node event whose Start() correlation
//     it ran under and sets args "op_name" (the node's op type) and
//     "parent_name" (that event's name, "<node>_kernel_time"); releases
//     before parent_name existed only copy op_name, so without it the
//     parent is the Node event the kernel follows.
// A CUDA node's _kernel_time is host launch time, so with kernel events
// a node's time is its kernels' GPU time.

// chromeEvent is one Chrome trace event as onnxruntime and Kineto write it.
type chromeEvent struct {
	Name string                     `json:"name"`
	Cat  string                     `json:"cat"`
	Ph   string                     `json:"ph"`
	Ts   float64                    `json:"ts"`
	Dur  float64                    `json:"dur"`
	Pid  json.RawMessage            `json:"pid"`
	Tid  json.RawMessage            `json:"tid"`
	Args map[string]json.RawMessage `json:"args"`
}

// arg is a string argument, or a number's text; "" when absent.
func (e *chromeEvent) arg(key string) string {
	raw, ok := e.Args[key]
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(raw))
}

// decodeEvents decodes trace events, checking every timestamp and
// duration (microseconds) so that later sums stay finite.
func decodeEvents(items []json.RawMessage) ([]chromeEvent, error) {
	evs := make([]chromeEvent, len(items))
	for i, raw := range items {
		if err := json.Unmarshal(raw, &evs[i]); err != nil {
			return nil, fmt.Errorf("trace event %d: %v", i, strings.TrimPrefix(err.Error(), "json: "))
		}
		e := &evs[i]
		if math.IsNaN(e.Ts) || math.IsInf(e.Ts, 0) || math.Abs(e.Ts) > maxTsUS {
			return nil, fmt.Errorf("trace event %d (%q): timestamp %g out of range", i, e.Name, e.Ts)
		}
		if err := duration(fmt.Sprintf("trace event %d (%q)", i, e.Name), e.Dur*1e-6); err != nil {
			return nil, err
		}
	}
	return evs, nil
}

// maxTsUS bounds a trace timestamp: about 317 years in microseconds,
// beyond any epoch a tracer uses.
const maxTsUS = 1e16

// ortNode is one execution of one node.
type ortNode struct {
	name, op, provider string
	hostUS, kernelUS   float64
	kernels            int
	run                int
	ts                 float64 // start, trace microseconds
	// within is the control-flow node whose subgraph this execution ran
	// in (nestControlFlow), parent that execution's index (-1 at the top
	// level); childHostUS is the host time of the executions nested
	// directly in this one whose own time is host time too.
	within      string
	parent      int
	childHostUS float64
}

// controlFlowOps are the ops that run subgraphs: onnxruntime times each
// subgraph node's execution and the control-flow node around them, whose
// event spans theirs.
var controlFlowOps = map[string]bool{"Loop": true, "Scan": true, "If": true,
	"BeamSearch": true, "WhisperBeamSearch": true, "GreedySearch": true, "Sampling": true}

// nestControlFlow sets within and parent on every node execution that
// lies inside a control-flow node's execution of the same run, the
// innermost one (exclusiveHost then takes its host time off that node's).
// Executions in start order, longer first on a tie, against a stack of
// the control-flow spans still open: the spans nest, so one pass does.
func nestControlFlow(nodes []ortNode) {
	order := make([]int, 0, len(nodes))
	hasCF := false
	for i := range nodes {
		nodes[i].parent = -1
		order = append(order, i)
		hasCF = hasCF || controlFlowOps[nodes[i].op]
	}
	if !hasCF {
		return
	}
	sort.SliceStable(order, func(a, b int) bool {
		x, y := &nodes[order[a]], &nodes[order[b]]
		if x.ts != y.ts {
			return x.ts < y.ts
		}
		return x.hostUS > y.hostUS
	})
	var open []int
	for _, i := range order {
		n := &nodes[i]
		for len(open) > 0 {
			p := &nodes[open[len(open)-1]]
			if p.run == n.run && n.ts+n.hostUS <= p.ts+p.hostUS {
				break
			}
			open = open[:len(open)-1]
		}
		if len(open) > 0 {
			top := open[len(open)-1]
			n.within, n.parent = nodes[top].name, top
		}
		if controlFlowOps[n.op] {
			open = append(open, i)
		}
	}
}

// exclusiveHost makes a control-flow node's host time its own: the host
// time of the subgraph nodes run inside it, counted on their own events,
// comes off it (when their time is host time too: a node timed by its
// GPU kernels ran asynchronously to the host span around it).
func exclusiveHost(nodes []ortNode, gpu bool) {
	for i := range nodes {
		n := &nodes[i]
		if n.parent >= 0 && usesHost(*n, gpu) && usesHost(nodes[n.parent], gpu) {
			nodes[n.parent].childHostUS += n.hostUS
		}
	}
}

// parseORT reads an onnxruntime profile.
func parseORT(items []json.RawMessage) (*Profile, error) {
	evs, err := decodeEvents(items)
	if err != nil {
		return nil, err
	}
	runs := ortRuns(evs)
	nodes, orphanUS, err := ortNodes(evs, runs)
	if err != nil {
		return nil, err
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("no onnxruntime node events (cat \"Node\", name \"<node>_kernel_time\"): not an onnxruntime profile, or profiled no run")
	}
	gpu := false
	for _, n := range nodes {
		gpu = gpu || n.kernels > 0
	}
	p := &Profile{Format: ONNXRuntime, Runs: 1}
	first := 0
	if len(runs) > 1 {
		first, p.Runs = 1, len(runs)-1
		p.Notes = append(p.Notes, fmt.Sprintf("averaged over runs 2-%d of %d: the first is onnxruntime's warm-up (allocation, algorithm search) and is left out", len(runs), len(runs)))
	}
	if !gpu && onlyCPUProvider(nodes) {
		p.Device = calib.Provenance{Device: "cpu"}
	}
	exclusiveHost(nodes, gpu)
	p.Events = aggregate(nodes, first, p.Runs, gpu)
	p.Notes = append(p.Notes, ortNotes(nodes, gpu, orphanUS/float64(max(len(runs), 1)))...)
	return p, nil
}

// span is a [start, end] interval in trace microseconds.
type span struct{ start, end float64 }

// ortRuns lists the model_run spans in time order.
func ortRuns(evs []chromeEvent) []span {
	var runs []span
	for _, e := range evs {
		if e.Cat == "Session" && e.Name == "model_run" {
			runs = append(runs, span{e.Ts, e.Ts + e.Dur})
		}
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].start < runs[j].start })
	return runs
}

// runOf is the index of the run containing ts (0 when the profile has
// no model_run events, -1 when ts lies outside every run).
func runOf(runs []span, ts float64) int {
	if len(runs) == 0 {
		return 0
	}
	i := sort.Search(len(runs), func(i int) bool { return runs[i].start > ts }) - 1
	if i >= 0 && ts <= runs[i].end {
		return i
	}
	return -1
}

// ortNodes collects node executions and charges each GPU kernel to its
// parent node; orphanUS is kernel time with no node to charge.
func ortNodes(evs []chromeEvent, runs []span) (nodes []ortNode, orphanUS float64, err error) {
	last := map[string]int{} // node event name → index in nodes
	prev := -1               // the last node event in array order
	for _, e := range evs {
		switch {
		case e.Cat == "Node" && strings.HasSuffix(e.Name, "_kernel_time"):
			nodes = append(nodes, ortNode{
				name: strings.TrimSuffix(e.Name, "_kernel_time"), op: e.arg("op_name"),
				provider: e.arg("provider"), hostUS: e.Dur, run: runOf(runs, e.Ts), ts: e.Ts,
			})
			prev = len(nodes) - 1
			last[e.Name] = prev
		case e.Cat == "Kernel":
			parent := prev
			if pn := e.arg("parent_name"); pn != "" {
				parent = -1
				if i, ok := last[pn]; ok {
					parent = i
				}
			}
			if parent < 0 {
				orphanUS += e.Dur
				continue
			}
			nodes[parent].kernelUS += e.Dur
			nodes[parent].kernels++
		}
	}
	nestControlFlow(nodes)
	return nodes, orphanUS, nil
}

// aggregate averages node executions over the kept runs, keying the k-th
// execution of a name within a run as one event (a node run twice per
// run, or nodes that share a name, stay apart), in first-seen order; a
// control-flow subgraph's node is one event whatever its iterations.
func aggregate(nodes []ortNode, first, runs int, gpu bool) []Event {
	type key struct {
		name string
		k    int
	}
	index := map[key]int{}
	var out []Event
	seen := map[int]map[string]int{}
	for _, n := range nodes {
		if n.run < first {
			continue
		}
		if seen[n.run] == nil {
			seen[n.run] = map[string]int{}
		}
		k := key{n.name, seen[n.run][n.name]}
		if n.within != "" {
			// A subgraph node runs once per iteration: one event, its
			// time summed over the iterations of the run.
			k = key{n.within + "\x00" + n.name, 0}
		} else {
			seen[n.run][n.name]++
		}
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, Event{Name: n.name, OpType: n.op, Within: n.within})
		}
		out[i].DurS += nodeUS(n, gpu) * 1e-6
		out[i].Kernels += n.kernels
	}
	for i := range out {
		out[i].DurS /= float64(runs)
		out[i].Kernels = int(math.Round(float64(out[i].Kernels) / float64(runs)))
	}
	return out
}

// nodeUS is a node's measured time: its GPU kernels' time in a profile
// with kernels, except for nodes placed on the CPU EP, which run on the
// host; the host time in a CPU-only profile.
func nodeUS(n ortNode, gpu bool) float64 {
	if !gpu || n.kernels > 0 || n.provider == "CPUExecutionProvider" {
		if n.kernels > 0 {
			return n.kernelUS
		}
		return max(0, n.hostUS-n.childHostUS)
	}
	return 0
}

// usesHost reports whether nodeUS times n by its host span.
func usesHost(n ortNode, gpu bool) bool {
	return n.kernels == 0 && (!gpu || n.provider == "CPUExecutionProvider")
}

// onlyCPUProvider reports whether every node that names its execution
// provider ran on onnxruntime's CPU one, and some did: a profile whose
// times are a CPU's (the profile names no device otherwise).
func onlyCPUProvider(nodes []ortNode) bool {
	named := false
	for _, n := range nodes {
		if n.provider != "" {
			if n.provider != "CPUExecutionProvider" {
				return false
			}
			named = true
		}
	}
	return named
}

// ortNotes says which providers ran and what time was left out.
func ortNotes(nodes []ortNode, gpu bool, orphanUS float64) []string {
	providers := map[string]bool{}
	for _, n := range nodes {
		if n.provider != "" {
			providers[n.provider] = true
		}
	}
	names := make([]string, 0, len(providers))
	for p := range providers {
		names = append(names, p)
	}
	sort.Strings(names)
	notes := []string{"providers: " + strings.Join(names, ", ")}
	if gpu {
		notes = append(notes, "node time is GPU kernel time (Kernel events); nodes on a GPU provider with no kernel count 0")
	} else {
		notes = append(notes, "node time is onnxruntime's _kernel_time (no GPU Kernel events in the profile)")
	}
	if orphanUS > 0 {
		notes = append(notes, "left out "+strconv.FormatFloat(orphanUS, 'f', 1, 64)+" us per run of GPU kernels launched outside any node")
	}
	return notes
}
