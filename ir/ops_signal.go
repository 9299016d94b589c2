package ir

// Shape functions for the signal-processing ops: DFT, STFT, the window
// generators and MelWeightMatrix. Complex values are a trailing dim of 2
// (real, imaginary); a real signal has a trailing dim of 1.

func init() {
	Register(
		&OpSchema{Name: "DFT", Since: 17, MinIn: 1, MaxIn: 3, MinOut: 1, MaxOut: 1, Infer: inferDFT},
		&OpSchema{Name: "STFT", Since: 17, MinIn: 2, MaxIn: 4, MinOut: 1, MaxOut: 1, Infer: inferSTFT},
		&OpSchema{Name: "HannWindow", Since: 17, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferWindow},
		&OpSchema{Name: "HammingWindow", Since: 17, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferWindow},
		&OpSchema{Name: "BlackmanWindow", Since: 17, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferWindow},
		&OpSchema{Name: "MelWeightMatrix", Since: 17, MinIn: 5, MaxIn: 5, MinOut: 1, MaxOut: 1, Infer: inferMelWeightMatrix},
	)
}

// knownScalar returns input i's value when it is a known one-element
// integer tensor, else a fresh symbol named hint.
func knownScalar(c *InferCtx, i int, hint string) (Dim, bool) {
	if v, ok := c.ConstInts(i); ok && len(v) == 1 {
		return D(v[0]), true
	}
	if v, ok := c.ConstFloats(i); ok && len(v) == 1 {
		return D(int64(v[0])), true
	}
	return c.Fresh(hint), false
}

// onesidedBins is the number of unique bins of a real DFT of length n:
// floor(n/2)+1.
func onesidedBins(n Dim) Dim { return AddDim(DivDim(n, D(2), false), D(1)) }

// inferDFT: the output is complex (trailing 2); along the transformed axis
// the length is dft_length when given, and onesided keeps floor(n/2)+1
// bins. The axis is an attribute (default 1) up to opset 19 and an
// optional scalar input (default -2) from opset 20; a negative axis counts
// the trailing complex dim.
func inferDFT(c *InferCtx) error {
	x := c.InShape(0)
	dt := c.InType(0)
	if !x.Ranked {
		return c.SetOut(0, dt, Unranked())
	}
	r := len(x.Dims)
	if r < 2 {
		return c.Errorf("input of rank %d, need at least 2", r)
	}
	axis := c.AttrInt("axis", 1)
	if c.Opset >= 20 {
		axis = -2
		if c.HasIn(2) {
			v, ok := c.ConstInts(2)
			if !ok || len(v) != 1 {
				s := x.Clone()
				for i := 1; i < r-1; i++ {
					s.Dims[i] = c.Fresh("dft")
				}
				s.Dims[r-1] = D(2)
				return c.SetOut(0, dt, s)
			}
			axis = v[0]
		}
	}
	ax, err := c.NormAxis(axis, r)
	if err != nil {
		return err
	}
	if ax == r-1 {
		return c.Errorf("axis %d is the complex dim", axis)
	}
	s := x.Clone()
	n := s.Dims[ax]
	if c.HasIn(1) {
		n, _ = knownScalar(c, 1, "dft_length")
	}
	if c.AttrInt("onesided", 0) != 0 && c.AttrInt("inverse", 0) == 0 {
		n = onesidedBins(n)
	}
	s.Dims[ax] = n
	s.Dims[r-1] = D(2)
	return c.SetOut(0, dt, s)
}

// inferSTFT: signal [batch, length, 1|2], frame_step, window?, frame_length?
// gives [batch, frames, bins, 2] with frames = (length-frame_length)/step + 1
// and bins = frame_length, or floor(frame_length/2)+1 when onesided.
func inferSTFT(c *InferCtx) error {
	x := c.InShape(0)
	dt := c.InType(0)
	if x.Ranked && len(x.Dims) != 3 {
		return c.Errorf("signal of rank %d, want 3", len(x.Dims))
	}
	var frameLen Dim
	switch {
	case c.HasIn(3):
		frameLen, _ = knownScalar(c, 3, "frame_length")
	case c.HasIn(2) && c.InShape(2).Rank() == 1:
		frameLen = c.InShape(2).Dims[0]
	default:
		frameLen = c.Fresh("frame_length")
	}
	step, _ := knownScalar(c, 1, "frame_step")
	batch, length := dimOr(c, x, 0, "batch"), dimOr(c, x, 1, "length")
	frames := AddDim(DivDim(SubDim(length, frameLen), step, false), D(1))
	if step.Is(0) {
		return c.Errorf("frame_step is 0")
	}
	bins := frameLen
	if c.AttrInt("onesided", 1) != 0 {
		bins = onesidedBins(frameLen)
	}
	return c.SetOut(0, dt, RankedShape(batch, frames, bins, D(2)))
}

// Window generators: a 1-D tensor of size elements, of output_datatype
// (float32 by default).
func inferWindow(c *InferCtx) error {
	n, _ := knownScalar(c, 0, "window")
	return c.SetOut(0, DType(c.AttrInt("output_datatype", int64(Float32))), RankedShape(n))
}

// MelWeightMatrix(num_mel_bins, dft_length, sample_rate, lower, upper) is
// [floor(dft_length/2)+1, num_mel_bins].
func inferMelWeightMatrix(c *InferCtx) error {
	mel, _ := knownScalar(c, 0, "mel_bins")
	dft, _ := knownScalar(c, 1, "dft_length")
	return c.SetOut(0, DType(c.AttrInt("output_datatype", int64(Float32))), RankedShape(onesidedBins(dft), mel))
}
