package ir

// onnxruntime's contrib ops that its graph optimizer writes into a model it
// saves (SessionOptions.optimized_model_filepath, or the transformers
// optimizer): a MatMul that took its operands' transposes and a scalar
// scale (MatmulTransposeFusion, MatMulScaleFusion), an additive mask
// fused into its Softmax (BiasSoftmaxFusion), a Conv or Gemm that took
// its activation (ConvActivationFusion, GemmActivationFusion: level
// extended, the CPU provider), and the dynamically quantized MatMul of
// an int8 model (DynamicQuantizeMatMulFusion, MatMulIntegerToFloatFusion).
// Semantics from onnxruntime/core/graph/contrib_ops/contrib_defs.cc and
// docs/ContribOperators.md.
func init() {
	registerFresh(
		// FusedConv(X, W, B?, Z?): activation(Conv(X, W, B) + Z).
		&OpSchema{Domain: "com.microsoft", Name: "FusedConv", Family: FamilyConv, Since: 1, MinIn: 2, MaxIn: 4, MinOut: 1, MaxOut: 1,
			Infer: inferORTFused("Conv", 3), Doc: "ONNX Runtime contrib op: activation(Conv(X, W, B) + Z), Conv's shape"},
		// FusedGemm(A, B, C?): activation(Gemm(A, B, C)).
		&OpSchema{Domain: "com.microsoft", Name: "FusedGemm", Family: FamilyGEMM, Since: 1, MinIn: 2, MaxIn: 3, MinOut: 1, MaxOut: 1,
			Infer: inferORTFused("Gemm", 3), Doc: "ONNX Runtime contrib op: activation(Gemm(A, B, C)), Gemm's shape"},
		// GemmFloat8(A, B, C?, scaleA?, scaleB?, scaleY?): cuBLASLt's
		// scaled GEMM over float8 (or wider float) operands.
		&OpSchema{Domain: "com.microsoft", Name: "GemmFloat8", Family: FamilyGEMM, Since: 1, MinIn: 2, MaxIn: 6, MinOut: 1, MaxOut: 1,
			Infer: inferGemmFloat8, Doc: "ONNX Runtime contrib op: scaled GEMM of float8 operands, [M, N] of the dtype attribute's type (float unless set)"},
		// GemmFastGelu(X, W, bias?): FastGelu(X·W + bias), the fusion
		// onnxruntime's optimizer writes for a transformer's FFN up
		// projection (ROCm and CUDA EPs).
		&OpSchema{Domain: "com.microsoft", Name: "GemmFastGelu", Family: FamilyGEMM, Since: 1, MinIn: 2, MaxIn: 3, MinOut: 1, MaxOut: 1,
			Infer: inferORTFused("MatMul", 2), Doc: "ONNX Runtime contrib op: FastGelu(MatMul(X, W) + bias), MatMul's shape"},
		// MatMulIntegerToFloat(A, B, a_scale, b_scale, a_zero_point?,
		// b_zero_point?, bias?): the 8-bit MatMul dequantized to a_scale's
		// float type.
		&OpSchema{Domain: "com.microsoft", Name: "MatMulIntegerToFloat", Family: FamilyGEMM, Since: 1, MinIn: 4, MaxIn: 7, MinOut: 1, MaxOut: 1,
			Infer: inferQuantizedMatMul(2), Doc: "ONNX Runtime contrib op: MatMul of 8-bit A and B, scaled (and biased) to a_scale's float type"},
		// DynamicQuantizeMatMul(A, B, b_scale, b_zero_point?, bias?): float
		// A quantized on the fly, times 8-bit B, back to float.
		&OpSchema{Domain: "com.microsoft", Name: "DynamicQuantizeMatMul", Family: FamilyGEMM, Since: 1, MinIn: 3, MaxIn: 5, MinOut: 1, MaxOut: 1,
			Infer: inferQuantizedMatMul(0), Doc: "ONNX Runtime contrib op: float A quantized to 8 bits per call, times 8-bit B, dequantized: MatMul's shape, A's type"},

		// FusedMatMul(A, B): alpha · op(A) · op(B), op a transpose of the
		// last two axes (transA, transB) after, with transBatch, the first
		// axis moved to just before them.
		&OpSchema{Domain: "com.microsoft", Name: "FusedMatMul", Family: FamilyGEMM, Since: 1, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1,
			Check: checkNumeric, Infer: inferFusedMatMul,
			Doc: "ONNX Runtime contrib op: alpha·op(A)·op(B), MatMul broadcasting, op transposing the last two axes (transA/transB) after moving the first axis before them (transBatchA/transBatchB)"},
		// FusedMatMulActivation(A, B): activation(FusedMatMul(A, B)), what
		// onnxruntime's DML and WebGPU fusions save.
		&OpSchema{Domain: "com.microsoft", Name: "FusedMatMulActivation", Family: FamilyGEMM, Since: 1, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1,
			Check: checkNumeric, Infer: inferFusedMatMul,
			Doc: "ONNX Runtime contrib op: activation(FusedMatMul(A, B)), FusedMatMul's shape"},
		// TransposeMatMul(A, B): FusedMatMul's older name (alpha, transA,
		// transB).
		&OpSchema{Domain: "com.microsoft", Name: "TransposeMatMul", Family: FamilyGEMM, Since: 1, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1,
			Check: checkNumeric, Infer: inferFusedMatMul,
			Doc: "ONNX Runtime contrib op: FusedMatMul's older name, alpha·op(A)·op(B)"},
		// BiasSoftmax(data, bias): Softmax(data + bias) over axis, the bias
		// broadcast from the inside or the outside (is_inner_broadcast).
		&OpSchema{Domain: "com.microsoft", Name: "BiasSoftmax", Family: FamilyNorm, Since: 1, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1,
			Infer: inferBiasSoftmax,
			Doc:   "ONNX Runtime contrib op: Softmax(data + bias) over axis (default 1); the output is shaped like data"},
	)
}

// FusedMatMulOperand is the dims a FusedMatMul multiplies for operand i
// (0 A, 1 B) of rank len(dims): with transBatch{A,B} the first axis moved
// to just before the last (rank 3 or more), then with trans{A,B} the last
// two axes swapped (rank 2 or more). perm[j] is the input axis that ends
// up at axis j.
func FusedMatMulOperand(n *Node, i, rank int) (perm []int) {
	perm = make([]int, rank)
	for j := range perm {
		perm[j] = j
	}
	suffix := "A"
	if i == 1 {
		suffix = "B"
	}
	if n.AttrInt("transBatch"+suffix, 0) != 0 && rank >= 3 {
		// [d0, d1, …, d(r-2), d(r-1)] -> [d1, …, d(r-2), d0, d(r-1)]
		copy(perm, perm[1:rank-1])
		perm[rank-2], perm[rank-1] = 0, rank-1
	}
	if n.AttrInt("trans"+suffix, 0) != 0 && rank >= 2 {
		perm[rank-2], perm[rank-1] = perm[rank-1], perm[rank-2]
	}
	return perm
}

// permuted is s's dims taken in perm's order.
func permuted(s Shape, perm []int) Shape {
	dims := make([]Dim, len(perm))
	for j, p := range perm {
		dims[j] = s.Dims[p]
	}
	return RankedShape(dims...)
}

// inferFusedMatMul: MatMul's shape rule on the operands as op() leaves
// them, typed like A.
func inferFusedMatMul(c *InferCtx) error {
	a, b := c.InShape(0), c.InShape(1)
	if a.Ranked {
		a = permuted(a, FusedMatMulOperand(c.Node, 0, len(a.Dims)))
	}
	if b.Ranked {
		b = permuted(b, FusedMatMulOperand(c.Node, 1, len(b.Dims)))
	}
	s, err := matMulShape(c, a, b)
	if err != nil {
		return err
	}
	return setOutShape(c, 0, c.InType(0), s)
}

// inferBiasSoftmax checks the axis and passes data's type and shape.
func inferBiasSoftmax(c *InferCtx) error {
	if r := c.InShape(0).Rank(); r > 0 {
		if _, err := c.NormAxis(c.AttrInt("axis", 1), r); err != nil {
			return err
		}
	}
	return c.PassThrough(0, 0)
}

// activationAttrs are the attributes onnxruntime's activation fusions add.
var activationAttrs = []string{"activation", "activation_params", "activation_alpha", "activation_beta",
	"activation_gamma", "leaky_relu_alpha"}

// inferORTFused runs op on the node's first ins inputs with its own
// attributes (the activation's left out).
func inferORTFused(op string, ins int) func(*InferCtx) error {
	return func(c *InferCtx) error {
		n := min(ins, c.NumIn())
		y, err := InferDetached(c, op, c.Node.Inputs[:n], AttrsWithout(c.Node.Attrs, activationAttrs...))
		if err != nil {
			return err
		}
		return c.SetOut(0, c.InType(0), y.Shape)
	}
}

// inferQuantizedMatMul runs MatMul on A and B; Y takes the type of input
// typeFrom (a_scale for MatMulIntegerToFloat, A for DynamicQuantizeMatMul).
func inferQuantizedMatMul(typeFrom int) func(*InferCtx) error {
	return func(c *InferCtx) error {
		y, err := InferDetached(c, "MatMul", []*Value{c.In(0), c.In(1)}, nil)
		if err != nil {
			return err
		}
		return c.SetOut(0, c.InType(typeFrom), y.Shape)
	}
}

// GemmFloat8 is onnxruntime's cuBLASLt GEMM over float8 (or 16- and
// 32-bit float) operands with per-tensor scales: Gemm's shapes from A and
// B under transA and transB (the two may be different float8 types, so
// Gemm's own rule, which wants one type, is not used), the output of the
// dtype attribute's type (float unless set, as its CUDA kernel defaults).
func inferGemmFloat8(c *InferCtx) error {
	a, b := c.InShape(0), c.InShape(1)
	if a.Ranked && a.Rank() != 2 {
		return c.Errorf("A has rank %d, want 2", a.Rank())
	}
	if b.Ranked && b.Rank() != 2 {
		return c.Errorf("B has rank %d, want 2", b.Rank())
	}
	m, ka, kb, n := c.Fresh("M"), c.Fresh("K"), c.Fresh("K"), c.Fresh("N")
	if a.Ranked {
		m, ka = a.Dims[0], a.Dims[1]
		if c.AttrInt("transA", 0) != 0 {
			m, ka = ka, m
		}
	}
	if b.Ranked {
		kb, n = b.Dims[0], b.Dims[1]
		if c.AttrInt("transB", 0) != 0 {
			kb, n = n, kb
		}
	}
	if ka.IsKnown() && kb.IsKnown() && ka.Value != kb.Value {
		return c.Errorf("A's inner dim %d and B's %d differ", ka.Value, kb.Value)
	}
	dt := DType(c.AttrInt("dtype", int64(Float32)))
	if !dt.IsFloat() {
		return c.Errorf("dtype %d is not a float type", c.AttrInt("dtype", 0))
	}
	return c.SetOut(0, dt, Shape{Ranked: true, Dims: []Dim{m, n}})
}
