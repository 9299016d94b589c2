package calib

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// TermFactor keeps a calibrated term rising with its size (never a
// faster kernel for more work) and never rising faster than the term
// itself, whatever the size cells say; the size cells in between their
// decades' centres are interpolated, not stepped.
func TestTermFactorKeepsTermsMonotone(t *testing.T) {
	gpu := mustGPU(t, "A100-SXM4-80GB")
	var b strings.Builder
	fmt.Fprintf(&b, "format: 1\nsource: {gpu: %q, family: %q, measurements: \"t\", rows: 1, date: \"\", driver: \"\", runtime: \"\"}\n", gpu.Name, Family(gpu))
	b.WriteString("fit: {gpu_factor: 1, median_abs_err_before: 0, median_abs_err_after: 0}\ntransfer: {same_family: 0.25, other_family: 0.25}\ncells:\n")
	for i, size := range []string{"under-10us", "10-100us", "100us-1ms", "over-1ms"} {
		f := []float64{0.05, 20, 0.5, 3}[i]
		fmt.Fprintf(&b, "  - {class: \"gemm\", bound: \"compute\", size: %q, n: 1, factor: %g}\n", size, f)
	}
	b.WriteString("bands: []\n")
	c, err := Parse("t.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	a := c.For(gpu)
	prevT, prevF := 0.0, 0.0
	for x := 1e-7; x < 1; x *= 1.05 {
		f := a.TermFactor("gemm", "MatMul", "compute", x)
		if x*f < prevT*(1-1e-12) {
			t.Fatalf("term %g s calibrates to %g s, below %g s for a smaller term", x, x*f, prevT)
		}
		if prevF > 0 && f > prevF*(1+1e-12) {
			t.Fatalf("factor rises from %g to %g at %g s: time would grow faster than the work", prevF, f, x)
		}
		prevT, prevF = x*f, f
	}
	// At a decade's centre the factor is the (capped) cell's.
	if f := a.TermFactor("gemm", "MatMul", "compute", math.Sqrt(1e-6*1e-5)); math.Abs(f-0.05) > 1e-9 {
		t.Errorf("factor at 3.16 µs = %g, want the under-10us cell's 0.05", f)
	}
	if f := a.TermFactor("gemm", "MatMul", "memory", 1e-3); f != 1 {
		t.Errorf("a term with no cells gets %g, want 1", f)
	}
}
