package ir

// ONNX Runtime's real FFTs (com.microsoft Rfft and Irfft;
// docs/ContribOperators.md), what PyTorch exports write for
// torch.fft.rfft/irfft through a com.microsoft::Rfft symbolic (LaMa-style
// inpainting's rfft2): one-sided transforms over the last signal_ndim
// axes, the complex side carrying a trailing axis of 2 (real, imaginary).

func init() {
	ms := "com.microsoft"
	Register(
		&OpSchema{Domain: ms, Name: "Rfft", Family: FamilyData, Since: 1, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1,
			Infer: inferRfft, Doc: "X [..., n] (signal_ndim last axes) -> Y [..., n/2+1, 2], the last signal axis one-sided"},
		&OpSchema{Domain: ms, Name: "Irfft", Family: FamilyData, Since: 1, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1,
			Infer: inferIrfft, Doc: "X [..., m, 2] -> Y [..., 2·(m−1)], the inverse of Rfft"},
	)
}

// fftSignalDims checks signal_ndim (1 to 3, within a rank-r tensor's
// axes, the complex side's trailing 2 excluded by extra).
func fftSignalDims(c *InferCtx, r, extra int) (int, error) {
	nd := int(c.AttrInt("signal_ndim", 1))
	if nd < 1 || nd > 3 || nd > r-extra {
		return 0, c.Errorf("signal_ndim %d for an input of rank %d", nd, r)
	}
	if c.AttrInt("onesided", 1) != 1 || c.AttrInt("normalized", 0) != 0 {
		return 0, c.Errorf("only onesided=1 and normalized=0 are supported (onnxruntime's kernel refuses the others)")
	}
	return nd, nil
}

func inferRfft(c *InferCtx) error {
	x := c.InShape(0)
	if !x.Ranked {
		return c.SetOut(0, c.InType(0), Unranked())
	}
	if _, err := fftSignalDims(c, x.Rank(), 0); err != nil {
		return err
	}
	dims := append([]Dim(nil), x.Dims...)
	last := len(dims) - 1
	dims[last] = AddDim(DivDim(dims[last], D(2), false), D(1))
	return c.SetOut(0, c.InType(0), RankedShape(append(dims, D(2))...))
}

func inferIrfft(c *InferCtx) error {
	x := c.InShape(0)
	if !x.Ranked {
		return c.SetOut(0, c.InType(0), Unranked())
	}
	if _, err := fftSignalDims(c, x.Rank(), 1); err != nil {
		return err
	}
	if two, ok := knownDim(x, x.Rank()-1); ok && two != 2 {
		return c.Errorf("last axis %d, want 2 (real, imaginary)", two)
	}
	dims := append([]Dim(nil), x.Dims[:x.Rank()-1]...)
	last := len(dims) - 1
	n, _ := MulDim(AddDim(dims[last], D(-1)), D(2))
	dims[last] = n
	return c.SetOut(0, c.InType(0), RankedShape(dims...))
}
