package cost

import (
	"errors"
	"fmt"
	"math"

	"github.com/onnxcost/onnxcost/ir"
)

// maxKnownTrips bounds a Loop trip count taken as real. Exporters write
// INT64_MAX (or similar) as M for while-loops that stop on their
// condition; such an M says nothing about the work.
const maxKnownTrips = 1 << 31

func init() {
	RegisterRule("", "If", ifRule)
	RegisterRule("", "Loop", loopRule)
	RegisterRule("", "Scan", scanRule)
}

// ifRule: the costlier branch (by estimated time, then FLOPs) is counted,
// and the note says which.
func ifRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	thenG, elseG := attrGraph(n, "then_branch"), attrGraph(n, "else_branch")
	if thenG == nil || elseG == nil || c.sub == nil {
		return NodeEstimate{}, errors.New("an If node without both branches")
	}
	tc, err := c.sub(thenG)
	if err != nil {
		return NodeEstimate{}, err
	}
	ec, err := c.sub(elseG)
	if err != nil {
		return NodeEstimate{}, err
	}
	pick, name, other := tc, "then_branch", ec
	if ec.agg.TimeS > tc.agg.TimeS || (ec.agg.TimeS == tc.agg.TimeS && ec.est.FLOPs > tc.est.FLOPs) {
		pick, name, other = ec, "else_branch", tc
	}
	e := pick.estimate()
	e.Note = fmt.Sprintf("If: costlier branch (%s, %.3g s) counted; the other takes %.3g s", name, pick.agg.TimeS, other.agg.TimeS)
	return e, nil
}

// bodyCost costs the body of a Loop or Scan: the one subgraph both repeat.
func bodyCost(n *ir.Node, c *RuleCtx) (*graphCost, error) {
	body := attrGraph(n, "body")
	if body == nil || c.sub == nil {
		return nil, fmt.Errorf("%s without a body", n.OpType)
	}
	return c.sub(body)
}

// repeatBody is the estimate of a body run trips times, noted knownNote.
// When the count is not known (what names it) the body is counted once,
// noted unknownNote, with a warning: an undercount the user should see.
func repeatBody(c *RuleCtx, bc *graphCost, trips float64, known bool, what, unknownNote, knownNote string) NodeEstimate {
	e := bc.estimate()
	if !known {
		e.Note = unknownNote
		c.Warnf("%s unknown, body counted once", what)
		return e
	}
	e.scaleAll(trips)
	e.Note = knownNote
	return e
}

// loopRule: the body times the trip count M when M is a known constant;
// otherwise the body once, with a note and a warning.
func loopRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	bc, err := bodyCost(n, c)
	if err != nil {
		return NodeEstimate{}, err
	}
	trips, known := 1.0, false
	if m := n.In(0); m != nil && m.Const != nil && len(m.Const.Ints) == 1 {
		if v := m.Const.Ints[0]; v >= 0 && v <= maxKnownTrips {
			trips, known = float64(v), true
		}
	}
	e := repeatBody(c, bc, trips, known, "trip count",
		"Loop: trip count unknown, counted once", fmt.Sprintf("Loop: body x %g trips", trips))
	if cond := n.In(1); known && cond != nil && cond.Const == nil {
		e.Note += " (upper bound: the loop also stops on its condition)"
	}
	return e, nil
}

// scanRule: the body times the scan length (the first scan input's size
// along its scan axis; opset 8 also iterates over the batch).
func scanRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	bc, err := bodyCost(n, c)
	if err != nil {
		return NodeEstimate{}, err
	}
	numScan := int(n.AttrInt("num_scan_inputs", 0))
	trips, known := 1.0, false
	if c.Opset == 8 {
		// Inputs: sequence_lens (optional), states..., scan inputs [batch, seq, ...].
		first := len(n.Inputs) - numScan
		if d, ok := c.Dims(n.In(first)); ok && len(d) >= 2 {
			trips, known = d[0]*d[1], true
		}
	} else {
		first := len(n.Inputs) - numScan
		axis := int64(0)
		if axes, ok := n.AttrInts("scan_input_axes"); ok && len(axes) > 0 {
			axis = axes[0]
		}
		if d, ok := c.Dims(n.In(first)); ok {
			if axis < 0 {
				axis += int64(len(d))
			}
			if axis >= 0 && axis < int64(len(d)) {
				trips, known = d[axis], true
			}
		}
	}
	return repeatBody(c, bc, trips, known, "scan length",
		"Scan: scan length unknown, body counted once", fmt.Sprintf("Scan: body x %g iterations", trips)), nil
}

func attrGraph(n *ir.Node, name string) *ir.Graph {
	if a := n.Attr(name); a != nil {
		return a.G()
	}
	return nil
}

// scaleAll multiplies quantities and the composite timing by f.
func (e *NodeEstimate) scaleAll(f float64) {
	if math.IsNaN(f) || f < 0 {
		f = 0
	}
	e.scale(f)
	if e.composite != nil {
		a := *e.composite
		a.scale(f)
		e.composite = &a
	}
}
