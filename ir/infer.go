package ir

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"unsafe"
)

// InferOptions controls shape inference.
type InferOptions struct {
	// Bindings give values to symbolic dims of graph inputs ("batch": 8).
	Bindings map[string]int64
	// Batch, when > 0, binds the leading dim of every graph input whose
	// leading dim is symbolic (what --batch means).
	Batch int64
	// Assume, when > 0, binds every symbol of a graph input that nothing
	// else binds to this value; InferResult.Assumed lists them so the
	// caller can say so.
	Assume int64
	// InputData gives graph inputs known contents (from --input-data);
	// keys are graph input names.
	InputData map[string]*Tensor
	// Limits defaults to DefaultLimits.
	Limits *Limits
	// AfterNode, when set, is called after each node's outputs are
	// inferred, before any consumer's, with the opset the node was
	// inferred at. A caller emulating an inference that knows less (a
	// runtime's, which evaluates no shape arithmetic) uses it to forget
	// what that one would not know: the outputs' contents (Const,
	// SymInts), or a shape.
	AfterNode func(n *Node, opset int64)
}

// InferResult reports what inference could not settle.
type InferResult struct {
	Warnings []string
	// UnknownOps lists "domain::op" of nodes with no shape rule, sorted.
	UnknownOps []string
	// Unbound lists symbols of graph inputs that no binding fixed, sorted.
	Unbound []string
	// Bound records the value given to each bound symbol.
	Bound map[string]int64
	// Assumed lists, sorted, the symbols bound only by Assume.
	Assumed []string
}

// InferShapes sets the dtype and shape of every value of m's graph (and its
// subgraphs) from the graph inputs, the initializers and the op table. It
// never takes a shape from declared output or value_info types: those are
// only compared with the result, and a disagreement is a warning.
func InferShapes(m *Model, opt InferOptions) (*InferResult, error) {
	if opt.Limits == nil {
		opt.Limits = &DefaultLimits
	}
	res := &InferResult{Bound: map[string]int64{}}
	if err := checkOpsetImports(m); err != nil {
		return res, err
	}
	e := &inferer{m: m, opt: opt, res: res, unknown: map[string]bool{}}
	g := m.Graph
	if err := e.bindInputs(g); err != nil {
		return res, err
	}
	if err := e.graph(g, 0); err != nil {
		return res, err
	}
	// After inference: a rule may read a binding by name (Binding).
	// Sorted, so that the warnings (printed and in reports) come in the
	// same order on every run.
	for _, name := range slices.Sorted(maps.Keys(opt.Bindings)) {
		if _, used := res.Bound[name]; !used {
			e.warnf("binding %s=%d matches no symbolic dim of a graph input", name, opt.Bindings[name])
		}
	}
	// After inference, so that every consumer's slot and rank are known.
	if w := promoteWeightInputs(g); w != "" {
		e.warnf("%s", w)
	}
	for k := range e.unknown {
		res.UnknownOps = append(res.UnknownOps, k)
	}
	sort.Strings(res.UnknownOps)
	e.checkDeclared(g)
	return res, nil
}

type inferer struct {
	m       *Model
	opt     InferOptions
	res     *InferResult
	unknown map[string]bool
	fresh   int
	ctxs    []*InferCtx // see ctxAt
}

// ctxAt returns the inference context of subgraph depth depth, reused
// by every node at that depth (a subgraph's nodes use the next one, so a
// control-flow node's context outlives its body's inference). A context
// and closure per node were half of inference's allocations on a
// 112k-node graph.
func (e *inferer) ctxAt(depth int) *InferCtx {
	for len(e.ctxs) <= depth {
		d := len(e.ctxs)
		e.ctxs = append(e.ctxs, &InferCtx{InferSubgraph: func(g *Graph) error {
			return e.graph(g, d+1)
		}})
	}
	return e.ctxs[depth]
}

func (e *inferer) warnf(format string, args ...any) {
	e.res.Warnings = append(e.res.Warnings, fmt.Sprintf(format, args...))
}

// bindInputs gives each graph input its declared type with symbols bound.
func (e *inferer) bindInputs(g *Graph) error {
	unbound, assumed := map[string]bool{}, map[string]bool{}
	for _, in := range g.Inputs {
		if t, ok := e.opt.InputData[in.Name]; ok {
			in.DType = t.DType
			in.Shape = t.Shape()
			if t.HasData {
				in.Const = t
			}
			continue
		}
		if in.Declared == nil {
			continue
		}
		if v, ok := e.opt.Bindings[in.Name]; ok && oneIntDims(in) != nil {
			// A one-element integer input bound by name (--dim
			// max_length=64): a generation op's control inputs.
			in.Kind, in.DType, in.Shape = in.Declared.Kind, in.Declared.DType, in.Declared.Shape.Clone()
			t := IntTensor(oneIntDims(in), []int64{v})
			t.DType = in.DType
			in.Const = t
			e.res.Bound[in.Name] = v
			continue
		}
		in.Kind = in.Declared.Kind
		in.DType = in.Declared.DType
		s := in.Declared.Shape.Clone()
		for i, d := range s.Dims {
			if d.IsKnown() {
				continue
			}
			if v, ok := e.opt.Bindings[d.Sym]; ok {
				s.Dims[i] = D(v)
				e.res.Bound[d.Sym] = v
			} else if i == 0 && e.opt.Batch > 0 {
				s.Dims[i] = D(e.opt.Batch)
				e.res.Bound[d.Sym] = e.opt.Batch
			} else if e.opt.Assume > 0 {
				s.Dims[i] = D(e.opt.Assume)
				assumed[d.Sym] = true
			} else {
				unbound[d.Sym] = true
			}
		}
		in.Shape = s
	}
	for s := range unbound {
		if _, ok := e.res.Bound[s]; !ok {
			e.res.Unbound = append(e.res.Unbound, s)
		}
	}
	sort.Strings(e.res.Unbound)
	// A symbol some input binds explicitly is not assumed, even where
	// another input met it first.
	for s := range assumed {
		if _, ok := e.res.Bound[s]; !ok {
			e.res.Assumed = append(e.res.Assumed, s)
		}
	}
	sort.Strings(e.res.Assumed)
	for _, s := range e.res.Assumed {
		e.res.Bound[s] = e.opt.Assume
	}
	return nil
}

// oneIntDims is the dims of a graph input declared an integer tensor of
// one element (all dims 1, or a scalar); nil for any other.
func oneIntDims(in *Value) []int64 {
	d := in.Declared
	if d.Kind != TensorValue || !d.DType.IsInt() || !d.Shape.Ranked {
		return nil
	}
	dims := make([]int64, 0, d.Shape.Rank()+1)
	for _, x := range d.Shape.Dims {
		if !x.Is(1) {
			return nil
		}
		dims = append(dims, 1)
	}
	return dims
}

// graph infers every node of g in order. Subgraph inputs must be set by
// the control-flow op's shape function before it calls InferSubgraph.
func (e *inferer) graph(g *Graph, depth int) error {
	if depth > e.opt.Limits.MaxDepth {
		return fmt.Errorf("graph %s: subgraphs nested deeper than %d", QuoteName(g.Name), e.opt.Limits.MaxDepth)
	}
	for _, n := range g.Nodes {
		if err := e.node(n, depth); err != nil {
			return err
		}
	}
	return nil
}

func (e *inferer) node(n *Node, depth int) error {
	schema := LookupOp(n.Domain, n.OpType)
	if schema == nil {
		key := opKey(n.Domain, n.OpType)
		e.unknown[key] = true
		for _, o := range n.Outputs {
			if o != nil {
				o.Shape = Unranked()
			}
		}
		return nil
	}
	opset := e.m.Opset(n.Domain)
	if err := checkOpsetRange(schema, n, opset); err != nil {
		return err
	}
	if n.Domain == "" && opset == 0 {
		opset = DefaultOpset
	}
	if err := checkArity(schema, n); err != nil {
		return err
	}
	ctx := e.ctxAt(depth)
	*ctx = InferCtx{
		Node:          n,
		Opset:         opset,
		Model:         e.m,
		Limits:        e.opt.Limits,
		fresh:         &e.fresh,
		inf:           e,
		InferSubgraph: ctx.InferSubgraph,
	}
	// A value known from an earlier inference run (other bindings) must
	// not survive into this one: outputs start unknown.
	for _, o := range n.Outputs {
		if o != nil && !o.IsInitializer {
			o.Const, o.SymInts = nil, nil
		}
	}
	if err := inferChecked(schema, ctx); err != nil {
		return err
	}
	if e.opt.AfterNode != nil {
		e.opt.AfterNode(n, opset)
	}
	return nil
}

// checkOpsetRange refuses a node whose op does not exist at the opset the
// model imports for its domain: a runtime would reject the model, and the
// shape rule may read attributes the op did not have then. It applies to
// every domain alike (the custom and fused ops are all version 1 on), but
// only to an imported version (imported 0): with no import there is no
// declared version to hold the op to, and inference assumes DefaultOpset
// for the default domain rather than refuse the model.
func checkOpsetRange(s *OpSchema, n *Node, imported int64) error {
	if imported <= 0 || (imported >= s.Since && (s.Until == 0 || imported <= s.Until)) {
		return nil
	}
	return &OpError{Op: n.OpType, Node: n.Name, Err: fmt.Errorf("the model imports %s opset %d, but %s exists only in %s",
		domainName(n.Domain), imported, n.OpType, opsetRangeText(s))}
}

// opsetRangeText words a schema's [Since, Until] range.
func opsetRangeText(s *OpSchema) string {
	if s.Until == 0 {
		return fmt.Sprintf("opset %d and later", s.Since)
	}
	return fmt.Sprintf("opsets %d to %d", s.Since, s.Until)
}

func checkArity(s *OpSchema, n *Node) error {
	nin, nout := len(n.Inputs), len(n.Outputs)
	if nin < s.MinIn || (s.MaxIn >= 0 && nin > s.MaxIn) {
		return &OpError{Op: n.OpType, Node: n.Name, Err: fmt.Errorf("has %d inputs, the op takes %s", nin, arityText(s.MinIn, s.MaxIn))}
	}
	if nout < s.MinOut || (s.MaxOut >= 0 && nout > s.MaxOut) {
		return &OpError{Op: n.OpType, Node: n.Name, Err: fmt.Errorf("has %d outputs, the op gives %s", nout, arityText(s.MinOut, s.MaxOut))}
	}
	return nil
}

func arityText(lo, hi int) string {
	switch {
	case hi < 0:
		return fmt.Sprintf("at least %d", lo)
	case lo == hi:
		return fmt.Sprintf("%d", lo)
	}
	return fmt.Sprintf("%d to %d", lo, hi)
}

// checkDeclared compares inferred graph-output types with declared ones.
func (e *inferer) checkDeclared(g *Graph) {
	for _, o := range g.Outputs {
		e.checkOne("output", o, o.Declared)
	}
	// value_info: the same check for intermediate values, at most a few
	// warnings (an exporter that got one shape wrong usually got many).
	// Only the disagreeing names are sorted (for a stable warning order):
	// sorting every value_info name took 0.1 s on a 112k-node graph.
	outputs := make(map[*Value]bool, len(g.Outputs))
	for _, o := range g.Outputs {
		outputs[o] = true
	}
	var bad []string
	check := func(v *Value, d *TypeInfo) {
		if v != nil && !v.IsInitializer && !outputs[v] && e.disagrees(v, d) {
			bad = append(bad, v.Name)
		}
	}
	for name, d := range g.ValueInfo {
		check(g.Local(name), &d)
	}
	// Values in node order: the name table's order is random in memory,
	// and on a 112k-node graph its cache misses made this check cost
	// more than inferring the shapes.
	var dec infoDecoder
	for _, n := range g.Nodes {
		for _, v := range n.Outputs {
			if v == nil {
				continue
			}
			if _, dup := g.ValueInfo[v.Name]; dup {
				continue // checked above
			}
			switch {
			case v.infoDeclared:
				check(v, v.Declared)
			case v.infoRaw != "":
				if v.IsInitializer || outputs[v] {
					continue
				}
				if agrees, ok := rawAgrees(v.infoRaw, v); ok {
					if !agrees {
						bad = append(bad, v.Name)
					}
					continue
				}
				ti := dec.decode(v.infoRaw)
				check(v, &ti)
			}
		}
	}
	sort.Strings(bad)
	const maxWarnings = 5
	for _, name := range bad[:min(len(bad), maxWarnings)] {
		e.checkOne("value_info", g.Local(name), g.DeclaredInfo(name))
	}
	if len(bad) > maxWarnings {
		e.warnf("value_info: %d more values whose declared type disagrees with the inferred one", len(bad)-maxWarnings)
	}
}

// rawAgrees is disagrees for a value_info type still encoded, compared as
// it is read, without decoding: ok is false for anything but a plain
// tensor type (see parsePlainType; decode it then). Decoding 112k types
// into scratch took most of this check's time.
func rawAgrees(raw string, v *Value) (agrees, ok bool) {
	if v.Kind != TensorValue {
		return true, false
	}
	p, ok := parsePlainType(unsafe.Slice(unsafe.StringData(raw), len(raw)))
	if !ok {
		return true, false
	}
	if p.dtype != Undefined && v.DType != Undefined && p.dtype != v.DType {
		return false, true
	}
	if !p.ranked || !v.Shape.Ranked {
		return true, true
	}
	i, disagree := 0, false
	ok = p.eachDim(func(value int64, known bool, _ []byte) bool {
		if i >= len(v.Shape.Dims) {
			disagree = true // more dims declared than inferred
			return false
		}
		if d := v.Shape.Dims[i]; known && d.IsKnown() && d.Value != value {
			disagree = true
			return false
		}
		i++
		return true
	})
	switch {
	case disagree:
		return false, true
	case !ok:
		return true, false
	}
	return i == len(v.Shape.Dims), true
}

// disagrees reports whether a declared tensor type contradicts v's.
func (e *inferer) disagrees(v *Value, d *TypeInfo) bool {
	if d == nil || d.Kind != TensorValue || v.Kind != TensorValue {
		return false
	}
	if d.DType != Undefined && v.DType != Undefined && d.DType != v.DType {
		return true
	}
	return d.Shape.Ranked && v.Shape.Ranked && !compatible(d.Shape, v.Shape)
}

// checkOne warns when v's inferred type contradicts its declaration.
func (e *inferer) checkOne(what string, v *Value, d *TypeInfo) {
	if !e.disagrees(v, d) {
		return
	}
	if d.DType != Undefined && v.DType != Undefined && d.DType != v.DType {
		e.warnf("%s %s: inferred dtype %s, declared %s", what, QuoteName(v.Name), v.DType, d.DType)
	}
	if d.Shape.Ranked && v.Shape.Ranked && !compatible(d.Shape, v.Shape) {
		e.warnf("%s %s: inferred shape %s, declared %s", what, QuoteName(v.Name), v.Shape, d.Shape)
	}
}

// compatible reports whether declared and inferred shapes can describe the
// same tensor: same rank, and equal wherever both dims are numbers.
func compatible(a, b Shape) bool {
	if len(a.Dims) != len(b.Dims) {
		return false
	}
	for i := range a.Dims {
		if a.Dims[i].IsKnown() && b.Dims[i].IsKnown() && a.Dims[i].Value != b.Dims[i].Value {
			return false
		}
	}
	return true
}

// DefaultOpset is the default-domain opset assumed for a model that
// imports none: the current one.
const DefaultOpset = 21

// InferDetached runs the shape rule of default-domain op on a node in no
// graph (the parts of a fused op), with c's model and limits, and returns
// its single output. Inputs are read, never changed. When the rule needs a
// size nothing determines (a fresh symbol, which belongs to a graph), the
// output is unranked with input 0's dtype: the fused op's own output is
// then unknown, not invented.
func InferDetached(c *InferCtx, op string, ins []*Value, attrs []*Attribute) (*Value, error) {
	s := LookupOp("", op)
	if s == nil {
		return nil, c.Errorf("unknown part %q", op)
	}
	out := &Value{Name: c.Node.Name + ":" + op}
	n := &Node{Name: c.Node.Name, OpType: op, Inputs: ins, Outputs: []*Value{out}, Attrs: attrs}
	if err := checkArity(s, n); err != nil {
		return nil, c.Errorf("part: %w", err)
	}
	opset := int64(DefaultOpset)
	if c.Model != nil && c.Model.Opset("") > 0 {
		opset = c.Model.Opset("")
	}
	dc := &InferCtx{Node: n, Opset: opset, Model: c.Model, Limits: c.Limits}
	err := s.Infer(dc)
	if dc.askedFresh {
		// Whatever the rule did after asking (an error on the
		// placeholder included) rests on a size it could not know.
		out.Kind, out.DType, out.Shape, out.Const, out.SymInts = TensorValue, c.InType(0), Unranked(), nil, nil
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Node.Name, err)
	}
	return out, nil
}
