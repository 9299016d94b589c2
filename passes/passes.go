package passes

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/onnxcost/onnxcost/ir"
)

// Pass is one named rewrite. Run reports whether it changed the graph.
type Pass struct {
	Name string
	Doc  string
	Run  func(g *ir.Graph) (changed bool, err error)
	// After lists passes that must run before this one, Before passes
	// that must run after it, when both are enabled. Either side of a pair
	// may state the requirement, so a new pass orders itself against the
	// others without editing their lines; CheckOrder holds the table to
	// both.
	After, Before []string
	// InferenceOnly marks a rewrite that is valid only at inference: it
	// bakes in values training updates (folding BatchNormalization's
	// running statistics into a Conv's weights), so a training cost must
	// not see it.
	InferenceOnly bool
	// Variant marks a pass that models one runtime's narrower fusion
	// (plans.go): it runs only when named (a plan, --passes), never in
	// the default selection, where the full fusion it is a part of runs.
	Variant bool
	// Float32Only marks a fusion its runtime applies only to a graph it
	// runs in fp32 (tf32 included): priced at a half or 8-bit dtype, the
	// runtime runs the parts as their own kernels (ForDType drops it).
	Float32Only bool
}

// table is the ordered pass list; Run applies it in this order. Filled by
// table.go so that every pass is addressable by name.
var table []Pass

// All returns the pass table in run order (a copy: the table is fixed).
func All() []Pass { return slices.Clone(table) }

// Options select passes and debugging aids.
type Options struct {
	// Only, when non-empty, runs just these passes (in table order).
	Only []string
	// Disable skips these passes.
	Disable []string
	// Check runs ir.Verify after every pass that changed the graph.
	Check bool
	// DumpAfter prints ir.Dump to DumpTo after the named pass.
	DumpAfter string
	DumpTo    io.Writer
	// MaxIterations bounds the fixpoint loop (default 8).
	MaxIterations int

	// verifyRoot, set while running on a subgraph, is the outermost graph
	// Check verifies (passes/subgraph.go).
	verifyRoot *ir.Graph
}

// CheckOrder reports the first problem with a pass list's declared
// order: a name listed twice, a requirement naming no pass in the list,
// or a pass placed on the wrong side of one it names in After or Before.
// The run order is the list's order; requirements are checked against it,
// not used to derive it, so that the order is the one a reader sees.
func CheckOrder(ps []Pass) error {
	pos := make(map[string]int, len(ps))
	for i, p := range ps {
		if _, dup := pos[p.Name]; dup {
			return fmt.Errorf("pass %q listed twice", p.Name)
		}
		pos[p.Name] = i
	}
	for i, p := range ps {
		for _, a := range p.After {
			j, ok := pos[a]
			if !ok {
				return fmt.Errorf("pass %q: After names unknown pass %q", p.Name, a)
			}
			if j >= i {
				return fmt.Errorf("pass %q must come after %q", p.Name, a)
			}
		}
		for _, b := range p.Before {
			j, ok := pos[b]
			if !ok {
				return fmt.Errorf("pass %q: Before names unknown pass %q", p.Name, b)
			}
			if j <= i {
				return fmt.Errorf("pass %q must come before %q", p.Name, b)
			}
		}
	}
	return nil
}

// Lookup returns the pass with the given name.
func Lookup(name string) (*Pass, bool) {
	for i := range table {
		if table[i].Name == name {
			return &table[i], true
		}
	}
	return nil, false
}

// Names lists the pass names in table order.
func Names() []string {
	out := make([]string, len(table))
	for i, p := range table {
		out[i] = p.Name
	}
	return out
}

// DefaultNames lists the passes the fused plan runs (every pass but the
// variants), in table order.
func DefaultNames() []string {
	var out []string
	for _, p := range table {
		if !p.Variant {
			out = append(out, p.Name)
		}
	}
	return out
}

// InferenceOnly names the inference-only passes in table order.
func InferenceOnly() []string { return namesWhere(func(p Pass) bool { return p.InferenceOnly }) }

// Float32Only names the fp32-only passes in table order.
func Float32Only() []string { return namesWhere(func(p Pass) bool { return p.Float32Only }) }

// namesWhere names the passes keep accepts, in table order.
func namesWhere(keep func(Pass) bool) []string {
	var out []string
	for _, p := range table {
		if keep(p) {
			out = append(out, p.Name)
		}
	}
	return out
}

// Selected returns the passes opt enables, in table order, or an error
// naming an unknown pass.
func Selected(opt Options) ([]Pass, error) {
	for _, n := range append(append([]string{}, opt.Only...), opt.Disable...) {
		if _, ok := Lookup(n); !ok {
			return nil, fmt.Errorf("unknown pass %q (passes: %s)", n, strings.Join(Names(), ", "))
		}
	}
	if opt.DumpAfter != "" {
		if _, ok := Lookup(opt.DumpAfter); !ok {
			return nil, fmt.Errorf("--dump-after: unknown pass %q (passes: %s)", opt.DumpAfter, strings.Join(Names(), ", "))
		}
	}
	var out []Pass
	for _, p := range table {
		if len(opt.Only) > 0 && !slices.Contains(opt.Only, p.Name) {
			continue
		}
		if len(opt.Only) == 0 && p.Variant {
			continue
		}
		if slices.Contains(opt.Disable, p.Name) {
			continue
		}
		out = append(out, p)
	}
	return out, nil
}

// Stats says what a Run did.
type Stats struct {
	Iterations int
	// Changed counts, per pass name, the iterations in which it changed
	// the graph.
	Changed map[string]int
	// Converged is false when the iteration limit stopped the loop while
	// passes were still changing the graph.
	Converged bool
}

// Run applies the selected passes in order, repeating the whole sequence
// until no pass changes the graph (a fixpoint) or the iteration limit is
// reached; Stats.Converged tells the two apart so callers can report it.
func Run(g *ir.Graph, opt Options) (*Stats, error) {
	sel, err := Selected(opt)
	if err != nil {
		return nil, err
	}
	limit := opt.MaxIterations
	if limit <= 0 {
		limit = 8
	}
	st := &Stats{Changed: map[string]int{}}
	bodiesConverged, err := runBodies(g, opt, st)
	if err != nil {
		return st, err
	}
	verified := g
	if opt.verifyRoot != nil {
		verified = opt.verifyRoot
	}
	for st.Iterations < limit {
		st.Iterations++
		anyChanged := false
		for _, p := range sel {
			changed, err := p.Run(g)
			if err != nil {
				return st, fmt.Errorf("pass %s: %w", p.Name, err)
			}
			// No pass holds the nodes it removed once it returns.
			g.ReleaseRemoved()
			if changed {
				anyChanged = true
				st.Changed[p.Name]++
				if opt.Check {
					if err := ir.Verify(verified); err != nil {
						return st, fmt.Errorf("pass %s broke the graph: %w", p.Name, err)
					}
				}
			}
			if opt.DumpAfter == p.Name && opt.DumpTo != nil && st.Iterations == 1 {
				fmt.Fprintf(opt.DumpTo, "# after %s\n%s", p.Name, ir.Dump(g))
			}
		}
		if !anyChanged {
			st.Converged = bodiesConverged
			return st, nil
		}
	}
	// Not converged: the graph is valid (every pass leaves it so), just
	// possibly not fully optimised. Callers report it.
	return st, nil
}
