package perf

import (
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
)

// TestConvGradKernelViews states the GEMM views of a convolution's
// gradients. Stride 1 with "same" padding: the data gradient's implicit
// GEMM (input pixels × C, reduction K·R·S) has the forward's MACs. Stride
// 2: the zero-inserted dY costs stride_w× the MACs (whole rows are
// skipped, alternate columns are not). The weight gradient always has
// the forward's MACs, reduced over N·P·Q. FLOPs stay the forward's.
func TestConvGradKernelViews(t *testing.T) {
	macs := func(k Kernel) float64 { return float64(k.M) * float64(k.N) * float64(k.K) * float64(max(k.Batch, 1)) }
	for _, c := range []struct {
		geom  ConvGeom
		ratio float64 // executed dgrad MACs / forward MACs
	}{
		{ConvGeom{N: 8, C: 64, H: 56, W: 56, K: 128, R: 3, S: 3, PadH: 1, PadW: 1, StrideH: 1, StrideW: 1}, 1},
		{ConvGeom{N: 8, C: 64, H: 56, W: 56, K: 128, R: 3, S: 3, PadH: 1, PadW: 1, StrideH: 2, StrideW: 2}, 2},
		{ConvGeom{N: 8, C: 256, H: 56, W: 56, K: 512, R: 1, S: 1, StrideH: 2, StrideW: 2}, 2},
	} {
		fwd := c.geom.DirectFLOPs() / FMAFLOPs
		d := ConvDgradKernel(c.geom, hwdb.FP32, 4, 4)
		w := ConvWgradKernel(c.geom, hwdb.FP32, 4, 4)
		if got := macs(d) / fwd; got != c.ratio {
			t.Errorf("%+v: dgrad executes %.3g× the forward MACs, want %g", c.geom, got, c.ratio)
		}
		if d.N != c.geom.C || d.K != c.geom.K*c.geom.R*c.geom.S || d.Grad != GradData {
			t.Errorf("dgrad view %d×%d×%d (%s), want N = C, K = K·R·S", d.M, d.N, d.K, d.Grad)
		}
		if macs(w) != fwd || w.M != c.geom.K || w.K != c.geom.N*c.geom.P()*c.geom.Q() || w.Grad != GradWeight {
			t.Errorf("wgrad view %d×%d×%d (%s)", w.M, w.N, w.K, w.Grad)
		}
		if d.FLOPs != c.geom.DirectFLOPs() || w.FLOPs != c.geom.DirectFLOPs() {
			t.Errorf("gradient FLOPs %g %g, want the forward's %g", d.FLOPs, w.FLOPs, c.geom.DirectFLOPs())
		}
	}
}

// TestEstimateConvGradPicksWinograd: a 3×3 stride-1 gradient on a vector
// path runs whichever of implicit GEMM and Winograd is faster, as cuDNN's
// backward algorithm search does; a strided one has no Winograd; eff_wgrad
// slows only the implicit-GEMM weight gradient.
func TestEstimateConvGradPicksWinograd(t *testing.T) {
	g, err := hwdb.Lookup("P100")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Params: DefaultParams(), Setting: Isolated}
	c := ConvGeom{N: 16, C: 256, H: 28, W: 28, K: 512, R: 3, S: 3, PadH: 1, PadW: 1, StrideH: 1, StrideW: 1}
	for _, grad := range []Grad{GradData, GradWeight} {
		k, kt := EstimateConvGrad(g, c, grad, hwdb.FP32, 4, 4, o)
		implicit := EstimateKernel(g, map[Grad]Kernel{GradData: ConvDgradKernel(c, hwdb.FP32, 4, 4), GradWeight: ConvWgradKernel(c, hwdb.FP32, 4, 4)}[grad], o)
		if k.Class != ClassWinograd || kt.TimeS >= implicit.TimeS || k.Grad != grad {
			t.Errorf("%s: chose %s (%g s) over implicit GEMM (%g s)", grad, k.Class, kt.TimeS, implicit.TimeS)
		}
	}
	s := c
	s.StrideH, s.StrideW = 2, 2
	if k, _ := EstimateConvGrad(g, s, GradData, hwdb.FP32, 4, 4, o); k.Class != ClassConv {
		t.Errorf("strided dgrad priced as %s", k.Class)
	}
	w := ConvWgradKernel(s, hwdb.FP32, 4, 4)
	slow := EstimateKernel(g, w, o).ComputeS
	p := o
	p.Params.EffWgrad = 1
	if fast := EstimateKernel(g, w, p).ComputeS; !(fast < slow) {
		t.Errorf("eff_wgrad %g does not slow the implicit weight gradient: %g vs %g", o.Params.EffWgrad, slow, fast)
	}
	wk, _ := winogradGradKernel(c, GradWeight, WinogradTile, hwdb.FP32, 4, 4)
	if a, b := EstimateKernel(g, wk, o).ComputeS, EstimateKernel(g, wk, p).ComputeS; a != b {
		t.Errorf("eff_wgrad changes a Winograd weight gradient: %g vs %g", a, b)
	}
}

// TestFusedWinogradRate: the fused F(2×2) Winograd kernel's batched GEMM
// runs at the implicit-GEMM rate (EffConv); the non-fused one at
// EffWinograd. Same view, so the ratio of compute times is the ratio of
// the two efficiencies.
func TestFusedWinogradRate(t *testing.T) {
	g, err := hwdb.Lookup("P4")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Params: DefaultParams(), Setting: InPlan}
	k := GEMMKernel(64, 384, 192, 16, hwdb.FP32, 4, 4)
	k.Class = ClassWinograd
	nonFused := EstimateKernel(g, k, o).ComputeS
	k.WinogradFused = true
	fused := EstimateKernel(g, k, o).ComputeS
	if want := o.Params.EffWinograd / o.Params.EffConv; !(fused > 0) || !nearRel(fused/nonFused, want, 1e-9) {
		t.Errorf("fused/non-fused compute %g, want EffWinograd/EffConv = %g", fused/nonFused, want)
	}
}

func nearRel(a, b, rel float64) bool { return a-b <= rel*b && b-a <= rel*b }
