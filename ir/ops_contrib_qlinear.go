package ir

// ONNX Runtime's QOperator-format integer ops (com.microsoft) beside
// QLinearAdd (ops_quant.go): what its static quantizer writes for the
// float op between two quantized tensors when asked for QOperator rather
// than Q/DQ output, and what the ONNX Model Zoo's int8 vision models
// (ResNet-50, MobileNet-V2, GoogLeNet, SqueezeNet, EfficientNet-Lite
// ...-int8.onnx) are made of besides the standard QLinearConv and
// QLinearMatMul. Each is Dequantize → the float op → Quantize in one
// kernel, its scales and zero points scalars; the shapes are the float
// op's, so the rules run the float op's own rule on a detached node
// (InferDetached) over the data inputs. Input lists follow onnxruntime's
// docs/ContribOperators.md.

func init() {
	ms := "com.microsoft"
	registerFresh(
		// (X, X_scale, X_zero_point?, Y_scale, Y_zero_point?)
		&OpSchema{Domain: ms, Name: "QLinearSigmoid", Family: FamilyElementwise, Since: 1, MinIn: 4, MaxIn: 5, MinOut: 1, MaxOut: 1,
			Infer: inferSameAsInput, Doc: "ONNX Runtime contrib op: quantize(Sigmoid(dequantize(X))), Y typed and shaped like X"},
		&OpSchema{Domain: ms, Name: "QLinearLeakyRelu", Family: FamilyElementwise, Since: 1, MinIn: 4, MaxIn: 5, MinOut: 1, MaxOut: 1,
			Infer: inferSameAsInput, Doc: "ONNX Runtime contrib op: quantize(LeakyRelu(dequantize(X))), Y typed and shaped like X"},
		// (A, A_scale, A_zero_point?, B, B_scale, B_zero_point?, C_scale, C_zero_point?)
		&OpSchema{Domain: ms, Name: "QLinearMul", Family: FamilyElementwise, Since: 1, MinIn: 7, MaxIn: 8, MinOut: 1, MaxOut: 1,
			Infer: inferQLinearAdd, Doc: "ONNX Runtime contrib op: C = quantize(dequantize(A) · dequantize(B)), A and B broadcast, C typed like A"},
		// (condition, X, x_scale, x_zero_point, Y, y_scale, y_zero_point, z_scale, z_zero_point)
		&OpSchema{Domain: ms, Name: "QLinearWhere", Family: FamilyData, Since: 1, MinIn: 9, MaxIn: 9, MinOut: 1, MaxOut: 1,
			Infer: inferQLinearWhere, Doc: "ONNX Runtime contrib op: Where over quantized X and Y, requantized to Z's scale; condition, X and Y broadcast"},
		// (X, X_scale, x_zero_point?, y_scale, y_zero_point)
		&OpSchema{Domain: ms, Name: "QLinearSoftmax", Family: FamilyNorm, Since: 1, MinIn: 4, MaxIn: 5, MinOut: 1, MaxOut: 1,
			Infer: inferQLinearSoftmax, Doc: "ONNX Runtime contrib op: quantize(Softmax(dequantize(X))) on axis, whose default follows the opset attribute (1 before 13, -1 from 13)"},
		// (X, x_scale, x_zero_point?, y_scale, y_zero_point?)
		&OpSchema{Domain: ms, Name: "QLinearAveragePool", Family: FamilyPool, Since: 1, MinIn: 4, MaxIn: 5, MinOut: 1, MaxOut: 1,
			Infer: inferQLinearPool("AveragePool"), Doc: "ONNX Runtime contrib op: AveragePool between dequantize and quantize; channels_last=1 takes and gives NHWC"},
		&OpSchema{Domain: ms, Name: "QLinearGlobalAveragePool", Family: FamilyPool, Since: 1, MinIn: 4, MaxIn: 5, MinOut: 1, MaxOut: 1,
			Infer: inferQLinearPool("GlobalAveragePool"), Doc: "ONNX Runtime contrib op: GlobalAveragePool between dequantize and quantize; channels_last=1 takes and gives NHWC"},
		// (Y_scale, Y_zero_point, then X, X_scale, X_zero_point per input)
		&OpSchema{Domain: ms, Name: "QLinearConcat", Family: FamilyData, Since: 1, MinIn: 5, MaxIn: -1, MinOut: 1, MaxOut: 1,
			Infer: inferQLinearConcat, Doc: "ONNX Runtime contrib op: Concat of quantized tensors, each requantized to Y's scale; inputs after Y's scale and zero point come in (tensor, scale, zero point) triples"},
		// (A, a_scale, a_zero_point, B, b_scale, b_zero_point?, C?, y_scale?, y_zero_point?)
		&OpSchema{Domain: ms, Name: "QGemm", Family: FamilyGEMM, Since: 1, MinIn: 6, MaxIn: 9, MinOut: 1, MaxOut: 1,
			Infer: inferQGemm, Doc: "ONNX Runtime contrib op: Gemm over 8-bit A and B with an int32 bias; Y [M, N] quantized like y_zero_point when y_scale is given, else float32"},
		// NhwcMaxPool(X): onnxruntime's NHWC transformer's 8-bit MaxPool.
		&OpSchema{Domain: ms, Name: "NhwcMaxPool", Family: FamilyPool, Since: 1, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1,
			Infer: inferNHWCPool("MaxPool"), Doc: "ONNX Runtime contrib op: MaxPool over an NHWC (channels-last) 8-bit tensor"},
		// (x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B?)
		&OpSchema{Domain: ms, Name: "QLinearConv", Family: FamilyConv, Since: 1, MinIn: 8, MaxIn: 9, MinOut: 1, MaxOut: 1,
			Infer: inferMSQLinearConv, Doc: "ONNX Runtime contrib op: the standard QLinearConv, with channels_last=1 taking and giving NHWC activations (the weight stays [M, C/group, kH, kW])"},
	)
}

// channelsLast reports the contrib ops' NHWC flag.
func channelsLast(c *InferCtx) bool { return c.AttrInt("channels_last", 0) != 0 }

// toChannelsFirst is v seen as NCHW: an NHWC (channels-last) value's
// channel dim moved from last to second; v itself when the rank or the
// shape is not known.
func toChannelsFirst(v *Value) *Value {
	if v == nil || !v.Shape.Ranked || len(v.Shape.Dims) < 3 {
		return v
	}
	d := v.Shape.Dims
	dims := append([]Dim{d[0], d[len(d)-1]}, d[1:len(d)-1]...)
	return &Value{Name: v.Name, Kind: v.Kind, DType: v.DType, Shape: RankedShape(dims...)}
}

// fromChannelsFirst is the NHWC shape of an NCHW shape s.
func fromChannelsFirst(s Shape) Shape {
	if !s.Ranked || len(s.Dims) < 3 {
		return s
	}
	d := s.Dims
	return RankedShape(append(append([]Dim{d[0]}, d[2:]...), d[1])...)
}

// inferQLinearPool runs the float pool op on X, through NCHW when the node
// is channels-last (inferLayout).
func inferQLinearPool(op string) func(*InferCtx) error {
	return func(c *InferCtx) error { return inferLayout(c, op, c.Node.Inputs[:1], channelsLast(c)) }
}

// inferNHWCPool runs pool op on X, which is always channels-last.
func inferNHWCPool(op string) func(*InferCtx) error {
	return func(c *InferCtx) error { return inferLayout(c, op, c.Node.Inputs[:1], true) }
}

// inferLayout runs default-domain op on ins with the node's attributes
// (channels_last left out), through NCHW when last: ins[0] is given to it
// channels-first and its output turned channels-last again.
func inferLayout(c *InferCtx, op string, ins []*Value, last bool) error {
	if last {
		ins = append([]*Value{toChannelsFirst(ins[0])}, ins[1:]...)
	}
	y, err := InferDetached(c, op, ins, AttrsWithout(c.Node.Attrs, "channels_last"))
	if err != nil {
		return err
	}
	s := y.Shape
	if last {
		s = fromChannelsFirst(s)
	}
	return c.SetOut(0, y.DType, s)
}

// inferQLinearSoftmax checks the axis as Softmax of the opset attribute
// does; Y is X's shape and type.
func inferQLinearSoftmax(c *InferCtx) error {
	def := int64(-1)
	if o := c.AttrInt("opset", 13); o < 13 {
		def = 1
	}
	if r := c.InShape(0).Rank(); r > 0 {
		if _, err := c.NormAxis(c.AttrInt("axis", def), r); err != nil {
			return err
		}
	}
	return c.PassThrough(0, 0)
}

// inferQLinearWhere: Z is the broadcast of condition, X and Y, typed like X.
func inferQLinearWhere(c *InferCtx) error {
	s, err := BroadcastShapes(c.InShape(0), c.InShape(1), c.InShape(4))
	if err != nil {
		return c.Errorf("%w", err)
	}
	return c.SetOut(0, c.InType(1), s)
}

// inferQLinearConcat concatenates the data inputs (2, 5, 8, ...) as Concat
// does; Y is typed like Y_zero_point.
func inferQLinearConcat(c *InferCtx) error {
	if (c.NumIn()-2)%3 != 0 {
		return c.Errorf("has %d inputs: after Y_scale and Y_zero_point the inputs come in (tensor, scale, zero point) triples", c.NumIn())
	}
	var xs []*Value
	for i := 2; i < c.NumIn(); i += 3 {
		if c.In(i) == nil {
			return c.Errorf("input %d, a tensor to concatenate, is missing", i)
		}
		xs = append(xs, c.In(i))
	}
	y, err := InferDetached(c, "Concat", xs, c.Node.Attrs)
	if err != nil {
		return err
	}
	dt := c.InType(1)
	if dt == Undefined {
		dt = c.InType(2)
	}
	return c.SetOut(0, dt, y.Shape)
}

// inferQGemm runs Gemm on A and B; Y is float32 unless y_scale is given,
// then typed like y_zero_point (like A when that is absent).
func inferQGemm(c *InferCtx) error {
	y, err := InferDetached(c, "Gemm", []*Value{c.In(0), c.In(3)}, c.Node.Attrs)
	if err != nil {
		return err
	}
	dt := Float32
	if c.HasIn(7) {
		dt = c.InType(8)
		if !c.HasIn(8) || dt == Undefined {
			dt = c.InType(0)
		}
	}
	return c.SetOut(0, dt, y.Shape)
}

// inferMSQLinearConv runs the standard QLinearConv, through NCHW when the
// node is channels-last.
func inferMSQLinearConv(c *InferCtx) error {
	return inferLayout(c, "QLinearConv", c.Node.Inputs, channelsLast(c))
}
