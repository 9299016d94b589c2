package cost

import (
	"fmt"
	"strings"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

// Partial totals (issue 27, item 7). An op with no shape rule leaves its
// outputs unranked, and every rule downstream of it then counts the
// unknown part as 0: a Conv → custom op → Conv model reported half its
// MACs with exit 0, and the unsupported-ops footer named only the custom
// op. Nothing can size those tensors without guessing, so the report
// instead says, in the totals (JSON totals.partial, a text footer line
// and a warning), how many main-graph nodes were not costed in full and
// names the unsized ones: a reader sees a lower bound, not the model's
// cost.

// partialKind is how fully one node was costed; the larger wins when a
// node (or its body) meets both.
type partialKind uint8

const (
	costedInFull partialKind = iota
	// partialUnsized: a rule met a tensor of unknown shape (RuleCtx.unknown)
	// and counted that part as 0.
	partialUnsized
	// partialUncosted: no cost rule, or the rule failed (addUnsupported).
	partialUncosted
)

// partialTracker follows, per main-graph node, the worst partialKind met
// while costing it, subgraphs included, so that a Loop whose body holds
// an unsized node is itself named.
type partialTracker struct {
	cur      partialKind // the main-graph node being costed
	uncosted int
	unsized  []string
}

// note records what the node being costed (at any depth) met.
func (p *partialTracker) note(k partialKind) {
	if k > p.cur {
		p.cur = k
	}
}

// endNode closes main-graph node n.
func (p *partialTracker) endNode(n *ir.Node) {
	switch p.cur {
	case partialUnsized:
		p.unsized = append(p.unsized, n.Name)
	case partialUncosted:
		p.uncosted++
	}
	p.cur = costedInFull
}

// summary is the totals' Partial for a main graph of nodes nodes; nil
// when every node was costed in full.
func (p *partialTracker) summary(nodes int) *report.Partial {
	if p.uncosted == 0 && len(p.unsized) == 0 {
		return nil
	}
	r := &report.Partial{UncostedNodes: p.uncosted, UnsizedNodes: len(p.unsized),
		UnsizedNodeNames: append([]string{}, p.unsized...)}
	if nodes > 0 {
		r.ShareOfNodes = float64(p.uncosted+len(p.unsized)) / float64(nodes)
	}
	var why []string
	if p.uncosted > 0 {
		why = append(why, fmt.Sprintf("%d node(s) have no cost rule (unsupported_ops)", p.uncosted))
	}
	if len(p.unsized) > 0 {
		why = append(why, fmt.Sprintf("%d node(s) read or write tensors of unknown shape (after an op with no shape rule, or a data-dependent shape)", len(p.unsized)))
	}
	r.Reason = strings.Join(why, " and ") + "; what they could not count is counted as 0, so every total is a lower bound"
	return r
}

// unsizedNote is a node's note when its rule met an unknown shape: the
// row says why its counts are low.
func unsizedNote(note string) string {
	const s = "shape unknown: its unknown part counted as 0"
	if note == "" {
		return s
	}
	return s + "; " + note
}
