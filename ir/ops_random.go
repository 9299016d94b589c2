package ir

// Random generators and EyeLike: the shape comes from an attribute or an
// input; the dtype from the dtype attribute, else a default or the input's.

func init() {
	registerFresh(
		&OpSchema{Name: "RandomNormal", Since: 1, MinIn: 0, MaxIn: 0, MinOut: 1, MaxOut: 1, Infer: inferRandom},
		&OpSchema{Name: "RandomUniform", Since: 1, MinIn: 0, MaxIn: 0, MinOut: 1, MaxOut: 1, Infer: inferRandom},
		&OpSchema{Name: "RandomNormalLike", Since: 1, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferLikeInput},
		&OpSchema{Name: "RandomUniformLike", Since: 1, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferLikeInput},
		&OpSchema{Name: "Bernoulli", Since: 15, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferLikeInput},
		&OpSchema{Name: "EyeLike", Since: 9, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferEyeLike},
		&OpSchema{Name: "Multinomial", Since: 7, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferMultinomial},
	)
}

// dtypeOr returns the dtype attribute when set, else def.
func dtypeOr(c *InferCtx, def DType) (DType, error) {
	dt, ok, err := attrDType(c, "dtype")
	if err != nil || !ok {
		return def, err
	}
	return dt, nil
}

// inferRandom: RandomNormal/RandomUniform take their shape from the shape
// attribute and default to float32.
func inferRandom(c *InferCtx) error {
	dims, ok := c.AttrInts("shape")
	if !ok {
		return c.Errorf("has no shape attribute")
	}
	for _, d := range dims {
		if d < 0 {
			return c.Errorf("negative dimension %d in shape", d)
		}
	}
	dt, err := dtypeOr(c, Float32)
	if err != nil {
		return err
	}
	return c.SetOut(0, dt, KnownShape(dims...))
}

// inferLikeInput: the input's shape, and the dtype attribute or the
// input's dtype.
func inferLikeInput(c *InferCtx) error {
	dt, err := dtypeOr(c, c.InType(0))
	if err != nil {
		return err
	}
	return c.SetOut(0, dt, c.InShape(0).Clone())
}

func inferEyeLike(c *InferCtx) error {
	if r := c.InShape(0).Rank(); r >= 0 && r != 2 {
		return c.Errorf("input has rank %d, EyeLike takes a 2-D tensor", r)
	}
	return inferLikeInput(c)
}

// inferMultinomial: [batch, class_size] probabilities give [batch,
// sample_size] samples, int32 unless dtype says otherwise.
func inferMultinomial(c *InferCtx) error {
	dt, err := dtypeOr(c, Int32)
	if err != nil {
		return err
	}
	in := c.InShape(0)
	if !in.Ranked {
		return c.SetOut(0, dt, Unranked())
	}
	if len(in.Dims) != 2 {
		return c.Errorf("input has rank %d, Multinomial takes [batch, class_size]", len(in.Dims))
	}
	n := c.AttrInt("sample_size", 1)
	if n < 0 {
		return c.Errorf("sample_size %d is negative", n)
	}
	return c.SetOut(0, dt, RankedShape(in.Dims[0], D(n)))
}
