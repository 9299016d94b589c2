package cost

import (
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// TestORTSavedOpCounts: the ops onnxruntime's level-extended fusions save,
// counted by hand at batch 2: the float op's count, plus the fused
// residual add and activation (FusedConv, FusedGemm), plus the per-output
// scale and bias and, for DynamicQuantizeMatMul, its quantizing pass over
// A (DynamicQuantizeLinear's 5 an element, A written at 8 bits and read
// back, a second launch).
func TestORTSavedOpCounts(t *testing.T) {
	b := msBuilder(t, 13)
	x := b.Input("x", ir.Float32, 2, 8, 16, 16)
	w := initializer(b, "w", ir.Float32, 8, 8, 3, 3)
	bias := initializer(b, "b", ir.Float32, 8)
	named := func(v *ir.Value, name string) *ir.Value { v.Producer.Name = name; return v }
	conv := named(msNode(b, "FusedConv", []*ir.Attribute{ir.StringAttr("activation", "LeakyRelu"), ir.IntsAttr("pads", 1, 1, 1, 1)},
		x, w, bias, x), "conv") // Z: a residual of the output's shape
	flat := b.Op("Flatten", []*ir.Attribute{ir.IntAttr("axis", 1)}, conv) // [2, 2048]
	gemm := named(msNode(b, "FusedGemm", []*ir.Attribute{ir.StringAttr("activation", "Relu"), ir.IntAttr("transB", 1)},
		flat, initializer(b, "fw", ir.Float32, 64, 2048), initializer(b, "fb", ir.Float32, 64)), "gemm")
	dq := named(msNode(b, "DynamicQuantizeMatMul", nil, gemm, initializer(b, "qw", ir.Uint8, 64, 10), initializer(b, "qs", ir.Float32),
		initializer(b, "qz", ir.Uint8), initializer(b, "qb", ir.Float32, 10)), "dqmm")
	a8 := b.Input("a8", ir.Uint8, 2, 64)
	mi := named(msNode(b, "MatMulIntegerToFloat", nil, a8, initializer(b, "mw", ir.Int8, 64, 6), initializer(b, "as", ir.Float32),
		initializer(b, "ms", ir.Float32)), "mi2f")
	b.Output(dq, mi)
	b.Infer()
	r := analyzeCovered(t, b, "A100")
	const out = 2 * 8 * 16 * 16 // the conv's outputs
	for _, c := range []struct {
		name                string
		macs, flops, launch float64
	}{
		{"conv", out * 72, 2*out*72 + out + out + 2*out, 1},   // bias, residual, LeakyRelu's 2
		{"gemm", 2 * 64 * 2048, 2*2*64*2048 + 2*64 + 2*64, 1}, // bias, Relu's 1
		{"dqmm", 2 * 10 * 64, 2*2*10*64 + 2*10*2 + 5*2*64, 2}, // scale and bias a output; quantizing A
		{"mi2f", 2 * 6 * 64, 2*2*6*64 + 2*6, 1},               // scale a output, no bias
	} {
		nc := nodeNamed(t, r, c.name)
		if !near(nc.MACs, c.macs) || !near(nc.FLOPs, c.flops) || nc.Launches != c.launch {
			t.Errorf("%s: %g MACs, %g FLOPs, %g launches; want %g, %g, %g", c.name, nc.MACs, nc.FLOPs, nc.Launches, c.macs, c.flops, c.launch)
		}
		if !(nc.TimeS > 0) {
			t.Errorf("%s: time %g", c.name, nc.TimeS)
		}
	}
	// Bytes at each tensor's own type: the float32 A read by the quantizing
	// pass and its 8-bit copy written and read back, the 8-bit weights, the
	// float32 scales and bias, the float32 product written.
	for _, c := range []struct {
		name      string
		read, wrt float64
	}{
		{"dqmm", 2*64*4 + 2*64 + 64*10 + 4 + 1 + 10*4, 2*64 + 2*10*4},
		{"mi2f", 2*64 + 64*6 + 4 + 4, 2 * 6 * 4},
	} {
		if nc := nodeNamed(t, r, c.name); nc.BytesRead != c.read || nc.BytesWritten != c.wrt {
			t.Errorf("%s: %g B read, %g B written; want %g, %g", c.name, nc.BytesRead, nc.BytesWritten, c.read, c.wrt)
		}
	}
	if p := nodeNamed(t, r, "dqmm").Precision; p != "int8_tensor" {
		t.Errorf("DynamicQuantizeMatMul on %q, want its 8-bit weight's int8 path", p)
	}
}

// TestGemmFastGelu: BERT-base's FFN up projection fused with its FastGelu
// (128 tokens, 768 → 3072, fp16): the MatMul's MACs, FastGelu's 8 with
// its bias add (7 without a bias) and one tanh an output element, X, W
// and the bias read.
func TestGemmFastGelu(t *testing.T) {
	const m, k, n = 128.0, 768.0, 3072.0
	for _, withBias := range []bool{true, false} {
		b := msBuilder(t, 17)
		ins := []*ir.Value{b.Input("x", ir.Float16, 1, 128, 768), initializer(b, "w", ir.Float16, 768, 3072)}
		f, read := 8.0, (m*k+k*n)*2
		if withBias {
			ins = append(ins, initializer(b, "bias", ir.Float16, 3072))
			read += n * 2
		} else {
			f = 7
		}
		y := msNode(b, "GemmFastGelu", nil, ins...)
		b.Output(y)
		b.Infer()
		nc := nodeByOp(t, analyzeOn(t, b, "A100", ""), "GemmFastGelu")
		if nc.MACs != m*k*n || nc.FLOPs != 2*m*k*n+f*m*n || nc.Transcendentals != m*n || nc.BytesRead != read || !(nc.TimeS > 0) {
			t.Errorf("bias %v: %g MACs, %g FLOPs, %g transcendentals, %g B read", withBias, nc.MACs, nc.FLOPs, nc.Transcendentals, nc.BytesRead)
		}
	}
}
