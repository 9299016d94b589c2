package ir

import (
	"fmt"
	"slices"
)

// Verify checks the structural invariants every pass must keep:
//   - every value has at most one producer, and that producer lists it
//     among its outputs;
//   - every value's consumer list matches the nodes reading it exactly
//     (once per reading slot);
//   - every node input is produced earlier in g.Nodes, is an input or
//     initializer of g, or is available in an enclosing graph at the point
//     of the node that owns the subgraph (so g.Nodes is in topological
//     order and the graph is acyclic);
//   - every graph output is produced (or is an input, an initializer or an
//     outer value).
//
// Subgraphs are checked recursively. Verify holds right after reading,
// before shape inference; VerifyInferred adds the type checks.
func Verify(g *Graph) error {
	v := &verifier{}
	return v.graph(g, nil)
}

// VerifyInferred is Verify plus: every tensor output of a node whose op is
// in the op table has a dtype and a ranked shape.
func VerifyInferred(g *Graph) error {
	v := &verifier{inferred: true}
	return v.graph(g, nil)
}

// VerifyModel verifies the main graph and every function body.
func VerifyModel(m *Model) error {
	if m.Graph == nil {
		return fmt.Errorf("model has no graph")
	}
	if err := Verify(m.Graph); err != nil {
		return err
	}
	for _, f := range m.Functions {
		if f.Body == nil {
			return fmt.Errorf("function %q has no body", f.Name)
		}
		if err := Verify(f.Body); err != nil {
			return fmt.Errorf("function %q: %w", f.Name, err)
		}
	}
	return nil
}

type verifier struct {
	inferred bool
}

// scope is the set of values available at a point, chained to the scope
// of the enclosing graph at the owning node.
type scope struct {
	avail map[*Value]bool
	outer *scope
}

func (s *scope) has(v *Value) bool {
	for c := s; c != nil; c = c.outer {
		if c.avail[v] {
			return true
		}
	}
	return false
}

// checkSource: a graph input or initializer (what) has no producer and is
// registered in g.
func checkSource(g *Graph, v *Value, what string) error {
	if v.Producer != nil {
		return fmt.Errorf("graph %q %s %q has producer %q", g.Name, what, v.Name, v.Producer.Name)
	}
	if g.Local(v.Name) != v {
		return fmt.Errorf("graph %q %s %q is not registered in the graph", g.Name, what, v.Name)
	}
	return nil
}

func (vf *verifier) graph(g *Graph, outer *scope) error {
	sc := &scope{avail: map[*Value]bool{}, outer: outer}
	for _, v := range g.Inputs {
		if v == nil {
			return fmt.Errorf("graph %q has a nil input", g.Name)
		}
		if err := checkSource(g, v, "input"); err != nil {
			return err
		}
		sc.avail[v] = true
	}
	for _, v := range g.Initializers {
		if v == nil || v.Const == nil || !v.IsInitializer {
			return fmt.Errorf("graph %q has an initializer without a tensor", g.Name)
		}
		if err := checkSource(g, v, "initializer"); err != nil {
			return err
		}
		sc.avail[v] = true
	}
	// reads counts, per value, how many input slots of g's nodes read it,
	// to compare with the value's consumer list.
	reads := map[*Value]int{}
	inGraph := make(map[*Node]bool, len(g.Nodes))
	for _, n := range g.Nodes {
		if n == nil {
			return fmt.Errorf("graph %q has a nil node", g.Name)
		}
		if inGraph[n] {
			return fmt.Errorf("graph %q lists node %q twice", g.Name, n.Name)
		}
		inGraph[n] = true
		if n.graph != g {
			return fmt.Errorf("node %q is listed in graph %q but belongs to another graph", n.Name, g.Name)
		}
		if f := g.nodeNames; f != nil && !f.has(n.Name) {
			return fmt.Errorf("node %q of graph %q has a name no node had when the nodes were named, nor UniqueName gave (name a new node with UniqueName or after a node it replaces)", n.Name, g.Name)
		}
		for _, in := range n.Inputs {
			if in == nil {
				continue
			}
			if !sc.has(in) {
				if in.Producer != nil && in.Producer.graph != nil {
					return fmt.Errorf("node %q reads %q before its producer %q runs (not in topological order, or a cycle)", n.Name, in.Name, in.Producer.Name)
				}
				return fmt.Errorf("node %q reads undefined tensor %q", n.Name, in.Name)
			}
			reads[in]++
		}
		for _, sg := range n.Subgraphs() {
			if sg.Parent != g {
				return fmt.Errorf("node %q holds subgraph %q whose parent is not graph %q", n.Name, sg.Name, g.Name)
			}
			if err := vf.graph(sg, sc); err != nil {
				return err
			}
		}
		for _, o := range n.Outputs {
			if o == nil {
				continue
			}
			if o.Producer != n {
				p := "none"
				if o.Producer != nil {
					p = fmt.Sprintf("%q", o.Producer.Name)
				}
				return fmt.Errorf("node %q writes %q, whose producer is %s", n.Name, o.Name, p)
			}
			if sc.avail[o] {
				return fmt.Errorf("value %q is produced twice (second time by node %q)", o.Name, n.Name)
			}
			if g.Local(o.Name) != o {
				return fmt.Errorf("node %q output %q is not registered in graph %q", n.Name, o.Name, g.Name)
			}
			if vf.inferred && LookupOp(n.Domain, n.OpType) != nil && o.Kind == TensorValue {
				if o.DType == Undefined || !o.Shape.Ranked {
					return fmt.Errorf("node %q output %q has no inferred type (%s)", n.Name, o.Name, typeText(o.Kind, o.DType, o.Shape))
				}
			}
			sc.avail[o] = true
		}
	}
	// Consumer lists of g's values must list exactly the reading nodes.
	// Values read from outer scopes are checked by the graph owning them;
	// reads by nested subgraphs are checked by those subgraphs' nodes.
	// Values are visited in name order so the first error is stable.
	for _, v := range g.Values() {
		for _, c := range v.Consumers {
			if c == nil || c.graph == nil {
				return fmt.Errorf("value %q lists a consumer that is not in any graph", v.Name)
			}
			if !readsValue(c, v) {
				return fmt.Errorf("value %q lists consumer %q, which does not read it", v.Name, c.Name)
			}
		}
		if got, cnt := countIn(v.Consumers, g), reads[v]; got != cnt {
			return fmt.Errorf("value %q: %d consumers recorded in graph %q, %d reads", v.Name, got, g.Name, cnt)
		}
		if p := v.Producer; p != nil && p.graph == nil {
			return fmt.Errorf("value %q has producer %q, which was removed", v.Name, p.Name)
		}
		if p := v.Producer; p != nil && p.graph == g && !inGraph[p] {
			return fmt.Errorf("value %q has producer %q, which is not in graph %q", v.Name, p.Name, g.Name)
		}
	}
	for _, o := range g.Outputs {
		if o == nil {
			return fmt.Errorf("graph %q has a nil output", g.Name)
		}
		if !sc.has(o) {
			return fmt.Errorf("graph %q output %q is not produced", g.Name, o.Name)
		}
	}
	return nil
}

// countIn counts entries of cs that are nodes of g.
func countIn(cs []*Node, g *Graph) int {
	k := 0
	for _, c := range cs {
		if c != nil && c.graph == g {
			k++
		}
	}
	return k
}

func readsValue(n *Node, v *Value) bool { return slices.Contains(n.Inputs, v) }
