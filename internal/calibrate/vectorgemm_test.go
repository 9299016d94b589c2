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
	cases := deepBench(t)
	p := perf.DefaultParams()
	boards := map[string]bool{}
	for _, c := range cases {
		boards[c.GPUName] = true
	}
	names := make([]string, 0, len(boards))
	for g := range boards {
		names = append(names, g)
	}
	sort.Strings(names)
	var with, without []float64
	for _, name := range names {
		s, n := FitVectorGEMMScale(cases, name, p, Training)
		var g0 float64
		for _, c := range cases {
			if c.GPUName == name {
				g0 = c.GPU.VectorGEMMScale
				break
			}
		}
		if n < 8 {
			if g0 != 0 {
				t.Errorf("%s: vector_gemm_scale %g with only %d training rows to fit it on", name, g0, n)
			}
			continue
		}
		if math.Abs(g0-s) > 0.0051 {
			t.Errorf("%s: committed vector_gemm_scale %g, the training rows fit %.3f (n=%d)", name, g0, s, n)
		}
		var a, b []float64
		for _, c := range cases {
			if c.GPUName != name || !c.Holdout || c.Row.Kind != BenchGEMM {
				continue
			}
			kt, _ := c.Predict(p)
			a = append(a, absPctErr(kt.TimeS, c.Row.TimeS))
			c.GPU = c.GPU.WithoutVectorGEMMScale()
			kt, _ = c.Predict(p)
			b = append(b, absPctErr(kt.TimeS, c.Row.TimeS))
		}
		with, without = append(with, a...), append(without, b...)
		t.Logf("%-16s scale %.3f (n=%d): held-out GEMMs %.1f%% -> %.1f%% (n=%d)", name, s, n, 100*quantile(b, 0.5), 100*quantile(a, 0.5), len(a))
	}
	mw, mo := quantile(with, 0.5), quantile(without, 0.5)
	t.Logf("all boards: held-out GEMMs %.1f%% -> %.1f%% (n=%d)", 100*mo, 100*mw, len(with))
	if !(mw < mo-0.02) {
		t.Errorf("held-out GEMM median %.1f%% with the boards' scales, %.1f%% without: they do not earn their place", 100*mw, 100*mo)
	}
}
