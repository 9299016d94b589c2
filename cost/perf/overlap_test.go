package perf

import (
	"math"
	"testing"
)

// TestBodyOverlap: a GEMM's body is a 4-norm of its compute and memory
// times plus its latency, never below the hard maximum, at most 2^(1/4)
// times it, increasing in both terms; other classes keep the maximum; and
// BodySlopes are the body's derivatives (calib's fit follows them).
func TestBodyOverlap(t *testing.T) {
	const l = 2e-6
	for _, tc := range []struct{ c, m float64 }{{1e-5, 0}, {0, 1e-5}, {1e-5, 1e-5}, {1e-5, 4e-6}, {3e-6, 1e-5}, {1e-3, 1e-6}} {
		g := BodyS(ClassGEMM, tc.c, l, tc.m)
		hard := max(tc.c, tc.m) + l
		if g < hard*(1-1e-12) || g > (max(tc.c, tc.m))*math.Pow(2, 0.25)+l+1e-18 {
			t.Errorf("GEMM c=%g m=%g: body %g, want within [%g, 2^¼ × max + latency]", tc.c, tc.m, g, hard)
		}
		if e := BodyS(ClassElementwise, tc.c, l, tc.m); e != hard {
			t.Errorf("elementwise c=%g m=%g: body %g, want the hard maximum %g", tc.c, tc.m, e, hard)
		}
		if up := BodyS(ClassGEMM, tc.c*1.01, l, tc.m); up < g {
			t.Errorf("GEMM c=%g m=%g: body fell from %g to %g as compute grew", tc.c, tc.m, g, up)
		}
		for _, class := range []KernelClass{ClassGEMM, ClassConv} {
			dc, dm := BodySlopes(class, tc.c, tc.m)
			const h = 1e-6
			nc := (BodyS(class, tc.c*(1+h), l, tc.m) - BodyS(class, tc.c*(1-h), l, tc.m)) / (2 * h * tc.c)
			nm := (BodyS(class, tc.c, l, tc.m*(1+h)) - BodyS(class, tc.c, l, tc.m*(1-h))) / (2 * h * tc.m)
			if tc.c > 0 && tc.m > 0 && tc.c != tc.m && (math.Abs(dc-nc) > 1e-4 || math.Abs(dm-nm) > 1e-4) {
				t.Errorf("%s c=%g m=%g: slopes (%g, %g), numerically (%g, %g)", class, tc.c, tc.m, dc, dm, nc, nm)
			}
		}
	}
	if r := softSum(1e-5, 1e-5) / 1e-5; math.Abs(r-math.Sqrt2) > 1e-12 {
		t.Errorf("softSum with equal terms: %g × either, want √2 (pointwiseExp 2)", r)
	}
	if r := BodyS(ClassGEMM, 1e-5, 0, 1e-5) / 1e-5; math.Abs(r-math.Pow(2, 1.0/gemmOverlapExp)) > 1e-12 {
		t.Errorf("GEMM with equal terms: %g × either, want 2^(1/gemmOverlapExp)", r)
	}
}
