package viz

import (
	"fmt"
	"sort"
	"strings"

	"github.com/emicklei/dot"
	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/cost/report"
)

// openLayout rebuilds a chosen layout (its collapse depth and cut kept)
// with the groups of o.Expand open and o.Reveal's node drawn alone.
func openLayout(r *report.Report, o GraphOptions, lo layoutOptions, notes []string) *layout {
	keys := append([]string(nil), o.Expand...)
	reveal := -1
	if o.Reveal != "" {
		for i := range r.Nodes {
			if r.Nodes[i].Name == o.Reveal {
				reveal = i
				break
			}
		}
		if reveal >= 0 {
			keys = append(keys, revealKeys(r.Nodes[reveal].ScopedName(), lo.collapse)...)
		} else {
			notes = append(notes, fmt.Sprintf("no node is named %q", o.Reveal))
		}
	}
	lo.expand, lo.repeatUp = expandSet(keys)
	l := buildLayout(r, lo)
	// A node cut by --top or --focus lies in a fold: open that one too.
	if reveal >= 0 {
		if u := l.unitOf[reveal]; u >= 0 && l.units[u].kind == unitFold {
			keys = append(keys, l.units[u].key)
			lo.expand, lo.repeatUp = expandSet(keys)
			l = buildLayout(r, lo)
		}
	}
	l.depth = lo.collapse
	for k := range lo.expand {
		l.expanded = append(l.expanded, k)
	}
	sort.Strings(l.expanded)
	if n := len(l.expanded); n > 0 && o.Page {
		notes = append(notes, fmt.Sprintf("%s open (the panel's collapse button or a breadcrumb closes them)", plural(n, "group")))
	}
	l.notes = append(l.notes, notes...)
	return l
}

// revealKeys are the keys that draw a node alone: every scope above it
// from the collapse depth down, and its path, so no repeated block
// swallows it.
func revealKeys(name string, depth int) []string {
	keys := []string{"repeat:" + name}
	if depth <= 0 {
		return keys
	}
	parts := strings.Split(strings.Trim(name, "/"), "/")
	for k := min(depth, len(parts)-1); k >= 1 && k <= len(parts)-1; k++ {
		keys = append(keys, "/"+strings.Join(parts[:k], "/"))
	}
	return keys
}

// Drawing is a graph with what an interactive viewer needs to name its
// boxes and open them.
type Drawing struct {
	Graph *dot.Graph
	// Depth is the depth exporter scopes were collapsed to (0: none).
	Depth int
	// Expanded are the open groups' keys, Reveal's included, sorted.
	Expanded []string
	// Groups are the drawing's boxes, in topological order.
	Groups []Group
}

// Group is one box of a drawing, as a viewer's panel names it.
type Group struct {
	ID string `json:"id"` // the SVG id
	// Kind is "node", "scope", "repeat" (identical blocks drawn as one)
	// or "fold" (boxes cut by --top or --focus).
	Kind string `json:"kind"`
	// Name is the node's name, the scope's path, "first … last ×N" for a
	// repeat, "N nodes folded: first … last" for a fold.
	Name string `json:"name"`
	// Key opens the box (GraphOptions.Expand); "" for a node.
	Key string `json:"key,omitempty"`
	// Path is the scope the box stands in, for breadcrumbs: a scope's
	// path, a repeat's first block's, a node's enclosing scope.
	Path    string  `json:"path"`
	Members int     `json:"members"`
	Ops     string  `json:"ops"` // "MatMul×7 · Mul×4 · +3 more"
	TimeS   float64 `json:"time_s"`
	Share   float64 `json:"share"`
	// Costliest are the names of its costliest members (at most maxListed).
	Costliest []string `json:"costliest"`
}

// Draw is Graph with the boxes described for a viewer that opens them.
func Draw(r *report.Report, c Ceilings, o GraphOptions) (*Drawing, error) {
	d, err := newDrawer(r, c, o)
	if err != nil {
		return nil, err
	}
	out := &Drawing{Graph: d.g, Depth: d.l.depth, Expanded: d.l.expanded, Groups: make([]Group, 0, len(d.l.units))}
	if out.Expanded == nil {
		out.Expanded = []string{}
	}
	for _, u := range d.l.units {
		out.Groups = append(out.Groups, d.group(u))
	}
	return out, nil
}

func (d *drawer) group(u *unit) Group {
	g := Group{ID: u.id, Name: render.Clean(u.name), Key: u.key, Members: len(u.members), Ops: render.Clean(d.opCounts(u, 6)),
		TimeS: u.timeS, Share: d.share(u.timeS)}
	// A repeat's blocks are alike: list its first block's members.
	idx := append([]int(nil), u.members...)
	if p, ok := strings.CutPrefix(u.key, "repeat:"); ok {
		idx = idx[:0]
		for _, i := range u.members {
			if n := d.r.Nodes[i].ScopedName(); n == p || strings.HasPrefix(n, p+"/") {
				idx = append(idx, i)
			}
		}
		if len(idx) == 0 {
			idx = append(idx, u.members...)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return d.r.Nodes[idx[a]].TimeS > d.r.Nodes[idx[b]].TimeS })
	for k, i := range idx {
		if k == maxListed {
			break
		}
		g.Costliest = append(g.Costliest, render.Clean(d.r.Nodes[i].Name))
	}
	first, last := d.r.Nodes[u.members[0]].Name, d.r.Nodes[u.members[len(u.members)-1]].Name
	switch {
	case u.kind == unitNode:
		g.Kind, g.Path = "node", scopePath(u.path)
	case u.kind == unitFold:
		g.Kind, g.Path = "fold", scopePath(d.r.Nodes[u.members[0]].ScopedName())
		g.Name = render.Clean(fmt.Sprintf("%s folded: %s … %s", plural(len(u.members), "node"), first, last))
		if len(u.members) == 1 {
			g.Name = render.Clean(fmt.Sprintf("1 node folded: %s", first))
		}
	case strings.HasPrefix(u.key, "repeat:"):
		g.Kind, g.Path = "repeat", strings.TrimPrefix(u.key, "repeat:")
	default:
		g.Kind, g.Path = "scope", u.name
	}
	return g
}

// scopePath is the scope a node's name lies in ("" for none).
func scopePath(name string) string {
	if i := strings.LastIndexByte(name, '/'); i > 0 {
		return name[:i]
	}
	return ""
}
