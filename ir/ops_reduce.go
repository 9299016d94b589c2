package ir

// Reductions: the Reduce* family, ArgMax/ArgMin, and the loss operators
// whose reduction attribute decides between a scalar and a per-sample
// output.

func init() {
	type row struct {
		name string
		// axesInput is the opset from which axes is an input rather than an
		// attribute (13 for ReduceSum, 18 for the others).
		axesInput int64
		fold      ReduceKind
		folds     bool
	}
	rows := []row{
		{"ReduceSum", 13, ReduceSumKind, true},
		{"ReduceProd", 18, ReduceProdKind, true},
		{"ReduceMax", 18, ReduceMaxKind, true},
		{"ReduceMin", 18, ReduceMinKind, true},
		{"ReduceMean", 18, 0, false},
		{"ReduceL1", 18, 0, false},
		{"ReduceL2", 18, 0, false},
		{"ReduceLogSum", 18, 0, false},
		{"ReduceLogSumExp", 18, 0, false},
		{"ReduceSumSquare", 18, 0, false},
	}
	for _, r := range rows {
		registerFresh(&OpSchema{Name: r.name, Family: FamilyReduce, Since: 1, MinIn: 1, MaxIn: 2, MinOut: 1, MaxOut: 1,
			Infer: func(c *InferCtx) error { return inferReduce(c, r.axesInput, r.fold, r.folds) },
			Doc:   "axes attribute, or input from the opset named in the table; keepdims; noop_with_empty_axes"})
	}
	registerFresh(
		&OpSchema{Name: "ArgMax", Family: FamilyReduce, Since: 1, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferArgReduce},
		&OpSchema{Name: "ArgMin", Family: FamilyReduce, Since: 1, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferArgReduce},
		&OpSchema{Name: "SoftmaxCrossEntropyLoss", Family: FamilyNorm, Since: 12, MinIn: 2, MaxIn: 3, MinOut: 1, MaxOut: 2, Check: checkLoss, Infer: inferLoss},
		&OpSchema{Name: "NegativeLogLikelihoodLoss", Since: 12, MinIn: 2, MaxIn: 3, MinOut: 1, MaxOut: 1, Check: checkLoss, Infer: inferLoss},
	)
}

// reduceAxes reads a reduction's axes. present is false when none were
// given (reduce everything, or nothing under noop_with_empty_axes); known
// is false when they are an input whose value is not known.
func reduceAxes(c *InferCtx, axesInput int64) (axes []int64, present, known bool) {
	if c.Opset >= axesInput || c.Opset == 0 {
		if !c.HasIn(1) {
			return nil, false, true
		}
		t := Known(c.In(1))
		if t == nil || !(t.DType.IsInt()) {
			return nil, true, false
		}
		return t.Ints, len(t.Ints) > 0, true
	}
	a, ok := c.AttrInts("axes")
	return a, ok && len(a) > 0, true
}

func inferReduce(c *InferCtx, axesInput int64, kind ReduceKind, folds bool) error {
	keep := c.AttrInt("keepdims", 1) != 0
	// noop_with_empty_axes exists only where axes is an input.
	noop := c.AttrInt("noop_with_empty_axes", 0) != 0
	in := c.InShape(0)
	dt := c.InType(0)
	axes, present, known := reduceAxes(c, axesInput)
	if !known {
		return c.SetOut(0, dt, unknownAxesShape(c, in, keep))
	}
	if !present && noop {
		return inferIdentity(c)
	}
	if !in.Ranked {
		if !present && !keep {
			return c.SetOut(0, dt, RankedShape()) // everything reduced away
		}
		return c.SetOut(0, dt, Unranked())
	}
	r := len(in.Dims)
	reduced := make([]bool, r)
	for _, a := range axes {
		ax, err := c.NormAxis(a, r)
		if err != nil {
			return err
		}
		reduced[ax] = true
	}
	var dims []Dim
	var axesInt []int
	for i, d := range in.Dims {
		if present && !reduced[i] {
			dims = append(dims, d)
			continue
		}
		axesInt = append(axesInt, i)
		if keep {
			dims = append(dims, D(1))
		}
	}
	if err := c.SetOut(0, dt, RankedShape(dims...)); err != nil {
		return err
	}
	if !folds {
		return nil
	}
	if t := Known(c.In(0)); t != nil {
		return setFolded(c, 0, ReduceTensor(t, axesInt, keep, foldLimit(c), kind))
	}
	return foldSymReduce(c, kind, keep)
}

// foldSymReduce reduces a 1-D tensor of symbolic dims (Value.SymInts, as
// Shape gives) to its sum or product: ReduceProd(Shape(x)) is x's element
// count "batch*768", which Reshape targets are built from.
func foldSymReduce(c *InferCtx, kind ReduceKind, keep bool) error {
	in := c.In(0)
	if in == nil || in.SymInts == nil || in.Shape.Rank() != 1 {
		return nil
	}
	acc := D(0)
	if kind == ReduceProdKind {
		acc = D(1)
	}
	for _, d := range in.SymInts {
		switch kind {
		case ReduceSumKind:
			acc = AddDim(acc, d)
		case ReduceProdKind:
			p, ok := mulDims(acc, d)
			if !ok {
				return nil
			}
			acc = p
		default:
			return nil // max/min of symbols has no closed form
		}
	}
	dims := []int64{}
	if keep {
		dims = []int64{1}
	}
	if acc.IsKnown() {
		return c.SetOutConst(0, &Tensor{DType: in.DType, Dims: dims, Ints: []int64{acc.Value}, HasData: true})
	}
	if err := c.SetOut(0, in.DType, KnownShape(dims...)); err != nil {
		return err
	}
	c.Out(0).SymInts = []Dim{acc}
	return nil
}

// unknownAxesShape is a reduction's output when its axes are an input of
// unknown value: with keepdims the rank stays but which dims became 1 is
// not known; without, the rank drops by the number of axes if that is
// known from the axes input's shape.
func unknownAxesShape(c *InferCtx, in Shape, keep bool) Shape {
	if !in.Ranked {
		return Unranked()
	}
	rank := len(in.Dims)
	as := c.InShape(1)
	if as.Rank() == 1 && as.Dims[0].Is(0) {
		// Statically empty axes: everything is reduced, or nothing under
		// noop_with_empty_axes, whatever the (absent) values.
		switch {
		case c.AttrInt("noop_with_empty_axes", 0) != 0:
			return in.Clone()
		case keep:
			dims := make([]Dim, rank)
			for i := range dims {
				dims[i] = D(1)
			}
			return RankedShape(dims...)
		}
		return RankedShape()
	}
	if !keep {
		if as.Rank() != 1 || !as.Dims[0].IsKnown() || as.Dims[0].Value > int64(rank) {
			return Unranked()
		}
		rank -= int(as.Dims[0].Value)
	}
	dims := make([]Dim, rank)
	for i := range dims {
		if keep && in.Dims[i].Is(1) {
			dims[i] = D(1) // 1 stays 1 whether reduced or not
			continue
		}
		dims[i] = c.Fresh("reduce")
	}
	return RankedShape(dims...)
}

// inferArgReduce: ArgMax/ArgMin give int64 indices along axis (default 0).
func inferArgReduce(c *InferCtx) error {
	in := c.InShape(0)
	if !in.Ranked {
		return c.SetOut(0, Int64, Unranked())
	}
	ax, err := c.NormAxis(c.AttrInt("axis", 0), len(in.Dims))
	if err != nil {
		return err
	}
	keep := c.AttrInt("keepdims", 1) != 0
	var dims []Dim
	for i, d := range in.Dims {
		switch {
		case i != ax:
			dims = append(dims, d)
		case keep:
			dims = append(dims, D(1))
		}
	}
	return c.SetOut(0, Int64, RankedShape(dims...))
}

// inferLoss covers SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss:
// with reduction "none" the loss has the labels' shape [N, d1, ...],
// otherwise it is a scalar. SoftmaxCrossEntropyLoss's optional second
// output (log_prob) has the scores' shape.
func inferLoss(c *InferCtx) error {
	dt := c.InType(0)
	var s Shape
	switch red := c.AttrString("reduction", "mean"); red {
	case "none":
		s = c.InShape(1).Clone()
	case "mean", "sum":
		s = RankedShape()
	default:
		return c.Errorf("reduction %q is not none, mean or sum", red)
	}
	if err := c.SetOut(0, dt, s); err != nil {
		return err
	}
	return c.PassThrough(1, 0)
}
