package ir

import (
	"fmt"
	"slices"
	"sort"
)

// OpSchema is one row of the op table: everything the project knows about
// an operator, in one place. Cost rules live in package cost, keyed by the
// same (Domain, Name).
type OpSchema struct {
	Domain string // "" is the default ONNX domain
	Name   string
	// Since is the first opset version that has the operator; Until, when
	// non-zero, the last one (removed operators such as Upsample, Scatter).
	// Inference refuses a node whose domain's imported opset is outside
	// the range (checkOpsetRange), so these follow the ONNX operator
	// changelog, experimental versions included (ImageScaler, Upsample-1).
	Since, Until int64
	// Arity ranges; MaxIn/MaxOut of -1 mean variadic.
	MinIn, MaxIn, MinOut, MaxOut int
	// Infer sets the dtype and shape (and, for small integer tensors, the
	// value) of each output from the inputs and attributes.
	Infer func(c *InferCtx) error
	// Check, when set, refuses operands the spec forbids that Infer does
	// not need to notice (validate.go); it runs before Infer.
	Check func(c *InferCtx) error
	Doc   string
	// Traits and Family are what passes, cost rules and pictures ask of
	// the op (traits.go).
	Traits Traits
	Family Family
	// EpilogueAttrs are the attributes a FusableActivation carries into
	// a fused epilogue (renamed activation_<name>).
	EpilogueAttrs []string
	// InPlacePairs, for an InPlace op, are the {output, input} slots
	// whose buffers the kernel may share (an attention op's present_key
	// over past_key). Empty means {0, 0}. An optional input named here
	// may be absent: the output then gets its own buffer.
	InPlacePairs [][2]int
}

// defaultInPlace is the pair an InPlace op without InPlacePairs updates.
var defaultInPlace = [][2]int{{0, 0}}

// InPlaceIO returns the {output, input} pairs an InPlace op may update in
// place; nil for an op without the trait.
func (s *OpSchema) InPlaceIO() [][2]int {
	switch {
	case s == nil || !s.Traits.Has(InPlace):
		return nil
	case len(s.InPlacePairs) > 0:
		return s.InPlacePairs
	}
	return defaultInPlace
}

// opTable is sized for what registers: growing it by rehashing cost
// ~0.1 ms of every start.
var opTable = make(map[string]*OpSchema, 256)

func opKey(domain, name string) string {
	if domain == "ai.onnx" {
		domain = ""
	}
	return domain + "::" + name
}

// Register adds schemas to the op table. It panics on a duplicate, which is
// a programming error caught by any test (the table is built at init).
func Register(schemas ...*OpSchema) {
	for _, s := range schemas {
		k := opKey(s.Domain, s.Name)
		if _, dup := opTable[k]; dup {
			panic("ir: op registered twice: " + k)
		}
		opTable[k] = s
	}
}

// LookupOp returns the schema for an operator, or nil.
func LookupOp(domain, name string) *OpSchema { return opTable[opKey(domain, name)] }

// Ops returns every registered schema sorted by domain and name.
func Ops() []*OpSchema {
	out := make([]*OpSchema, 0, len(opTable))
	for _, s := range opTable {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Domain != out[j].Domain {
			return out[i].Domain < out[j].Domain
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// InferCtx is what a shape function sees: the node, the opset in force for
// its domain, and helpers that read inputs and set outputs.
type InferCtx struct {
	Node   *Node
	Opset  int64
	Model  *Model
	Limits *Limits
	// InferSubgraph runs inference on a subgraph (If/Loop/Scan bodies)
	// after the caller has set the types of the subgraph's inputs.
	InferSubgraph func(g *Graph) error
	// fresh counts the symbols minted for this inference run; nil in a
	// detached context (InferDetached), whose Fresh only records that an
	// unknown size was asked for.
	fresh      *int
	askedFresh bool
	// inf is the inference run, for Binding and Warnf; nil in a detached
	// context.
	inf *inferer
}

// withInputs runs rule on c seen through a node whose inputs are ins: a
// contrib op's slots laid out as its float counterpart's, so that the
// counterpart's rule, which reads slots by position, serves both. Name,
// attributes and outputs are the node's own: the rule sets its outputs
// and its errors name it.
func (c *InferCtx) withInputs(ins []*Value, rule func(*InferCtx) error) error {
	return c.withNode(ins, c.Node.Attrs, rule)
}

// withNode is withInputs with the attributes attrs: a contrib op that
// passes a standard op's attribute as an input (ConvTransposeWithDynamicPads'
// pads).
func (c *InferCtx) withNode(ins []*Value, attrs []*Attribute, rule func(*InferCtx) error) error {
	n := *c.Node
	n.Inputs, n.Attrs = ins, attrs
	v := *c
	v.Node = &n
	err := rule(&v)
	c.askedFresh = c.askedFresh || v.askedFresh
	return err
}

// NumIn is the number of input slots (omitted optional inputs included).
func (c *InferCtx) NumIn() int { return len(c.Node.Inputs) }

// In returns input i or nil when absent.
func (c *InferCtx) In(i int) *Value { return c.Node.In(i) }

// HasIn reports whether input i is present.
func (c *InferCtx) HasIn(i int) bool { return c.Node.In(i) != nil }

// InShape returns input i's shape (unranked when absent).
func (c *InferCtx) InShape(i int) Shape {
	if v := c.In(i); v != nil {
		return v.Shape
	}
	return Unranked()
}

// InType returns input i's dtype (Undefined when absent).
func (c *InferCtx) InType(i int) DType {
	if v := c.In(i); v != nil {
		return v.DType
	}
	return Undefined
}

// ConstInts returns the known integer contents of input i.
func (c *InferCtx) ConstInts(i int) ([]int64, bool) {
	v := c.In(i)
	if v == nil || v.Const == nil || !v.Const.HasData {
		return nil, false
	}
	if v.Const.Ints != nil || (v.Const.NumElements() == 0 && !v.DType.IsFloat()) {
		return v.Const.Ints, true
	}
	return nil, false // float contents, or strings
}

// ConstFloats returns the known contents of input i as float64, whatever
// its numeric dtype.
func (c *InferCtx) ConstFloats(i int) ([]float64, bool) {
	v := c.In(i)
	if v == nil || v.Const == nil || !v.Const.HasData {
		return nil, false
	}
	if v.Const.Floats != nil || v.Const.NumElements() == 0 {
		return v.Const.Floats, true
	}
	if v.Const.Ints != nil {
		f := make([]float64, len(v.Const.Ints))
		for k, x := range v.Const.Ints {
			f[k] = float64(x)
		}
		return f, true
	}
	return nil, false
}

// Out returns output i or nil when the node omits it.
func (c *InferCtx) Out(i int) *Value { return c.Node.Out(i) }

// SetOut sets the dtype and shape of output i; absent outputs are ignored.
// It checks the shape against Limits so no later step sees a wrapped size.
func (c *InferCtx) SetOut(i int, dt DType, s Shape) error {
	v := c.Out(i)
	if v == nil {
		return nil
	}
	if err := c.checkShape(s); err != nil {
		return err
	}
	v.Kind = TensorValue
	v.DType = dt
	v.Shape = s
	return nil
}

// SetOutConst sets output i's type from t and records t as its known value.
func (c *InferCtx) SetOutConst(i int, t *Tensor) error {
	if err := c.SetOut(i, t.DType, t.Shape()); err != nil {
		return err
	}
	if v := c.Out(i); v != nil {
		v.Const = t
	}
	return nil
}

// PassThrough gives output i the type and shape of input j.
func (c *InferCtx) PassThrough(i, j int) error {
	return c.SetOut(i, c.InType(j), c.InShape(j).Clone())
}

// Fresh returns a new symbolic dim for a size that cannot be known from
// the model (e.g. NonZero's count), named after hint.
func (c *InferCtx) Fresh(hint string) Dim {
	if c.fresh == nil {
		c.askedFresh = true
		return S("?" + hint)
	}
	*c.fresh++
	return S(fmt.Sprintf("?%s_%d", hint, *c.fresh))
}

// Binding is the value a --dim binding gives name, for a size the model
// cannot know that a rule lets the user state by name (RemovePadding's
// total_tokens). A binding read here counts as used: it is shown with
// the others and draws no "matches no symbolic dim" warning.
func (c *InferCtx) Binding(name string) (int64, bool) {
	if c.inf == nil {
		return 0, false
	}
	v, ok := c.inf.opt.Bindings[name]
	if ok {
		c.inf.res.Bound[name] = v
	}
	return v, ok
}

// Warnf adds a warning to the inference result, once however many times
// the same words are asked for (a rule run again on re-inference, or on
// every node of its kind).
func (c *InferCtx) Warnf(format string, args ...any) {
	if c.inf == nil {
		return
	}
	w := fmt.Sprintf(format, args...)
	if !slices.Contains(c.inf.res.Warnings, w) {
		c.inf.res.Warnings = append(c.inf.res.Warnings, w)
	}
}

// Errorf returns an *OpError for the node: the message is prefixed with
// the node's op and name, and %w wraps as in fmt.Errorf.
func (c *InferCtx) Errorf(format string, args ...any) error {
	return &OpError{Op: c.Node.OpType, Node: c.Node.Name, Err: fmt.Errorf(format, args...)}
}

// OpError is a shape-inference failure at one node: a malformed model
// (bad attribute, inputs that cannot combine) rather than a program bug.
// Callers match it with errors.As.
type OpError struct {
	Op, Node string
	Err      error
}

func (e *OpError) Error() string {
	return fmt.Sprintf("%s node %s: %v", cutName(e.Op), QuoteName(e.Node), e.Err)
}
func (e *OpError) Unwrap() error { return e.Err }

func (c *InferCtx) checkShape(s Shape) error {
	if !s.Ranked {
		return nil
	}
	lim := c.Limits
	if len(s.Dims) > lim.MaxRank {
		return c.Errorf("rank %d exceeds the limit of %d", len(s.Dims), lim.MaxRank)
	}
	// The element count is only counted, never allocated (see Limits), so
	// it is bounded in float64 by MaxCountedElements, not by MaxElements.
	n := 1.0
	for _, d := range s.Dims {
		if !d.IsKnown() {
			continue
		}
		if d.Value < 0 {
			return c.Errorf("negative dimension %d in output shape %s", d.Value, s)
		}
		if d.Value > lim.MaxDim {
			return c.Errorf("dimension %d exceeds the limit of %d", d.Value, lim.MaxDim)
		}
		n *= float64(d.Value)
		if n > c.maxCounted() {
			return c.Errorf("shape %s has more than %g elements", s, c.maxCounted())
		}
	}
	return nil
}

// maxCounted is Limits.MaxCountedElements, defaulted for Limits values
// built before the field existed (zero).
func (c *InferCtx) maxCounted() float64 {
	if m := c.Limits.MaxCountedElements; m > 0 {
		return m
	}
	return DefaultLimits.MaxCountedElements
}

// Attr helpers, so shape functions read attributes through the context.
func (c *InferCtx) AttrInt(name string, def int64) int64       { return c.Node.AttrInt(name, def) }
func (c *InferCtx) AttrFloat(name string, def float64) float64 { return c.Node.AttrFloat(name, def) }
func (c *InferCtx) AttrString(name, def string) string         { return c.Node.AttrString(name, def) }
func (c *InferCtx) AttrInts(name string) ([]int64, bool)       { return c.Node.AttrInts(name) }
func (c *InferCtx) AttrFloats(name string) ([]float64, bool)   { return c.Node.AttrFloats(name) }
func (c *InferCtx) Attr(name string) *Attribute                { return c.Node.Attr(name) }

// NormAxis maps a possibly negative axis into [0, rank), or errors.
func (c *InferCtx) NormAxis(axis int64, rank int) (int, error) {
	if axis < -int64(rank) || axis >= int64(rank) {
		return 0, c.Errorf("axis %d out of range for rank %d", axis, rank)
	}
	if axis < 0 {
		axis += int64(rank)
	}
	return int(axis), nil
}
