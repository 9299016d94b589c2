package ir

// Quantization operators: QuantizeLinear, DequantizeLinear and
// DynamicQuantizeLinear. Shapes follow the input; dtypes come from the
// zero point, scale or attributes.

func init() {
	registerFresh(
		&OpSchema{Name: "QuantizeLinear", Since: 10, MinIn: 2, MaxIn: 3, MinOut: 1, MaxOut: 1, Check: checkQuantParams, Infer: inferQuantize,
			Doc: "output dtype: the zero point's, else output_dtype (opset 21), else uint8"},
		&OpSchema{Name: "DequantizeLinear", Since: 10, MinIn: 2, MaxIn: 3, MinOut: 1, MaxOut: 1, Check: checkQuantParams, Infer: inferDequantize,
			Doc: "output dtype: output_dtype when set, else the scale's"},
		&OpSchema{Name: "DynamicQuantizeLinear", Since: 11, MinIn: 1, MaxIn: 1, MinOut: 3, MaxOut: 3, Infer: inferDynamicQuantize},
		// ONNX Runtime's QLinearAdd (A, A_scale, A_zp, B, B_scale, B_zp,
		// C_scale, C_zp?): the int8 residual add, written by its QDQ
		// transformer and by passes/qdq_add.go.
		&OpSchema{Domain: "com.microsoft", Name: "QLinearAdd", Family: FamilyElementwise, Since: 1, MinIn: 7, MaxIn: 8, MinOut: 1, MaxOut: 1, Infer: inferQLinearAdd,
			Doc: "ONNX Runtime contrib op: C = quantize(dequantize(A) + dequantize(B)), A and B broadcast, C typed like A"},
	)
}

// inferQLinearAdd: C has A's (8-bit) dtype and the broadcast shape of A and B.
func inferQLinearAdd(c *InferCtx) error {
	s, err := BroadcastShapes(c.InShape(0), c.InShape(3))
	if err != nil {
		return c.Errorf("%w", err)
	}
	return c.SetOut(0, c.InType(0), s)
}

// attrDType reads a dtype attribute; ok is false when it is absent or 0.
func attrDType(c *InferCtx, name string) (DType, bool, error) {
	v := c.AttrInt(name, 0)
	if v == 0 {
		return Undefined, false, nil
	}
	if dt := DType(v); dt.Valid() {
		return dt, true, nil
	}
	return Undefined, false, c.Errorf("%s=%d is not a tensor type", name, v)
}

func inferQuantize(c *InferCtx) error {
	dt := Uint8
	if zp := c.InType(2); c.HasIn(2) && zp != Undefined {
		dt = zp
	} else if a, ok, err := attrDType(c, "output_dtype"); err != nil {
		return err
	} else if ok {
		dt = a
	}
	return c.SetOut(0, dt, c.InShape(0).Clone())
}

func inferDequantize(c *InferCtx) error {
	dt := c.InType(1)
	if a, ok, err := attrDType(c, "output_dtype"); err != nil {
		return err
	} else if ok {
		dt = a
	}
	if dt == Undefined {
		dt = Float32 // the only scale type before opset 19
	}
	return c.SetOut(0, dt, c.InShape(0).Clone())
}

// inferDynamicQuantize: y is uint8 like x; scale and zero point are scalars.
func inferDynamicQuantize(c *InferCtx) error {
	if err := c.SetOut(0, Uint8, c.InShape(0).Clone()); err != nil {
		return err
	}
	if err := c.SetOut(1, Float32, RankedShape()); err != nil {
		return err
	}
	return c.SetOut(2, Uint8, RankedShape())
}
