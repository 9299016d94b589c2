package ir

// ONNX Runtime's weight-only quantization ops (com.microsoft): the int4/int8
// block-quantized matrix product MatMulNBits that onnxruntime-genai and the
// ORT quantizers write for every linear layer of an LLM, and the
// block-quantized embedding lookup GatherBlockQuantized. Both dequantize
// constant weights stored in blocks along one axis, each block with its own
// scale and (optionally) zero point.

func init() {
	registerFresh(
		// MatMulNBits(A, B, scales, zero_points?, g_idx?, bias?): B is the
		// [N, K] weight, uint8-packed as [N, ceil(K/block_size),
		// block_size·bits/8]; Y = A · dequant(B)ᵀ (+ bias).
		&OpSchema{Domain: "com.microsoft", Name: "MatMulNBits", Family: FamilyGEMM, Since: 1, MinIn: 3, MaxIn: 6, MinOut: 1, MaxOut: 1,
			Check: checkMatMulNBits, Infer: inferMatMulNBits,
			Doc: "ONNX Runtime contrib op: A[..., K] times a block-quantized (2- to 8-bit) constant weight [N, K]; Y[..., N] typed like A"},
		// GatherBlockQuantized(data, indices, scales, zero_points?): Gather
		// whose output is dequantized, typed like scales.
		&OpSchema{Domain: "com.microsoft", Name: "GatherBlockQuantized", Family: FamilyData, Since: 1, MinIn: 3, MaxIn: 4, MinOut: 1, MaxOut: 1,
			Check: checkGatherBlockQuantized, Infer: inferGatherBlockQuantized,
			Doc: "ONNX Runtime contrib op: Gather on gather_axis from block-quantized data, dequantized to the scales' type; uint8 data packs 8/bits values per byte along its last axis"},
		// MatMulBnb4(A, B, absmax): bitsandbytes' FP4/NF4 weight, B the
		// [N, K] weight packed two values a byte, absmax its block scales.
		&OpSchema{Domain: "com.microsoft", Name: "MatMulBnb4", Family: FamilyGEMM, Since: 1, MinIn: 3, MaxIn: 3, MinOut: 1, MaxOut: 1,
			Infer: inferMatMulBnb4,
			Doc:   "ONNX Runtime contrib op: A[..., K] times a 4-bit (FP4/NF4) constant weight [N, K] (K and N attributes); Y[..., N] (transB=0: A[..., N], Y[..., K]) typed like A"},
	)
}

// inferMatMulBnb4 refuses missing K or N and an A whose last dim is not
// the product's inner size (K, or N when transB is 0); Y replaces it with
// the outer size.
func inferMatMulBnb4(c *InferCtx) error {
	k, n := c.AttrInt("K", 0), c.AttrInt("N", 0)
	if k <= 0 || n <= 0 {
		return c.Errorf("needs positive K and N attributes, has K=%d, N=%d", k, n)
	}
	inner, outer := k, n
	if c.AttrInt("transB", 1) == 0 {
		inner, outer = n, k
	}
	a := c.InShape(0)
	if !a.Ranked {
		return c.SetOut(0, c.InType(0), Unranked())
	}
	if len(a.Dims) == 0 {
		return c.Errorf("A must have rank at least 1")
	}
	if last := a.Dims[len(a.Dims)-1]; last.IsKnown() && last.Value != inner {
		return c.Errorf("A's last dim is %d, the product's inner size %d", last.Value, inner)
	}
	out := append(append([]Dim(nil), a.Dims[:len(a.Dims)-1]...), D(outer))
	return c.SetOut(0, c.InType(0), RankedShape(out...))
}

// nbitsDefault is MatMulNBits' and GatherBlockQuantized's default bits.
const nbitsDefault = 4

// validBlockSize: the contrib schemas require a power of two of at least 16.
func validBlockSize(bs int64) bool { return bs >= 16 && bs&(bs-1) == 0 }

// NBitsLayout is the packed size of a MatMulNBits weight of K inputs at bits
// per value in blocks of blockSize: kBlocks blocks per output column, each a
// blob of blobBytes bytes. ok is false when an argument is out of range.
func NBitsLayout(k, bits, blockSize int64) (kBlocks, blobBytes int64, ok bool) {
	const big = 1 << 50 // far past any tensor; keeps the sums below from wrapping
	if k <= 0 || k > big || bits < 1 || bits > 8 || blockSize <= 0 || blockSize > big {
		return 0, 0, false
	}
	return (k + blockSize - 1) / blockSize, (blockSize*bits + 7) / 8, true
}

// checkMatMulNBits refuses attributes outside the schema and operands whose
// known sizes disagree with K, N, bits and block_size. Each comparison runs
// only when the attributes it needs are present and the dims are numbers.
func checkMatMulNBits(c *InferCtx) error {
	bits := c.AttrInt("bits", nbitsDefault)
	if bits < 2 || bits > 8 {
		return c.Errorf("bits=%d: MatMulNBits packs 2 to 8 bits per weight", bits)
	}
	bs := c.AttrInt("block_size", 0)
	if c.Attr("block_size") != nil && !validBlockSize(bs) {
		return c.Errorf("block_size=%d is not a power of two of at least 16", bs)
	}
	for _, name := range []string{"K", "N"} {
		if a := c.Attr(name); a != nil && c.AttrInt(name, 0) < 1 {
			return c.Errorf("%s=%d must be positive", name, c.AttrInt(name, 0))
		}
	}
	k, n := c.AttrInt("K", 0), c.AttrInt("N", 0)
	if a := c.InShape(0); k > 0 && a.Ranked && len(a.Dims) > 0 {
		if d, ok := knownDim(a, len(a.Dims)-1); ok && d != k {
			return c.Errorf("A's last dim is %d, K=%d", d, k)
		}
	}
	if c.Attr("block_size") == nil {
		return nil
	}
	return checkNBitsWeight(c, "B", 1, 2, n, k, bits, bs)
}

// checkNBitsWeight holds the packed weight at slot b and its scales at
// slot scales to the layout of an [n, k] weight at bits per value in
// blocks of bs, where their dims are known; name names the weight.
func checkNBitsWeight(c *InferCtx, name string, b, scales int, n, k, bits, bs int64) error {
	kBlocks, blob, ok := NBitsLayout(k, bits, bs)
	if !ok || n < 1 {
		return nil
	}
	if dims, known := c.InShape(b).Ints(); known && c.HasIn(b) {
		if got, want := prodFloat(dims), float64(n)*float64(kBlocks)*float64(blob); got != want {
			return c.Errorf("%s holds %.0f bytes, N·ceil(K/block_size)·block_size·bits/8 = %d·%d·%d = %.0f", name, got, n, kBlocks, blob, want)
		}
	}
	if dims, known := c.InShape(scales).Ints(); known && c.HasIn(scales) {
		if got, want := prodFloat(dims), float64(n)*float64(kBlocks); got != want {
			return c.Errorf("%s's scales have %.0f entries, N·ceil(K/block_size) = %.0f", name, got, want)
		}
	}
	return nil
}

// inferMatMulNBits: Y is A's leading dims then N, typed like A. N is the
// attribute (required by the schema), else B's first dim.
func inferMatMulNBits(c *InferCtx) error {
	a := c.InShape(0)
	if !a.Ranked {
		return setOutShape(c, 0, c.InType(0), Unranked())
	}
	if len(a.Dims) == 0 {
		return c.Errorf("A must have rank at least 1")
	}
	var n Dim
	switch b := c.InShape(1); {
	case c.AttrInt("N", 0) > 0:
		n = D(c.AttrInt("N", 0))
	case b.Ranked && len(b.Dims) > 0:
		n = b.Dims[0]
	default:
		n = c.Fresh("N")
	}
	out := append(append([]Dim(nil), a.Dims[:len(a.Dims)-1]...), n)
	return setOutShape(c, 0, c.InType(0), RankedShape(out...))
}

// checkGatherBlockQuantized refuses bits and block sizes outside the
// schema and a uint8 table gathered on any axis but 0 (ORT packs uint8
// data along the last axis and gathers whole rows).
func checkGatherBlockQuantized(c *InferCtx) error {
	switch bits := c.AttrInt("bits", nbitsDefault); bits {
	case 2, 4, 8:
	default:
		return c.Errorf("bits=%d: GatherBlockQuantized supports 2, 4 or 8", bits)
	}
	if bs := c.AttrInt("block_size", 128); c.Attr("block_size") != nil && bs != 0 && !validBlockSize(bs) {
		return c.Errorf("block_size=%d is not 0 or a power of two of at least 16", bs)
	}
	data := c.InShape(0)
	if c.InType(0) == Uint8 && data.Ranked && len(data.Dims) > 0 {
		ax, err := c.NormAxis(c.AttrInt("gather_axis", 0), len(data.Dims))
		if err != nil {
			return err
		}
		if ax != 0 {
			return c.Errorf("uint8 data must be gathered on axis 0, gather_axis=%d", c.AttrInt("gather_axis", 0))
		}
	}
	return nil
}

// inferGatherBlockQuantized: Gather's shape (data dims before gather_axis,
// the indices' dims, data dims after it), typed like scales; a uint8
// table's last dim counts bytes, so the output's is 8/bits times it.
func inferGatherBlockQuantized(c *InferCtx) error {
	dt := c.InType(2)
	if dt == Undefined {
		dt = Float32
	}
	data, idx := c.InShape(0), c.InShape(1)
	if !data.Ranked || !idx.Ranked {
		return setOutShape(c, 0, dt, Unranked())
	}
	if len(data.Dims) == 0 {
		return c.Errorf("cannot gather from a scalar")
	}
	ax, err := c.NormAxis(c.AttrInt("gather_axis", 0), len(data.Dims))
	if err != nil {
		return err
	}
	out := append([]Dim(nil), data.Dims[:ax]...)
	out = append(out, idx.Dims...)
	out = append(out, data.Dims[ax+1:]...)
	if bits := c.AttrInt("bits", nbitsDefault); c.InType(0) == Uint8 && bits < 8 && ax < len(data.Dims)-1 {
		last, ok := MulDim(out[len(out)-1], D(8/bits))
		if !ok {
			return c.Errorf("last dim %s times %d overflows", out[len(out)-1], 8/bits)
		}
		out[len(out)-1] = last
	}
	return setOutShape(c, 0, dt, RankedShape(out...))
}

// prodFloat multiplies known dims in float64, which cannot wrap: declared
// input shapes are not bounded by Limits.
func prodFloat(dims []int64) float64 {
	p := 1.0
	for _, d := range dims {
		p *= float64(d)
	}
	return p
}
