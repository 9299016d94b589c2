package calib

import (
	"fmt"
	"math"
	"slices"
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
		f := a.TermFactor("gemm", "", "MatMul", "", "compute", only("compute", x))
		if x*f < prevT*(1-1e-12) {
			t.Fatalf("term %g s calibrates to %g s, below %g s for a smaller term", x, x*f, prevT)
		}
		if prevF > 0 && f > prevF*(1+1e-12) {
			t.Fatalf("factor rises from %g to %g at %g s: time would grow faster than the work", prevF, f, x)
		}
		prevT, prevF = x*f, f
	}
	// At a decade's centre the factor is the (capped) cell's.
	if f := a.TermFactor("gemm", "", "MatMul", "", "compute", only("compute", math.Sqrt(1e-6*1e-5))); math.Abs(f-0.05) > 1e-9 {
		t.Errorf("factor at 3.16 µs = %g, want the under-10us cell's 0.05", f)
	}
	if f := a.TermFactor("gemm", "", "MatMul", "", "memory", only("memory", 1e-3)); f != 1 {
		t.Errorf("a term with no cells gets %g, want 1", f)
	}
}

// only is a kernel's terms with one term set: no ridge position, so
// only the size cells vary with s.
func only(term string, s float64) [3]float64 {
	var t [3]float64
	t[slices.Index(termNames[:], term)] = s
	return t
}

// The ridge cells, however wild, never let a calibrated term fall as
// either side of the kernel grows: more FLOPs or more bytes is never a
// faster kernel.
func TestRidgeCellsKeepTermsMonotone(t *testing.T) {
	gpu := mustGPU(t, "A100-SXM4-80GB")
	var b strings.Builder
	fmt.Fprintf(&b, "format: 1\nsource: {gpu: %q, family: %q, measurements: \"t\", rows: 1, date: \"\", driver: \"\", runtime: \"\"}\n", gpu.Name, Family(gpu))
	b.WriteString("fit: {gpu_factor: 1, median_abs_err_before: 0, median_abs_err_after: 0}\ntransfer: {same_family: 0.25, other_family: 0.25}\ncells:\n")
	for _, term := range []string{"compute", "memory"} {
		for i, rb := range ridgeBuckets {
			if i == 2 {
				continue // an absent cell between present ones
			}
			fmt.Fprintf(&b, "  - {class: \"gemm\", bound: %q, size: \"*\", ridge: %q, n: 1, factor: %g}\n", term, rb.name, []float64{0.5, 20, 1, 0.1, 15}[i])
		}
	}
	// A latency factor 40-160× the compute factor: the case a ridge
	// factor on latency, or keyed by compute + latency, would break.
	b.WriteString("  - {class: \"gemm\", bound: \"latency\", size: \"*\", n: 1, factor: 20}\n")
	b.WriteString("bands: []\n")
	c, err := Parse("t.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	a := c.For(gpu)
	body := func(ts [3]float64) float64 {
		f := func(i int) float64 { return ts[i] * a.TermFactor("gemm", "", "MatMul", "", termNames[i], ts) }
		return max(f(0)+f(1), f(2))
	}
	for cs := 1e-7; cs < 1e-1; cs *= 1.5 {
		for ms := 1e-7; ms < 1e-1; ms *= 1.5 {
			for _, ls := range []float64{0, 1e-6, 1e-4} {
				ts := [3]float64{cs, ls, ms}
				b0 := body(ts)
				for i := range ts {
					grown := ts
					grown[i] = max(1e-7, ts[i]*1.5)
					if b1 := body(grown); b1 < b0*(1-1e-12) {
						t.Fatalf("%s %g -> %g s (terms %v): body %g -> %g s", termNames[i], ts[i], grown[i], ts, b0, b1)
					}
				}
			}
		}
	}
	// Far on the compute side the compute factor is the first cell's
	// (0.5) less the most the rule lets it fall over the four octaves to
	// the last centre: 0.5 · 2^(−4·maxRidgeSlope) = 0.125, not the 15
	// written there.
	if f := a.TermFactor("gemm", "", "MatMul", "", "compute", [3]float64{1e-3, 0, 1e-6}); math.Abs(f-0.125) > 1e-9 {
		t.Errorf("compute factor far on the compute side %g, want 0.125", f)
	}
}

// A calibration applies whole on a GPU of the fitted one's silicon at
// its power limit (the H200 of an H100 SXM5, the A100 40 GB of the
// 80 GB), GPU factor included, while its residual bands stay the fitted
// GPU's; on another board of the family (the H100 PCIe: fewer SMs, lower
// clocks) the GPU factor is dropped and the cells transfer in part.
func TestSameSiliconAppliesWhole(t *testing.T) {
	src := mustGPU(t, "H100-SXM5-80GB")
	var b strings.Builder
	fmt.Fprintf(&b, "format: 1\nsource: {gpu: %q, family: %q, measurements: \"t\", rows: 1, date: \"\", driver: \"\", runtime: \"\"}\n", src.Name, Family(src))
	b.WriteString("fit: {gpu_factor: 1.2, median_abs_err_before: 0, median_abs_err_after: 0}\ntransfer: {same_family: 0.25, other_family: 0.25}\ncells:\n")
	b.WriteString("  - {class: \"gemm\", bound: \"*\", size: \"*\", n: 1, factor: 1.5}\nbands: []\n")
	c, err := Parse("t.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	terms := only("compute", 1e-4)
	for _, tc := range []struct {
		gpu           string
		full, fitted  bool
		factor, below float64
	}{
		{"H100-SXM5-80GB", true, true, 1.2 * 1.5, 0},
		{"H200-SXM-141GB", true, false, 1.2 * 1.5, 0},
		{"H100-PCIe-80GB", false, false, 0, 1.2},
	} {
		a := c.For(mustGPU(t, tc.gpu))
		f := a.TermFactor("gemm", "", "MatMul", "", "compute", terms)
		if a.Full() != tc.full || a.Fitted() != tc.fitted {
			t.Errorf("%s: full %v, fitted %v; want %v, %v", tc.gpu, a.Full(), a.Fitted(), tc.full, tc.fitted)
		}
		if tc.factor > 0 && math.Abs(f-tc.factor) > 1e-9 {
			t.Errorf("%s: factor %g, want %g", tc.gpu, f, tc.factor)
		}
		if tc.below > 0 && !(f > 1 && f < tc.below) {
			t.Errorf("%s: factor %g, want a partial transfer in (1, %g)", tc.gpu, f, tc.below)
		}
	}
	if d := c.For(mustGPU(t, "H200-SXM-141GB")).Describe(); !strings.Contains(d, "same silicon") {
		t.Errorf("header %q does not say why it applies in full", d)
	}
	if !sameSilicon(mustGPU(t, "A100-SXM4-40GB"), "A100-SXM4-80GB") || sameSilicon(mustGPU(t, "A100-PCIe-80GB"), "A100-SXM4-80GB") {
		t.Error("A100 40 GB SXM4 is the 80 GB's silicon at its power limit; the 300 W PCIe board is not")
	}
}

// A kernel's fixed latency (its fill and ramp) is the GPU's and its
// driver's, like its peaks: a calibration's latency cells apply on the
// GPU fitted and do not transfer; its compute and memory cells do.
func TestLatencyCellsStayOnTheFittedGPU(t *testing.T) {
	src := mustGPU(t, "A100-SXM4-80GB")
	cal := &Calibration{Source: Source{GPU: src.Name, Family: Family(src)}, GPUFactor: 1, Transfer: DefaultTransfer,
		Cells: []Cell{
			{Class: "gemm", Op: "*", Bound: "latency", Size: "*", Factor: 3},
			{Class: "gemm", Op: "MatMul", Bound: "latency", Size: "*", Factor: 3},
			{Class: "gemm", Op: "*", Bound: "compute", Size: "*", Factor: 3},
		}}
	lat, comp := only("latency", 10e-6), only("compute", 10e-6)
	if f := cal.For(src).TermFactor("gemm", "fp16_tensor", "MatMul", "", "latency", lat); !near(f, 9, 1e-12) {
		t.Errorf("fitted GPU: latency factor %.4f, want the class and op cells' 9", f)
	}
	tr := cal.For(mustGPU(t, "H100-SXM5-80GB"))
	if f := tr.TermFactor("gemm", "fp16_tensor", "MatMul", "", "latency", lat); f != 1 {
		t.Errorf("transferred latency factor %.4f, want 1", f)
	}
	if f := tr.TermFactor("gemm", "fp16_tensor", "MatMul", "", "compute", comp); !(f > 1.05) {
		t.Errorf("transferred compute factor %.4f, want the compute cell carried in part (> 1.05)", f)
	}
}
