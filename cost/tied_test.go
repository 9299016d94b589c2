package cost

import (
	"testing"
)

// TestTiedHead: a head weight the file holds as the transposed copy of the
// embedding table (ir.Model.TiedCopies) is left out of the parameter count
// on every runtime and said as tied_params; its bytes stay in param_bytes
// and peak memory under an engine built from the file (TensorRT, ONNX
// Runtime) and leave them under PyTorch's plans, which hold the matrix
// once. Untied, the same graph counts both.
func TestTiedHead(t *testing.T) {
	const vocab, dim, rows = 1000, 64, 8
	lm := func(tied bool) *builder {
		b := newBuilder(t)
		b.LM(vocab, dim, rows, tied)
		return b
	}
	gpu := testGPU(t, "H100-SXM5-80GB")
	const matrix = vocab * dim
	for _, c := range []struct {
		runtime   string
		tied      bool
		params    float64
		tiedElems float64
		bytes     float64
	}{
		{"tensorrt", false, 2 * matrix, 0, 2 * 4 * matrix},
		{"tensorrt", true, matrix, matrix, 2 * 4 * matrix},
		{"onnxruntime", true, matrix, matrix, 2 * 4 * matrix},
		{"pytorch", true, matrix, matrix, 4 * matrix},
		{"graph", true, matrix, matrix, 4 * matrix},
		{"pytorch-compile", true, matrix, matrix, 4 * matrix},
		{"pytorch", false, 2 * matrix, 0, 2 * 4 * matrix},
	} {
		b := lm(c.tied)
		r, err := Analyze(b.G, b.M, gpu, Options{Runtime: testRuntime(t, c.runtime)})
		if err != nil {
			t.Fatal(err)
		}
		tt := r.Totals
		if tt.Params != c.params || tt.TiedParams != c.tiedElems || tt.ParamBytes != c.bytes || tt.PeakMemoryBytes != tt.PeakActivationBytes+tt.ParamBytes {
			t.Errorf("%s, tied %v: params %g, tied %g, param bytes %g (peak %g = %g + ?); want %g, %g, %g",
				c.runtime, c.tied, tt.Params, tt.TiedParams, tt.ParamBytes, tt.PeakMemoryBytes, tt.PeakActivationBytes, c.params, c.tiedElems, c.bytes)
		}
	}
}
