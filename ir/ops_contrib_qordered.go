package ir

// onnxruntime's QOrdered ops: int8 BERT and Longformer layers whose
// tensors keep a cublasLt layout (ORDER_ROW, COL32, COL4_4R2_8C, ...)
// between kernels, so each op reads and writes int8 and only the layout
// attributes say how. QuantizeWithOrder and DequantizeWithOrder enter and
// leave that form; QOrderedMatMul, QOrderedGelu,
// QOrderedLayerNormalization, QOrderedAttention (separate Q, K and V
// weights, int8 throughout) and QOrderedLongformerAttention (its int8
// projections dequantized to fp16 for the attention) run inside it.
// Shapes follow
// onnxruntime's schemas (docs/ContribOperators.md, quantization_defs.cc);
// the layouts change no shape.

func init() {
	ms := "com.microsoft"
	Register(
		// QuantizeWithOrder(input, scale_input) -> int8 like input
		&OpSchema{Domain: ms, Name: "QuantizeWithOrder", Family: FamilyElementwise, Since: 1, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1,
			Infer: inferQuantizeWithOrder, Doc: "ONNX Runtime contrib op: quantize a float matrix to int8 in a cublasLt layout; shape like the input"},
		// DequantizeWithOrder(input int8, scale_input) -> float like input
		&OpSchema{Domain: ms, Name: "DequantizeWithOrder", Family: FamilyElementwise, Since: 1, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1,
			Infer: inferDequantizeWithOrder, Doc: "ONNX Runtime contrib op: dequantize an int8 cublasLt-ordered matrix to float or float16 (the to attribute)"},
		// QOrderedMatMul(A, scale_A, B, scale_B, scale_Y, bias?, C?, scale_C?) -> Y int8
		&OpSchema{Domain: ms, Name: "QOrderedMatMul", Family: FamilyGEMM, Since: 1, MinIn: 5, MaxIn: 8, MinOut: 1, MaxOut: 1,
			Infer: inferQOrderedMatMul, Doc: "ONNX Runtime contrib op: int8 MatMul of A [batch, M, K] and B [K, N] in cublasLt layouts, + bias + C; Y int8 [batch, M, N]"},
		// QOrderedGelu(X, scale_X, scale_Y) -> Y like X
		&OpSchema{Domain: ms, Name: "QOrderedGelu", Family: FamilyElementwise, Since: 1, MinIn: 3, MaxIn: 3, MinOut: 1, MaxOut: 1,
			Infer: inferQOrderedLikeX, Doc: "ONNX Runtime contrib op: quantize(Gelu(dequantize(X))) in int8; Y like X"},
		// QOrderedLayerNormalization(X, scale_X, scale, B?, scale_Y) -> Y like X
		&OpSchema{Domain: ms, Name: "QOrderedLayerNormalization", Family: FamilyNorm, Since: 1, MinIn: 4, MaxIn: 5, MinOut: 1, MaxOut: 1,
			Infer: inferQOrderedLikeX, Doc: "ONNX Runtime contrib op: quantize(LayerNormalization(dequantize(X))) over axis; Y like X"},
		// QOrderedAttention(input, scale_input, scale_Q_gemm,
		// scale_K_gemm, scale_V_gemm, Q_weight, K_weight, V_weight,
		// scale_Q_weight, scale_K_weight, scale_V_weight, Q_bias, K_bias,
		// V_bias, scale_QKT_gemm?, scale_QKT_softmax?, scale_values_gemm,
		// mask_index?, past?, attention_bias?) -> output
		&OpSchema{Domain: ms, Name: "QOrderedAttention", Family: FamilyAttention, Since: 1, MinIn: 17, MaxIn: 20, MinOut: 1, MaxOut: 1,
			Infer: inferQOrderedAttention, Doc: "ONNX Runtime contrib op: int8 self attention with separate Q, K, V weights: output int8 [B, S, hidden]"},
		// QOrderedLongformerAttention(input, scale_input, weight,
		// scale_weight, bias, scale_bias, scale_qkv_gemm, mask,
		// global_weight, scale_global_weight, global_bias,
		// scale_global_gemm, global, scale_output) -> output
		&OpSchema{Domain: ms, Name: "QOrderedLongformerAttention", Family: FamilyAttention, Since: 1, MinIn: 14, MaxIn: 14, MinOut: 1, MaxOut: 1,
			Infer: inferQOrderedLongformer, Doc: "ONNX Runtime contrib op: LongformerAttention over int8 tensors in cublasLt layouts; output like input"},
	)
}

// QOrderedLongformerSlots are QOrderedLongformerAttention's inputs in
// LongformerAttention's order: input, weight, bias, mask, global_weight,
// global_bias, global.
var QOrderedLongformerSlots = []int{0, 2, 4, 7, 8, 10, 12}

// needInt8 refuses input i (named name) when its type is known and not
// int8: the QOrdered ops' tensors are int8 only.
func needInt8(c *InferCtx, i int, name string) error { return needInt(c, i, name, Int8) }

// int8Slot is an input slot of a QOrdered op that must hold int8.
type int8Slot struct {
	slot int
	name string
}

// needInt8s is needInt8 over each of slots, the first refusal returned.
func needInt8s(c *InferCtx, slots ...int8Slot) error {
	for _, in := range slots {
		if err := needInt8(c, in.slot, in.name); err != nil {
			return err
		}
	}
	return nil
}

func inferQuantizeWithOrder(c *InferCtx) error {
	if err := needFloat(c, 0, "input"); err != nil {
		return err
	}
	return c.SetOut(0, Int8, c.InShape(0).Clone())
}

// inferDequantizeWithOrder gives the output the to attribute's type,
// refusing one other than float (1) or float16 (10).
func inferDequantizeWithOrder(c *InferCtx) error {
	if err := needInt8(c, 0, "input"); err != nil {
		return err
	}
	to := DType(c.AttrInt("to", int64(Float32)))
	if to != Float32 && to != Float16 {
		return c.Errorf("to is %s; onnxruntime dequantizes to float or float16", to)
	}
	return c.SetOut(0, to, c.InShape(0).Clone())
}

func inferQOrderedMatMul(c *InferCtx) error {
	if err := needInt8s(c, int8Slot{0, "A"}, int8Slot{2, "B"}, int8Slot{6, "C"}); err != nil {
		return err
	}
	s, err := matMulShape(c, c.InShape(0), c.InShape(2))
	if err != nil {
		return err
	}
	return c.SetOut(0, Int8, s)
}

func inferQOrderedLikeX(c *InferCtx) error {
	if err := needInt8(c, 0, "X"); err != nil {
		return err
	}
	return c.PassThrough(0, 0)
}

// inferQOrderedLongformer is LongformerAttention's rule over its int8
// tensors (QOrderedLongformerSlots).
func inferQOrderedLongformer(c *InferCtx) error {
	if err := needInt8s(c, int8Slot{0, "input"}, int8Slot{2, "weight"}, int8Slot{8, "global_weight"}); err != nil {
		return err
	}
	ins := make([]*Value, len(QOrderedLongformerSlots))
	for i, slot := range QOrderedLongformerSlots {
		ins[i] = c.In(slot)
	}
	return c.withInputs(ins, longformerShapes)
}

// inferQOrderedAttention refuses an input not [B, S, in], weights not
// [in, hidden] of one hidden that the heads divide, and a past (the
// kernel has none); the output is [B, S, hidden].
func inferQOrderedAttention(c *InferCtx) error {
	if err := needInt8(c, 0, "input"); err != nil {
		return err
	}
	h := c.AttrInt("num_heads", 0)
	if h <= 0 {
		return c.Errorf("needs a positive num_heads, has %d", h)
	}
	if c.HasIn(18) {
		return c.Errorf("past is given; onnxruntime's QOrderedAttention has no past state")
	}
	x := c.InShape(0)
	if !x.Ranked {
		return c.SetOut(0, Int8, Unranked())
	}
	if x.Rank() != 3 {
		return c.Errorf("input has rank %d, want 3 [batch, sequence, hidden]", x.Rank())
	}
	hidden, known := Dim{}, false
	for i, name := range []string{"Q_weight", "K_weight", "V_weight"} {
		if err := needInt8(c, 5+i, name); err != nil {
			return err
		}
		if err := checkDims(c, 5+i, name, x.Dims[2], hidden); err != nil {
			return err
		}
		if w := c.InShape(5 + i); !known && w.Ranked && w.Rank() == 2 && w.Dims[1].IsKnown() {
			hidden, known = w.Dims[1], true
		}
	}
	if !known {
		hidden = x.Dims[2]
	}
	if _, err := headSize(c, "hidden", hidden, h); err != nil {
		return err
	}
	return c.SetOut(0, Int8, RankedShape(x.Dims[0], x.Dims[1], hidden))
}
