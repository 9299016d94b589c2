package ir

// This file holds the op-table conventions by example; op families live in
// ops_*.go files, each registering its schemas in an init function.

func init() {
	Register(
		// Constant: the output is the attribute's tensor, value included.
		&OpSchema{Name: "Constant", Family: FamilyData, Since: 1, MinIn: 0, MaxIn: 0, MinOut: 1, MaxOut: 1, Infer: inferConstant},
	)
}

func inferConstant(c *InferCtx) error {
	for _, a := range c.Node.Attrs {
		switch a.Name {
		case "value":
			if a.T == nil {
				return c.Errorf("attribute value holds no tensor")
			}
			return c.SetOutConst(0, a.T)
		case "value_float":
			return c.SetOutConst(0, FloatTensor(Float32, nil, []float64{a.F}))
		case "value_floats":
			return c.SetOutConst(0, FloatTensor(Float32, []int64{int64(len(a.Floats))}, a.Floats))
		case "value_int":
			return c.SetOutConst(0, IntTensor(nil, []int64{a.I}))
		case "value_ints":
			return c.SetOutConst(0, IntTensor([]int64{int64(len(a.Ints))}, a.Ints))
		case "value_string":
			return c.SetOutConst(0, &Tensor{DType: String, Strings: []string{a.S}, HasData: true})
		case "value_strings":
			return c.SetOutConst(0, &Tensor{DType: String, Dims: []int64{int64(len(a.Strings))}, Strings: a.Strings, HasData: true})
		case "sparse_value":
			if a.T == nil {
				return c.Errorf("attribute sparse_value holds no tensor")
			}
			// The reader gives a sparse tensor's dense dims and dtype; its
			// values are not needed for shapes.
			return c.SetOut(0, a.T.DType, a.T.Shape())
		}
	}
	return c.Errorf("has no value attribute")
}
