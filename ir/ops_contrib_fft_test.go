package ir

import "testing"

// TestRealFFTInfer: Rfft's one-sided spectrum and Irfft's signal back,
// over the last one or two axes, and their refusals.
func TestRealFFTInfer(t *testing.T) {
	const ms = "com.microsoft::"
	x := faInput(Float32, faShape("b", 3, 16))
	spec := faShape("b", 3, 9, 2)
	runFAOutputs(t, "rfft", ms+"Rfft", 17, []faIn{x}, nil, []TypeInfo{{DType: Float32, Shape: spec}})
	runFAOutputs(t, "irfft", ms+"Irfft", 17, []faIn{faInput(Float32, spec)}, nil, []TypeInfo{{DType: Float32, Shape: faShape("b", 3, 16)}})
	runFAOutputs(t, "rfft 2-D", ms+"Rfft", 17, []faIn{x}, []*Attribute{IntAttr("signal_ndim", 2)}, []TypeInfo{{DType: Float32, Shape: spec}})
	checkInferErrors(t, []inferErrCase{
		{ms + "Rfft", []faIn{x}, []*Attribute{IntAttr("onesided", 0)}, 1, "only onesided=1"},
		{ms + "Rfft", []faIn{x}, []*Attribute{IntAttr("signal_ndim", 4)}, 1, "signal_ndim 4"},
		{ms + "Irfft", []faIn{faInput(Float32, faShape("b", 9, 3))}, nil, 1, "last axis 3, want 2"},
	})
}
