package perf

import (
	"math"
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
)

// TestLayoutTransposeRate: an fp16 NCHW→NHWC transpose of 205 MB runs
// at its tiles' element rate on an H200, slower than its stream, as the
// measured kernel does (185 µs at batch 32, 64 channels of 224×224: a
// stream alone was priced at about half that); an fp32 one of the same
// elements moves twice the bytes and its stream sets the pace; a 3×3
// filter's 9 taps cost a whole 32-lane tile side; and no transpose gets
// faster with more elements.
func TestLayoutTransposeRate(t *testing.T) {
	g := mustGPU(t, "H200-SXM-141GB")
	const elems = 32 * 64 * 224 * 224
	tr := func(n, elemBytes, rows, cols float64, pr hwdb.Precision) Kernel {
		b := n * elemBytes
		return Kernel{Class: ClassData, Precision: pr, ElemBytes: elemBytes, Bytes: 2 * b, WorkingSet: 2 * b, DRAMBytes: 2 * b,
			Resident: true, Launches: 1, TransposeElements: TransposeElements(n, rows, cols)}
	}
	kt := EstimateKernel(g, tr(elems, 2, 64, 224*224, hwdb.FP16), PlanOptions())
	if body := kt.TimeS - kt.LaunchS; math.Abs(body-185e-6)/185e-6 > 0.1 {
		t.Errorf("fp16 activation transpose: %.1f µs, measured 185 µs, want within 10%%", body*1e6)
	}
	if !(kt.ComputeS > kt.MemoryS) {
		t.Errorf("fp16 transpose: tiles %.3g s, stream %.3g s: want the tiles to set the pace", kt.ComputeS, kt.MemoryS)
	}
	if kt := EstimateKernel(g, tr(elems, 4, 64, 224*224, hwdb.FP32), PlanOptions()); kt.ComputeS > kt.MemoryS {
		t.Errorf("fp32 transpose: tiles %.3g s, stream %.3g s: want the stream to set the pace", kt.ComputeS, kt.MemoryS)
	}
	if got, want := TransposeElements(512*512*9, 512, 9), 512*512*9*32.0/9; got != want {
		t.Errorf("3×3 filter: %g tile-weighted elements, want %g", got, want)
	}
	if TransposeElements(100, 0, 5) != 0 || TransposeElements(0, 64, 64) != 0 {
		t.Error("an unsized transpose should weigh nothing")
	}
	for _, name := range []string{"H200-SXM-141GB", "A100-SXM4-80GB", "L4", "T4"} {
		g := mustGPU(t, name)
		prev := 0.0
		for cols := 1.0; cols <= 1<<16; cols *= 3 {
			n := 256 * 64 * cols
			if s := EstimateKernel(g, tr(n, 2, 64, cols, hwdb.FP16), PlanOptions()).TimeS; s < prev {
				t.Errorf("%s: %g pixels transposed in %.3g s, fewer took %.3g s", name, cols, s, prev)
			} else {
				prev = s
			}
		}
	}
}

// TestTMAIm2colConvRate: on Hopper a forward 16-bit tensor-core
// convolution runs at the GEMM rate (its TMA gathers the im2col tiles),
// so its tiled efficiency is kernelEff without EffConv; a TF32 one, a
// weight gradient, an fp16 one on an A100, a grouped one and a plain
// GEMM keep theirs.
func TestTMAIm2colConvRate(t *testing.T) {
	p := DefaultParams()
	conv := Kernel{Class: ClassConv, Precision: hwdb.FP16Tensor, M: 4096, N: 256, K: 2304}
	h200, a100 := mustGPU(t, "H200-SXM-141GB"), mustGPU(t, "A100-SXM4-80GB")
	if got := tiledEff(h200, conv, p); math.Abs(got-1) > 1e-12 {
		t.Errorf("H200 fp16 forward conv: tiled efficiency %g, want 1 (the GEMM's)", got)
	}
	for _, c := range []struct {
		what string
		g    *hwdb.GPU
		k    Kernel
		want float64
	}{
		{"H200 TF32 conv", h200, Kernel{Class: ClassConv, Precision: hwdb.TF32Tensor, M: 4096, N: 256, K: 2304}, p.EffConv},
		{"H200 fp16 weight gradient", h200, Kernel{Class: ClassConv, Precision: hwdb.FP16Tensor, Grad: GradWeight, M: 256, N: 2304, K: 4096}, p.EffConv * p.EffWgrad},
		{"A100 fp16 conv", a100, conv, p.EffConv},
		{"H200 fp16 grouped conv", h200, Kernel{Class: ClassConv, Precision: hwdb.FP16Tensor, M: 4096, N: 8, K: 72, Batch: 32}, p.EffConv},
		{"H200 fp16 GEMM", h200, Kernel{Class: ClassGEMM, Precision: hwdb.FP16Tensor, M: 4096, N: 256, K: 2304}, 1},
	} {
		if got := tiledEff(c.g, c.k, p); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: tiled efficiency %g, want %g", c.what, got, c.want)
		}
	}
	fast := EstimateKernel(h200, conv, PlanOptions())
	gemm := conv
	gemm.Class = ClassGEMM
	if g := EstimateKernel(h200, gemm, PlanOptions()); fast.ComputeS > g.ComputeS*(1+1e-9) {
		t.Errorf("H200 fp16 conv main loop %.3g s, the same GEMM's %.3g s: want no slower", fast.ComputeS, g.ComputeS)
	}
}
