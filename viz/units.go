package viz

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

// unitKind says what one box of the drawing stands for.
type unitKind int

const (
	unitNode  unitKind = iota // one report node
	unitScope                 // an exporter scope (/layer3/attn) collapsed to one box
	unitFold                  // a run of cheap nodes folded away by --top or --focus
)

// unit is one box of the drawing: a node, a collapsed scope or a fold.
// Its figures are the sums over its members.
type unit struct {
	kind unitKind
	id   string // stable DOT/SVG id
	name string // node name, scope path, or "" for a fold
	// path is where the unit stands among the module scopes: a scope's
	// path, a node's name with its module path in front when the name
	// lacks it (report.NodeCost.ScopedName: a dynamo export's nodes),
	// "" for a fold. Scope logic reads path; what is shown reads name.
	path string
	// key is what GraphOptions.Expand takes to open the box: a scope's
	// path, a repeated block's first block's path, "fold:" and a fold's
	// first node's name; "" for a node.
	key     string
	members []int // indices into Report.Nodes, in report (topological) order
	first   int   // members[0]: the unit's place in topological order

	timeS, computeS, latencyS, memoryS, launchS float64
	flops, bytes                                float64
}

func (u *unit) add(i int, n *report.NodeCost) {
	if len(u.members) == 0 {
		u.first = i
	}
	u.members = append(u.members, i)
	u.timeS += n.TimeS
	u.computeS += n.ComputeS
	u.latencyS += n.LatencyS
	u.memoryS += n.MemoryS
	u.launchS += n.LaunchS
	u.flops += n.FLOPs
	u.bytes += n.BytesRead + n.BytesWritten
}

// bound names the term that dominates a box's time, by the rule the cost
// model uses for a sequence of kernels.
func (u *unit) bound() string {
	return report.SequenceBound(u.timeS, u.computeS, u.latencyS, u.memoryS, u.launchS)
}

// free reports whether a node runs no kernel and costs nothing: constants,
// views (Reshape, Flatten) and shape arithmetic folded before run time.
// They are hidden by default; edges are routed through them.
func free(n *report.NodeCost) bool {
	return n.TimeS == 0 && n.Launches == 0 && n.FLOPs == 0 && n.BytesRead+n.BytesWritten == 0
}

// scopeOf is the first depth components of an exporter scope:
// "/layer3/attn/MatMul" has the scope [layer3 attn]. ok is false for a
// name with no scope.
func scopeOf(name string, depth int) (string, bool) {
	parts := strings.Split(strings.Trim(name, "/"), "/")
	if len(parts) < 2 || depth <= 0 {
		return "", false
	}
	parts = parts[:len(parts)-1]
	if len(parts) > depth {
		parts = parts[:depth]
	}
	return "/" + strings.Join(parts, "/"), true
}

// layout is the drawing's content after hiding, collapsing and folding.
type layout struct {
	r      *report.Report
	units  []*unit // in topological order of their first member
	unitOf []int   // report node index -> index into units; -1 = hidden
	hidden int     // free nodes hidden
	folded int     // report nodes inside folds
	total  float64 // total time, the denominator of shares
	notes  []string

	depth    int      // the collapse depth drawn at
	expanded []string // the open groups' keys (openLayout)
}

// layoutOptions are the parts of GraphOptions that decide what is drawn.
type layoutOptions struct {
	collapse int
	top      int
	focus    *regexp.Regexp
	showFree bool
	// expand holds the open groups' keys (GraphOptions.Expand) and
	// repeatUp the scopes above its "repeat:" keys (expandSet); nil
	// draws as before they existed.
	expand, repeatUp map[string]bool
}

// scopeFor is the collapsed scope a node is drawn in: its scope at the
// collapse depth, one level deeper for every open scope on the way down,
// and none (the node alone) once the scope it reaches is open and has no
// deeper level.
func (o layoutOptions) scopeFor(name string) (string, bool) {
	sc, ok := scopeOf(name, o.collapse)
	for d := o.collapse + 1; ok && o.expand[sc]; d++ {
		next, _ := scopeOf(name, d)
		if next == sc {
			return "", false
		}
		sc = next
	}
	return sc, ok
}

// open reports whether a unit lies in an open scope: its name, or a
// scope above it, was expanded. Under --top such a unit is kept.
func (o layoutOptions) open(name string) bool {
	return len(o.expand) > 0 && name != "" && anyPrefix(name, func(p string) bool { return o.expand[p] })
}

// unmerged reports whether a unit must stay out of repeated blocks: it
// lies in a block opened by its "repeat:" key, or holds what such a key
// names (a node to reveal).
func (o layoutOptions) unmerged(name string) bool {
	if len(o.expand) == 0 || name == "" {
		return false
	}
	return o.repeatUp[name] || anyPrefix(name, func(p string) bool { return o.expand["repeat:"+p] })
}

// anyPrefix calls f on a path and each of its scopes ("/a/b/c", "/a/b",
// "/a") until it returns true.
func anyPrefix(name string, f func(string) bool) bool {
	if f(name) {
		return true
	}
	for i := len(name) - 1; i > 0; i-- {
		if name[i] == '/' && f(name[:i]) {
			return true
		}
	}
	return false
}

// expandSet indexes GraphOptions.Expand: every key, and every scope
// above a "repeat:" key's path (a unit holding that path is unmerged).
func expandSet(keys []string) (set, repeatUp map[string]bool) {
	set, repeatUp = map[string]bool{}, map[string]bool{}
	for _, k := range keys {
		set[k] = true
		if p, ok := strings.CutPrefix(k, "repeat:"); ok {
			anyPrefix(p, func(q string) bool { repeatUp[q] = true; return false })
		}
	}
	return set, repeatUp
}

// buildLayout decides which boxes the drawing has. Steps, in order: hide
// free nodes; collapse scopes deeper than the collapse depth into one box
// each; keep the units matching --focus and, among them, the top-N
// costliest; fold every maximal run (in topological order) of the other
// units into one box. Folding runs of a topological order keeps the folded
// graph acyclic, whatever was folded.
func buildLayout(r *report.Report, o layoutOptions) *layout {
	l := &layout{r: r, unitOf: make([]int, len(r.Nodes))}
	for i := range r.Nodes {
		l.total += r.Nodes[i].TimeS
	}
	if r.Totals.TimeS > l.total {
		l.total = r.Totals.TimeS
	}

	// Hide and collapse.
	var base []*unit
	baseOf := make([]int, len(r.Nodes))
	scopes := map[string]int{}
	for i := range r.Nodes {
		n := &r.Nodes[i]
		if !o.showFree && free(n) {
			baseOf[i] = -1
			l.hidden++
			continue
		}
		if sc, ok := o.scopeFor(n.ScopedName()); ok {
			if j, seen := scopes[sc]; seen {
				base[j].add(i, n)
				baseOf[i] = j
				continue
			}
			scopes[sc] = len(base)
			u := &unit{kind: unitScope, name: sc, path: sc, key: sc}
			u.add(i, n)
			base = append(base, u)
			baseOf[i] = len(base) - 1
			continue
		}
		u := &unit{kind: unitNode, name: n.Name, path: n.ScopedName()}
		u.add(i, n)
		base = append(base, u)
		baseOf[i] = len(base) - 1
	}
	// A scope of one node is drawn as the node.
	for _, u := range base {
		if u.kind == unitScope && len(u.members) == 1 {
			u.kind = unitNode
			u.name, u.path = r.Nodes[u.members[0]].Name, r.Nodes[u.members[0]].ScopedName()
			u.key = ""
		}
	}

	// Identical repeated blocks (decoder layers) become one box.
	if o.collapse > 0 {
		base = mergeRepeats(r, base, baseOf, o)
	}

	// Keep: the focus, then the top N of it.
	keep := make([]bool, len(base))
	var cand []int
	for j, u := range base {
		if o.focus == nil || u.matches(r, o.focus) {
			cand = append(cand, j)
		}
	}
	if o.top > 0 && len(cand) > o.top {
		sort.SliceStable(cand, func(a, b int) bool { return base[cand[a]].timeS > base[cand[b]].timeS })
		cand = cand[:o.top]
	}
	for _, j := range cand {
		keep[j] = true
	}
	if len(o.expand) > 0 {
		o.keepOpen(r, base, keep)
	}

	// Fold the runs of units not kept.
	newIdx := make([]int, len(base))
	var fold *unit
	for j, u := range base {
		if keep[j] {
			fold = nil
			newIdx[j] = len(l.units)
			l.units = append(l.units, u)
			continue
		}
		if fold == nil {
			fold = &unit{kind: unitFold, key: "fold:" + r.Nodes[u.first].Name}
			l.units = append(l.units, fold)
		}
		newIdx[j] = len(l.units) - 1
		for _, i := range u.members {
			fold.add(i, &r.Nodes[i])
			l.folded++
		}
	}
	for i := range r.Nodes {
		if baseOf[i] < 0 {
			l.unitOf[i] = -1
			continue
		}
		l.unitOf[i] = newIdx[baseOf[i]]
	}
	l.assignIDs()
	return l
}

// digitRuns finds the numbers in a scope name: /model/layers.17 and
// /model/layers.18 differ only there.
var digitRuns = regexp.MustCompile(`[0-9]+`)

// maxBlockUnits bounds the length of a repeated block mergeRepeats looks
// for (a decoder layer collapsed at depth 3 is a handful of units).
const maxBlockUnits = 16

// mergeRepeats draws a run of consecutive blocks that are the same block
// repeated (a block is one unit or a short sequence of units; unit by
// unit, names equal but for their numbers and members with the same ops,
// FLOPs and bytes, in order) as one box "first … last ×N" whose figures
// are the sums over the run. An 80-layer decoder is then one box instead
// of eighty or more boxes with long edges fanning out from the shared
// mask and rotary tables, which Graphviz takes minutes to lay out. Runs
// are consecutive in topological order, so merging them keeps the drawing
// acyclic, as folding does. baseOf is rewritten to the merged indices.
func mergeRepeats(r *report.Report, base []*unit, baseOf []int, o layoutOptions) []*unit {
	blockEq := func(a, b, p int) bool {
		for t := 0; t < p; t++ {
			if !sameBlock(r, base[a+t], base[b+t]) || o.unmerged(base[a+t].path) || o.unmerged(base[b+t].path) {
				return false
			}
		}
		return true
	}
	var out []*unit
	remap := make([]int, len(base))
	for j := 0; j < len(base); {
		period, reps := 0, 0
		for p := 1; p <= maxBlockUnits && j+2*p <= len(base); p++ {
			if blockEq(j, j+p, p) {
				period, reps = p, 2
				for j+(reps+1)*p <= len(base) && blockEq(j, j+reps*p, p) {
					reps++
				}
				break
			}
		}
		if reps == 0 {
			remap[j] = len(out)
			out = append(out, base[j])
			j++
			continue
		}
		end := j + period*reps
		first := commonScope(base[j : j+period])
		last := commonScope(base[end-period : end])
		m := &unit{kind: unitScope, name: fmt.Sprintf("%s … %s ×%d", first, last[strings.LastIndex(last, "/")+1:], reps), path: first, key: "repeat:" + first}
		var members []int
		for t := j; t < end; t++ {
			members = append(members, base[t].members...)
			remap[t] = len(out)
		}
		sort.Ints(members)
		for _, i := range members {
			m.add(i, &r.Nodes[i])
		}
		out = append(out, m)
		j = end
	}
	for i, b := range baseOf {
		if b >= 0 {
			baseOf[i] = remap[b]
		}
	}
	return out
}

// commonScope is the longest scope path all units' paths share (the
// first unit's path when they share none).
func commonScope(us []*unit) string {
	if len(us) == 1 {
		return us[0].path
	}
	parts := strings.Split(strings.Trim(us[0].path, "/"), "/")
	for _, u := range us[1:] {
		q := strings.Split(strings.Trim(u.path, "/"), "/")
		k := 0
		for k < len(parts) && k < len(q) && parts[k] == q[k] {
			k++
		}
		parts = parts[:k]
	}
	if len(parts) == 0 {
		return us[0].path
	}
	return "/" + strings.Join(parts, "/")
}

// sameBlock reports whether two units are the same unit of a repeated
// block: paths that differ only in their numbers, the same members.
func sameBlock(r *report.Report, a, b *unit) bool {
	if a.path == b.path || len(a.members) != len(b.members) || digitRuns.ReplaceAllString(a.path, "#") != digitRuns.ReplaceAllString(b.path, "#") {
		return false
	}
	for t := range a.members {
		x, y := &r.Nodes[a.members[t]], &r.Nodes[b.members[t]]
		if x.OpType != y.OpType || x.Domain != y.Domain || x.FLOPs != y.FLOPs || x.BytesRead+x.BytesWritten != y.BytesRead+y.BytesWritten {
			return false
		}
	}
	return true
}

// matches reports whether a unit's name or any member's name or op type
// matches the focus pattern.
func (u *unit) matches(r *report.Report, re *regexp.Regexp) bool {
	if re.MatchString(u.name) {
		return true
	}
	for _, i := range u.members {
		n := &r.Nodes[i]
		if re.MatchString(n.Name) || re.MatchString(n.OpType) {
			return true
		}
	}
	return false
}

// assignIDs gives every unit a stable id derived from its name (folds from
// their first member), de-duplicated in topological order.
func (l *layout) assignIDs() {
	used := map[string]int{}
	for _, u := range l.units {
		var base string
		switch u.kind {
		case unitNode:
			base = "node:" + sanitizeID(u.name)
		case unitScope:
			base = "scope:" + sanitizeID(u.name)
		case unitFold:
			base = "fold:" + sanitizeID(l.r.Nodes[u.first].Name)
		}
		u.id = uniqueID(used, base)
	}
}

// sanitizeID keeps the characters that are safe in an SVG id, a URL
// fragment and a CSS selector (after escaping), and replaces the rest.
func sanitizeID(s string) string {
	if s == "" {
		return "_"
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9',
			r == '_', r == '-', r == '.', r == '/', r == ':':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 200 {
			break
		}
	}
	return b.String()
}

// uniqueID returns base, or base~2, base~3, ... for later duplicates.
func uniqueID(used map[string]int, base string) string {
	used[base]++
	if used[base] == 1 {
		return base
	}
	for {
		id := fmt.Sprintf("%s~%d", base, used[base])
		if used[id] == 0 {
			used[id] = 1
			return id
		}
		used[base]++
	}
}

// edge joins two units; values are the tensors it carries (first one
// labels the edge).
type edge struct {
	from, to int // unit indices; -1 - k is the graph input k
	values   []report.TensorInfo
	bytes    float64
}

// edges rebuilds the data flow from value names alone (producer of a name
// -> its consumers), so a saved JSON report draws like a model. Hidden
// nodes are routed through: an edge runs from the drawn producers behind a
// hidden node to its consumers. inputs names the graph inputs to draw.
func (l *layout) edges(inputs []string) []edge {
	r := l.r
	producer := map[string]int{}
	for i := range r.Nodes {
		for _, o := range r.Nodes[i].Outputs {
			if _, dup := producer[o.Name]; !dup && o.Name != "" {
				producer[o.Name] = i
			}
		}
	}
	inputIdx := map[string]int{}
	for k, in := range inputs {
		inputIdx[in] = k
	}
	// sources of a hidden node: the drawn units behind it (memoised,
	// capped so that a pathological graph cannot blow up).
	const maxSources = 16
	memo := map[int][]int{}
	var sourcesOf func(i, depth int) []int
	sourcesOf = func(i, depth int) []int {
		if s, ok := memo[i]; ok {
			return s
		}
		memo[i] = nil // cycle guard
		var out []int
		for _, in := range r.Nodes[i].Inputs {
			out = appendUnique(out, l.sourceOfValue(in.Name, producer, inputIdx, sourcesOf, depth+1), maxSources)
		}
		memo[i] = out
		return out
	}
	_ = sourcesOf

	type key struct{ from, to int }
	idx := map[key]int{}
	var out []edge
	for i := range r.Nodes {
		to := l.unitOf[i]
		if to < 0 {
			continue
		}
		for _, in := range r.Nodes[i].Inputs {
			for _, from := range l.sourceOfValue(in.Name, producer, inputIdx, sourcesOf, 0) {
				if from == to {
					continue
				}
				k := key{from, to}
				j, ok := idx[k]
				if !ok {
					j = len(out)
					idx[k] = j
					out = append(out, edge{from: from, to: to})
				}
				e := &out[j]
				if !hasValue(e.values, in.Name) {
					e.values = append(e.values, in)
					e.bytes += tensorBytes(in)
				}
			}
		}
	}
	return out
}

// sourceOfValue is the drawn unit (or graph input) a value comes from.
func (l *layout) sourceOfValue(name string, producer, inputIdx map[string]int, sourcesOf func(int, int) []int, depth int) []int {
	p, ok := producer[name]
	if !ok {
		if k, ok := inputIdx[name]; ok {
			return []int{-1 - k}
		}
		return nil
	}
	if u := l.unitOf[p]; u >= 0 {
		return []int{u}
	}
	if depth > 64 {
		return nil
	}
	return sourcesOf(p, depth)
}

func appendUnique(dst, src []int, limit int) []int {
	for _, s := range src {
		if len(dst) >= limit {
			break
		}
		dup := false
		for _, d := range dst {
			if d == s {
				dup = true
				break
			}
		}
		if !dup {
			dst = append(dst, s)
		}
	}
	return dst
}

func hasValue(vs []report.TensorInfo, name string) bool {
	for _, v := range vs {
		if v.Name == name {
			return true
		}
	}
	return false
}

// tensorBytes is a tensor's size when its shape and dtype are known.
func tensorBytes(t report.TensorInfo) float64 {
	if t.Shape == nil {
		return 0
	}
	n := 1.0
	for _, d := range t.Shape {
		if !d.IsKnown() {
			return 0
		}
		n *= float64(d.Value)
	}
	return n * dtypeBytes(t.DType)
}

// dtypeBytes is the element size of a report dtype name (0 if unknown).
func dtypeBytes(dt string) float64 {
	d, err := ir.ParseDType(dt)
	if err != nil {
		return 0
	}
	return float64(d.Bits()) / 8
}

// keepOpen keeps the units the open groups show: outside a --focus,
// every unit inside an open scope (the top-N cut would otherwise fold
// what was just opened); and every unit of a fold that was opened, a
// fold being keyed by the first node of its run of units not kept.
func (o layoutOptions) keepOpen(r *report.Report, base []*unit, keep []bool) {
	if o.focus == nil {
		for j, u := range base {
			if o.open(u.path) {
				keep[j] = true
			}
		}
	}
	for j := 0; j < len(base); j++ {
		if keep[j] || (j > 0 && !keep[j-1]) || !o.expand["fold:"+r.Nodes[base[j].first].Name] {
			continue
		}
		for k := j; k < len(base) && !keep[k]; k++ {
			keep[k] = true
		}
	}
}
