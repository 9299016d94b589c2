package ir

// Shape functions for control flow: If, Loop and Scan. Each sets the types
// of its body's inputs from the node's inputs, infers the body through
// InferCtx.InferSubgraph, and derives the node's outputs from the body's.

func init() {
	Register(
		&OpSchema{Name: "If", Since: 1, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: -1, Infer: inferIf},
		&OpSchema{Name: "Loop", Since: 1, MinIn: 2, MaxIn: -1, MinOut: 1, MaxOut: -1, Infer: inferLoop},
		&OpSchema{Name: "Scan", Since: 8, MinIn: 1, MaxIn: -1, MinOut: 1, MaxOut: -1, Infer: inferScan},
	)
}

// maxBodyPasses bounds the fixpoint iteration over a loop body whose
// carried values change shape between iterations. Each pass can only
// generalize a dim to a symbol or a shape to unranked, so two passes
// normally settle it; the third is a safety margin.
const maxBodyPasses = 3

// maxFixpointNesting is the deepest subgraph level at which a body may be
// inferred more than once. Nested loops multiply passes (a body at depth d
// could run maxBodyPasses^d times), so deeper bodies get one pass and
// their changed carried values are generalized in the outputs only.
const maxFixpointNesting = 4

// graphDepth is the number of graphs enclosing g.
func graphDepth(g *Graph) int {
	d := 0
	for p := g.Parent; p != nil; p = p.Parent {
		d++
	}
	return d
}

// inferIf infers both branches. A known condition selects its branch's
// types (and known contents); otherwise the outputs merge the two branches.
func inferIf(c *InferCtx) error {
	thenG, elseG := nodeGraphAttr(c.Node, "then_branch"), nodeGraphAttr(c.Node, "else_branch")
	if thenG == nil || elseG == nil {
		return c.Errorf("needs then_branch and else_branch graphs")
	}
	nout := len(c.Node.Outputs)
	for _, g := range []*Graph{thenG, elseG} {
		if len(g.Outputs) != nout {
			return c.Errorf("branch %q has %d outputs, node has %d", g.Name, len(g.Outputs), nout)
		}
		resetSubgraph(g)
		if err := c.InferSubgraph(g); err != nil {
			return err
		}
	}
	var taken *Graph
	if v, ok := c.ConstInts(0); ok && len(v) == 1 {
		taken = elseG
		if v[0] != 0 {
			taken = thenG
		}
	}
	for i := 0; i < nout; i++ {
		if taken != nil {
			bo := taken.Outputs[i]
			if err := setOutType(c, i, typeOfValue(bo)); err != nil {
				return err
			}
			if o := c.Out(i); o != nil && bo.Const != nil && bo.Kind == TensorValue {
				o.Const = bo.Const
			}
			continue
		}
		t := mergeTypes(c, typeOfValue(thenG.Outputs[i]), typeOfValue(elseG.Outputs[i]))
		if err := setOutType(c, i, t); err != nil {
			return err
		}
	}
	return nil
}

// inferLoop handles Loop(M?, cond?, v_initial...): the body takes
// (iteration_num int64 scalar, cond bool scalar, carried...) and returns
// (cond, carried..., scan_outputs...). Carried values that change type in
// the body are generalized and the body inferred again. Scan outputs get a
// leading dim: the trip count when M is a known constant, else a symbol.
func inferLoop(c *InferCtx) error {
	body := nodeGraphAttr(c.Node, "body")
	if body == nil {
		return c.Errorf("has no body graph")
	}
	nCarried := c.NumIn() - 2
	nScan := len(c.Node.Outputs) - nCarried
	if len(body.Inputs) != nCarried+2 || len(body.Outputs) != nCarried+1+nScan || nScan < 0 {
		return c.Errorf("body has %d inputs and %d outputs, which does not fit %d inputs and %d outputs",
			len(body.Inputs), len(body.Outputs), c.NumIn(), len(c.Node.Outputs))
	}
	carried := make([]valueType, nCarried)
	for i := range carried {
		carried[i] = typeOfValue(c.In(2 + i))
	}
	exact, err := inferBodyFixpoint(c, body, 2, carried, knownInitialElems(c.Node.Inputs[2:]), func() {
		setValueType(body.Inputs[0], valueType{Kind: TensorValue, DType: Int64, Shape: RankedShape()})
		setValueType(body.Inputs[1], valueType{Kind: TensorValue, DType: Bool, Shape: RankedShape()})
	}, 1)
	if err != nil {
		return err
	}
	for i := range carried {
		t := carried[i]
		switch out := typeOfValue(body.Outputs[1+i]); {
		case exact[i]:
		case out.Kind != t.Kind:
			// From opset 16 a carried value may change kind (an optional
			// sequence in, a sequence out): what leaves is the body's.
			t = out
		default:
			t = mergeTypes(c, t, out)
		}
		if err := setOutType(c, i, t); err != nil {
			return err
		}
	}
	trip := c.Fresh("loop")
	if m, ok := ConstScalarInt(c.In(0)); ok && m >= 0 && m <= c.Limits.MaxDim {
		trip = D(m)
	}
	for k := 0; k < nScan; k++ {
		t := typeOfValue(body.Outputs[1+nCarried+k])
		if t.Shape.Ranked {
			t.Shape.Dims = append([]Dim{trip}, t.Shape.Dims...)
		}
		t.Kind = TensorValue
		if err := setOutType(c, nCarried+k, t); err != nil {
			return err
		}
	}
	return nil
}

// inferBodyFixpoint infers body with its carried inputs (from position
// inOff) typed as carried, and its carried outputs read from position
// outOff. When an output's type differs from its input's, the input is
// generalized to cover both and the body inferred again, up to
// maxBodyPasses. carried is updated in place. setOthers types the body's
// remaining inputs before every pass.
//
// A carried sequence whose initial elements are known (initial[i] != nil,
// typically an empty sequence that the body appends to) is handled
// exactly: when the body's output is the body's input with tensors
// inserted, the carried type is the summary of the initial elements and
// every inserted tensor's type. exact[i] reports that case; its carried
// type is then the node's output type as it stands.
func inferBodyFixpoint(c *InferCtx, body *Graph, inOff int, carried []valueType, initial [][]valueType,
	setOthers func(), outOff int) (exact []bool, err error) {
	exact = make([]bool, len(carried))
	passes := maxBodyPasses
	if graphDepth(body) > maxFixpointNesting {
		passes = 1
	}
	for pass := 0; pass < passes; pass++ {
		setOthers()
		for i, t := range carried {
			setValueType(body.Inputs[inOff+i], t)
		}
		resetSubgraph(body)
		if err := c.InferSubgraph(body); err != nil {
			return exact, err
		}
		changed := false
		for i := range carried {
			if initial != nil && initial[i] != nil {
				if ins, ok := insertedTypes(body.Outputs[outOff+i], body.Inputs[inOff+i]); ok {
					exact[i] = true
					t := summarize(c, append(append([]valueType{}, initial[i]...), ins...), carried[i].DType)
					if !shapesAlike(t.Shape, carried[i].Shape) || t.DType != carried[i].DType {
						carried[i] = t
						changed = true
					}
					continue
				}
				exact[i] = false
			}
			out := typeOfValue(body.Outputs[outOff+i])
			if out.Kind == carried[i].Kind && out.Shape.Equal(carried[i].Shape) {
				continue
			}
			if out.Kind != carried[i].Kind || carried[i].Shape.Ranked && !out.Shape.Ranked ||
				carried[i].Shape.Rank() != out.Shape.Rank() {
				if carried[i].Shape.Ranked {
					carried[i].Shape = Unranked()
					changed = true
				}
				continue
			}
			merged := mergeShapes(c, carried[i].Shape, out.Shape)
			for j, d := range merged.Dims {
				// A dim that is already a symbol in the input stays as it is;
				// only a number that the body changed needs generalizing.
				if carried[i].Shape.Dims[j].IsKnown() && d != carried[i].Shape.Dims[j] {
					carried[i].Shape.Dims[j] = d
					changed = true
				}
			}
		}
		if !changed {
			return exact, nil
		}
	}
	return exact, nil
}

// insertedTypes follows a body output back to the body input it was built
// from through SequenceInsert (and Identity) nodes, and returns the types
// of the tensors inserted on the way; ok is false when out is not such a
// chain from in.
func insertedTypes(out, in *Value) (ins []valueType, ok bool) {
	v := out
	for depth := 0; v != in; depth++ {
		if v == nil || v.Producer == nil || depth > maxSeqTrace {
			return nil, false
		}
		p := v.Producer
		switch p.OpType {
		case "SequenceInsert":
			if p.In(1) == nil {
				return nil, false
			}
			ins = append(ins, valueType{Kind: TensorValue, DType: p.In(1).DType, Shape: p.In(1).Shape.Clone()})
		case "Identity":
		default:
			return nil, false
		}
		v = p.In(0)
	}
	return ins, true
}

// shapesAlike reports whether two shapes have the same rank and the same
// numbers, with symbols in the same places (whatever their names): the
// test for a fixpoint whose merges mint fresh symbols on every pass.
func shapesAlike(a, b Shape) bool {
	if a.Ranked != b.Ranked || len(a.Dims) != len(b.Dims) {
		return false
	}
	for i, d := range a.Dims {
		if d.IsKnown() != b.Dims[i].IsKnown() || d.IsKnown() && d != b.Dims[i] {
			return false
		}
	}
	return true
}

// knownInitialElems returns, for each value, its known sequence elements
// (nil when it is not a sequence or they are not known).
func knownInitialElems(vs []*Value) [][]valueType {
	out := make([][]valueType, len(vs))
	for i, v := range vs {
		if v != nil && v.Kind == SequenceValue {
			if elems, ok := seqElements(v); ok {
				out[i] = append([]valueType{}, elems...)
			}
		}
	}
	return out
}

// inferScan handles Scan. From opset 9 its inputs are N initial states then
// M scan inputs (M = num_scan_inputs), each scanned along its
// scan_input_axes entry; the body takes the states and one slice of each
// scan input and returns N states and K per-iteration outputs, which the
// node stacks along scan_output_axes. Opset 8 has a leading optional
// sequence_lens input and a batch dim 0 on every input and output, with
// the scan axis at 1.
func inferScan(c *InferCtx) error {
	body := nodeGraphAttr(c.Node, "body")
	if body == nil {
		return c.Errorf("has no body graph")
	}
	m := int(c.AttrInt("num_scan_inputs", 0))
	first := 0
	batched := c.Opset < 9
	if batched {
		first = 1 // sequence_lens
	}
	nState := c.NumIn() - first - m
	nScanOut := len(c.Node.Outputs) - nState
	if m <= 0 || nState < 0 || nScanOut < 0 || len(body.Inputs) != nState+m || len(body.Outputs) != nState+nScanOut {
		return c.Errorf("body has %d inputs and %d outputs, which does not fit %d inputs, %d outputs and num_scan_inputs=%d",
			len(body.Inputs), len(body.Outputs), c.NumIn(), len(c.Node.Outputs), m)
	}
	inAxes, err := attrPerAxis(c, "scan_input_axes", m, 0)
	if err != nil {
		return err
	}
	outAxes, err := attrPerAxis(c, "scan_output_axes", nScanOut, 0)
	if err != nil {
		return err
	}
	var batch Dim
	seqLen := Dim{}
	seqSet := false
	slices := make([]valueType, m)
	for j := 0; j < m; j++ {
		t := typeOfValue(c.In(first + nState + j))
		if t.Shape.Ranked {
			var ax int
			drop := 0
			if batched {
				if len(t.Shape.Dims) < 2 {
					return c.Errorf("scan input %d of rank %d, need at least 2", j, len(t.Shape.Dims))
				}
				batch, ax, drop = t.Shape.Dims[0], 1, 1
			} else if ax, err = c.NormAxis(inAxes[j], len(t.Shape.Dims)); err != nil {
				return err
			}
			if d := t.Shape.Dims[ax]; !seqSet || !seqLen.IsKnown() && d.IsKnown() {
				seqLen, seqSet = d, true
			}
			dims := append(append([]Dim{}, t.Shape.Dims[drop:ax]...), t.Shape.Dims[ax+1:]...)
			t.Shape = RankedShape(dims...)
		}
		slices[j] = t
	}
	if !seqSet {
		seqLen = c.Fresh("scan")
	}
	states := make([]valueType, nState)
	for i := range states {
		t := typeOfValue(c.In(first + i))
		if batched && t.Shape.Ranked && len(t.Shape.Dims) > 0 {
			batch = t.Shape.Dims[0]
			t.Shape.Dims = t.Shape.Dims[1:]
		}
		states[i] = t
	}
	if batched && batch == (Dim{}) {
		batch = c.Fresh("batch")
	}
	if _, err := inferBodyFixpoint(c, body, 0, states, nil, func() {
		for j, t := range slices {
			setValueType(body.Inputs[nState+j], t)
		}
	}, 0); err != nil {
		return err
	}
	for i := range states {
		t := mergeTypes(c, states[i], typeOfValue(body.Outputs[i]))
		if batched && t.Shape.Ranked {
			t.Shape.Dims = append([]Dim{batch}, t.Shape.Dims...)
		}
		if err := setOutType(c, i, t); err != nil {
			return err
		}
	}
	for k := 0; k < nScanOut; k++ {
		t := typeOfValue(body.Outputs[nState+k])
		t.Kind = TensorValue
		if t.Shape.Ranked {
			dims := t.Shape.Dims
			if batched {
				dims = append([]Dim{batch, seqLen}, dims...)
			} else {
				ax, err := c.NormAxis(outAxes[k], len(dims)+1)
				if err != nil {
					return err
				}
				dims = append(append(append([]Dim{}, dims[:ax]...), seqLen), dims[ax:]...)
			}
			t.Shape = RankedShape(dims...)
		}
		if err := setOutType(c, nState+k, t); err != nil {
			return err
		}
	}
	return nil
}
