package ir

import (
	"fmt"
	"sort"
)

// InlineFunctions replaces every node that calls a model-local function
// with the function's body, so that shape inference and costing see only
// ordinary ops. See InlineFunctionsNotes for the details.
func InlineFunctions(m *Model) error {
	_, err := InlineFunctionsNotes(m)
	return err
}

// InlineFunctionsNotes inlines model-local function calls and returns notes
// about what it could not represent exactly.
//
// A call is a node whose (domain, op type) names a function of m. It is
// replaced by copies of the body nodes, in the call's place:
//   - body values are renamed "<call name>/<name>" (made unique), so two
//     calls of one function never share a value;
//   - the call's inputs feed the formal inputs (a missing optional input
//     becomes an omitted input of the body nodes), and the call's own
//     output values become the formal outputs, keeping their consumers;
//   - attributes with ref_attr_name take the caller's attribute of that
//     name, else the function's default, else are dropped, as ONNX says;
//   - body nodes keep their domain; their opset is the model's import for
//     that domain. A function importing a domain the model does not gets
//     that import added; a differing version is reported in the notes.
//
// Calls inside subgraphs and calls made by function bodies are inlined
// too, down to Limits.MaxDepth levels (recursive functions fail).
// m.Functions is left in place. Nodes carry no overload field in this IR,
// so a call matches the function with an empty overload when a name has
// several overloads.
func InlineFunctionsNotes(m *Model) ([]string, error) {
	if m == nil || m.Graph == nil || len(m.Functions) == 0 {
		return nil, nil
	}
	in := &inliner{m: m, funcs: map[string]*Function{}, depth: map[*Node]int{}, lim: &DefaultLimits}
	for _, f := range m.Functions {
		key := opKey(f.Domain, f.Name)
		if old, dup := in.funcs[key]; dup {
			if f.Overload != "" {
				continue // keep the plain one; overloads are unreachable
			}
			if old.Overload == "" {
				return nil, fmt.Errorf("function %s is defined twice", key)
			}
		}
		in.funcs[key] = f
	}
	if err := in.graph(m.Graph); err != nil {
		return in.notes, err
	}
	in.opsets()
	return in.notes, nil
}

type inliner struct {
	m     *Model
	funcs map[string]*Function
	depth map[*Node]int // call nesting of nodes made by inlining
	lim   *Limits
	notes []string
	used  []*Function
}

// graph inlines every call in g and its subgraphs.
func (in *inliner) graph(g *Graph) error {
	for i := 0; i < len(g.Nodes); i++ {
		n := g.Nodes[i]
		f := in.funcs[opKey(n.Domain, n.OpType)]
		if f == nil {
			for _, sg := range n.Subgraphs() {
				if err := in.graph(sg); err != nil {
					return err
				}
			}
			continue
		}
		d := in.depth[n] + 1
		if d > in.lim.MaxDepth {
			return fmt.Errorf("function calls nested deeper than %d at node %q (%s): recursive function?", in.lim.MaxDepth, n.Name, n.OpType)
		}
		added, err := in.expand(g, i, n, f)
		if err != nil {
			return fmt.Errorf("inlining node %q (%s): %w", n.Name, n.OpType, err)
		}
		for _, a := range added {
			in.depth[a] = d
		}
		in.markUsed(f)
		i-- // re-examine from the first inlined node: it may be a call
	}
	return nil
}

func (in *inliner) markUsed(f *Function) {
	for _, u := range in.used {
		if u == f {
			return
		}
	}
	in.used = append(in.used, f)
}

// opsets adds the imports functions need and notes version differences.
func (in *inliner) opsets() {
	for _, f := range in.used {
		for _, o := range f.Opsets {
			if _, isFunc := in.funcDomain(o.Domain); isFunc {
				continue
			}
			have := in.m.Opset(o.Domain)
			switch {
			case have == 0:
				in.m.Opsets = append(in.m.Opsets, o)
				in.notes = append(in.notes, fmt.Sprintf("function %s imports %s version %d, which the model did not import; added", opKey(f.Domain, f.Name), domainName(o.Domain), o.Version))
			case have != o.Version:
				in.notes = append(in.notes, fmt.Sprintf("function %s imports %s version %d but the model imports version %d; inlined nodes use version %d", opKey(f.Domain, f.Name), domainName(o.Domain), o.Version, have, have))
			}
		}
	}
	sort.Strings(in.notes)
}

func (in *inliner) funcDomain(d string) (string, bool) {
	for _, f := range in.m.Functions {
		if f.Domain == d {
			return d, true
		}
	}
	return "", false
}

// cloner copies function-body nodes into a target graph, mapping body
// values to target values.
type cloner struct {
	call   *Node
	f      *Function
	prefix string
	vals   map[*Value]*Value
}

// expand replaces g.Nodes[idx] (the call) with the body of f.
func (in *inliner) expand(g *Graph, idx int, call *Node, f *Function) ([]*Node, error) {
	body := f.Body
	if body == nil {
		return nil, fmt.Errorf("function has no body")
	}
	c := &cloner{call: call, f: f, prefix: call.Name + "/", vals: map[*Value]*Value{}}
	for i, formal := range body.Inputs {
		c.vals[formal] = call.In(i) // nil when the caller omits it
	}
	// The call's outputs become the formal outputs. A formal output that
	// is not produced by a body node (it is a formal input) needs an
	// Identity to give the call's output value a producer.
	callOuts := map[*Value]*Value{}
	var passThrough [][2]*Value
	for j, formal := range body.Outputs {
		out := call.Out(j)
		if out == nil {
			continue
		}
		if formal.Producer == nil {
			passThrough = append(passThrough, [2]*Value{formal, out})
			continue
		}
		callOuts[formal] = out
	}
	g.RemoveNode(call)
	added, err := c.addNodes(g, body.Nodes, callOuts)
	if err != nil {
		return nil, err
	}
	for _, pt := range passThrough {
		src := c.vals[pt[0]]
		if src == nil {
			return nil, fmt.Errorf("output %q of function %s is an input the call omits", pt[0].Name, f.Name)
		}
		n := &Node{Name: freshNodeName(g, c.prefix+"Identity"), OpType: "Identity", Inputs: []*Value{src}, Outputs: []*Value{pt[1]}}
		if err := g.AddNode(n); err != nil {
			return nil, err
		}
		added = append(added, n)
	}
	// AddNode appended the new nodes; move them to the call's place.
	rest := g.Nodes[idx : len(g.Nodes)-len(added)]
	order := make([]*Node, 0, len(g.Nodes))
	order = append(order, g.Nodes[:idx]...)
	order = append(order, added...)
	order = append(order, rest...)
	g.Nodes = order
	g.edits++
	return added, nil
}

// addNodes appends copies of nodes (see node) to g in order and returns
// the copies.
func (c *cloner) addNodes(g *Graph, nodes []*Node, callOuts map[*Value]*Value) ([]*Node, error) {
	var added []*Node
	for _, bn := range nodes {
		n, err := c.node(g, bn, callOuts)
		if err != nil {
			return nil, err
		}
		if err := g.AddNode(n); err != nil {
			return nil, err
		}
		added = append(added, n)
	}
	return added, nil
}

// node copies body node bn into g.
func (c *cloner) node(g *Graph, bn *Node, callOuts map[*Value]*Value) (*Node, error) {
	base := bn.Name
	if base == "" {
		base = bn.OpType
	}
	n := &Node{Name: freshNodeName(g, c.prefix+base), OpType: bn.OpType, Domain: bn.Domain,
		FusedFrom: append([]string(nil), bn.FusedFrom...)}
	n.SetDoc(bn.Doc())
	for _, v := range bn.Inputs {
		if v == nil {
			n.Inputs = append(n.Inputs, nil)
			continue
		}
		mv, ok := c.vals[v]
		if !ok {
			return nil, fmt.Errorf("body node %q reads %q before it is produced", bn.Name, v.Name)
		}
		n.Inputs = append(n.Inputs, mv) // nil for an omitted optional input
	}
	for _, o := range bn.Outputs {
		if o == nil {
			n.Outputs = append(n.Outputs, nil)
			continue
		}
		nv := callOuts[o]
		if nv == nil {
			var err error
			nv, err = g.NewValue(freshValueName(g, c.prefix+o.Name))
			if err != nil {
				return nil, err
			}
			nv.Declared, nv.infoDeclared, nv.infoRaw = o.Declared, o.infoDeclared, o.infoRaw
		}
		c.vals[o] = nv
		n.Outputs = append(n.Outputs, nv)
	}
	for _, a := range bn.Attrs {
		na, err := c.attr(g, a)
		if err != nil {
			return nil, err
		}
		if na != nil {
			n.Attrs = append(n.Attrs, na)
		}
	}
	return n, nil
}

// attr copies an attribute, resolving ref_attr_name from the caller (or
// the function's default); it returns nil for a reference left unset.
func (c *cloner) attr(g *Graph, a *Attribute) (*Attribute, error) {
	if a.RefAttrName() != "" {
		src := c.call.Attr(a.RefAttrName())
		if src == nil {
			for _, d := range c.f.AttrDefaults {
				if d.Name == a.RefAttrName() {
					src = d
				}
			}
		}
		if src == nil {
			return nil, nil
		}
		na := *src
		na.Name = a.Name
		na.SetRefAttrName("")
		return &na, nil
	}
	na := *a
	if a.G() != nil {
		sg, err := c.graph(g, a.G())
		if err != nil {
			return nil, err
		}
		na.SetG(sg)
	}
	if a.Graphs() != nil {
		na.SetGraphs(make([]*Graph, len(a.Graphs())))
		for i, sg := range a.Graphs() {
			cg, err := c.graph(g, sg)
			if err != nil {
				return nil, err
			}
			na.Graphs()[i] = cg
		}
	}
	return &na, nil
}

// graph deep-copies a subgraph of a body node into parent, renaming its
// values with the call's prefix and remapping its reads of body values.
func (c *cloner) graph(parent *Graph, src *Graph) (*Graph, error) {
	ng := NewSubgraph(src.Name, parent)
	ng.Doc = src.Doc
	newVal := func(v *Value) (*Value, error) {
		nv, err := ng.NewValue(freshValueName(ng, c.prefix+v.Name))
		if err != nil {
			return nil, err
		}
		nv.Kind, nv.DType, nv.Shape, nv.Declared = v.Kind, v.DType, v.Shape.Clone(), v.Declared
		nv.infoDeclared, nv.infoRaw = v.infoDeclared, v.infoRaw
		c.vals[v] = nv
		return nv, nil
	}
	for _, v := range src.Inputs {
		nv, err := newVal(v)
		if err != nil {
			return nil, err
		}
		ng.AddInput(nv)
	}
	for _, v := range src.Initializers {
		nv, err := newVal(v)
		if err != nil {
			return nil, err
		}
		ng.AddInitializer(nv, v.Const)
	}
	if _, err := c.addNodes(ng, src.Nodes, nil); err != nil {
		return nil, err
	}
	for _, v := range src.Outputs {
		nv, ok := c.vals[v]
		if !ok || nv == nil {
			return nil, fmt.Errorf("subgraph %q output %q has no value", src.Name, v.Name)
		}
		ng.AddOutput(nv)
	}
	for name, ti := range src.ValueInfo {
		ng.ValueInfo[c.prefix+name] = ti
	}
	return ng, nil
}

// freshValueName returns base, or base with a suffix, unused in g's scope.
func freshValueName(g *Graph, base string) string {
	if g.Lookup(base) == nil {
		return base
	}
	return g.UniqueName(base)
}

// freshNodeName returns base, or base with a suffix, unused by g's nodes.
func freshNodeName(g *Graph, base string) string {
	if !g.hasNodeNamed(base) {
		g.noteNodeName(base)
		return base
	}
	for i := 1; ; i++ {
		name := fmt.Sprintf("%s_%d", base, i)
		if !g.hasNodeNamed(name) {
			g.noteNodeName(name)
			return name
		}
	}
}
