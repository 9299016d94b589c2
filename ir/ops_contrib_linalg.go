package ir

// onnxruntime's batched matrix inverse (com.microsoft Inverse: Y like X,
// every trailing [N, N] matrix inverted; CPU and CUDA kernels) and its
// all-finite check over any number of float tensors (IsAllFinite, a
// training op that guards a mixed-precision step: one bool). Shapes
// follow docs/ContribOperators.md.

func init() {
	ms := "com.microsoft"
	Register(
		// Inverse(X [..., N, N]) -> Y like X
		&OpSchema{Domain: ms, Name: "Inverse", Since: 1, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1,
			Infer: inferInverse, Doc: "ONNX Runtime contrib op: the inverse of every trailing [N, N] matrix of X; Y like X"},
		// IsAllFinite(inputs...) -> bool scalar
		&OpSchema{Domain: ms, Name: "IsAllFinite", Family: FamilyReduce, Since: 1, MinIn: 1, MaxIn: -1, MinOut: 1, MaxOut: 1,
			Infer: inferIsAllFinite, Doc: "ONNX Runtime contrib op: true when every element of every input is finite (isinf_only, isnan_only narrow the check); a bool scalar"},
	)
}

// inferInverse refuses a non-float X, rank below 2 and a known trailing
// pair that is not square.
func inferInverse(c *InferCtx) error {
	if err := needFloat(c, 0, "X"); err != nil {
		return err
	}
	x := c.InShape(0)
	if x.Ranked {
		if x.Rank() < 2 {
			return c.Errorf("X has rank %d; it needs [..., N, N]", x.Rank())
		}
		r, ok1 := knownDim(x, x.Rank()-2)
		k, ok2 := knownDim(x, x.Rank()-1)
		if ok1 && ok2 && r != k {
			return c.Errorf("X's matrices are %d×%d; they must be square", r, k)
		}
	}
	return c.PassThrough(0, 0)
}

// inferIsAllFinite refuses a non-float input and both isinf_only and
// isnan_only; the output is a bool scalar.
func inferIsAllFinite(c *InferCtx) error {
	if c.AttrInt("isinf_only", 0) != 0 && c.AttrInt("isnan_only", 0) != 0 {
		return c.Errorf("isinf_only and isnan_only are both set; at most one may be")
	}
	for i := 0; i < c.NumIn(); i++ {
		if err := needFloat(c, i, "input"); err != nil {
			return err
		}
	}
	return c.SetOut(0, Bool, RankedShape())
}
