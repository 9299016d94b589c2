package ir

// onnxruntime's integer contrib ops (its CPU kernels; quantize_dynamic and
// older converters write them): MatMulInteger16 (16-bit operands, a
// 32-bit product), MulInteger ((A − a_zp)·(B − b_zp) into int32, A and B
// broadcast), ReduceSumInteger (ReduceSum of 8-bit data into 32 bits) and
// QLinearReduceMean (ReduceMean between dequantize and quantize). The
// reductions take axes and keepdims as attributes, as ReduceSum did before
// opset 13. Shapes follow docs/ContribOperators.md and the schemas'
// type constraints.

func init() {
	ms := "com.microsoft"
	registerFresh(
		// MatMulInteger16(A, B) -> Y
		&OpSchema{Domain: ms, Name: "MatMulInteger16", Family: FamilyGEMM, Since: 1, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1,
			Infer: inferMatMulInteger16, Doc: "ONNX Runtime contrib op: MatMul of int16/uint16 operands into int32 (uint32 when both are uint16)"},
		// MulInteger(A, A_zero_point?, B, B_zero_point?) -> C
		&OpSchema{Domain: ms, Name: "MulInteger", Family: FamilyElementwise, Since: 1, MinIn: 3, MaxIn: 4, MinOut: 1, MaxOut: 1,
			Infer: inferMulInteger, Doc: "ONNX Runtime contrib op: (A − A_zero_point)·(B − B_zero_point) into int32, A and B broadcast"},
		// ReduceSumInteger(data) -> reduced
		&OpSchema{Domain: ms, Name: "ReduceSumInteger", Family: FamilyReduce, Since: 1, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1,
			Infer: inferReduceSumInteger, Doc: "ONNX Runtime contrib op: ReduceSum of 8-bit data over the axes attribute into int32 (uint32 for uint8)"},
		// QLinearReduceMean(data, data_scale, data_zero_point?, reduced_scale, reduced_zero_point?) -> reduced
		&OpSchema{Domain: ms, Name: "QLinearReduceMean", Family: FamilyReduce, Since: 1, MinIn: 4, MaxIn: 5, MinOut: 1, MaxOut: 1,
			Infer: inferQLinearReduceMean, Doc: "ONNX Runtime contrib op: quantize(ReduceMean(dequantize(data))) over the axes attribute, typed like data"},
	)
}

// needInt refuses input i (named name) when its type is known and not
// one of want.
func needInt(c *InferCtx, i int, name string, want ...DType) error {
	t := c.InType(i)
	if t == Undefined || !c.HasIn(i) {
		return nil
	}
	for _, w := range want {
		if t == w {
			return nil
		}
	}
	return c.Errorf("%s is %s, want one of %v", name, t, want)
}

// inferMatMulInteger16 refuses operands that are not 16-bit integers;
// the product is uint32 when both are uint16, else int32.
func inferMatMulInteger16(c *InferCtx) error {
	for i, name := range []string{"A", "B"} {
		if err := needInt(c, i, name, Int16, Uint16); err != nil {
			return err
		}
	}
	s, err := matMulShape(c, c.InShape(0), c.InShape(1))
	if err != nil {
		return err
	}
	dt := Int32
	if c.InType(0) == Uint16 && c.InType(1) == Uint16 {
		dt = Uint32
	}
	return c.SetOut(0, dt, s)
}

// inferMulInteger refuses operands that are not 8-bit integers of one
// type and zero points that are not scalars; C is A and B broadcast, int32.
func inferMulInteger(c *InferCtx) error {
	for i, name := range []string{"A", "A_zero_point", "B", "B_zero_point"} {
		if err := needInt(c, i, name, Int8, Uint8); err != nil {
			return err
		}
	}
	if a, b := c.InType(0), c.InType(2); a != Undefined && b != Undefined && a != b {
		return c.Errorf("A is %s and B %s: they must have one type", a, b)
	}
	for _, zp := range []int{1, 3} {
		if n, ok := inShapeOpt(c, zp).NumElements(); ok && n != 1 {
			return c.Errorf("zero point (input %d) has %d elements; it must be a scalar", zp, n)
		}
	}
	s, err := BroadcastShapes(c.InShape(0), c.InShape(2))
	if err != nil {
		return c.Errorf("%v", err)
	}
	return c.SetOut(0, Int32, s)
}

// inferReduceSumInteger refuses data that is not 8-bit; the sum is
// ReduceSum's shape over the axes attribute, uint32 for uint8 data and
// int32 for int8.
func inferReduceSumInteger(c *InferCtx) error {
	if err := needInt(c, 0, "data", Int8, Uint8); err != nil {
		return err
	}
	if err := reduceByAttr(c); err != nil {
		return err
	}
	dt := Int32
	if c.InType(0) == Uint8 {
		dt = Uint32
	}
	if o := c.Out(0); o != nil {
		return c.SetOut(0, dt, o.Shape)
	}
	return nil
}

// inferQLinearReduceMean refuses data that is not 8-bit and scales that
// are not float scalars; the output is ReduceMean's over the axes
// attribute, typed like data.
func inferQLinearReduceMean(c *InferCtx) error {
	if err := needInt(c, 0, "data", Int8, Uint8); err != nil {
		return err
	}
	for _, sc := range []int{1, 3} {
		if t := c.InType(sc); t != Undefined && t != Float32 {
			return c.Errorf("scale (input %d) is %s, want float", sc, t)
		}
		if n, ok := inShapeOpt(c, sc).NumElements(); ok && n != 1 {
			return c.Errorf("scale (input %d) has %d elements; it must be a scalar", sc, n)
		}
	}
	return reduceByAttr(c)
}

// reduceByAttr runs a reduction's shape rule with axes read from the
// attribute (as before ReduceSum's opset 13), keepdims 1 by default, and
// nothing folded.
func reduceByAttr(c *InferCtx) error {
	if c.Out(0) == nil {
		return nil
	}
	return atOpset(11, func(c *InferCtx) error { return inferReduce(c, 13, 0, false) })(c)
}
