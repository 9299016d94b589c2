package ir

// onnxruntime's elementwise contrib ops outside the transformer fusions:
// the fused dropouts its training graphs carry (BiasDropout and the
// bit-packed-mask BitmaskDropout and BitmaskBiasDropout, CUDA kernels of
// onnxruntime/core/providers/cuda/nn/dropout.cc and
// contrib_ops/cuda/math/bias_dropout.cc) and the complex products a
// spectral model writes around Rfft and Irfft (ComplexMul, ComplexMulConj:
// a pair of floats on the last axis is one complex number), and the
// rotary embedding its optimizer fuses into a Gemma graph
// (GemmaRotaryEmbedding, contrib_ops/cuda/bert/gemma_rotary_emb_impl.cu).
// Shapes follow docs/ContribOperators.md and those kernels.

// bitmaskBits is how many mask bits one uint32 of a bit-packed dropout
// mask holds (onnxruntime's kNumBitsPerBitmaskElement).
const bitmaskBits = 32

func init() {
	ms := "com.microsoft"
	Register(
		// BiasDropout(data, bias, residual?, ratio?, training_mode?) -> output, mask?
		&OpSchema{Domain: ms, Name: "BiasDropout", Family: FamilyElementwise, Since: 1, MinIn: 2, MaxIn: 5, MinOut: 1, MaxOut: 2,
			Infer: inferBiasDropout(false), Doc: "ONNX Runtime contrib op: Dropout(data + bias, ratio) + residual; output like data, mask bool like data"},
		// BitmaskBiasDropout(data, bias, residual?, ratio?, training_mode?) -> output, mask?
		&OpSchema{Domain: ms, Name: "BitmaskBiasDropout", Family: FamilyElementwise, Since: 1, MinIn: 2, MaxIn: 5, MinOut: 1, MaxOut: 2,
			Infer: inferBiasDropout(true), Doc: "ONNX Runtime contrib op: Dropout(data + bias, ratio) + residual; output like data, mask bit-packed uint32 [ceil(numel/32)]"},
		// BitmaskDropout(data, ratio?, training_mode?) -> output, mask?
		&OpSchema{Domain: ms, Name: "BitmaskDropout", Family: FamilyElementwise, Since: 1, MinIn: 1, MaxIn: 3, MinOut: 1, MaxOut: 2,
			Infer: inferBitmaskDropout, Doc: "ONNX Runtime contrib op: Dropout with its mask bit-packed: output like data, mask uint32 [ceil(numel/32)]"},
		// ComplexMul(A, B) -> C, ComplexMulConj(A, B) -> C: broadcast, last axis 2.
		&OpSchema{Domain: ms, Name: "ComplexMul", Family: FamilyElementwise, Since: 1, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1,
			Infer: inferComplexMul, Doc: "ONNX Runtime contrib op: complex A · B over (real, imaginary) pairs on the last axis, broadcast"},
		&OpSchema{Domain: ms, Name: "ComplexMulConj", Family: FamilyElementwise, Since: 1, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1,
			Infer: inferComplexMul, Doc: "ONNX Runtime contrib op: complex A · conj(B) over (real, imaginary) pairs on the last axis, broadcast"},
		// GemmaRotaryEmbedding(emb [B, S, D], q, q_rot, k, k_rot [B, N, S, D]) -> q', k'
		&OpSchema{Domain: ms, Name: "GemmaRotaryEmbedding", Family: FamilyElementwise, Since: 1, MinIn: 5, MaxIn: 5, MinOut: 2, MaxOut: 2,
			Infer: inferGemmaRotary, Doc: "ONNX Runtime contrib op: q·cos(emb) + q_rot·sin(emb) and k·cos(emb) + k_rot·sin(emb), emb broadcast over heads; outputs like q and k"},
	)
}

// inferBiasDropout refuses a bias that is neither data's last axis nor
// data's shape and a residual not of data's shape; the output is like
// data, the mask bool like data or, bit-packed, ceil(numel/32) uint32s.
func inferBiasDropout(bitmask bool) func(*InferCtx) error {
	return func(c *InferCtx) error {
		if err := needFloat(c, 0, "data"); err != nil {
			return err
		}
		x, bias := c.InShape(0), c.InShape(1)
		if x.Ranked && x.Rank() == 0 {
			return c.Errorf("data is a scalar; it needs an axis for the bias")
		}
		if x.IsKnown() && bias.IsKnown() && !bias.Equal(x) {
			last := x.Dims[x.Rank()-1]
			if bias.Rank() != 1 || !bias.Dims[0].Equal(last) {
				return c.Errorf("bias is %s, data %s: it must be data's last axis (%s) or data's shape", bias, x, last)
			}
		}
		if r := c.InShape(2); c.HasIn(2) && x.IsKnown() && r.IsKnown() && !r.Equal(x) {
			return c.Errorf("residual is %s, data %s: they must have one shape", r, x)
		}
		if err := c.PassThrough(0, 0); err != nil {
			return err
		}
		if bitmask {
			return c.SetOut(1, Uint32, bitmaskShape(c, x))
		}
		return c.SetOut(1, Bool, x.Clone())
	}
}

// inferBitmaskDropout: the output is like data, the mask ceil(numel/32)
// uint32s.
func inferBitmaskDropout(c *InferCtx) error {
	if err := needFloat(c, 0, "data"); err != nil {
		return err
	}
	if err := c.PassThrough(0, 0); err != nil {
		return err
	}
	return c.SetOut(1, Uint32, bitmaskShape(c, c.InShape(0)))
}

// bitmaskShape is the 1-D shape of a bit-packed mask over x's elements:
// ceil(numel/32), symbolic where x's dims are, fresh where x is unranked.
func bitmaskShape(c *InferCtx, x Shape) Shape {
	if !x.Ranked {
		return RankedShape(c.Fresh("bitmask"))
	}
	n := D(1)
	for _, d := range x.Dims {
		p, ok := MulDim(n, d)
		if !ok {
			return RankedShape(c.Fresh("bitmask"))
		}
		n = p
	}
	return RankedShape(DivDim(n, D(bitmaskBits), true))
}

// inferComplexMul refuses a known last axis other than 2 (a real and an
// imaginary part) on either input; C is the broadcast of A and B.
func inferComplexMul(c *InferCtx) error {
	for i, name := range []string{"A", "B"} {
		if err := needFloat(c, i, name); err != nil {
			return err
		}
		s := c.InShape(i)
		if !s.Ranked {
			continue
		}
		if s.Rank() == 0 {
			return c.Errorf("%s is a scalar; it needs a last axis of 2 (real, imaginary)", name)
		}
		if l, ok := knownDim(s, s.Rank()-1); ok && l != 2 {
			return c.Errorf("%s's last axis is %d; it must be 2 (real, imaginary)", name, l)
		}
	}
	s, err := BroadcastShapes(c.InShape(0), c.InShape(1))
	if err != nil {
		return c.Errorf("%w", err)
	}
	return c.SetOut(0, c.InType(0), s)
}

// needFloat refuses input i of a known non-float type.
func needFloat(c *InferCtx, i int, name string) error {
	if t := c.InType(i); t != Undefined && !t.IsFloat() {
		return c.Errorf("%s is %s; it must be a float type", name, t)
	}
	return nil
}

// inferGemmaRotary refuses emb not of rank 3, q, q_rot, k and k_rot not of
// one rank-4 shape, and emb's [B, S, D] not q's batch, sequence and
// width; the outputs are like q and k.
func inferGemmaRotary(c *InferCtx) error {
	emb, q := c.InShape(0), c.InShape(1)
	if emb.Ranked && emb.Rank() != 3 {
		return c.Errorf("emb has rank %d, want 3 [batch, sequence, dim]", emb.Rank())
	}
	for i, name := range []string{"q", "q_rot", "k", "k_rot"} {
		s := c.InShape(1 + i)
		if s.Ranked && s.Rank() != 4 {
			return c.Errorf("%s has rank %d, want 4 [batch, heads, sequence, dim]", name, s.Rank())
		}
		if q.IsKnown() && s.IsKnown() && !s.Equal(q) {
			return c.Errorf("%s is %s, q %s: they must have one shape", name, s, q)
		}
	}
	if emb.IsKnown() && q.IsKnown() {
		for _, ax := range [][2]int{{0, 0}, {1, 2}, {2, 3}} {
			if !emb.Dims[ax[0]].Equal(q.Dims[ax[1]]) {
				return c.Errorf("emb is %s, q %s: emb must be q's [batch, sequence, dim]", emb, q)
			}
		}
	}
	if err := c.PassThrough(0, 1); err != nil {
		return err
	}
	return c.PassThrough(1, 3)
}
