package ir

// onnxruntime's vision contrib ops beside the standard ones: MaxpoolWithMask
// (MaxPool that skips masked positions), ConvTransposeWithDynamicPads
// (ConvTranspose whose pads are an input), CropAndResize (TensorFlow's
// crop_and_resize: each box of a feature map resampled to one crop size)
// and CDist (pairwise distances between the rows of two matrices). Shapes
// follow onnxruntime's schemas (docs/ContribOperators.md,
// contrib_defs.cc).

func init() {
	ms := "com.microsoft"
	Register(
		// MaxpoolWithMask(X, M int32) -> Y
		&OpSchema{Domain: ms, Name: "MaxpoolWithMask", Family: FamilyPool, Since: 1, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1,
			Infer: inferMaxpoolWithMask, Doc: "ONNX Runtime contrib op: MaxPool of X over the positions mask M leaves; Y is MaxPool's"},
		// ConvTransposeWithDynamicPads(X, W, Pads?, B?) -> Y
		&OpSchema{Domain: ms, Name: "ConvTransposeWithDynamicPads", Family: FamilyConv, Since: 1, MinIn: 2, MaxIn: 4, MinOut: 1, MaxOut: 1,
			Infer: inferConvTransposeDynamicPads, Doc: "ONNX Runtime contrib op: ConvTranspose with pads given as an input; its spatial dims are symbols when the pads are not constants"},
		// CropAndResize(X [N, C, H, W], rois [R, 4], batch_indices [R], crop_size [2]) -> Y [R, C, h, w]
		&OpSchema{Domain: ms, Name: "CropAndResize", Family: FamilyData, Since: 1, MinIn: 4, MaxIn: 4, MinOut: 1, MaxOut: 1,
			Infer: inferCropAndResize, Doc: "ONNX Runtime contrib op: every box resampled (bilinear or nearest) to crop_size: Y [num_rois, C, crop_height, crop_width]"},
		// CDist(A [M, N], B [K, N]) -> C [M, K]
		&OpSchema{Domain: ms, Name: "CDist", Family: FamilyGEMM, Since: 1, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1,
			Infer: inferCDist, Doc: "ONNX Runtime contrib op: the (squared) euclidean distance of every row of A to every row of B: C [M, K]"},
	)
}

// inferMaxpoolWithMask refuses a mask that is not int32; Y is MaxPool's
// of X under the node's attributes.
func inferMaxpoolWithMask(c *InferCtx) error {
	if err := needInt(c, 1, "M", Int32); err != nil {
		return err
	}
	return c.withInputs([]*Value{c.In(0)}, inferPool)
}

// inferConvTransposeDynamicPads runs ConvTranspose over (X, W, B) with
// the pads input as its pads attribute: none (zero pads) when it is
// absent, the output's spatial dims fresh symbols when it is not a
// constant.
func inferConvTransposeDynamicPads(c *InferCtx) error {
	attrs := AttrsWithout(c.Node.Attrs, "pads")
	unknown := false
	if c.HasIn(2) {
		p, ok := c.ConstInts(2)
		if ok {
			attrs = append(attrs, IntsAttr("pads", p...))
		} else {
			unknown = true
		}
	}
	if err := c.withNode([]*Value{c.In(0), c.In(1), c.In(3)}, attrs, inferConvTranspose); err != nil {
		return err
	}
	if o := c.Out(0); unknown && o != nil && o.Shape.Ranked {
		s := o.Shape.Clone()
		for i := 2; i < len(s.Dims); i++ {
			s.Dims[i] = c.Fresh("conv")
		}
		return c.SetOut(0, o.DType, s)
	}
	return nil
}

// inferCropAndResize refuses X not 4-D, rois not [R, 4], batch_indices
// not [R] int32, crop_size not two positive int32 values and a mode other
// than bilinear or nearest; the crop's height and width are fresh
// symbols when crop_size is not a constant.
func inferCropAndResize(c *InferCtx) error {
	if err := needFloat(c, 0, "X"); err != nil {
		return err
	}
	if m := c.AttrString("mode", "bilinear"); m != "bilinear" && m != "nearest" {
		return c.Errorf("mode %q, want bilinear or nearest", m)
	}
	for i, name := range []string{"batch_indices", "crop_size"} {
		if err := needInt(c, 2+i, name, Int32); err != nil {
			return err
		}
	}
	x := c.InShape(0)
	if x.Ranked && x.Rank() != 4 {
		return c.Errorf("X has rank %d, want 4 [N, C, H, W]", x.Rank())
	}
	rois := c.InShape(1)
	if err := checkDims(c, 1, "rois", Dim{}, D(4)); err != nil {
		return err
	}
	r := c.Fresh("num_rois")
	if rois.Ranked {
		r = rois.Dims[0]
	}
	if err := checkVector(c, 2, "batch_indices", r); err != nil {
		return err
	}
	if err := checkVector(c, 3, "crop_size", D(2)); err != nil {
		return err
	}
	h, w := c.Fresh("crop_height"), c.Fresh("crop_width")
	if cs, ok := c.ConstInts(3); ok && len(cs) == 2 {
		if cs[0] <= 0 || cs[1] <= 0 {
			return c.Errorf("crop_size %v must be positive", cs)
		}
		h, w = D(cs[0]), D(cs[1])
	}
	ch := c.Fresh("channels")
	if x.Ranked {
		ch = x.Dims[1]
	}
	return c.SetOut(0, c.InType(0), RankedShape(r, ch, h, w))
}

// inferCDist refuses A and B not 2-D with one row width and a metric
// other than onnxruntime's euclidean and sqeuclidean.
func inferCDist(c *InferCtx) error {
	if err := needFloat(c, 0, "A"); err != nil {
		return err
	}
	if m := c.AttrString("metric", "sqeuclidean"); m != "euclidean" && m != "sqeuclidean" {
		return c.Errorf("metric %q: onnxruntime computes euclidean and sqeuclidean", m)
	}
	a, b := c.InShape(0), c.InShape(1)
	if !a.Ranked || !b.Ranked {
		return c.SetOut(0, c.InType(0), Unranked())
	}
	if a.Rank() != 2 || b.Rank() != 2 {
		return c.Errorf("A has rank %d and B %d, want 2 [rows, width] each", a.Rank(), b.Rank())
	}
	if err := checkDims(c, 1, "B", Dim{}, a.Dims[1]); err != nil {
		return err
	}
	return c.SetOut(0, c.InType(0), RankedShape(a.Dims[0], b.Dims[0]))
}
