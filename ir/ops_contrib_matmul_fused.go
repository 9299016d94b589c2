package ir

// ONNX Runtime's newer weight-only matrix products (com.microsoft;
// docs/ContribOperators.md): MatMulNBitsQkv and MatMulNBitsMlp (a decoder
// layer's Q/K/V and gate/up MatMulNBits sharing one input, with the RMS
// norm before them fused in: what onnxruntime-genai's WebGPU and CUDA
// fusions write), and the block-scaled floating-point weights of
// Hopper/Blackwell checkpoints: MatMulBlockQuantizedFp4Weight (NVFP4,
// E2M1 values with an E4M3 scale per 16) and MatMulBlockQuantizedFp8Weight
// (E4M3 weights with an fp32 scale per block, optionally W8A8).

func init() {
	ms := "com.microsoft"
	Register(
		// MatMulNBitsQkv(A, skip?, norm_scale, q_B, q_scales, q_bias?,
		// k_B, k_scales, k_bias?, v_B, v_scales, v_bias?) -> Q, K, V,
		// input_skip_bias_sum?
		&OpSchema{Domain: ms, Name: "MatMulNBitsQkv", Family: FamilyGEMM, Since: 1, MinIn: 11, MaxIn: 12, MinOut: 3, MaxOut: 4,
			Infer: inferMatMulNBitsQkv, Doc: "RMS norm of A[..., K] then three block-quantized projections: Q [..., Nq], K and V [..., Nkv]; input_skip_bias_sum like A"},
		// MatMulNBitsMlp(A, skip?, norm_scale?, gate_B, gate_scales,
		// gate_bias?, up_B, up_scales, up_bias?) -> Y, input_skip_bias_sum?
		&OpSchema{Domain: ms, Name: "MatMulNBitsMlp", Family: FamilyGEMM, Since: 1, MinIn: 8, MaxIn: 9, MinOut: 1, MaxOut: 2,
			Infer: inferMatMulNBitsMlp, Doc: "optional RMS norm of A[..., K], then activation(gate)·up of two block-quantized projections: Y [..., N]"},
		// MatMulBlockQuantizedFp4Weight(A, B, weight_scale,
		// weight_scale_2, input_scale?, bias?): B [N, K/2] packed E2M1.
		&OpSchema{Domain: ms, Name: "MatMulBlockQuantizedFp4Weight", Family: FamilyGEMM, Since: 1, MinIn: 4, MaxIn: 6, MinOut: 1, MaxOut: 1,
			Infer: inferBlockFP4, Doc: "A[..., K] times an NVFP4 weight B [N, K/2] (two E2M1 a byte, an E4M3 scale per block_size); Y [..., N] typed like A"},
		// MatMulBlockQuantizedFp8Weight(A, B, b_scale, a_scale?, bias?):
		// B [N, K] E4M3.
		&OpSchema{Domain: ms, Name: "MatMulBlockQuantizedFp8Weight", Family: FamilyGEMM, Since: 1, MinIn: 3, MaxIn: 5, MinOut: 1, MaxOut: 1,
			Infer: inferBlockFP8, Doc: "A[..., K] times an E4M3 weight B [N, K] with an fp32 scale per block_size (W8A8 with a_scale); Y [..., N] typed like A"},
	)
}

// FusedNBitsWidths is a MatMulNBitsQkv's or MatMulNBitsMlp's K and its
// projections' output widths (Qkv: Nq, Nkv, Nkv; Mlp: N, N); ok is false
// when the attributes do not give them.
func FusedNBitsWidths(n *Node) (k int64, widths []int64, ok bool) {
	k = n.AttrInt("K", 0)
	switch n.OpType {
	case "MatMulNBitsQkv":
		q, kv := n.AttrInt("Nq", 0), n.AttrInt("Nkv", 0)
		widths = []int64{q, kv, kv}
	case "MatMulNBitsMlp":
		widths = []int64{n.AttrInt("N", 0), n.AttrInt("N", 0)}
	}
	for _, w := range append([]int64{k}, widths...) {
		if w < 1 {
			return 0, nil, false
		}
	}
	return k, widths, len(widths) > 0
}

// fusedNBitsShapes checks a fused MatMulNBits node's attributes, input
// width and packed weights (the projections' B, named names, at slots
// bSlots, their scales next to each) and gives each projection output A's
// leading dims and its width; the output past them is A's residual sum,
// typed and shaped like A.
func fusedNBitsShapes(c *InferCtx, names []string, bSlots []int) error {
	k, widths, ok := FusedNBitsWidths(c.Node)
	if !ok {
		return c.Errorf("needs positive K and output widths (Nq and Nkv, or N)")
	}
	bits, bs := c.AttrInt("bits", nbitsDefault), c.AttrInt("block_size", 0)
	if bits < 2 || bits > 8 {
		return c.Errorf("bits=%d: the weights pack 2 to 8 bits per value", bits)
	}
	if !validBlockSize(bs) {
		return c.Errorf("block_size=%d is not a power of two of at least 16", bs)
	}
	for i, slot := range bSlots {
		if err := checkNBitsWeight(c, names[i], slot, slot+1, widths[i], k, bits, bs); err != nil {
			return err
		}
	}
	a := c.InShape(0)
	if !a.Ranked {
		for i := range c.Node.Outputs {
			if err := c.SetOut(i, c.InType(0), Unranked()); err != nil {
				return err
			}
		}
		return nil
	}
	if a.Rank() == 0 {
		return c.Errorf("A must have rank at least 1")
	}
	if d, known := knownDim(a, a.Rank()-1); known && d != k {
		return c.Errorf("A's last dim is %d, K=%d", d, k)
	}
	outs := len(widths)
	if c.Node.OpType == "MatMulNBitsMlp" {
		outs = 1 // activation(gate)·up
	}
	for i := range outs {
		out := append(append([]Dim(nil), a.Dims[:a.Rank()-1]...), D(widths[i]))
		if err := c.SetOut(i, c.InType(0), RankedShape(out...)); err != nil {
			return err
		}
	}
	return c.PassThrough(outs, 0)
}

func inferMatMulNBitsQkv(c *InferCtx) error {
	return fusedNBitsShapes(c, []string{"q_B", "k_B", "v_B"}, []int{3, 6, 9})
}

func inferMatMulNBitsMlp(c *InferCtx) error {
	return fusedNBitsShapes(c, []string{"gate_B", "up_B"}, []int{3, 6})
}

// blockScaledShapes checks a block-scaled weight B [N, K/perByte] (perByte
// values a stored element) and its scales [N, ceil(K/block_size)] at slot
// scales against A[..., K], and gives Y A's leading dims and N.
func blockScaledShapes(c *InferCtx, perByte int64, scales int, bsDefault int64) error {
	bs := c.AttrInt("block_size", bsDefault)
	if bs < 1 {
		return c.Errorf("block_size=%d must be positive", bs)
	}
	a, b := c.InShape(0), c.InShape(1)
	if b.Ranked && b.Rank() != 2 {
		return c.Errorf("B has rank %d, want 2 [N, K/%d]", b.Rank(), perByte)
	}
	if !a.Ranked || !b.Ranked {
		return c.SetOut(0, c.InType(0), Unranked())
	}
	if a.Rank() == 0 {
		return c.Errorf("A must have rank at least 1")
	}
	k, kKnown := knownDim(a, a.Rank()-1)
	if stored, ok := knownDim(b, 1); ok && kKnown && stored*perByte != k {
		return c.Errorf("A's last dim is %d, B holds K=%d", k, stored*perByte)
	}
	n := b.Dims[0]
	if sc := c.InShape(scales); sc.Ranked && kKnown && n.IsKnown() {
		if got, known := sc.Ints(); known && (len(got) != 2 || got[0] != n.Value || got[1] != (k+bs-1)/bs) {
			return c.Errorf("scales %v, want [N, ceil(K/block_size)] = [%d, %d]", got, n.Value, (k+bs-1)/bs)
		}
	}
	out := append(append([]Dim(nil), a.Dims[:a.Rank()-1]...), n)
	return c.SetOut(0, c.InType(0), RankedShape(out...))
}

func inferBlockFP4(c *InferCtx) error {
	if t := c.InType(1); t != Undefined && t != Uint8 {
		return c.Errorf("B is %s, want uint8 (packed E2M1)", t)
	}
	return blockScaledShapes(c, 2, 2, 16)
}

func inferBlockFP8(c *InferCtx) error {
	if t := c.InType(1); t != Undefined && t != Float8E4M3FN {
		return c.Errorf("B is %s, want float8e4m3fn", t)
	}
	return blockScaledShapes(c, 1, 2, 128)
}
