package ir

// onnxruntime's tensor contrib ops that are a standard op with a twist:
// Range with an optional delta (1), Unique over a 1-D tensor with
// (uniques, idx, counts) outputs, UnfoldTensor (PyTorch's
// Tensor.unfold: windows of size along dim, step apart, as a new last
// axis) and TorchEmbedding (PyTorch's embedding: Gather of weight rows).
// Shapes follow docs/ContribOperators.md.

func init() {
	ms := "com.microsoft"
	registerFresh(
		// Range(start, limit, delta?) -> Y
		&OpSchema{Domain: ms, Name: "Range", Family: FamilyData, Since: 1, MinIn: 2, MaxIn: 3, MinOut: 1, MaxOut: 1,
			Infer: inferMSRange, Doc: "ONNX Runtime contrib op: the standard Range with delta optional (1)"},
		// Unique(x) -> y, idx, counts
		&OpSchema{Domain: ms, Name: "Unique", Family: FamilyData, Since: 1, MinIn: 1, MaxIn: 1, MinOut: 3, MaxOut: 3,
			Infer: inferMSUnique, Doc: "ONNX Runtime contrib op: the distinct values of a 1-D x in order of appearance [U], each element's index among them [N] and their counts [U]"},
		// UnfoldTensor(input) -> output
		&OpSchema{Domain: ms, Name: "UnfoldTensor", Family: FamilyData, Since: 1, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1,
			Infer: inferUnfoldTensor, Doc: "ONNX Runtime contrib op: every window of size along dim, step apart; that dim becomes (L − size)/step + 1 and a last dim of size is appended"},
		// TorchEmbedding(weight, indices, padding_idx?, scale_grad_by_freq?) -> Y
		&OpSchema{Domain: ms, Name: "TorchEmbedding", Family: FamilyData, Since: 1, MinIn: 2, MaxIn: 4, MinOut: 1, MaxOut: 1,
			Infer: inferTorchEmbedding, Doc: "ONNX Runtime contrib op: rows of weight [V, M] at indices: [*indices, M]"},
	)
}

// inferMSRange is Range's rule with a missing delta read as 1 of start's
// type.
func inferMSRange(c *InferCtx) error {
	if c.HasIn(2) {
		return inferRange(c)
	}
	dt := c.InType(0)
	one := &Tensor{DType: dt, HasData: true}
	if dt.IsFloat() {
		one.Floats = []float64{1}
	} else {
		one.Ints = []int64{1}
	}
	delta := &Value{Name: c.Node.Name + ":delta", Kind: TensorValue, DType: dt, Shape: RankedShape(), Const: one}
	return c.withInputs([]*Value{c.In(0), c.In(1), delta}, inferRange)
}

// inferMSUnique refuses x not 1-D; the uniques' count is known when x
// is, else a fresh symbol.
func inferMSUnique(c *InferCtx) error {
	in := c.InShape(0)
	if in.Ranked && in.Rank() != 1 {
		return c.Errorf("x has rank %d; it must be 1-D", in.Rank())
	}
	u, counted := Dim{}, false
	if t, ok := inVals(c, 0); ok {
		if k, ok := uniqueCount(t, -1); ok {
			u, counted = D(k), true
		}
	}
	if !counted {
		u = c.Fresh("unique")
	}
	var n Dim
	if in.Ranked {
		n = in.Dims[0]
	} else {
		n = c.Fresh("unique")
	}
	for i, s := range []struct {
		dt DType
		d  Dim
	}{{c.InType(0), u}, {Int64, n}, {Int64, u}} {
		if err := setOutShape(c, i, s.dt, RankedShape(s.d)); err != nil {
			return err
		}
	}
	return nil
}

// inferUnfoldTensor refuses a size or step that is not positive and a
// known dim shorter than size.
func inferUnfoldTensor(c *InferCtx) error {
	size, step := c.AttrInt("size", 0), c.AttrInt("step", 1)
	if size <= 0 || step <= 0 {
		return c.Errorf("size %d and step %d must be positive", size, step)
	}
	in := c.InShape(0)
	if !in.Ranked {
		return c.SetOut(0, c.InType(0), Unranked())
	}
	ax, err := c.NormAxis(c.AttrInt("dim", -1), in.Rank())
	if err != nil {
		return err
	}
	l := in.Dims[ax]
	if l.IsKnown() && l.Value < size {
		return c.Errorf("dim %d has %d elements, fewer than the window size %d", ax, l.Value, size)
	}
	out := in.Clone()
	out.Dims[ax] = AddDim(DivDim(SubDim(l, D(size)), D(step), false), D(1))
	out.Dims = append(out.Dims, D(size))
	return c.SetOut(0, c.InType(0), out)
}

// inferTorchEmbedding refuses a weight not 2-D and indices that are not
// integers; the output is Gather's of weight's rows.
func inferTorchEmbedding(c *InferCtx) error {
	if w := c.InShape(0); w.Ranked && w.Rank() != 2 {
		return c.Errorf("weight has rank %d, want 2 [num_embeddings, embedding_dim]", w.Rank())
	}
	if t := c.InType(1); t != Undefined && !t.IsInt() {
		return c.Errorf("indices are %s; they must be integers", t)
	}
	return c.withInputs([]*Value{c.In(0), c.In(1)}, inferGather)
}
