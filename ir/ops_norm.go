package ir

// Normalization operators: BatchNormalization (with its training outputs),
// Instance/Layer/Group/Lp normalization, MeanVarianceNormalization, LRN,
// Dropout, and ONNX Runtime's fused layer norms.

func init() {
	registerFresh(
		&OpSchema{Name: "BatchNormalization", Family: FamilyNorm, Since: 1, MinIn: 5, MaxIn: 5, MinOut: 1, MaxOut: 5, Check: checkBatchNorm, Infer: inferBatchNorm,
			Doc: "Y like X; running/saved statistics like the mean input"},
		&OpSchema{Name: "InstanceNormalization", Family: FamilyNorm, Since: 1, MinIn: 3, MaxIn: 3, MinOut: 1, MaxOut: 1, Check: checkInstanceNorm, Infer: inferSameAsInput},
		&OpSchema{Name: "GroupNormalization", Family: FamilyNorm, Since: 18, MinIn: 3, MaxIn: 3, MinOut: 1, MaxOut: 1, Check: checkGroupNorm, Infer: inferSameAsInput},
		&OpSchema{Name: "LpNormalization", Family: FamilyNorm, Since: 1, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferAxisSameShape(-1)},
		&OpSchema{Name: "MeanVarianceNormalization", Family: FamilyNorm, Since: 1, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferSameAsInput},
		&OpSchema{Name: "LRN", Family: FamilyNorm, Since: 1, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Check: checkLRN, Infer: inferSameAsInput},
		// RMSNormalization (opset 23): X / sqrt(mean(X², axes ≥ axis) + ε) · scale;
		// Y is shaped like X (the optional statistics outputs of
		// LayerNormalization do not exist here).
		&OpSchema{Name: "RMSNormalization", Family: FamilyNorm, Since: 23, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1, Infer: inferAxisSameShape(-1)},
		&OpSchema{Name: "LayerNormalization", Family: FamilyNorm, Since: 17, MinIn: 2, MaxIn: 3, MinOut: 1, MaxOut: 3, Check: checkLayerNorm, Infer: inferLayerNorm,
			Doc: "Mean and InvStdDev keep dims before axis, 1 after; their dtype is stash_type"},
		&OpSchema{Name: "Dropout", Traits: Alias, Since: 1, MinIn: 1, MaxIn: 3, MinOut: 1, MaxOut: 2, Infer: inferDropout,
			Doc: "mask is bool from opset 10, the data type before"},
	)
	for _, dom := range []string{"com.microsoft", ""} {
		// ONNX Runtime registers SimplifiedLayerNormalization in the default
		// domain as well; transformer optimizers emit it there.
		registerFresh(&OpSchema{Domain: dom, Name: "SimplifiedLayerNormalization", Family: FamilyNorm, Since: 1, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 2,
			Infer: inferSimplifiedLayerNorm, Doc: "ONNX Runtime contrib op: RMS norm; outputs Y and inv_std_var"})
	}
	registerFresh(
		&OpSchema{Domain: "com.microsoft", Name: "SkipLayerNormalization", Family: FamilyNorm, Since: 1, MinIn: 3, MaxIn: 5, MinOut: 1, MaxOut: 4,
			Infer: inferSkipLayerNorm, Doc: "ONNX Runtime contrib op: outputs, mean, inv_std_var, input_skip_bias_sum"},
		&OpSchema{Domain: "com.microsoft", Name: "SkipSimplifiedLayerNormalization", Family: FamilyNorm, Since: 1, MinIn: 3, MaxIn: 4, MinOut: 1, MaxOut: 4,
			Infer: inferSkipLayerNorm, Doc: "ONNX Runtime contrib op: outputs, mean, inv_std_var, input_skip_bias_sum"},
	)
}

// inferAxisSameShape checks an axis attribute (default def) against the
// input's rank and passes the input's type through.
func inferAxisSameShape(def int64) func(c *InferCtx) error {
	return func(c *InferCtx) error {
		if r := c.InShape(0).Rank(); r > 0 {
			if _, err := c.NormAxis(c.AttrInt("axis", def), r); err != nil {
				return err
			}
		}
		return c.PassThrough(0, 0)
	}
}

// inferBatchNorm: Y has X's type and shape. The other outputs are per-
// channel statistics: running mean/var (training mode, opset 14+) or
// mean, var, saved_mean, saved_var (before 14); each is shaped and typed
// like the mean input (T2 from opset 15; [C], or [C,H,W] for the
// non-spatial mode of old opsets).
func inferBatchNorm(c *InferCtx) error {
	if err := c.PassThrough(0, 0); err != nil {
		return err
	}
	statType, statShape := c.InType(3), c.InShape(3).Clone()
	if statType == Undefined {
		statType = c.InType(0)
	}
	if !statShape.Ranked {
		if x := c.InShape(0); x.Rank() >= 2 {
			statShape = RankedShape(x.Dims[1])
		}
	}
	for i := 1; i < len(c.Node.Outputs); i++ {
		if err := c.SetOut(i, statType, statShape.Clone()); err != nil {
			return err
		}
	}
	return nil
}

// statsShape is the shape of per-row statistics of a normalization over
// the axes from axis on: X's leading dims, then 1s.
func statsShape(c *InferCtx, axis int64) (Shape, error) {
	x := c.InShape(0)
	if !x.Ranked {
		return Unranked(), nil
	}
	ax, err := c.NormAxis(axis, len(x.Dims))
	if err != nil {
		return Shape{}, err
	}
	dims := make([]Dim, len(x.Dims))
	for i := range dims {
		if i < ax {
			dims[i] = x.Dims[i]
		} else {
			dims[i] = D(1)
		}
	}
	return RankedShape(dims...), nil
}

// stashType is the dtype of a layer norm's statistics outputs.
func stashType(c *InferCtx) DType {
	if dt := DType(c.AttrInt("stash_type", int64(Float32))); dt.Valid() && dt != Undefined {
		return dt
	}
	return Float32
}

func inferLayerNorm(c *InferCtx) error { return inferNormStats(c, 2) }

func inferSimplifiedLayerNorm(c *InferCtx) error { return inferNormStats(c, 1) }

// inferNormStats: Y is shaped like X; outputs 1..nstats are the statistics
// (LayerNormalization's mean and inv_std_var, RMS norm's inv_std_var),
// reduced over the normalized axes, in the stash type.
func inferNormStats(c *InferCtx, nstats int) error {
	stats, err := statsShape(c, c.AttrInt("axis", -1))
	if err != nil {
		return err
	}
	if err := c.PassThrough(0, 0); err != nil {
		return err
	}
	for i := 1; i <= nstats; i++ {
		if err := c.SetOut(i, stashType(c), stats.Clone()); err != nil {
			return err
		}
	}
	return nil
}

// inferSkipLayerNorm: the normalized output and the input+skip+bias sum
// are shaped like the input; mean and inv_std_var are float32 statistics
// over the last axis.
func inferSkipLayerNorm(c *InferCtx) error {
	stats, err := statsShape(c, -1)
	if err != nil {
		return err
	}
	if err := c.PassThrough(0, 0); err != nil {
		return err
	}
	for i := 1; i < 3; i++ {
		if err := c.SetOut(i, Float32, stats.Clone()); err != nil {
			return err
		}
	}
	return c.PassThrough(3, 0)
}

// inferDropout: output like the data; the optional mask has the data's
// shape and is bool from opset 10 (before, the data type).
func inferDropout(c *InferCtx) error {
	if err := c.PassThrough(0, 0); err != nil {
		return err
	}
	maskType := Bool
	if c.Opset > 0 && c.Opset < 10 {
		maskType = c.InType(0)
	}
	return c.SetOut(1, maskType, c.InShape(0).Clone())
}
