package main

import (
	"math"
	"testing"
)

// exactly checks a fitted coefficient against the arithmetic it should
// recover. Least squares in float64 leaves rounding of ~1e-12 relative; a
// wrong count is off by whole terms (≥ 1e-4 here), so 1e-9 tells them apart.
func exactly(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9*math.Abs(want) {
		t.Errorf("%s = %.10g, want %.10g", what, got, want)
	}
}

// TestSweepFitLSTMHidden: sweeping the zoo LSTM's hidden size (embedding
// tied to it) and fitting GEMM FLOPs against h quadratically recovers the
// seed's 16·h² FLOPs per cell step: the quadratic term is 16 × layers ×
// steps × batch exactly (the bias and gate work is linear in h).
func TestSweepFitLSTMHidden(t *testing.T) {
	const layers, seq, batch = 2, 32, 128 // the zoo's PTB defaults
	res := sweepOut(t, "zoo:lstm-ptb", "--gpu", "V100", "--plan", "unfused",
		"--param", "hidden=128,256,512,1024", "--param", "embed=hidden", "--fit", "quadratic")
	if len(res.Fit) != 1 || res.Fit[0].X != "hidden" || res.Fit[0].GEMMFLOPs.Quadratic == nil {
		t.Fatalf("fit: %+v", res.Fit)
	}
	f := res.Fit[0]
	exactly(t, "GEMM FLOPs quadratic term per cell step", *f.GEMMFLOPs.Quadratic/(layers*seq*batch), 16)
	// All FLOPs: the quadratic term is the same (nothing else is
	// quadratic in h), and the fit is exact.
	exactly(t, "FLOPs quadratic term per cell step", *f.FLOPs.Quadratic/(layers*seq*batch), 16)
	if f.FLOPs.MaxRelResidual > 1e-12 {
		t.Errorf("FLOPs are not exactly quadratic in h: residual %g", f.FLOPs.MaxRelResidual)
	}
	// Time grows with h too; its fit is a fit, not an identity.
	if f.TimeS.R2 < 0.99 {
		t.Errorf("time fit R² %v", f.TimeS.R2)
	}
}

// TestSweepFitLSTMLayers: sweeping the layer count gives a linear cost
// whose slope is one LSTM layer's FLOPs and whose baseline, the seed's
// "large non-zero baseline", is the embedding and the vocabulary
// projection, which do not depend on depth.
func TestSweepFitLSTMLayers(t *testing.T) {
	res := sweepOut(t, "zoo:lstm-ptb", "--gpu", "V100", "--plan", "unfused", "--param", "layers=1,2,3,4", "--fit", "linear")
	f := res.Fit[0]
	// One layer at hidden = embed = 1024, 32 steps, batch 128, per the
	// report's LSTM convention: 2·4h·(in+h) MAC FLOPs + 4h bias adds +
	// 15 gate FLOPs per h element, per step and item.
	const h, steps, batch = 1024.0, 32.0, 128.0
	layer := steps * batch * (2*4*h*(h+h) + 4*h + 15*h)
	exactly(t, "FLOPs slope (one layer)", f.FLOPs.Slope, layer)
	// Baseline: the decoder MatMul over the vocabulary (2·vocab·h FLOPs
	// per token) and its bias Add (vocab per token); the embedding gather
	// costs no FLOPs.
	const vocab = 10000.0
	exactly(t, "GEMM FLOPs baseline (decoder MatMul)", f.GEMMFLOPs.Baseline, steps*batch*2*vocab*h)
	exactly(t, "FLOPs baseline (decoder MatMul + bias Add)", f.FLOPs.Baseline, steps*batch*(2*vocab*h+vocab))
	if f.FLOPs.Baseline < 0.5*f.FLOPs.Slope || f.TimeS.Baseline <= 0 {
		t.Errorf("baseline %v FLOPs / %v s: want the large non-zero baseline", f.FLOPs.Baseline, f.TimeS.Baseline)
	}
}

// TestSweepFitTransformerSeq: sweeping the zoo transformer's sequence
// length recovers the seed formula per layer: GEMM FLOPs =
// 2·(3·L·d² + L²·d + L²·d + L·d²) + 2·(2·L·d·d_ff), i.e. quadratic term
// 4·d and linear term 8·d² + 4·d·d_ff, plus, in the linear term, the
// out-projection's bias add (d per token: the report counts a Gemm's bias
// in its FLOPs).
func TestSweepFitTransformerSeq(t *testing.T) {
	const d, dff, layers = 512.0, 2048.0, 6.0
	res := sweepOut(t, "zoo:transformer", "--gpu", "V100", "--plan", "unfused", "--param", "seq=32,64,128,256,512", "--fit", "quadratic")
	f := res.Fit[0]
	exactly(t, "GEMM FLOPs quadratic term", *f.GEMMFLOPs.Quadratic, layers*4*d)
	exactly(t, "GEMM FLOPs linear term", f.GEMMFLOPs.Slope, layers*(8*d*d+4*d*dff+d))
	if math.Abs(f.GEMMFLOPs.Baseline) > 1e-3 {
		t.Errorf("GEMM FLOPs baseline %v, want 0", f.GEMMFLOPs.Baseline)
	}
	// Softmax, scaling and the mask add are quadratic in L as well, so
	// all FLOPs have a larger quadratic term than the GEMMs alone.
	if !(*f.FLOPs.Quadratic > *f.GEMMFLOPs.Quadratic) {
		t.Errorf("FLOPs quadratic %v not above GEMM %v", *f.FLOPs.Quadratic, *f.GEMMFLOPs.Quadratic)
	}
}
