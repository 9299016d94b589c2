package detmath

import (
	"math"
	"testing"
)

// TestAgreesWithMath: within a few ulps of the standard library over the
// ranges the cost model uses, with its special cases.
func TestAgreesWithMath(t *testing.T) {
	rel := func(a, b float64) float64 {
		if a == b {
			return 0
		}
		return math.Abs(a-b) / math.Max(math.Abs(a), math.Abs(b))
	}
	for x := -700.0; x <= 700; x += 0.173 {
		if e := rel(Exp(x), math.Exp(x)); e > 4e-15 {
			t.Fatalf("Exp(%g) = %g, math %g (rel %g)", x, Exp(x), math.Exp(x), e)
		}
	}
	for _, x := range []float64{1e-300, 1e-9, 0.01, 0.5, 0.7071, 0.9999, 1, 1.0001, 1.5, 2, 3, 10, 1e9, 1e300} {
		if e := math.Abs(Log(x) - math.Log(x)); e > 4e-15*math.Max(1, math.Abs(math.Log(x))) {
			t.Errorf("Log(%g) = %g, math %g", x, Log(x), math.Log(x))
		}
		for _, y := range []float64{-2.5, -1, -0.3, 0, 0.2449, 0.5, 1, 1.7, 3, 4} {
			if e := rel(Pow(x, y), math.Pow(x, y)); e > 1e-13 {
				t.Errorf("Pow(%g, %g) = %g, math %g (rel %g)", x, y, Pow(x, y), math.Pow(x, y), e)
			}
		}
	}
	for _, x := range []float64{0.25, 1, 2, 1024, 0x1p-40} {
		if Log2(x) != math.Log2(x) {
			t.Errorf("Log2(%g) = %g, want %g exactly", x, Log2(x), math.Log2(x))
		}
	}
	if Exp(0) != 1 || Log(1) != 0 || !math.IsInf(Exp(1000), 1) || Exp(-1000) != 0 || !math.IsNaN(Log(-1)) || !math.IsInf(Log(0), -1) || Pow(2, 0.5) != Exp(0.5*Log(2)) {
		t.Error("special cases")
	}
}

// TestLn2Split: ln2Lo was computed for this ln2Hi.
func TestLn2Split(t *testing.T) {
	if ln2Hi != 0.6931471803691238 {
		t.Errorf("ln2Hi %v: recompute ln2Lo (ln 2 − ln2Hi to double precision)", ln2Hi)
	}
}
