package ir

import "testing"

func TestSignalShapes(t *testing.T) {
	// A real signal of 16 samples: onesided keeps 16/2+1 = 9 bins.
	sig := fcKnownIn("x", Float32, 1, 16, 1)
	fcCheck(t, 17, "DFT", []*Attribute{fcAttrInt("onesided", 1)}, []fcIn{sig}, "float32[1,9,2]")
	fcCheck(t, 17, "DFT", nil, []fcIn{sig}, "float32[1,16,2]")
	// dft_length pads or trims the transformed axis.
	fcCheck(t, 17, "DFT", nil, []fcIn{sig, fcConstInts("n", nil, 20)}, "float32[1,20,2]")
	// Opset 20: axis is an input; -2 (the default) is the last signal axis.
	fcCheck(t, 20, "DFT", nil, []fcIn{fcKnownIn("x", Float32, 2, 8, 6, 2), {}, fcConstInts("axis", nil, 1)}, "float32[2,8,6,2]")
	fcCheck(t, 20, "DFT", []*Attribute{fcAttrInt("onesided", 1)}, []fcIn{fcKnownIn("x", Float32, 2, 8, 6, 1)}, "float32[2,8,4,2]")

	// STFT: frames = (128 - 16)/8 + 1 = 15, bins = 16/2 + 1 = 9.
	frames, bins := (128-16)/8+1, 16/2+1
	want := "float32[1," + fcItoa(frames) + "," + fcItoa(bins) + ",2]"
	fcCheck(t, 17, "STFT", nil, []fcIn{fcKnownIn("x", Float32, 1, 128, 1), fcConstInts("step", nil, 8), {}, fcConstInts("len", nil, 16)}, want)
	fcCheck(t, 17, "STFT", nil, []fcIn{fcKnownIn("x", Float32, 1, 128, 1), fcConstInts("step", nil, 8), fcKnownIn("win", Float32, 16)}, want)

	for _, op := range []string{"HannWindow", "HammingWindow", "BlackmanWindow"} {
		fcCheck(t, 17, op, nil, []fcIn{fcConstInts("n", nil, 10)}, "float32[10]")
	}
	fcCheck(t, 17, "HannWindow", []*Attribute{fcAttrInt("output_datatype", int64(Float64))}, []fcIn{fcKnownIn("n", Int64)}, "float64[?window_1]")
	// MelWeightMatrix: [dft_length/2 + 1, num_mel_bins] = [9, 8].
	fcCheck(t, 17, "MelWeightMatrix", nil, []fcIn{fcConstInts("mel", nil, 8), fcConstInts("dft", nil, 16),
		fcConstInts("rate", nil, 8192), fcConstInts("lo", nil, 0), fcConstInts("hi", nil, 4096)}, "float32[9,8]")
}
