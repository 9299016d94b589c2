package ir

import (
	"fmt"
	"slices"
)

// ReplaceNodes swaps the nodes old (in graph order) for the new node n,
// placed where the last of them was, so every value n reads that old read
// is still produced before it. n's outputs must be fresh values or outputs
// of old nodes; every other output of old is deleted, so it must be read by
// no node outside old and must not be a graph output.
//
// Everything is checked before anything changes: on error g is exactly as
// it was. This is the one rewrite primitive passes use; they never assign
// Producer or Consumers themselves.
func (g *Graph) ReplaceNodes(old []*Node, n *Node) error {
	if len(old) == 0 {
		return fmt.Errorf("replace with %s %q: no nodes to replace", n.OpType, n.Name)
	}
	for _, m := range old {
		if m == nil || m.graph != g || g.indexOf(m) < 0 {
			return fmt.Errorf("replace with %s %q: a replaced node is not in graph %q", n.OpType, n.Name, g.Name)
		}
	}
	group := newNodeSet(old)
	if n.graph != nil {
		return fmt.Errorf("replace with %s %q: the new node is already in a graph", n.OpType, n.Name)
	}
	// n's outputs are few (one or two): a scan of them is the set.
	keep := func(v *Value) bool { return slices.Contains(n.Outputs, v) }
	for _, o := range n.Outputs {
		if o == nil {
			continue
		}
		if o.Producer != nil && !group.has(o.Producer) {
			return fmt.Errorf("replace with %s %q: output %q is produced outside the group, by %q", n.OpType, n.Name, o.Name, o.Producer.Name)
		}
	}
	for _, in := range n.Inputs {
		if in != nil && in.Producer != nil && group.has(in.Producer) && !keep(in) {
			return fmt.Errorf("replace with %s %q: input %q would lose its producer", n.OpType, n.Name, in.Name)
		}
	}
	var dead []*Value
	for _, m := range old {
		for _, o := range m.Outputs {
			if o == nil || keep(o) {
				continue
			}
			for _, c := range o.Consumers {
				if !group.has(c) {
					return fmt.Errorf("replace with %s %q: %q is read outside the group by %q", n.OpType, n.Name, o.Name, c.Name)
				}
			}
			if g.IsGraphOutput(o) {
				return fmt.Errorf("replace with %s %q: %q is a graph output", n.OpType, n.Name, o.Name)
			}
			dead = append(dead, o)
		}
	}
	// n inherits the module path old share when its own name or metadata
	// carries none (a fused node a pass named, of a dynamo export's nodes).
	inherit := ""
	if n.ModulePath() == "" {
		inherit = commonModulePath(old)
	}
	// Checked: now mutate. n takes the last old node's slot.
	if err := g.splice(old, n); err != nil {
		return err
	}
	if inherit != "" {
		n.SetModulePath(inherit)
	}
	for _, v := range dead {
		g.forgetOwn(v)
	}
	return nil
}

// nodeSet answers membership in a group of nodes being replaced. A fusion
// replaces a handful of nodes, where a scan of the list beats a map: the
// two maps ReplaceNodes and splice built per call were 4 of the ~30
// allocations per fusion in the fused plan of a 112k-node LLaMA-shaped
// graph. Large groups (an elementwise chain can be long) still get a map,
// so a check stays O(1).
type nodeSet struct {
	list []*Node
	m    map[*Node]bool
}

// nodeSetScanMax is the largest group checked by scanning.
const nodeSetScanMax = 32

func newNodeSet(nodes []*Node) nodeSet {
	if len(nodes) <= nodeSetScanMax {
		return nodeSet{list: nodes}
	}
	m := make(map[*Node]bool, len(nodes))
	for _, n := range nodes {
		m[n] = true
	}
	return nodeSet{m: m}
}

func (s nodeSet) has(n *Node) bool {
	if s.m != nil {
		return s.m[n]
	}
	return slices.Contains(s.list, n)
}
