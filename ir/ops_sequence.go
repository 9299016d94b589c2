package ir

// Shape functions for sequence and optional values. A sequence Value has
// Kind SequenceValue and carries its element dtype and the shape every
// element shares (unranked when elements differ in rank; a differing dim
// becomes a symbol). Where a sequence is built by a short chain of
// SequenceConstruct/Insert/Erase/SplitToSequence nodes with known
// positions, the element list itself is recovered from the producers, so
// SequenceAt, SequenceLength and ConcatFromSequence give exact results.

func init() {
	Register(
		&OpSchema{Name: "SequenceConstruct", Traits: View, Since: 11, MinIn: 1, MaxIn: -1, MinOut: 1, MaxOut: 1, Infer: inferSequenceConstruct},
		&OpSchema{Name: "SequenceEmpty", Traits: View, Since: 11, MinIn: 0, MaxIn: 0, MinOut: 1, MaxOut: 1, Infer: inferSequenceEmpty},
		&OpSchema{Name: "SequenceInsert", Traits: View, Since: 11, MinIn: 2, MaxIn: 3, MinOut: 1, MaxOut: 1, Infer: inferSequenceEdit},
		&OpSchema{Name: "SequenceErase", Traits: View, Since: 11, MinIn: 1, MaxIn: 2, MinOut: 1, MaxOut: 1, Infer: inferSequenceEdit},
		&OpSchema{Name: "SequenceAt", Traits: View, Since: 11, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1, Infer: inferSequenceAt},
		&OpSchema{Name: "SequenceLength", Traits: View, Since: 11, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferSequenceLength},
		&OpSchema{Name: "SplitToSequence", Since: 11, MinIn: 1, MaxIn: 2, MinOut: 1, MaxOut: 1, Infer: inferSplitToSequence},
		&OpSchema{Name: "ConcatFromSequence", Since: 11, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferConcatFromSequence},
		&OpSchema{Name: "SequenceMap", Since: 17, MinIn: 1, MaxIn: -1, MinOut: 1, MaxOut: -1, Infer: inferSequenceMap},
		&OpSchema{Name: "Optional", Traits: View, Since: 15, MinIn: 0, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferOptional},
		&OpSchema{Name: "OptionalHasElement", Traits: View, Since: 15, MinIn: 0, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferOptionalHasElement},
		&OpSchema{Name: "OptionalGetElement", Traits: View, Since: 15, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferOptionalGetElement},
	)
}

// valueType is the type part of a Value: what flows along an edge.
type valueType struct {
	Kind  ValueKind
	DType DType
	Shape Shape
}

func typeOfValue(v *Value) valueType {
	if v == nil {
		return valueType{Shape: Unranked()}
	}
	return valueType{Kind: v.Kind, DType: v.DType, Shape: v.Shape.Clone()}
}

// setOutType sets output i to t, kind included (SetOut alone makes a tensor).
func setOutType(c *InferCtx, i int, t valueType) error {
	if err := c.SetOut(i, t.DType, t.Shape); err != nil {
		return err
	}
	if v := c.Out(i); v != nil {
		v.Kind = t.Kind
	}
	return nil
}

// mergeShapes describes a value that may have either shape: equal dims
// stay, differing ones become fresh symbols, differing ranks give an
// unranked shape.
func mergeShapes(c *InferCtx, a, b Shape) Shape {
	if !a.Ranked || !b.Ranked || len(a.Dims) != len(b.Dims) {
		return Unranked()
	}
	out := a.Clone()
	for i, d := range b.Dims {
		if d != out.Dims[i] {
			out.Dims[i] = c.Fresh("merge")
		}
	}
	return out
}

// mergeTypes merges two value types; the first dtype wins when they differ
// (a malformed model; the checker would reject it).
func mergeTypes(c *InferCtx, a, b valueType) valueType {
	t := a
	if t.DType == Undefined {
		t.DType = b.DType
	}
	t.Shape = mergeShapes(c, a.Shape, b.Shape)
	return t
}

// maxSeqTrace bounds how far seqElements walks back through producers and
// how many elements it tracks, so hostile chains cost little.
const (
	maxSeqTrace = 256
	maxSeqElems = 4096
)

// seqElements recovers the element types of sequence v from its
// producers; ok is false when the list cannot be known statically.
func seqElements(v *Value) ([]valueType, bool) {
	return seqElementsDepth(v, 0)
}

func seqElementsDepth(v *Value, depth int) ([]valueType, bool) {
	if v == nil || v.Producer == nil || depth > maxSeqTrace {
		return nil, false
	}
	n := v.Producer
	switch n.OpType {
	case "SequenceEmpty":
		return []valueType{}, true
	case "SequenceConstruct":
		if len(n.Inputs) > maxSeqElems {
			return nil, false
		}
		out := make([]valueType, 0, len(n.Inputs))
		for _, in := range n.Inputs {
			if in == nil {
				return nil, false
			}
			out = append(out, valueType{Kind: TensorValue, DType: in.DType, Shape: in.Shape.Clone()})
		}
		return out, true
	case "Identity":
		return seqElementsDepth(n.In(0), depth+1)
	case "SequenceInsert", "SequenceErase":
		base, ok := seqElementsDepth(n.In(0), depth+1)
		if !ok {
			return nil, false
		}
		posIn := 2
		if n.OpType == "SequenceErase" {
			posIn = 1
		}
		pos, ok := ConstScalarInt(n.In(posIn))
		size := int64(len(base))
		if n.OpType == "SequenceInsert" {
			if !ok {
				pos = size
			}
			if pos < 0 {
				pos += size
			}
			if pos < 0 || pos > size || size >= maxSeqElems {
				return nil, false
			}
			t := n.In(1)
			if t == nil {
				return nil, false
			}
			out := append(append(append([]valueType{}, base[:pos]...),
				valueType{Kind: TensorValue, DType: t.DType, Shape: t.Shape.Clone()}), base[pos:]...)
			return out, true
		}
		if !ok {
			pos = size - 1
		}
		if pos < 0 {
			pos += size
		}
		if pos < 0 || pos >= size {
			return nil, false
		}
		return append(append([]valueType{}, base[:pos]...), base[pos+1:]...), true
	case "SplitToSequence":
		return splitToSequenceElems(n)
	}
	return nil, false
}

// ConstScalarInt returns the value of a known one-element integer tensor;
// ok is false when v is absent or unknown.
func ConstScalarInt(v *Value) (int64, bool) {
	if v == nil || v.Const == nil || !v.Const.HasData || len(v.Const.Ints) != 1 {
		return 0, false
	}
	return v.Const.Ints[0], true
}

// summarize gives the sequence-level type of a known element list.
func summarize(c *InferCtx, elems []valueType, dt DType) valueType {
	t := valueType{Kind: SequenceValue, DType: dt, Shape: Unranked()}
	for i, e := range elems {
		if t.DType == Undefined {
			t.DType = e.DType
		}
		if i == 0 {
			t.Shape = e.Shape.Clone()
			continue
		}
		t.Shape = mergeShapes(c, t.Shape, e.Shape)
	}
	return t
}

func inferSequenceConstruct(c *InferCtx) error {
	elems, _ := seqElements(c.Out(0))
	if elems == nil {
		for _, in := range c.Node.Inputs {
			elems = append(elems, typeOfValue(in))
		}
	}
	return setOutType(c, 0, summarize(c, elems, c.InType(0)))
}

// SequenceEmpty's element type comes from the dtype attribute (float by
// default); its element shape is unknown until something is inserted.
func inferSequenceEmpty(c *InferCtx) error {
	return setOutType(c, 0, valueType{Kind: SequenceValue, DType: DType(c.AttrInt("dtype", int64(Float32))), Shape: Unranked()})
}

// SequenceInsert and SequenceErase keep the element type; the element shape
// is exact when the list is traceable, else merged with the inserted one.
func inferSequenceEdit(c *InferCtx) error {
	if elems, ok := seqElements(c.Out(0)); ok {
		return setOutType(c, 0, summarize(c, elems, c.InType(0)))
	}
	t := typeOfValue(c.In(0))
	t.Kind = SequenceValue
	if c.Node.OpType == "SequenceInsert" {
		in := typeOfValue(c.In(1))
		if c.In(0) != nil && c.In(0).Producer != nil && c.In(0).Producer.OpType == "SequenceEmpty" {
			t.Shape = in.Shape // an empty sequence adds no constraint
		} else {
			t = mergeTypes(c, t, in)
		}
		if t.DType == Undefined {
			t.DType = in.DType
		}
	}
	return setOutType(c, 0, t)
}

func inferSequenceAt(c *InferCtx) error {
	if elems, ok := seqElements(c.In(0)); ok {
		if pos, ok := ConstScalarInt(c.In(1)); ok {
			if pos < 0 {
				pos += int64(len(elems))
			}
			if pos < 0 || pos >= int64(len(elems)) {
				return c.Errorf("position %d out of range for a sequence of %d", pos, len(elems))
			}
			e := elems[pos]
			return c.SetOut(0, e.DType, e.Shape.Clone())
		}
	}
	t := typeOfValue(c.In(0))
	return c.SetOut(0, t.DType, t.Shape)
}

func inferSequenceLength(c *InferCtx) error {
	if elems, ok := seqElements(c.In(0)); ok {
		return c.SetOutConst(0, IntTensor(nil, []int64{int64(len(elems))}))
	}
	return c.SetOut(0, Int64, RankedShape())
}

// splitToSequenceElems gives the pieces SplitToSequence node n makes, or
// ok=false when their number or sizes are not known.
func splitToSequenceElems(n *Node) ([]valueType, bool) {
	x := n.In(0)
	if x == nil || !x.Shape.Ranked {
		return nil, false
	}
	r := len(x.Shape.Dims)
	axis := n.AttrInt("axis", 0)
	if axis < -int64(r) || axis >= int64(r) {
		return nil, false
	}
	if axis < 0 {
		axis += int64(r)
	}
	dim := x.Shape.Dims[axis]
	piece := func(d Dim, keep bool) valueType {
		s := x.Shape.Clone()
		if keep {
			s.Dims[axis] = d
		} else {
			s.Dims = append(s.Dims[:axis], s.Dims[axis+1:]...)
		}
		return valueType{Kind: TensorValue, DType: x.DType, Shape: s}
	}
	var out []valueType
	split := n.In(1)
	switch {
	case split == nil:
		if !dim.IsKnown() || dim.Value > maxSeqElems {
			return nil, false
		}
		keep := n.AttrInt("keepdims", 1) != 0
		for i := int64(0); i < dim.Value; i++ {
			out = append(out, piece(D(1), keep))
		}
	case split.Const != nil && split.Const.HasData && len(split.Const.Dims) == 0 && len(split.Const.Ints) == 1:
		s := split.Const.Ints[0]
		if !dim.IsKnown() || s <= 0 || dim.Value/s >= maxSeqElems {
			return nil, false
		}
		for left := dim.Value; left > 0; left -= s {
			out = append(out, piece(D(min(s, left)), true))
		}
	case split.Const != nil && split.Const.HasData && split.Const.Ints != nil:
		if len(split.Const.Ints) > maxSeqElems {
			return nil, false
		}
		for _, s := range split.Const.Ints {
			out = append(out, piece(D(s), true))
		}
	default:
		return nil, false
	}
	return out, true
}

func inferSplitToSequence(c *InferCtx) error {
	if elems, ok := splitToSequenceElems(c.Node); ok {
		return setOutType(c, 0, summarize(c, elems, c.InType(0)))
	}
	x := c.InShape(0)
	t := valueType{Kind: SequenceValue, DType: c.InType(0), Shape: Unranked()}
	if x.Ranked {
		axis, err := c.NormAxis(c.AttrInt("axis", 0), len(x.Dims))
		if err != nil {
			return err
		}
		s := x.Clone()
		if !c.HasIn(1) && c.AttrInt("keepdims", 1) == 0 {
			s.Dims = append(s.Dims[:axis], s.Dims[axis+1:]...)
		} else if !c.HasIn(1) {
			s.Dims[axis] = D(1)
		} else {
			s.Dims[axis] = c.Fresh("split")
		}
		t.Shape = s
	}
	return setOutType(c, 0, t)
}

// ConcatFromSequence joins the elements along axis, or stacks them along a
// new axis when new_axis=1.
func inferConcatFromSequence(c *InferCtx) error {
	newAxis := c.AttrInt("new_axis", 0) != 0
	axis := c.AttrInt("axis", 0)
	elems, known := seqElements(c.In(0))
	sum := typeOfValue(c.In(0))
	if known {
		sum = summarize(c, elems, sum.DType)
	}
	if !sum.Shape.Ranked {
		return c.SetOut(0, sum.DType, Unranked())
	}
	r := len(sum.Shape.Dims)
	if newAxis {
		r++
	}
	ax, err := c.NormAxis(axis, r)
	if err != nil {
		return err
	}
	s := sum.Shape.Clone()
	if newAxis {
		count := c.Fresh("seqlen")
		if known {
			count = D(int64(len(elems)))
		}
		s.Dims = append(s.Dims[:ax], append([]Dim{count}, s.Dims[ax:]...)...)
		return c.SetOut(0, sum.DType, s)
	}
	total := c.Fresh("concat")
	if known && len(elems) > 0 {
		total = D(0)
		for _, e := range elems {
			if e.Shape.Rank() != r {
				return c.Errorf("elements of different ranks cannot be concatenated")
			}
			total = AddDim(total, e.Shape.Dims[ax])
		}
	}
	s.Dims[ax] = total
	return c.SetOut(0, sum.DType, s)
}

// SequenceMap runs its body once on element types: sequence inputs feed
// their element type, tensor inputs themselves; each body output becomes a
// sequence of that type.
func inferSequenceMap(c *InferCtx) error {
	body := nodeGraphAttr(c.Node, "body")
	if body == nil {
		return c.Errorf("has no body graph")
	}
	if len(body.Inputs) != c.NumIn() || len(body.Outputs) != len(c.Node.Outputs) {
		return c.Errorf("body has %d inputs and %d outputs, node has %d and %d",
			len(body.Inputs), len(body.Outputs), c.NumIn(), len(c.Node.Outputs))
	}
	for i, bi := range body.Inputs {
		t := typeOfValue(c.In(i))
		if t.Kind == SequenceValue {
			t.Kind = TensorValue
		}
		setValueType(bi, t)
	}
	resetSubgraph(body)
	if err := c.InferSubgraph(body); err != nil {
		return err
	}
	for i, bo := range body.Outputs {
		t := typeOfValue(bo)
		t.Kind = SequenceValue
		if err := setOutType(c, i, t); err != nil {
			return err
		}
	}
	return nil
}

// nodeGraphAttr returns the GRAPH attribute name of n, or nil.
func nodeGraphAttr(n *Node, name string) *Graph {
	if a := n.Attr(name); a != nil {
		return a.G()
	}
	return nil
}

// setValueType gives a subgraph input a type from the enclosing node and
// forgets any value an earlier inference pass gave it.
func setValueType(v *Value, t valueType) {
	v.Kind, v.DType, v.Shape, v.Const = t.Kind, t.DType, t.Shape.Clone(), nil
}

// resetSubgraph forgets the contents computed for g's node outputs (and
// nested subgraphs'), so a second inference pass over a loop body cannot
// keep a constant that held only for the first pass's input types.
func resetSubgraph(g *Graph) {
	for _, n := range g.Nodes {
		for _, o := range n.Outputs {
			if o != nil {
				o.Const = nil
			}
		}
		for _, sg := range n.Subgraphs() {
			resetSubgraph(sg)
		}
	}
}

// Optional wraps its input, or is empty with the type attribute's type.
// (A Value cannot say that an optional holds a sequence; it carries the
// innermost element's dtype and shape.)
func inferOptional(c *InferCtx) error {
	t := valueType{Kind: OptionalValue, Shape: Unranked()}
	if in := c.In(0); in != nil {
		t.DType, t.Shape = in.DType, in.Shape.Clone()
	} else if a := c.Attr("type"); a != nil {
		ti, err := a.TypeProto(0)
		if err != nil {
			return c.Errorf("type attribute: %w", err)
		}
		t.DType, t.Shape = ti.DType, ti.Shape.Clone()
	}
	return setOutType(c, 0, t)
}

// OptionalHasElement is a bool scalar, known when the optional is built
// by an Optional node in the same graph or the input is omitted.
func inferOptionalHasElement(c *InferCtx) error {
	in := c.In(0)
	switch {
	case in == nil:
		return c.SetOutConst(0, &Tensor{DType: Bool, Ints: []int64{0}, HasData: true})
	case in.Kind != OptionalValue:
		return c.SetOutConst(0, &Tensor{DType: Bool, Ints: []int64{1}, HasData: true})
	case in.Producer != nil && in.Producer.OpType == "Optional":
		has := int64(0)
		if in.Producer.In(0) != nil {
			has = 1
		}
		return c.SetOutConst(0, &Tensor{DType: Bool, Ints: []int64{has}, HasData: true})
	}
	return c.SetOut(0, Bool, RankedShape())
}

// OptionalGetElement unwraps an optional; from opset 18 a plain tensor or
// sequence passes through. An optional made by an Optional node yields
// exactly that node's input type (which may be a sequence).
func inferOptionalGetElement(c *InferCtx) error {
	in := c.In(0)
	if in == nil {
		return c.Errorf("input is missing")
	}
	if in.Kind != OptionalValue {
		return setOutType(c, 0, typeOfValue(in))
	}
	if p := in.Producer; p != nil && p.OpType == "Optional" && p.In(0) != nil {
		return setOutType(c, 0, typeOfValue(p.In(0)))
	}
	t := typeOfValue(in)
	t.Kind = TensorValue
	return setOutType(c, 0, t)
}
