package viz

import (
	"fmt"
	"html"
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/emicklei/dot"
	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

// DefaultMaxNodes is the most boxes a graph gets when --top is not given:
// above it the costliest are kept and the rest folded, because Graphviz
// takes minutes on thousands of HTML-labelled nodes and nobody can read
// them anyway (pprof's -nodecount does the same).
const DefaultMaxNodes = 150

// DefaultHalo is how many of the costliest boxes get a halo.
const DefaultHalo = 5

// maxListed bounds every list a box, edge or tooltip spells out (fused
// constituents, a node's tensors, an edge's values), and maxOutputs the
// graph outputs drawn: a chain fused into one box listed 200,000 names
// (a 13 MB label Graphviz refused), and a Split with 300,000 outputs drew
// as many ellipses. The box cap bounds the rest of a drawing.
const (
	maxListed  = 16
	maxOutputs = 64
)

// moreText is the "… and N more" line closing a cut list.
func moreText(n int) string { return fmt.Sprintf("… and %d more", n) }

// GraphOptions control Graph.
type GraphOptions struct {
	// Color is the fill: "bound" (the ceiling that binds, default),
	// "time" (a heat ramp of time share) or "op" (op family).
	Color string
	// Top keeps the N costliest boxes and folds the rest (0: all).
	Top int
	// Halo outlines the N costliest boxes (0: DefaultHalo; <0: none).
	Halo int
	// Focus keeps only the nodes whose name or op type matches (their
	// neighbourhood is folded), like trex's --query.
	Focus *regexp.Regexp
	// Collapse folds exporter scopes (/layer3/attn/...) to their first
	// Collapse components, one summary box per scope (0: off).
	Collapse int
	// RankDir is "TB" (default) or "LR".
	RankDir string
	// ShowFree draws nodes that run no kernel (constants, views, folded
	// shape ops); by default they are hidden and edges pass through them.
	ShowFree bool
	// MaxNodes caps the boxes when Top is 0 (0: DefaultMaxNodes).
	MaxNodes int
	// Inputs are the graph inputs to draw as entry points (the report
	// alone cannot tell inputs from weights).
	Inputs []string
	// Outputs are the graph outputs; nil means every value no node reads.
	Outputs []string
	// Expand lists the groups drawn open, by their keys (Group.Key): a
	// scope's path draws its members one level deeper (its own nodes one
	// by one); "repeat:" and a first block's path draws that block apart
	// from the blocks repeating it; "fold:" and a fold's first node's name
	// draws the fold's units. The collapse depth and the cut are chosen as
	// without it, so opening one group adds only that group's boxes.
	Expand []string
	// Reveal names a node to draw as a box of its own: the groups around
	// it are opened (Drawing.Expanded lists them).
	Reveal string
	// Page words the notes for the browser app, whose controls are a
	// click on a box and a search field, not the command line's flags.
	Page bool

	dotLimits bool // set for large drawings: bound Graphviz's effort
}

func (o *GraphOptions) check() error {
	switch o.Color {
	case "":
		o.Color = "bound"
	case "bound", "time", "op":
	default:
		return fmt.Errorf("color %q: want bound, time or op", o.Color)
	}
	switch o.RankDir {
	case "":
		o.RankDir = "TB"
	case "TB", "LR":
	default:
		return fmt.Errorf("rankdir %q: want TB or LR", o.RankDir)
	}
	if o.Top < 0 || o.Collapse < 0 || o.MaxNodes < 0 {
		return fmt.Errorf("top, collapse and max nodes must be ≥ 0")
	}
	if o.Halo == 0 {
		o.Halo = DefaultHalo
	}
	if o.MaxNodes == 0 {
		o.MaxNodes = DefaultMaxNodes
	}
	return nil
}

// DOT returns the annotated graph of a report as DOT text.
func DOT(r *report.Report, c Ceilings, o GraphOptions) (string, error) {
	g, err := Graph(r, c, o)
	if err != nil {
		return "", err
	}
	return g.String(), nil
}

// Graph builds the annotated graph of a report: one box per node (or
// collapsed scope, or fold), labelled with its op, name, time and share,
// FLOPs, bytes, arithmetic intensity and the roof that binds it; edges
// labelled with shape and dtype; a legend node.
func Graph(r *report.Report, c Ceilings, o GraphOptions) (*dot.Graph, error) {
	d, err := newDrawer(r, c, o)
	if err != nil {
		return nil, err
	}
	return d.g, nil
}

func newDrawer(r *report.Report, c Ceilings, o GraphOptions) (*drawer, error) {
	if r == nil {
		return nil, fmt.Errorf("viz: no report")
	}
	if err := o.check(); err != nil {
		return nil, fmt.Errorf("viz: %v", err)
	}
	l, lo := chooseLayout(r, o)
	l.depth = lo.collapse
	if len(o.Expand) > 0 || o.Reveal != "" {
		l = openLayout(r, o, lo, l.notes)
	}
	if len(l.units) > 100 {
		// Cheaper crossing minimisation: big layouts otherwise take minutes.
		o.dotLimits = true
	}
	d := &drawer{r: r, c: c, o: o, l: l, g: dot.NewGraph(dot.Directed), maxBytes: -1}
	d.draw()
	return d, nil
}

// chooseLayout decides the boxes before any group is opened.
func chooseLayout(r *report.Report, o GraphOptions) (*layout, layoutOptions) {
	lo := layoutOptions{collapse: o.Collapse, top: o.Top, focus: o.Focus, showFree: o.ShowFree}
	l := buildLayout(r, lo)
	if o.Top == 0 && len(l.units) > o.MaxNodes {
		// Too many boxes to read (or for Graphviz to lay out quickly):
		// collapse exporter scopes to the deepest level that fits, else
		// keep the costliest and fold the rest.
		n := len(l.units)
		if o.Collapse == 0 {
			for depth := 8; depth >= 1; depth-- {
				try := lo
				try.collapse = depth
				if tl := buildLayout(r, try); len(tl.units) <= o.MaxNodes && len(tl.units) > 1 {
					l, lo = tl, try
					l.notes = append(l.notes, fmt.Sprintf("%d boxes is too many to read: scopes collapsed to depth %d %s", n, depth,
						o.hint("(set --collapse or --top)", "(click a box to expand it; search finds a node)")))
					break
				}
			}
		}
		if len(l.units) > o.MaxNodes {
			lo.top = o.MaxNodes / 2
			l = buildLayout(r, lo)
			l.notes = append(l.notes, fmt.Sprintf("%d boxes is too many to read: the %d costliest are kept %s", n, lo.top,
				o.hint("(set --top)", "(click a dashed box to expand it; search finds a node)")))
		}
	}
	return l, lo
}

// hint is a note's advice: the command line's flags, or the page's controls.
func (o *GraphOptions) hint(cli, page string) string {
	if o.Page {
		return page
	}
	return cli
}

type drawer struct {
	r *report.Report
	c Ceilings
	o GraphOptions
	l *layout
	g *dot.Graph

	maxShare float64
	maxBytes float64 // largest tensor drawn; <0 until computed
	halo     map[int]bool
	families map[string]bool // op families present, for the legend
}

func (d *drawer) share(t float64) float64 {
	if d.l.total <= 0 {
		return 0
	}
	return t / d.l.total
}

func (d *drawer) draw() {
	g := d.g
	g.Attrs("rankdir", d.o.RankDir, "fontname", "Helvetica", "nodesep", "0.25", "ranksep", "0.35",
		"bgcolor", "white", "tooltip", render.Clean(d.r.Model))
	if d.o.dotLimits {
		g.Attrs("mclimit", "0.3", "remincross", "false", "searchsize", "10")
	}
	d.families = map[string]bool{}
	// Halo: the costliest boxes that are nodes or scopes.
	var order []int
	for i, u := range d.l.units {
		d.maxShare = math.Max(d.maxShare, d.share(u.timeS))
		if u.kind != unitFold && u.timeS > 0 {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return d.l.units[order[a]].timeS > d.l.units[order[b]].timeS })
	d.halo = map[int]bool{}
	for k, i := range order {
		if d.o.Halo < 0 || k >= d.o.Halo {
			break
		}
		d.halo[i] = true
	}

	nodes := make([]dot.Node, len(d.l.units))
	for i, u := range d.l.units {
		nodes[i] = d.unitNode(i, u)
	}
	inputs := map[int]dot.Node{}
	for _, e := range d.l.edges(d.o.Inputs) {
		from, ok := d.endpoint(e.from, nodes, inputs)
		if !ok {
			continue
		}
		d.edge(from, nodes[e.to], e)
	}
	d.outputs(nodes)
	d.legend()
}

// endpoint is the DOT node of a unit, or of a graph input (created on
// first use, so inputs nobody reads are not drawn).
func (d *drawer) endpoint(k int, nodes []dot.Node, inputs map[int]dot.Node) (dot.Node, bool) {
	if k >= 0 {
		return nodes[k], true
	}
	in := -1 - k
	if n, ok := inputs[in]; ok {
		return n, true
	}
	if in >= len(d.o.Inputs) {
		return dot.Node{}, false
	}
	name := d.o.Inputs[in]
	n := d.g.Node("input:" + sanitizeID(name))
	label := render.Clean(name)
	if t, ok := d.valueInfo(name); ok {
		label += "\n" + tensorText(t)
	}
	n.Attrs("id", "input:"+sanitizeID(name), "label", label, "shape", "ellipse", "style", "filled",
		"fillcolor", "#f0f0f0", "fontname", "Helvetica", "fontsize", "9", "tooltip", "graph input "+render.Clean(name))
	inputs[in] = n
	return n, true
}

// valueInfo finds a value's dtype and shape among the nodes' inputs.
func (d *drawer) valueInfo(name string) (report.TensorInfo, bool) {
	for i := range d.r.Nodes {
		for _, t := range d.r.Nodes[i].Inputs {
			if t.Name == name {
				return t, true
			}
		}
	}
	return report.TensorInfo{}, false
}

func (d *drawer) unitNode(i int, u *unit) dot.Node {
	n := d.g.Node(u.id)
	var label, tooltip, fill, shape, style string
	shape, style = "box", "rounded,filled"
	switch u.kind {
	case unitNode:
		nc := &d.r.Nodes[u.members[0]]
		label, tooltip = d.nodeLabel(nc), d.nodeTooltip(nc)
		fill = d.fill(u, nc)
	case unitScope:
		label, tooltip = d.groupLabel(u), d.groupTooltip(u)
		fill = d.fill(u, d.costliest(u))
		shape = "box3d"
		style = "filled"
	case unitFold:
		label, tooltip = d.groupLabel(u), d.groupTooltip(u)
		fill = "#f7f7f7"
		style = "rounded,filled,dashed"
	}
	n.Attrs("id", u.id, "label", dot.HTML(label), "tooltip", tooltip, "shape", shape, "style", style,
		"fillcolor", fill, "fontname", "Helvetica", "fontsize", "10", "margin", "0.08,0.04",
		"URL", "#"+u.id)
	if darkFill(fill) {
		n.Attr("fontcolor", "white")
	}
	if d.halo[i] {
		n.Attrs("color", "#e6a100", "penwidth", "4")
	} else {
		n.Attrs("color", "#555555", "penwidth", "1")
	}
	return n
}

// fill picks a box's colour under the --color mode.
func (d *drawer) fill(u *unit, rep *report.NodeCost) string {
	switch d.o.Color {
	case "time":
		return heatRamp[heatIndex(d.share(u.timeS), d.maxShare)]
	case "op":
		f := famOther
		if rep != nil {
			f = familyOf(rep.Domain, rep.OpType)
		}
		d.families[f.name] = true
		return f.fill
	}
	return ceilingFill[d.unitCeiling(u)]
}

// unitCeiling is the roof binding a box: a node's own; for a group, its
// summed bound, with the memory level of its most memory-heavy member.
func (d *drawer) unitCeiling(u *unit) Ceiling {
	if u.kind == unitNode {
		return ceilingOf(&d.r.Nodes[u.members[0]])
	}
	bound, level := u.bound(), ""
	if bound == "memory" {
		var best *report.NodeCost
		for _, i := range u.members {
			if n := &d.r.Nodes[i]; best == nil || n.MemoryS > best.MemoryS {
				best = n
			}
		}
		if best != nil {
			level = best.MemLevel
		}
	}
	return boundCeiling(bound, level)
}

// costliest is a group's member with the largest time.
func (d *drawer) costliest(u *unit) *report.NodeCost {
	var best *report.NodeCost
	for _, i := range u.members {
		if n := &d.r.Nodes[i]; best == nil || n.TimeS > best.TimeS {
			best = n
		}
	}
	return best
}

// esc makes a model string safe inside a Graphviz HTML label.
func esc(s string) string { return html.EscapeString(render.Clean(s)) }

// shorten keeps a long name readable in a box: its tail (the most
// specific part of an exporter path) after an ellipsis.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n+1:])
}

const (
	labelOpen  = `<table border="0" cellborder="0" cellspacing="0" cellpadding="1">`
	labelClose = `</table>`
)

func row(s string) string   { return "<tr><td>" + s + "</td></tr>" }
func small(s string) string { return `<font point-size="8">` + s + `</font>` }
func timeShare(t, s float64) string {
	return render.Seconds(t) + " · " + render.Percent(s)
}

func (d *drawer) nodeLabel(n *report.NodeCost) string {
	var b strings.Builder
	b.WriteString(labelOpen)
	b.WriteString(row("<b>" + esc(opText(n)) + "</b>"))
	b.WriteString(row(small(esc(shorten(n.Name, 36)))))
	if free(n) {
		b.WriteString(row(small("no kernel")))
	} else {
		b.WriteString(row(esc(timeShare(n.TimeS, d.share(n.TimeS)))))
		b.WriteString(row(small(esc(workText(n.FLOPs, n.BytesRead+n.BytesWritten)))))
		for _, ln := range d.boundText(n) {
			b.WriteString(row(small(esc(ln))))
		}
	}
	if len(n.FusedFrom) > 0 {
		// The constituents, stacked one per row, so a reader sees what merged.
		b.WriteString(`<tr><td><table border="0" cellborder="1" cellspacing="0" cellpadding="1" color="#777777" bgcolor="#ffffff">`)
		for k, f := range n.FusedFrom {
			if k == maxListed {
				b.WriteString(row(small(esc(moreText(len(n.FusedFrom) - k)))))
				break
			}
			b.WriteString(row(small(esc(shorten(f, 36)))))
		}
		b.WriteString(labelClose + "</td></tr>")
	}
	b.WriteString(labelClose)
	return b.String()
}

func opText(n *report.NodeCost) string { return ir.QualifiedOp(n.Domain, n.OpType) }

// workText is "4.82 GFLOP · 12.3 MB · AI 392".
func workText(flops, bytes float64) string {
	s := render.FLOPs(flops) + " · " + render.Bytes(bytes)
	if bytes > 0 {
		s += " · AI " + aiText(flops/bytes)
	}
	return s
}

func aiText(ai float64) string {
	if ai > 0 && ai < 0.01 {
		return fmt.Sprintf("%.1g", ai)
	}
	return render.Count(ai)
}

// boundText names the binding roof with the node's estimated rate, and
// the classic roofline at its intensity against its precision's peak:
// "HBM-bound · 4.10 TFLOP/s", "roof 6.20 TFLOP/s of peak 19.5 TFLOP/s".
func (d *drawer) boundText(n *report.NodeCost) []string {
	rf := d.c.RoofOf(n)
	if rf.Ceiling == CeilNone {
		return []string{"no kernel"}
	}
	first := string(rf.Ceiling) + "-bound"
	if rf.Achieved > 0 {
		first += " · " + flopsRate(rf.Achieved)
	}
	switch {
	case rf.Peak <= 0 || n.FLOPs == 0:
		if rf.BW > 0 {
			return []string{first, levelName(n.MemLevel) + " " + render.Bytes(rf.BW) + "/s"}
		}
		return []string{first}
	case rf.Roof >= rf.Peak:
		return []string{first, "roof = peak " + flopsRate(rf.Peak)}
	}
	return []string{first, "roof " + flopsRate(rf.Roof) + " of peak " + flopsRate(rf.Peak)}
}

func levelName(level string) string {
	if level == "l2" {
		return "L2"
	}
	return "HBM"
}

func flopsRate(f float64) string { return render.FLOPs(f) + "/s" }

func (d *drawer) nodeTooltip(n *report.NodeCost) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s)\n", render.Clean(n.Name), render.Clean(opText(n)))
	if free(n) {
		b.WriteString("no kernel: no run-time cost\n")
	} else {
		rf := d.c.RoofOf(n)
		latency := ""
		if n.LatencyS > 0 {
			latency = ", fixed latency " + render.Seconds(n.LatencyS)
		}
		// Under tensor parallelism (cost/parallel.go) the node's time
		// includes the all-reduce that follows it.
		comm := ""
		if n.CommunicationS > 0 {
			comm = ", all-reduce " + render.Seconds(n.CommunicationS)
		}
		fmt.Fprintf(&b, "time %s (%s of total): compute %s%s, memory %s, launch %s%s\n",
			render.Seconds(n.TimeS), render.Percent(d.share(n.TimeS)),
			render.Seconds(n.ComputeS), latency, render.Seconds(n.MemoryS), render.Seconds(n.LaunchS), comm)
		fmt.Fprintf(&b, "%s, %s read, %s written, AI %s FLOP/B\n",
			render.FLOPs(n.FLOPs), render.Bytes(n.BytesRead), render.Bytes(n.BytesWritten), aiText(n.ArithmeticIntensity))
		fmt.Fprintf(&b, "bound: %s", rf.Ceiling)
		if n.Precision != "" {
			fmt.Fprintf(&b, " (precision %s", render.Clean(n.Precision))
			if rf.Peak > 0 {
				fmt.Fprintf(&b, ", peak %s", flopsRate(rf.Peak))
			}
			b.WriteString(")")
		}
		b.WriteString("\n")
		if rf.Roof > 0 {
			fmt.Fprintf(&b, "roof at this intensity %s; estimated %s\n", flopsRate(rf.Roof), flopsRate(rf.Achieved))
		}
	}
	for k, t := range n.Inputs {
		if k == maxListed {
			fmt.Fprintf(&b, "in  %s\n", moreText(len(n.Inputs)-k))
			break
		}
		fmt.Fprintf(&b, "in  %s: %s\n", render.Clean(t.Name), tensorText(t))
	}
	for k, t := range n.Outputs {
		if k == maxListed {
			fmt.Fprintf(&b, "out %s\n", moreText(len(n.Outputs)-k))
			break
		}
		fmt.Fprintf(&b, "out %s: %s\n", render.Clean(t.Name), tensorText(t))
	}
	if len(n.FusedFrom) > 0 {
		fmt.Fprintf(&b, "fused from: %s\n", render.Clean(listText(n.FusedFrom)))
	}
	if n.Note != "" {
		fmt.Fprintf(&b, "note: %s\n", render.Clean(n.Note))
	}
	return strings.TrimRight(b.String(), "\n")
}

// tensorText is "1×64×56×56 f32" ("? f32" for an unranked tensor).
func tensorText(t report.TensorInfo) string {
	dims := "?"
	if t.Shape != nil {
		parts := make([]string, len(t.Shape))
		for i, dm := range t.Shape {
			if dm.IsKnown() {
				parts[i] = fmt.Sprint(dm.Value)
			} else {
				parts[i] = dm.Sym
			}
		}
		dims = strings.Join(parts, "×")
		if len(parts) == 0 {
			dims = "scalar"
		}
	}
	return render.Clean(dims + " " + shortDType(t.DType))
}

// opCounts is "Conv×3 · Relu×3 · Add" for a group's members, costliest
// op types first, at most max of them.
func (d *drawer) opCounts(u *unit, max int) string {
	type oc struct {
		op    string
		n     int
		timeS float64
	}
	idx := map[string]int{}
	var ops []oc
	for _, i := range u.members {
		n := &d.r.Nodes[i]
		op := opText(n)
		j, ok := idx[op]
		if !ok {
			j = len(ops)
			idx[op] = j
			ops = append(ops, oc{op: op})
		}
		ops[j].n++
		ops[j].timeS += n.TimeS
	}
	sort.SliceStable(ops, func(a, b int) bool { return ops[a].timeS > ops[b].timeS })
	var parts []string
	for k, o := range ops {
		if k == max {
			parts = append(parts, fmt.Sprintf("+%d more", len(ops)-max))
			break
		}
		if o.n > 1 {
			parts = append(parts, fmt.Sprintf("%s×%d", o.op, o.n))
		} else {
			parts = append(parts, o.op)
		}
	}
	return strings.Join(parts, " · ")
}

func (d *drawer) groupLabel(u *unit) string {
	var b strings.Builder
	b.WriteString(labelOpen)
	if u.kind == unitScope {
		b.WriteString(row("<b>" + esc(shorten(u.name, 36)) + "</b>"))
	} else {
		b.WriteString(row(fmt.Sprintf("<i>… %d folded</i>", len(u.members))))
	}
	b.WriteString(row(small(esc(d.opCounts(u, 3)))))
	b.WriteString(row(esc(timeShare(u.timeS, d.share(u.timeS)))))
	if u.kind == unitScope {
		b.WriteString(row(small(esc(workText(u.flops, u.bytes)))))
		if c := d.unitCeiling(u); c != CeilNone {
			b.WriteString(row(small(string(c) + "-bound")))
		}
	}
	b.WriteString(labelClose)
	return b.String()
}

func (d *drawer) groupTooltip(u *unit) string {
	var b strings.Builder
	if u.kind == unitScope {
		fmt.Fprintf(&b, "scope %s: %d nodes\n", render.Clean(u.name), len(u.members))
	} else {
		fmt.Fprintf(&b, "%d nodes folded (not among the kept boxes)\n", len(u.members))
	}
	fmt.Fprintf(&b, "time %s (%s of total), %s, %s\n", render.Seconds(u.timeS), render.Percent(d.share(u.timeS)),
		render.FLOPs(u.flops), render.Bytes(u.bytes))
	b.WriteString(render.Clean(d.opCounts(u, 12)) + "\n")
	// The costliest members, so a fold can be searched for.
	idx := append([]int(nil), u.members...)
	sort.SliceStable(idx, func(a, c int) bool { return d.r.Nodes[idx[a]].TimeS > d.r.Nodes[idx[c]].TimeS })
	for k, i := range idx {
		if k == 8 {
			fmt.Fprintf(&b, "… and %d more\n", len(idx)-8)
			break
		}
		n := &d.r.Nodes[i]
		fmt.Fprintf(&b, "%s (%s) %s\n", render.Clean(n.Name), render.Clean(opText(n)), render.Seconds(n.TimeS))
	}
	return strings.TrimRight(b.String(), "\n")
}

// edge draws a data edge labelled with the first tensor's shape and dtype;
// its width grows with the bytes it carries.
func (d *drawer) edge(from, to dot.Node, e edge) {
	first := e.values[0]
	label := tensorText(first)
	if len(e.values) > 1 {
		label += fmt.Sprintf(" (+%d)", len(e.values)-1)
	}
	var tip []string
	for k, v := range e.values {
		if k == maxListed {
			tip = append(tip, moreText(len(e.values)-k))
			break
		}
		tip = append(tip, render.Clean(v.Name)+": "+tensorText(v))
	}
	ed := d.g.Edge(from, to)
	ed.Attrs("label", label, "tooltip", strings.Join(tip, "\n"), "fontname", "Helvetica", "fontsize", "8",
		"color", "#666666", "arrowsize", "0.6", "penwidth", d.edgeWidth(e.bytes),
		"id", "edge:"+from.ID()+"->"+to.ID())
}

// edgeWidth is 0.8 to 3.2 points by the square root of bytes relative to
// the largest tensor drawn.
func (d *drawer) edgeWidth(bytes float64) string {
	if d.maxBytes < 0 {
		d.maxBytes = 0
		for i := range d.r.Nodes {
			for _, t := range d.r.Nodes[i].Outputs {
				d.maxBytes = math.Max(d.maxBytes, tensorBytes(t))
			}
		}
	}
	w := 0.8
	if d.maxBytes > 0 && bytes > 0 {
		w += 2.4 * math.Sqrt(math.Min(bytes/d.maxBytes, 1))
	}
	return fmt.Sprintf("%.1f", w)
}

// outputs draws the graph outputs as exit points.
func (d *drawer) outputs(nodes []dot.Node) {
	consumed := map[string]bool{}
	for i := range d.r.Nodes {
		for _, t := range d.r.Nodes[i].Inputs {
			consumed[t.Name] = true
		}
	}
	want := map[string]bool{}
	for _, o := range d.o.Outputs {
		want[o] = true
	}
	seen := map[string]bool{}
	more, moreFrom := 0, -1 // outputs past maxOutputs, and a box that writes one
	for i := range d.r.Nodes {
		u := d.l.unitOf[i]
		if u < 0 {
			continue
		}
		for _, t := range d.r.Nodes[i].Outputs {
			isOut := want[t.Name] || (d.o.Outputs == nil && !consumed[t.Name])
			if !isOut || seen[t.Name] {
				continue
			}
			seen[t.Name] = true
			if len(seen) > maxOutputs {
				if more++; moreFrom < 0 {
					moreFrom = u
				}
				continue
			}
			id := "output:" + sanitizeID(t.Name)
			n := d.g.Node(id)
			n.Attrs("id", id, "label", render.Clean(t.Name)+"\n"+tensorText(t), "shape", "ellipse", "style", "filled",
				"fillcolor", "#f0f0f0", "fontname", "Helvetica", "fontsize", "9", "tooltip", "graph output "+render.Clean(t.Name))
			d.g.Edge(nodes[u], n).Attrs("color", "#666666", "arrowsize", "0.6", "id", "edge:"+nodes[u].ID()+"->"+id)
		}
	}
	if more > 0 {
		const id = "output:more"
		n := d.g.Node(id)
		label := fmt.Sprintf("… %d more graph outputs", more)
		n.Attrs("id", id, "label", label, "shape", "ellipse", "style", "filled,dashed",
			"fillcolor", "#f7f7f7", "fontname", "Helvetica", "fontsize", "9", "tooltip", label)
		d.g.Edge(nodes[moreFrom], n).Attrs("color", "#666666", "arrowsize", "0.6", "style", "dashed", "id", "edge:"+nodes[moreFrom].ID()+"->"+id)
	}
}

// listText joins names with ", ", the first maxListed of them.
func listText(names []string) string {
	if len(names) <= maxListed {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:maxListed], ", ") + " " + moreText(len(names)-maxListed)
}
