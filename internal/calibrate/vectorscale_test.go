package calibrate

import (
	"math"
	"sort"
	"testing"

	"github.com/onnxcost/onnxcost/cost/perf"
)

// TestVectorGEMMScaleFit refits every DeepBench board's vector_gemm_scale
// on its training rows and checks the committed hwdb figure against it,
// then checks on the held-out rows that the scale earns its place: the
// board's held-out products (all of them, not only the large ones it was
// fitted on) closer to their measured times with it than without.
func TestVectorGEMMScaleFit(t *testing.T) {
	checkBoardScale(t, vectorGEMMScale, BenchGEMM, 0.02)
}

// TestVectorConvScaleFit is TestVectorGEMMScaleFit for vector_conv_scale
// on the boards' forward convolutions, which must gain a point held out.
// A board whose library's convolution algorithms disagree on the quotient
// (convAlgorithmSpread beyond maxConvAlgorithmSpread) has no board-wide
// rate to commit: the MI25's MIOpen runs its Winograd rows at the model's
// time (0.99) and its direct and GEMM rows 1.6-1.8× slower, and one scale
// of 1.53 took its held-out convolutions from 28.5% to 38.4%.
func TestVectorConvScaleFit(t *testing.T) {
	checkBoardScale(t, vectorConvScale, BenchConv, 0.01)
	cases := deepBench(t)
	p := perf.DefaultParams()
	for _, name := range boardNames(cases) {
		spread := convAlgorithmSpread(cases, name, p)
		committed := committedScale(cases, name, vectorConvScale)
		switch {
		case committed > 0 && spread > maxConvAlgorithmSpread:
			t.Errorf("%s: vector_conv_scale %g, but its algorithms' quotients spread %.2f× (at most %.2f for a board-wide rate)", name, committed, spread, maxConvAlgorithmSpread)
		case committed == 0 && spread <= maxConvAlgorithmSpread:
			if _, n := vectorConvScale.fit(cases, name, p, Training); n >= minScaleRows {
				t.Errorf("%s: no vector_conv_scale, though its algorithms agree (spread %.2f×) over %d rows", name, spread, n)
			}
		}
		t.Logf("%-16s convolution algorithms' spread %.2f×", name, spread)
	}
}

// maxConvAlgorithmSpread is the most the per-algorithm medians of a
// board's forward-convolution quotients may part (largest over smallest)
// for one rate to stand for them: the NVIDIA boards' are 1.01-1.27
// (implicit GEMM against Winograd), the MI25's 1.77.
const maxConvAlgorithmSpread = 1.35

// minScaleRows is the fewest training rows a board's scale is fitted on.
const minScaleRows = 8

// convAlgorithmSpread is the largest over the smallest per-algorithm
// median of measured/priced time (scale unset) among gpu's training
// VectorConvRow rows, over the algorithms with minScaleRows rows or more;
// 1 with fewer than two such algorithms.
func convAlgorithmSpread(cases []BenchCase, gpu string, p perf.Params) float64 {
	q := vectorConvScale.quotients(cases, gpu, p, Training, func(c BenchCase) string { return c.Row.Algo })
	lo, hi := math.Inf(1), 0.0
	for _, v := range q {
		if len(v) < minScaleRows {
			continue
		}
		m := quantile(v, 0.5)
		lo, hi = min(lo, m), max(hi, m)
	}
	if !(hi > 0) || math.IsInf(lo, 1) {
		return 1
	}
	return hi / lo
}

// checkBoardScale refits scale s on every board's training rows, checks
// the committed figure against it, and checks that the held-out rows of
// kind are closer to their measured times with the boards' scales than
// without, by gain at least (a fraction: 0.02 is two points).
func checkBoardScale(t *testing.T, s boardScale, kind BenchKind, gain float64) {
	t.Helper()
	cases := deepBench(t)
	p := perf.DefaultParams()
	var with, without []float64
	for _, name := range boardNames(cases) {
		f, n := s.fit(cases, name, p, Training)
		g0 := committedScale(cases, name, s)
		if n < minScaleRows {
			if g0 != 0 {
				t.Errorf("%s: %s %g with only %d training rows to fit it on", name, s.name, g0, n)
			}
			continue
		}
		if g0 == 0 {
			continue // not committed (TestVectorConvScaleFit says why)
		}
		if math.Abs(g0-f) > 0.0051 {
			t.Errorf("%s: committed %s %g, the training rows fit %.3f (n=%d)", name, s.name, g0, f, n)
		}
		var a, b []float64
		for _, c := range cases {
			if c.GPUName != name || !c.Holdout || c.Row.Kind != kind {
				continue
			}
			kt, _ := c.Predict(p)
			a = append(a, absPctErr(kt.TimeS, c.Row.TimeS))
			c.GPU = s.without(c.GPU)
			kt, _ = c.Predict(p)
			b = append(b, absPctErr(kt.TimeS, c.Row.TimeS))
		}
		with, without = append(with, a...), append(without, b...)
		t.Logf("%-16s %s %.3f (n=%d): held-out %s rows %.1f%% -> %.1f%% (n=%d)", name, s.name, f, n, kind, 100*quantile(b, 0.5), 100*quantile(a, 0.5), len(a))
	}
	mw, mo := quantile(with, 0.5), quantile(without, 0.5)
	t.Logf("all boards: held-out %s rows %.1f%% -> %.1f%% (n=%d)", kind, 100*mo, 100*mw, len(with))
	if !(mw < mo-gain) {
		t.Errorf("held-out %s median %.1f%% with the boards' %s, %.1f%% without: they do not earn their place", kind, 100*mw, s.name, 100*mo)
	}
}

// boardNames are the boards cases measure, sorted.
func boardNames(cases []BenchCase) []string {
	seen := map[string]bool{}
	var names []string
	for _, c := range cases {
		if !seen[c.GPUName] {
			seen[c.GPUName] = true
			names = append(names, c.GPUName)
		}
	}
	sort.Strings(names)
	return names
}

// committedScale is board name's committed figure of s in hwdb.
func committedScale(cases []BenchCase, name string, s boardScale) float64 {
	for _, c := range cases {
		if c.GPUName == name {
			return s.committed(c.GPU)
		}
	}
	return 0
}
