package ir

import (
	"fmt"
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
	group := make(map[*Node]bool, len(old))
	for _, m := range old {
		if m == nil || m.graph != g || g.indexOf(m) < 0 {
			return fmt.Errorf("replace with %s %q: a replaced node is not in graph %q", n.OpType, n.Name, g.Name)
		}
		group[m] = true
	}
	if n.graph != nil {
		return fmt.Errorf("replace with %s %q: the new node is already in a graph", n.OpType, n.Name)
	}
	keep := map[*Value]bool{}
	for _, o := range n.Outputs {
		if o == nil {
			continue
		}
		keep[o] = true
		if o.Producer != nil && !group[o.Producer] {
			return fmt.Errorf("replace with %s %q: output %q is produced outside the group, by %q", n.OpType, n.Name, o.Name, o.Producer.Name)
		}
	}
	for _, in := range n.Inputs {
		if in != nil && in.Producer != nil && group[in.Producer] && !keep[in] {
			return fmt.Errorf("replace with %s %q: input %q would lose its producer", n.OpType, n.Name, in.Name)
		}
	}
	var dead []*Value
	for _, m := range old {
		for _, o := range m.Outputs {
			if o == nil || keep[o] {
				continue
			}
			for _, c := range o.Consumers {
				if !group[c] {
					return fmt.Errorf("replace with %s %q: %q is read outside the group by %q", n.OpType, n.Name, o.Name, c.Name)
				}
			}
			if g.IsGraphOutput(o) {
				return fmt.Errorf("replace with %s %q: %q is a graph output", n.OpType, n.Name, o.Name)
			}
			dead = append(dead, o)
		}
	}
	// Checked: now mutate. n takes the last old node's slot.
	if err := g.splice(old, n); err != nil {
		return err
	}
	for _, v := range dead {
		g.RemoveValue(v)
	}
	return nil
}
