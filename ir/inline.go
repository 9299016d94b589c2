package ir

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
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
// too, down to Limits.MaxDepth levels (recursive functions fail). The
// inlined graph may have at most Limits.MaxNodes nodes, as a graph read
// from a file may: the count comes first, so a few kilobytes of functions
// that would expand to billions of nodes are refused at once.
// m.Functions is left in place. Nodes carry no overload field in this IR,
// so a call matches the function with an empty overload when a name has
// several overloads.
func InlineFunctionsNotes(m *Model) ([]string, error) {
	return inlineFunctions(m, &DefaultLimits)
}

func inlineFunctions(m *Model, lim *Limits) ([]string, error) {
	if m == nil || m.Graph == nil || len(m.Functions) == 0 {
		return nil, nil
	}
	in, err := newInliner(m, lim)
	if err != nil {
		return nil, err
	}
	if err := in.budget(); err != nil {
		return nil, err
	}
	if err := in.graph(m.Graph, 0); err != nil {
		return in.notes, err
	}
	in.forgetDropped()
	in.opsets()
	return in.notes, nil
}

func newInliner(m *Model, lim *Limits) (*inliner, error) {
	in := &inliner{m: m, funcs: map[string]*Function{}, lim: lim,
		info: map[*Function]*funcInfo{}, usedSet: map[*Function]bool{},
		names: map[*Graph]*nameCounts{}, dropped: map[*Node]bool{}}
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
	return in, nil
}

type inliner struct {
	m       *Model
	funcs   map[string]*Function
	lim     *Limits
	notes   []string
	used    []*Function // in the order first inlined: the order of added imports
	usedSet map[*Function]bool
	info    map[*Function]*funcInfo
	names   map[*Graph]*nameCounts
	// dropped holds the inlined calls. They leave their inputs' consumer
	// lists in one sweep at the end: removing each from a list as it went
	// shifted the list every time, quadratic in the calls reading a value.
	dropped    map[*Node]bool
	droppedIns []*Value
}

// callee is the function n calls, or nil for an ordinary op.
func (in *inliner) callee(n *Node) *Function {
	return in.funcs[opKey(n.Domain, n.OpType)]
}

// Saturating node counts: a function calling the next one twice, 40 deep,
// expands to 2^39 nodes from a 3 KB file, so sizes are counted, never
// materialised, and may exceed any integer type without the saturation.
const sizeMax = math.MaxInt64

func addSize(a, b int64) int64 {
	if a > sizeMax-b {
		return sizeMax
	}
	return a + b
}

func sizeText(n int64) string {
	if n == sizeMax {
		return fmt.Sprintf("more than %d", int64(sizeMax-1))
	}
	return strconv.FormatInt(n, 10)
}

// funcInfo is what a function's body becomes once inlined: its node count
// (subgraphs and nested calls included) and the nesting of calls in it (1
// for a body that calls nothing).
type funcInfo struct {
	busy   bool // being counted: met again, the function calls itself
	size   int64
	height int
}

// budget counts the nodes the inlined graph will have, each function once
// (bottom-up, memoized), and refuses a graph over Limits.MaxNodes or calls
// nested deeper than Limits.MaxDepth before anything is copied. Inlining
// used to find both only as it went: an exponential expansion spun with
// memory growing until the machine gave out.
func (in *inliner) budget() error {
	var big *Function // the largest function called from outside any function
	total, _, err := in.count(in.m.Graph, 0, &big)
	if err != nil {
		return err
	}
	if total > int64(in.lim.MaxNodes) && big != nil {
		return fmt.Errorf("function %s expands to %s nodes per call; inlined, the graph would have %s nodes, more than the limit of %d",
			opKey(big.Domain, big.Name), sizeText(in.info[big].size), sizeText(total), in.lim.MaxNodes)
	}
	return nil
}

// count returns the inlined node count of g, whose nodes sit inside d
// levels of function calls, and the deepest call nesting below it. At the
// top level (d == 0) it records in *big the called function of greatest
// size, to name in a refusal.
func (in *inliner) count(g *Graph, d int, big **Function) (size int64, height int, err error) {
	for _, n := range g.Nodes {
		f := in.callee(n)
		if f == nil {
			size = addSize(size, 1)
			if !n.hasSubgraphs() {
				continue
			}
			for _, sg := range n.Subgraphs() {
				s, h, err := in.count(sg, d, big)
				if err != nil {
					return 0, 0, err
				}
				size, height = addSize(size, s), max(height, h)
			}
			continue
		}
		if d+1 > in.lim.MaxDepth {
			return 0, 0, deepCalls(in.lim, n)
		}
		fi, err := in.funcInfo(f, n, d+1, big)
		if err != nil {
			return 0, 0, err
		}
		if d+fi.height > in.lim.MaxDepth {
			return 0, 0, deepCalls(in.lim, n)
		}
		size = addSize(size, addSize(fi.size, int64(passThroughs(n, f))))
		height = max(height, fi.height)
		if d == 0 && (*big == nil || fi.size > in.info[*big].size) {
			*big = f
		}
	}
	return size, height, nil
}

// funcInfo counts f's body, whose nodes sit inside d levels of calls, the
// first time call (a call of f) asks.
func (in *inliner) funcInfo(f *Function, call *Node, d int, big **Function) (*funcInfo, error) {
	if fi := in.info[f]; fi != nil {
		if fi.busy {
			return nil, fmt.Errorf("function %s calls itself (node %q): recursive function", opKey(f.Domain, f.Name), call.Name)
		}
		return fi, nil
	}
	fi := &funcInfo{busy: true}
	in.info[f] = fi
	if f.Body != nil { // a missing body is refused when inlined
		var err error
		if fi.size, fi.height, err = in.count(f.Body, d, big); err != nil {
			return nil, err
		}
	}
	fi.height++
	fi.busy = false
	return fi, nil
}

func deepCalls(lim *Limits, n *Node) error {
	return fmt.Errorf("function calls nested deeper than %d (the limit) at node %q (%s)", lim.MaxDepth, n.Name, n.OpType)
}

// passThroughs counts the Identity nodes a call of f needs: one per used
// output of the call that is a formal input of f (see clone).
func passThroughs(call *Node, f *Function) int {
	k := 0
	if f.Body == nil {
		return 0
	}
	for j, formal := range f.Body.Outputs {
		if formal.Producer == nil && call.Out(j) != nil {
			k++
		}
	}
	return k
}

// graph inlines every call in g and its subgraphs; g's nodes sit inside
// d levels of calls. It builds the new node list in one pass, each call's
// inlined body where the call was: inserting each body into the list in
// turn moved the rest of the list per call, quadratic in the calls.
func (in *inliner) graph(g *Graph, d int) error {
	var out []*Node // nil until the first call: a graph without calls is left alone
	for i, n := range g.Nodes {
		f := in.callee(n)
		if f == nil {
			if err := in.subgraphs(n, d); err != nil {
				return err
			}
			if out != nil {
				out = append(out, n)
			}
			continue
		}
		if out == nil {
			out = make([]*Node, i, len(g.Nodes)+len(g.Nodes)/2)
			copy(out, g.Nodes[:i])
		}
		in.drop(g, n)
		var err error
		if out, err = in.expand(g, out, n, f, d+1); err != nil {
			return err
		}
	}
	if out != nil {
		for i, n := range out {
			n.pos = i
		}
		clear(g.Nodes) // the old list must not keep the calls alive
		g.Nodes = out
		g.edits++
	}
	return nil
}

func (in *inliner) subgraphs(n *Node, d int) error {
	if !n.hasSubgraphs() {
		return nil
	}
	for _, sg := range n.Subgraphs() {
		if err := in.graph(sg, d); err != nil {
			return err
		}
	}
	return nil
}

// drop takes call out of g as RemoveNode would, except that its inputs'
// consumer lists are swept once at the end (forgetDropped).
func (in *inliner) drop(g *Graph, call *Node) {
	in.namesOf(g).release(call.Name)
	g.removed = append(g.removed, call)
	for _, o := range call.Outputs {
		if o != nil && o.Producer == call {
			o.Producer = nil
		}
	}
	call.graph = nil
	g.edits++
	in.dropped[call] = true
	in.droppedIns = append(in.droppedIns, call.Inputs...)
}

func (in *inliner) forgetDropped() {
	swept := map[*Value]bool{}
	for _, v := range in.droppedIns {
		if v == nil || swept[v] {
			continue
		}
		swept[v] = true
		v.Consumers = slices.DeleteFunc(v.Consumers, func(n *Node) bool { return in.dropped[n] })
	}
}

// expand appends to out the inlined body of call (a call of f made d
// levels deep), expanding the calls in it in turn.
func (in *inliner) expand(g *Graph, out []*Node, call *Node, f *Function, d int) ([]*Node, error) {
	if d > in.lim.MaxDepth {
		return out, deepCalls(in.lim, call)
	}
	added, err := in.clone(g, call, f)
	if err != nil {
		return out, fmt.Errorf("inlining node %q (%s): %w", call.Name, call.OpType, err)
	}
	in.markUsed(f)
	for _, n := range added {
		if nf := in.callee(n); nf != nil {
			in.namesOf(g).release(n.Name)
			if out, err = in.expand(g, out, n, nf, d+1); err != nil {
				return out, err
			}
			continue
		}
		if err := in.subgraphs(n, d); err != nil {
			return out, err
		}
		out = append(out, n)
	}
	return out, nil
}

func (in *inliner) markUsed(f *Function) {
	if !in.usedSet[f] {
		in.usedSet[f] = true
		in.used = append(in.used, f)
	}
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
	in     *inliner
	call   *Node
	f      *Function
	prefix string
	vals   map[*Value]*Value
}

// clone copies the body of f for call, which has left g, and returns the
// copies in order; the caller places them in g.Nodes. The copies that are
// calls themselves are not linked: they are expanded next, and leave no
// trace in the producers and consumers of their values.
func (in *inliner) clone(g *Graph, call *Node, f *Function) ([]*Node, error) {
	body := f.Body
	if body == nil {
		return nil, fmt.Errorf("function has no body")
	}
	for j := len(body.Outputs); j < len(call.Outputs); j++ {
		if call.Out(j) != nil {
			// Nothing would produce it: its readers would read an
			// undefined value.
			return nil, fmt.Errorf("the call has output %d (%q) but function %s declares %d", j+1, call.Out(j).Name, f.Name, len(body.Outputs))
		}
	}
	c := &cloner{in: in, call: call, f: f, prefix: call.Name + "/", vals: map[*Value]*Value{}}
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
	added, err := c.addNodes(g, body.Nodes, callOuts, false)
	if err != nil {
		return nil, err
	}
	for _, pt := range passThrough {
		src := c.vals[pt[0]]
		if src == nil {
			return nil, fmt.Errorf("output %q of function %s is an input the call omits", pt[0].Name, f.Name)
		}
		n := &Node{Name: in.nodeName(g, c.prefix+"Identity"), OpType: "Identity", Inputs: []*Value{src}, Outputs: []*Value{pt[1]}}
		if err := in.add(g, n, false); err != nil {
			return nil, err
		}
		added = append(added, n)
	}
	return added, nil
}

// add links n into g (when it is not a call) and, if place, appends it to
// g.Nodes.
func (in *inliner) add(g *Graph, n *Node, place bool) error {
	if place {
		return g.AddNode(n)
	}
	for _, o := range n.Outputs {
		if o != nil && o.Producer != nil {
			return fmt.Errorf("value %q produced by both %q and %q", o.Name, o.Producer.Name, n.Name)
		}
	}
	if in.callee(n) == nil {
		g.link(n)
	}
	return nil
}

// addNodes copies nodes (see node) to g in order, adding each (see add),
// and returns the copies.
func (c *cloner) addNodes(g *Graph, nodes []*Node, callOuts map[*Value]*Value, place bool) ([]*Node, error) {
	added := make([]*Node, 0, len(nodes))
	for _, bn := range nodes {
		n, err := c.node(g, bn, callOuts)
		if err != nil {
			return nil, err
		}
		if err := c.in.add(g, n, place); err != nil {
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
	n := &Node{Name: c.in.nodeName(g, c.prefix+base), OpType: bn.OpType, Domain: bn.Domain,
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
			nv, err = g.NewValue(c.in.valueName(g, c.prefix+o.Name))
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
		nv, err := ng.NewValue(c.in.valueName(ng, c.prefix+v.Name))
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
	if _, err := c.addNodes(ng, src.Nodes, nil, true); err != nil {
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

// nameCounts counts the names of a graph's nodes, so that inlining finds a
// free name without comparing it with every node's (hasNodeNamed scans
// the node list when the graph has no name filter, and it has none before
// NameNodes): that scan per inlined node made a chain of calls quadratic.
// It answers as the scan would, counting the nodes in g.Nodes, the calls
// expanded so far out, the copies of function bodies in.
type nameCounts struct {
	count map[string]int
	// next[base] is the least k such that base_k may be free: every
	// base_j with j < k is taken. Without it calls with empty names,
	// whose copies all ask for "/<op>", tried every taken suffix in turn.
	next map[string]int
}

func (in *inliner) namesOf(g *Graph) *nameCounts {
	s := in.names[g]
	if s == nil {
		s = &nameCounts{count: make(map[string]int, len(g.Nodes)), next: map[string]int{}}
		for _, n := range g.Nodes {
			if n.graph == g {
				s.count[n.Name]++
			}
		}
		in.names[g] = s
	}
	return s
}

func (s *nameCounts) release(name string) {
	if s.count[name]--; s.count[name] <= 0 {
		delete(s.count, name)
	}
	i := strings.LastIndexByte(name, '_')
	if i < 0 {
		return
	}
	base, suffix := name[:i], name[i+1:]
	if k, err := strconv.Atoi(suffix); err == nil && k >= 1 && strconv.Itoa(k) == suffix {
		if next, ok := s.next[base]; ok && k < next {
			s.next[base] = k
		}
	}
}

// nodeName returns base, or base_k for the least k, unused by g's nodes,
// and takes it.
func (in *inliner) nodeName(g *Graph, base string) string {
	s := in.namesOf(g)
	name := base
	if s.count[base] > 0 {
		k := max(s.next[base], 1)
		for {
			name = base + "_" + strconv.Itoa(k)
			if s.count[name] == 0 {
				break
			}
			k++
		}
		s.next[base] = k + 1
	}
	s.count[name]++
	g.noteNodeName(name)
	return name
}

// valueName returns base, or a name made from it as UniqueName makes one,
// unused in g's scope.
func (in *inliner) valueName(g *Graph, base string) string {
	if g.Lookup(base) == nil {
		return base
	}
	s := in.namesOf(g)
	for {
		g.nameSeq++
		name := base + "_" + strconv.Itoa(g.nameSeq)
		if g.Lookup(name) == nil && s.count[name] == 0 {
			g.noteNodeName(name)
			return name
		}
	}
}
