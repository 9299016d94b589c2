package profile

import (
	"slices"
	"sort"
	"strings"

	"github.com/onnxcost/onnxcost/cost/report"
)

// NodeTime is one report node beside what the profile measured for it.
// Profiled names the profile events whose time landed on it; Events
// counts them.
type NodeTime struct {
	Name        string `json:"name"`
	OpType      string `json:"op_type"`
	KernelClass string `json:"kernel_class,omitempty"`
	// PredictedS is the node's kernel time: its time less the idle gap
	// between kernels (report.NodeCost.LaunchS), its ramp kept, which is
	// what a profile's kernel and layer durations measure.
	PredictedS float64  `json:"predicted_s"`
	MeasuredS  float64  `json:"measured_s"`
	Events     int      `json:"events"`
	Profiled   []string `json:"profiled,omitempty"`
	// Shared is, when more than one, how many nodes the events that
	// landed on this one were pooled over: MeasuredS is then its share of
	// their time in proportion to PredictedS, so its error is the pool's
	// (a module's kernels that no finer match placed, a fused layer's).
	Shared int `json:"shared,omitempty"`
	// group is the node's share group, pools joined where they share a
	// node (−1 when its time is its own): Rows fits each group as one
	// measurement.
	group int
}

// kernelTimeS is what a profile's kernel and layer durations measure of
// report node nd: its time less the idle gap between kernels (LaunchS),
// its ramp kept. Both a node's row (NodeTime) and a profiled event's share
// of its nodes' prediction (ProfiledTime) are in these terms; the events'
// shares once carried the gap too, which put a PyTorch trace's small
// kernels (1-2 µs measured) 50-100% over in profiled_nodes while their
// nodes' rows read right. A node the runtime computes on the host
// (report.NodeCost.OnHost: onnxruntime's CUDA provider's shape arithmetic
// of a symbolic dim) is what a profile times by its host span: its host_s.
// hostClass is the kernel_class of a node row the runtime computes on the
// host (report.NodeCost.OnHost): its errors are the host's, kept apart
// from the GPU kernels' classes.
const hostClass = "host"

func kernelTimeS(nd *report.NodeCost) float64 {
	if nd.OnHost {
		return nd.HostS
	}
	return max(0, nd.TimeS-nd.LaunchS)
}

// ProfiledTime is one profiled node (event) and what it was matched to:
// the report nodes its time went to (none when unmatched) and its share of
// their predicted time (their prediction split over the events pooled on
// them in proportion to the events' measured time).
type ProfiledTime struct {
	Name   string `json:"name"`
	OpType string `json:"op_type,omitempty"`
	// Within is the control-flow node whose subgraph it ran in
	// (Event.Within).
	Within     string   `json:"within,omitempty"`
	MeasuredS  float64  `json:"measured_s"`
	PredictedS float64  `json:"predicted_s"`
	Nodes      []string `json:"nodes"`
}

// Match is a profile attributed to a report's nodes: one NodeTime per
// report node that has measured time or a kernel, in report order; one
// ProfiledTime per profiled node, in profile order; the time matched and
// not (per run), MatchedS over their sum, and the events no node took,
// largest first.
type Match struct {
	Nodes               []NodeTime     `json:"nodes"`
	Profiled            []ProfiledTime `json:"profiled_nodes"`
	MatchedS            float64        `json:"matched_s"`
	UnmatchedS          float64        `json:"unmatched_s"`
	MatchedTimeFraction float64        `json:"matched_time_fraction"`
	Unmatched           []Event        `json:"unmatched"`
}

// MatchReport attributes p's events to rep's nodes, in four steps (an
// event run inside a control-flow node's subgraph, Event.Within, first
// takes that node's event's nodes: nestInParents):
//
//  1. by name: the event's ONNX nodes (TensorRT metadata) or its own
//     name, exactly, as a member of a fused node's FusedFrom, after
//     stripping onnxruntime's fusion suffixes (names.go), as the name of
//     an output tensor (onnxruntime's NCHWc nodes are named after one),
//     as "<conv>_<activation>" (onnxruntime's FusedConv), or as a module
//     path ("layer1.0.conv1") of a torch.onnx node of a fitting op type;
//     a Cast onnxruntime inserted for a precision its provider lacks
//     ("InsertedPrecisionFreeCast_<tensor>") takes the tensor's
//     producer, else its first reader, and a Q/DQ pair its QDQ
//     propagation added ("<tensor>_q", "<tensor>_dq<i>") the row holding
//     the tensor's producer (through the model as read when the plan
//     fused that node away);
//  2. by data flow, then position: an event still without a node and
//     with an op type takes the nearest free report node that can stand
//     for it (its op type or a fused member's is a seed, names.go: an Erf
//     for a Gelu) feeding the next named event's node or fed by the
//     previous one's (byFlow), else the first such node between those
//     events' nodes in report order; a fused event with none takes the
//     neighbouring fused report node that swallowed its ops; an event
//     still without one takes, by data flow, a node the runtime ran as
//     parts (a contrib op whose function body onnxruntime inlined), as
//     do the parts after it;
//  3. onnxruntime's helper nodes (3-D Gemm reshapes, NCHWc reorders,
//     host copies, and a layout transpose its NHWC transformer inserted
//     that no node of the model took) take the node of the event they
//     serve; an event of a node run as
//     part of an inlined function body and placed by nothing above
//     takes the report's one node that can run as parts
//     (placeInlinedParts);
//     A shape-arithmetic event onnxruntime named itself, still without a
//     node, between two events on the same nodes takes them
//     (placeShapeArithmetic);
//  4. report nodes with a kernel and no event join an adjacent event's
//     nodes when the event's op absorbs their op type (a Conv event
//     takes the BatchNormalization and Relu it was fused with): the
//     runtime fused them, so its time covers them.
//
// Events sharing a node pool their time, which is split over the pooled
// nodes in proportion to PredictedS (equally when all predict 0).
func MatchReport(p *Profile, rep *report.Report) *Match { return MatchReportFrom(p, rep, nil) }

// MatchReportFrom is MatchReport with src, the report of the model as
// read (no passes; nil for none), for one more step before step 2: an
// event still without a node that names a node of the model the plan
// removed (an Identity bypassed, shape arithmetic folded into constants,
// a node left dead by folding: onnxruntime runs them when its own
// optimisations are off, and its Shape nodes even when on) takes the
// planned node that node's outputs fed (ElidedHosts), so its time is
// matched to the ONNX graph instead of left over. Before step 2, because
// the event is that node: placed by position, a shape Mul took the fused
// GELU beside it (a Mul member can stand for a Mul) and left the GELU's
// own event without a node.
func MatchReportFrom(p *Profile, rep, src *report.Report) *Match {
	g := newGraph(rep)
	var hosts map[string]string
	if src != nil {
		hosts = ElidedHosts(src, rep)
		g.addSourceOutputs(src, hosts)
	}
	anchors := make([][]int, len(p.Events))
	for i := range p.Events {
		anchors[i] = g.resolve(p.Events[i])
	}
	nestInParents(p.Events, anchors)
	g.claim(anchors)
	if src != nil {
		g.placeElided(p.Events, anchors, hosts)
	}
	g.placeByPosition(p.Events, anchors)
	g.placeInlinedParts(p.Events, anchors)
	placeHelpers(p.Events, anchors)
	placeShapeArithmetic(p.Events, anchors)
	owner, pools := g.pool(p.Events, anchors)
	g.absorb(p.Events, owner, pools)
	return g.distribute(p.Events, pools)
}

// nestInParents gives an event run inside a control-flow node's
// subgraph (Event.Within) the nodes of the outermost control-flow node's
// event around it:
// onnxcost prices a Loop, Scan or If with its subgraphs as one node, and
// a subgraph node's name may equal a main-graph node's. One nested in an
// event that took no node stays unplaced (and unmatched) with it.
func nestInParents(evs []Event, anchors [][]int) {
	first := map[string]int{}
	for i, e := range evs {
		if _, ok := first[e.Name]; !ok {
			first[e.Name] = i
		}
	}
	for i, e := range evs {
		if e.Within == "" {
			continue
		}
		anchors[i] = nil
		// An If inside a Loop is itself nested: the top-level
		// control-flow node holds them all.
		j, ok := first[e.Within]
		for hops := 0; ok && evs[j].Within != "" && hops < len(evs); hops++ {
			j, ok = first[evs[j].Within]
		}
		if ok && evs[j].Within == "" {
			anchors[i] = anchors[j]
		}
	}
}

// graph indexes a report's nodes by name, output and module path, with
// their data-flow neighbours.
type graph struct {
	nodes            []report.NodeCost
	byName, byOutput map[string]int
	// bySourceOutput is byOutput over the model as read (addSourceOutputs);
	// nil without it.
	bySourceOutput map[string]int
	// reader is the first node (report order) reading each tensor.
	reader               map[string]int
	byScope              map[string][]int
	producers, consumers [][]int
	claimed              []bool
}

func newGraph(rep *report.Report) *graph {
	n := len(rep.Nodes)
	g := &graph{nodes: rep.Nodes, byName: map[string]int{}, byOutput: map[string]int{}, reader: map[string]int{},
		byScope: map[string][]int{}, producers: make([][]int, n), consumers: make([][]int, n), claimed: make([]bool, n)}
	for i, nd := range rep.Nodes {
		names := append([]string{nd.Name}, nd.FusedFrom...)
		for _, name := range names {
			if _, ok := g.byName[name]; !ok {
				g.byName[name] = i
			}
			if k := scopeKey(name); k != "" {
				g.byScope[k] = appendUnique(g.byScope[k], i)
			}
		}
		// A dynamo export names nodes without their modules and keeps
		// the path in metadata (report.NodeCost.Module).
		if k := scopeKey(nd.Module + "/op"); nd.Module != "" && k != "" {
			g.byScope[k] = appendUnique(g.byScope[k], i)
		}
		for _, o := range nd.Outputs {
			g.byOutput[o.Name] = i
		}
	}
	for i, nd := range rep.Nodes {
		for _, in := range nd.Inputs {
			if _, ok := g.reader[in.Name]; !ok {
				g.reader[in.Name] = i
			}
			if j, ok := g.byOutput[in.Name]; ok && j != i {
				g.producers[i] = appendUnique(g.producers[i], j)
				g.consumers[j] = appendUnique(g.consumers[j], i)
			}
		}
	}
	return g
}

func appendUnique(list []int, v int) []int {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	return append(list, v)
}

// hasKernel reports whether the report prices a kernel for node i.
func (g *graph) hasKernel(i int) bool {
	return g.nodes[i].Launches > 0 || g.nodes[i].TimeS > 0
}

// lookup finds the report node of one profile name (step 1).
func (g *graph) lookup(name string) (int, bool) {
	for _, c := range ortCandidates(name) {
		if i, ok := g.byName[c]; ok {
			return i, true
		}
		if i, ok := g.byOutput[c]; ok {
			return i, true
		}
		if loc := outputSuffix.FindStringIndex(c); loc != nil {
			if i, ok := g.byName[c[:loc[0]]]; ok {
				return i, true
			}
		}
	}
	return -1, false
}

// resolve is step 1 for one event.
func (g *graph) resolve(e Event) []int {
	var out []int
	if len(e.Nodes) > 0 {
		var ends []int
		for _, n := range e.Nodes {
			if r, ok := strings.CutPrefix(n, ForeignRangePrefix); ok {
				if i, ok := g.lookup(r); ok {
					ends = append(ends, i)
				}
			} else if i, ok := g.lookup(n); ok {
				out = appendUnique(out, i)
			}
		}
		if len(ends) == 2 {
			for i := min(ends[0], ends[1]); i <= max(ends[0], ends[1]); i++ {
				out = appendUnique(out, i)
			}
		}
		sort.Ints(out)
		return out
	}
	if i, ok := g.lookup(e.Name); ok {
		return []int{i}
	}
	if i, ok := g.castTarget(e.Name); ok {
		return []int{i}
	}
	if t, ok := ortPropagatedQDQ(e); ok {
		if i, ok := g.byOutput[t]; ok {
			return []int{i}
		}
		if i, ok := g.bySourceOutput[t]; ok {
			return []int{i}
		}
	}
	for k := strings.Index(e.Name, "_"); k > 0; k = nextUnderscore(e.Name, k) {
		a, okA := g.lookup(e.Name[:k])
		b, okB := g.lookup(e.Name[k+1:])
		if okA && okB {
			return uniqueSorted(a, b)
		}
	}
	for _, i := range g.byScope[e.Name] {
		// An aten op atenOps does not map (a fused one such as
		// _native_multi_head_attention) is matched by its annotation
		// alone: it stands for every node of its module.
		if e.OpType == "" || strings.HasPrefix(e.OpType, "aten::") || contains(signature(e.OpType), g.opOf(i)) || g.opOf(i) == e.OpType {
			out = append(out, i)
		}
	}
	return out
}

// castTarget is the node a Cast onnxruntime inserted for a tensor
// (ortCastTensor) serves: the tensor's producer, whose output it converts
// or whose result the reader needs in another precision, else, for a
// weight or graph input, its first reader.
func (g *graph) castTarget(name string) (int, bool) {
	t, ok := ortCastTensor(name)
	if !ok {
		return -1, false
	}
	if i, ok := g.byOutput[t]; ok {
		return i, true
	}
	if i, ok := g.reader[t]; ok {
		return i, true
	}
	// A constant of a function body onnxruntime inlined
	// ("_inlfunc_<Op>_<name>"): the first node of that op.
	if rest, ok := strings.CutPrefix(t, "_inlfunc_"); ok {
		if k := strings.Index(rest, "_"); k > 0 {
			for i := range g.nodes {
				if bareOp(g.nodes[i].OpType) == rest[:k] && g.hasKernel(i) {
					return i, true
				}
			}
		}
	}
	return -1, false
}

// bareOp is an op type without its domain ("com.microsoft.FastGelu" →
// "FastGelu").
func bareOp(op string) string { return op[strings.LastIndex(op, ".")+1:] }

func nextUnderscore(s string, k int) int {
	j := strings.Index(s[k+1:], "_")
	if j < 0 {
		return -1
	}
	return k + 1 + j
}

func uniqueSorted(a, b int) []int {
	if a == b {
		return []int{a}
	}
	return []int{min(a, b), max(a, b)}
}

// opOf is node i's op type; for a fused node, the op its name ends in
// when that names an op (torch.onnx), else its own.
func (g *graph) opOf(i int) string {
	return g.nodes[i].OpType
}

// claim marks the nodes anchors name as taken.
func (g *graph) claim(anchors [][]int) {
	for _, a := range anchors {
		for _, i := range a {
			g.claimed[i] = true
		}
	}
}

// placeByPosition is step 2. Only events that took a node by its own
// name bound the window (ordered): one that named a member of a fused
// node sits wherever that node's first member ran, which can be well
// before the fused node in report order (a fused attention holds the
// transpose that feeds the Q projection: onnxruntime runs the transpose,
// then the projection, and onnxcost's report puts the projection first),
// and bounding by it hid the nodes before it from the events after it.
func (g *graph) placeByPosition(evs []Event, anchors [][]int) {
	ordered := make([][]int, len(anchors))
	for i, e := range evs {
		if len(e.Nodes) > 0 || g.byOwnName(e.Name, anchors[i]) {
			ordered[i] = anchors[i]
		}
	}
	// part[i] is the node event i was placed on as one part of it
	// (decomposes), -1 when not.
	part := make([]int, len(evs))
	for i := range part {
		part[i] = -1
	}
	for i, e := range evs {
		if len(anchors[i]) > 0 || e.OpType == "" {
			continue
		}
		if helper, _ := ortHelper(e); helper {
			continue
		}
		// The next part of a decomposed node: an event named as
		// onnxruntime names an inlined body's nodes ("<Op>_<n>") right
		// after one.
		if j := prevPart(part, i); j >= 0 && opFromName(e.Name) == e.OpType && g.decomposes(e.OpType)(j) {
			anchors[i], ordered[i], part[i] = []int{j}, []int{j}, j
			continue
		}
		want := seeds(e.OpType)
		if j, ok := g.byFlow(ordered, i, g.free(want)); ok {
			anchors[i], ordered[i] = []int{j}, []int{j}
			g.claimed[j] = true
			continue
		}
		lo, hi := g.window(ordered, i)
		for j := lo + 1; j < hi; j++ {
			if !g.claimed[j] && g.hasKernel(j) && g.standsFor(j, want) {
				anchors[i] = []int{j}
				ordered[i] = anchors[i]
				g.claimed[j] = true
				break
			}
		}
		if len(anchors[i]) == 0 {
			if _, fused := fusedOps[e.OpType]; fused {
				anchors[i] = g.fusedNeighbour(anchors, i, want)
			}
		}
		if len(anchors[i]) == 0 {
			if j, ok := g.byFlow(ordered, i, g.decomposes(e.OpType)); ok {
				anchors[i], ordered[i], part[i] = []int{j}, []int{j}, j
				g.claimed[j] = true
			}
		}
	}
}

// free accepts a node no event has taken, with a kernel, that can stand
// for an event whose seed op types are want.
func (g *graph) free(want []string) func(int) bool {
	return func(m int) bool { return !g.claimed[m] && g.hasKernel(m) && g.standsFor(m, want) }
}

// decomposes accepts a node as read (not one onnxcost fused) with a
// kernel, whose op the runtime may have run as parts, one of them of op
// type op: onnxruntime inlines the function body of a contrib op its
// provider has no kernel for (the CPU provider's fp16 FastGelu runs as
// Mul, Add and Tanh nodes with generated names), so several events share
// the node, taken or not. The parts are fusedOps' signature of the
// node's op.
func (g *graph) decomposes(op string) func(int) bool {
	return func(m int) bool {
		t := bareOp(g.nodes[m].OpType)
		if t == op || len(g.nodes[m].FusedFrom) >= 2 || !g.hasKernel(m) {
			return false
		}
		if f, ok := fusedOps[t]; ok && contains(f.sig, op) {
			return true
		}
		// A standard op the ONNX spec defines as a function: a runtime
		// with no kernel for it runs its body, of any ops.
		return onnxFunctionOps[t] && !strings.Contains(g.nodes[m].OpType, ".")
	}
}

// placeInlinedParts gives an event still without a node, named as
// onnxruntime names an inlined function body's nodes ("<Op>_<n>"), the
// one node of the report whose op the runtime may have run as parts of
// that op (decomposes): a body node that reads only graph inputs runs
// wherever the runtime's order puts it, away from the body's other
// nodes, so neither data flow nor position finds it. With two or more
// such nodes it stays unmatched.
func (g *graph) placeInlinedParts(evs []Event, anchors [][]int) {
	for i, e := range evs {
		if len(anchors[i]) > 0 || e.Within != "" || e.OpType == "" || opFromName(e.Name) != e.OpType {
			continue
		}
		accept, only := g.decomposes(e.OpType), -1
		for m := range g.nodes {
			if accept(m) {
				if only >= 0 {
					only = -2
					break
				}
				only = m
			}
		}
		if only >= 0 {
			anchors[i] = []int{only}
		}
	}
}

// onnxFunctionOps are the ai.onnx ops whose specification is a function
// body (the "Function" ops of the ONNX operator list, opsets 12-23): a
// runtime whose provider lacks a kernel for one inlines the body, and its
// profile then holds the body's nodes under generated names (onnxruntime
// 1.23's CPU provider runs NegativeLogLikelihoodLoss as Unsqueeze,
// GatherElements, Neg, Slice, Squeeze and a reduction).
var onnxFunctionOps = map[string]bool{
	"Bernoulli": true, "BlackmanWindow": true, "CastLike": true, "Celu": true, "CenterCropPad": true,
	"DynamicQuantizeLinear": true, "Gelu": true, "GreaterOrEqual": true, "GroupNormalization": true,
	"HammingWindow": true, "HannWindow": true, "HardSwish": true, "LayerNormalization": true,
	"LessOrEqual": true, "MeanVarianceNormalization": true, "Mish": true, "NegativeLogLikelihoodLoss": true,
	"Range": true, "ReduceL1": true, "ReduceL2": true, "ReduceLogSum": true, "ReduceLogSumExp": true,
	"ReduceSumSquare": true, "Shrink": true, "SoftmaxCrossEntropyLoss": true, "ThresholdedRelu": true,
	"Attention": true, "RMSNormalization": true, "RotaryEmbedding": true,
}

// prevPart is the node the event before i was placed on as a part, or -1.
func prevPart(part []int, i int) int {
	if i == 0 {
		return -1
	}
	return part[i-1]
}

// flowHops is how far, in data-flow edges, byFlow looks from a
// neighbouring event's node: a GEMM's bias Add and output reshape lie
// between it and the transpose that reads it.
const flowHops = 4

// byFlow places event i by data flow rather than report order: the
// nearest node accept takes (up to flowHops edges) among the
// producers of the next placed event's nodes (the event's output feeds
// what ran next) or the consumers of the previous one's, the side with
// fewer events between first (the next on a tie). A runtime's execution
// order is one topological order and the report's another (onnxruntime
// ran a block's K projection first, the report lists Q first), so the
// report-order window alone gave an unnamed Q projection's time to K.
func (g *graph) byFlow(ordered [][]int, i int, accept func(int) bool) (int, bool) {
	prev, next := -1, -1
	for j := i - 1; j >= 0; j-- {
		if len(ordered[j]) > 0 {
			prev = j
			break
		}
	}
	for j := i + 1; j < len(ordered); j++ {
		if len(ordered[j]) > 0 {
			next = j
			break
		}
	}
	type side struct {
		at   int
		dist int
		walk [][]int
	}
	sides := []side{{next, next - i, g.producers}, {prev, i - prev, g.consumers}}
	if prev >= 0 && (next < 0 || sides[1].dist < sides[0].dist) {
		sides[0], sides[1] = sides[1], sides[0]
	}
	for _, sd := range sides {
		if sd.at < 0 {
			continue
		}
		if n, ok := breadthFirst(ordered[sd.at], sd.walk, flowHops, accept); ok {
			return n, true
		}
	}
	return -1, false
}

// breadthFirst walks next breadth-first from the nodes start, at most hops
// edges (hops < 0: no limit), to the first node accept takes, in index
// order at each distance; -1 and false when there is none.
func breadthFirst(start []int, next [][]int, hops int, accept func(int) bool) (int, bool) {
	seen := map[int]bool{}
	for _, s := range start {
		seen[s] = true
	}
	frontier := slices.Clone(start)
	for hop := 0; len(frontier) > 0 && (hops < 0 || hop < hops); hop++ {
		var level []int
		for _, n := range frontier {
			for _, m := range next[n] {
				if !seen[m] {
					seen[m] = true
					level = append(level, m)
				}
			}
		}
		sort.Ints(level)
		for _, m := range level {
			if accept(m) {
				return m, true
			}
		}
		frontier = level
	}
	return -1, false
}

// standsFor reports whether report node j can stand for an event whose
// seed op types are want: its own op type is one, or, for a node onnxcost
// fused, a member's (named "<path>/<Op>" or "<Op>_<i>").
func (g *graph) standsFor(j int, want []string) bool {
	if contains(want, g.nodes[j].OpType) {
		return true
	}
	if len(g.nodes[j].FusedFrom) < 2 {
		return false
	}
	for _, f := range g.nodes[j].FusedFrom {
		if contains(want, opFromName(f)) {
			return true
		}
	}
	return false
}

// byOwnName reports whether an event named name took its nodes by a
// node's own name (through onnxruntime's suffixes), not as a member of a
// fused node.
func (g *graph) byOwnName(name string, nodes []int) bool {
	for _, n := range nodes {
		for _, c := range ortCandidates(name) {
			if g.nodes[n].Name == c {
				return true
			}
		}
	}
	return false
}

// window bounds, in report order, where event i may sit: after the
// nodes of the nearest earlier event with nodes, before those of the
// nearest later one (or the end when that comes earlier).
func (g *graph) window(anchors [][]int, i int) (lo, hi int) {
	lo, hi = -1, len(g.nodes)
	for j := i - 1; j >= 0; j-- {
		if len(anchors[j]) > 0 {
			lo = anchors[j][len(anchors[j])-1]
			break
		}
	}
	for j := i + 1; j < len(anchors); j++ {
		if len(anchors[j]) > 0 {
			if anchors[j][0] > lo {
				hi = anchors[j][0]
			}
			break
		}
	}
	return lo, hi
}

// fusedNeighbour is the fused report node (FusedFrom of two or more) of
// the events around event i that swallowed the ops of an event onnxcost
// fused but the runtime ran apart: one whose FusedFrom has a node named
// after a seed op first, else the earlier event's.
func (g *graph) fusedNeighbour(anchors [][]int, i int, want []string) []int {
	var cands []int
	for _, step := range []int{-1, 1} {
		for j := i + step; j >= 0 && j < len(anchors); j += step {
			if len(anchors[j]) > 0 {
				for _, n := range anchors[j] {
					if len(g.nodes[n].FusedFrom) > 1 {
						cands = append(cands, n)
					}
				}
				break
			}
		}
	}
	for _, n := range cands {
		for _, f := range g.nodes[n].FusedFrom {
			if contains(want, opFromName(f)) {
				return []int{n}
			}
		}
	}
	if len(cands) > 0 {
		return cands[:1]
	}
	return nil
}

// placeHelpers is step 3: each helper takes the anchors of the nearest
// event that is not one on the side it serves, or, with none there (a
// download after the last node), on the other side. So does a layout
// transpose onnxruntime inserted (ortLayoutTranspose) that no node of
// the model matched, for the node after it.
func placeHelpers(evs []Event, anchors [][]int) {
	for i, e := range evs {
		helper, next := ortHelper(e)
		if !helper && ortLayoutTranspose(e) && len(anchors[i]) == 0 {
			helper, next = true, true
		}
		if !helper || len(anchors[i]) > 0 {
			continue
		}
		step := -1
		if next {
			step = 1
		}
		if j := servedBy(evs, i, step); j >= 0 {
			anchors[i] = anchors[j]
		} else if j := servedBy(evs, i, -step); j >= 0 {
			anchors[i] = anchors[j]
		}
	}
}

// shapeArithmeticOps are the ops torch.onnx computes shapes with at run
// time (Shape, then Gather, Unsqueeze, Concat, Slice, arithmetic on its
// dims), which onnxruntime keeps when a dim is symbolic and onnxcost
// folds once the dims are bound.
var shapeArithmeticOps = map[string]bool{
	"Shape": true, "Size": true, "Gather": true, "Unsqueeze": true, "Squeeze": true, "Concat": true,
	"Slice": true, "Reshape": true, "Cast": true, "Add": true, "Sub": true, "Mul": true, "Div": true,
}

// placeShapeArithmetic is the last placement: an event of a shape
// arithmetic op still without a node that sits between two events placed
// on the same nodes takes them. onnxruntime names the nodes its own
// fusions make of a shape computation ("Gather_token_<n>" among MaxViT's
// folded window partitions), so neither the name nor the model as read
// places them, and the plan has no such node for position to find; the
// shape events around them went to the node the computation feeds.
func placeShapeArithmetic(evs []Event, anchors [][]int) {
	for i, e := range evs {
		if len(anchors[i]) > 0 || !shapeArithmeticOps[e.OpType] {
			continue
		}
		placed := func(j int) bool { return len(anchors[j]) > 0 }
		prev, next := nearest(len(evs), i, -1, placed), nearest(len(evs), i, 1, placed)
		if prev >= 0 && next >= 0 && slices.Equal(anchors[prev], anchors[next]) {
			anchors[i] = anchors[prev]
		}
	}
}

// nearest is the nearest index from i in direction step, among n, for
// which ok holds; -1 when there is none.
func nearest(n, i, step int, ok func(j int) bool) int {
	for j := i + step; j >= 0 && j < n; j += step {
		if ok(j) {
			return j
		}
	}
	return -1
}

// servedBy is the nearest event from i in direction step that is not a
// helper, -1 when there is none.
func servedBy(evs []Event, i, step int) int {
	return nearest(len(evs), i, step, func(j int) bool { h, _ := ortHelper(evs[j]); return !h })
}

// pooled is a set of events and the report nodes their time is spread
// over.
type pooled struct {
	events []int
	nodes  []int
	sig    []string
	ops    []string // the events' op types
}

// pool joins events that share a node (union-find over nodes); owner
// maps a report node to its pool (-1: none).
func (g *graph) pool(evs []Event, anchors [][]int) ([]int, []*pooled) {
	owner := make([]int, len(g.nodes))
	for i := range owner {
		owner[i] = -1
	}
	var pools []*pooled
	for i, a := range anchors {
		if len(a) == 0 {
			continue
		}
		target := -1
		for _, n := range a {
			if owner[n] >= 0 {
				target = owner[n]
				break
			}
		}
		if target < 0 {
			target = len(pools)
			pools = append(pools, &pooled{})
		}
		pl := pools[target]
		pl.events = append(pl.events, i)
		if !contains(pl.ops, evs[i].OpType) {
			pl.ops = append(pl.ops, evs[i].OpType)
		}
		for _, s := range signature(evs[i].OpType) {
			if evs[i].OpType != "" && !contains(pl.sig, s) {
				pl.sig = append(pl.sig, s)
			}
		}
		for _, n := range a {
			if owner[n] >= 0 && owner[n] != target {
				merge(pools, owner, owner[n], target)
			} else if owner[n] < 0 {
				owner[n] = target
				pl.nodes = append(pl.nodes, n)
			}
		}
	}
	return owner, pools
}

// merge moves pool from into pool to.
func merge(pools []*pooled, owner []int, from, to int) {
	src, dst := pools[from], pools[to]
	dst.events = append(dst.events, src.events...)
	for _, n := range src.nodes {
		owner[n] = to
		dst.nodes = append(dst.nodes, n)
	}
	for _, o := range src.ops {
		if !contains(dst.ops, o) {
			dst.ops = append(dst.ops, o)
		}
	}
	for _, s := range src.sig {
		if !contains(dst.sig, s) {
			dst.sig = append(dst.sig, s)
		}
	}
	*src = pooled{}
}

// absorb is step 4, in rounds that each look at the previous round's
// state, so the result does not depend on node order; a node next to
// two pools joins its latest producer's, else its earliest consumer's.
func (g *graph) absorb(evs []Event, owner []int, pools []*pooled) {
	for changed := true; changed; {
		changed = false
		prev := append([]int(nil), owner...)
		for i := range g.nodes {
			if prev[i] >= 0 || !g.hasKernel(i) {
				continue
			}
			if t := g.joinable(i, prev, pools); t >= 0 {
				owner[i] = t
				pools[t].nodes = append(pools[t].nodes, i)
				changed = true
			}
		}
	}
}

// joinable is the pool node i may join, or -1: first a consuming pool
// whose event has node i's op type and no node of it yet (a fused op
// starts with its own op: a Conv event anchored on its Relu wants the
// Conv upstream), then the latest producer's
// pool, then the earliest consumer's, among pools whose signature holds
// node i's op type.
func (g *graph) joinable(i int, owner []int, pools []*pooled) int {
	op := g.nodes[i].OpType
	for _, j := range g.consumers[i] {
		if t := owner[j]; t >= 0 && contains(pools[t].ops, op) && !g.poolHas(pools[t], op) {
			return t
		}
	}
	best := -1
	for _, j := range g.producers[i] {
		if t := owner[j]; t >= 0 && contains(pools[t].sig, g.nodes[i].OpType) && (best < 0 || j > best) {
			best = j
		}
	}
	if best >= 0 {
		return owner[best]
	}
	for _, j := range g.consumers[i] {
		if t := owner[j]; t >= 0 && contains(pools[t].sig, g.nodes[i].OpType) {
			return t
		}
	}
	return -1
}

// poolHas reports whether a pool holds a node of op type op.
func (g *graph) poolHas(pl *pooled, op string) bool {
	for _, n := range pl.nodes {
		if g.nodes[n].OpType == op {
			return true
		}
	}
	return false
}

// distribute splits each pool's time over its nodes and builds the Match.
func (g *graph) distribute(evs []Event, pools []*pooled) *Match {
	measured := make([]float64, len(g.nodes))
	count, shared := make([]int, len(g.nodes)), make([]int, len(g.nodes))
	profiled := make([][]string, len(g.nodes))
	matched := make([]bool, len(evs))
	m := &Match{Profiled: make([]ProfiledTime, len(evs))}
	for i, e := range evs {
		m.Profiled[i] = ProfiledTime{Name: e.Name, OpType: e.OpType, Within: e.Within, MeasuredS: e.DurS, Nodes: []string{}}
	}
	for _, pl := range pools {
		if len(pl.nodes) == 0 {
			continue
		}
		total, weight := 0.0, 0.0
		for _, e := range pl.events {
			total += evs[e].DurS
			matched[e] = true
		}
		for _, n := range pl.nodes {
			weight += kernelTimeS(&g.nodes[n])
		}
		for _, e := range pl.events {
			pt := &m.Profiled[e]
			for _, n := range pl.nodes {
				pt.Nodes = append(pt.Nodes, g.nodes[n].Name)
			}
			if total > 0 {
				pt.PredictedS = weight * evs[e].DurS / total
			} else {
				pt.PredictedS = weight / float64(len(pl.events))
			}
		}
		for _, n := range pl.nodes {
			share := 1 / float64(len(pl.nodes))
			if weight > 0 {
				share = kernelTimeS(&g.nodes[n]) / weight
			}
			measured[n] += total * share
			count[n] += len(pl.events)
			shared[n] = max(shared[n], len(pl.nodes))
			for _, e := range pl.events {
				profiled[n] = append(profiled[n], evs[e].Name)
			}
		}
	}
	for i, e := range evs {
		if matched[i] {
			m.MatchedS += e.DurS
		} else {
			m.UnmatchedS += e.DurS
			m.Unmatched = append(m.Unmatched, e)
		}
	}
	sort.SliceStable(m.Unmatched, func(a, b int) bool { return m.Unmatched[a].DurS > m.Unmatched[b].DurS })
	if t := m.MatchedS + m.UnmatchedS; t > 0 {
		m.MatchedTimeFraction = m.MatchedS / t
	}
	group := shareGroups(len(g.nodes), pools)
	for i, nd := range g.nodes {
		if measured[i] > 0 || count[i] > 0 || g.hasKernel(i) {
			class := nd.KernelClass
			if nd.OnHost {
				class = hostClass
			}
			nt := NodeTime{Name: nd.Name, OpType: nd.OpType, KernelClass: class,
				PredictedS: kernelTimeS(&nd), MeasuredS: measured[i], Events: count[i], Profiled: profiled[i], group: -1}
			if shared[i] > 1 {
				nt.Shared, nt.group = shared[i], group[i]
			}
			m.Nodes = append(m.Nodes, nt)
		}
	}
	return m
}

// shareGroups numbers the groups of nodes whose measured times are shares
// of one pooled time: pools of several nodes, joined where they share a
// node (a node's time then mixes both pools' shares); −1 for the rest.
func shareGroups(n int, pools []*pooled) []int {
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	inPool := make([]bool, n)
	for _, pl := range pools {
		if len(pl.nodes) < 2 {
			continue
		}
		for _, x := range pl.nodes {
			inPool[x] = true
			parent[find(x)] = find(pl.nodes[0])
		}
	}
	group := make([]int, n)
	for i := range group {
		group[i] = -1
		if inPool[i] {
			group[i] = find(i)
		}
	}
	return group
}

// placeElided gives each event still without a node the planned node that
// hosts the removed source node it names (MatchReportFrom). It claims
// nothing: a host keeps its own event, and the events share its pool.
func (g *graph) placeElided(evs []Event, anchors [][]int, hosts map[string]string) {
	for i, e := range evs {
		if len(anchors[i]) > 0 {
			continue
		}
		for _, c := range ortCandidates(e.Name) {
			if h, ok := hosts[c]; ok {
				if j, ok := g.byName[h]; ok {
					anchors[i] = []int{j}
					break
				}
			}
		}
	}
}

// addSourceOutputs indexes the outputs of src, the model as read, by the
// planned node holding their producer (its own, the fused node it is a
// member of, or the one standing in for it: hosts, ElidedHosts), so that a
// Q/DQ pair onnxruntime's QDQ propagation added after a node the plan
// fused away (a key Transpose folded into the MatMul reading it) finds
// that node's row by its tensor's name (resolve).
func (g *graph) addSourceOutputs(src *report.Report, hosts map[string]string) {
	g.bySourceOutput = map[string]int{}
	for _, n := range src.Nodes {
		name := n.Name
		if h, ok := hosts[name]; ok {
			name = h
		}
		if j, ok := g.byName[name]; ok && name != "" {
			for _, o := range n.Outputs {
				g.bySourceOutput[o.Name] = j
			}
		}
	}
}

// ElidedHosts maps each node of src (a model's report as read) that the
// planned report rep no longer has, under its own name or as a member of
// a fused node, to the planned node standing in for it: the nearest one
// downstream that its outputs feed (an Identity's or a folded shape
// chain's reader), else the nearest upstream (a dead end). Nodes with
// neither are left out.
func ElidedHosts(src, rep *report.Report) map[string]string {
	planned := map[string]string{}
	for _, n := range rep.Nodes {
		planned[n.Name] = n.Name
		for _, f := range n.FusedFrom {
			if _, ok := planned[f]; !ok {
				planned[f] = n.Name
			}
		}
	}
	producer := map[string]int{}
	for i, n := range src.Nodes {
		for _, o := range n.Outputs {
			producer[o.Name] = i
		}
	}
	consumers := make([][]int, len(src.Nodes))
	producers := make([][]int, len(src.Nodes))
	for i, n := range src.Nodes {
		for _, in := range n.Inputs {
			if j, ok := producer[in.Name]; ok && j != i {
				consumers[j] = appendUnique(consumers[j], i)
				producers[i] = appendUnique(producers[i], j)
			}
		}
	}
	hosts := map[string]string{}
	for i, n := range src.Nodes {
		if _, ok := planned[n.Name]; ok || n.Name == "" {
			continue
		}
		if h, ok := nearestPlanned(src, i, consumers, planned); ok {
			hosts[n.Name] = h
		} else if h, ok := nearestPlanned(src, i, producers, planned); ok {
			hosts[n.Name] = h
		}
	}
	return hosts
}

// nearestPlanned walks next (consumers or producers) from src's node
// start to the first node with a planned host.
func nearestPlanned(src *report.Report, start int, next [][]int, planned map[string]string) (string, bool) {
	j, ok := breadthFirst([]int{start}, next, -1, func(j int) bool {
		_, ok := planned[src.Nodes[j].Name]
		return ok
	})
	if !ok {
		return "", false
	}
	return planned[src.Nodes[j].Name], true
}
