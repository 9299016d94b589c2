package cost

import (
	"math"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
)

// matmulOnT4 analyzes one fp32 MatMul a·b of the given shapes on a T4
// and returns its time, its FLOPs and the warnings.
func matmulOnT4(t *testing.T, ad, bd, yd []int64) (timeS, flops float64, warnings []string) {
	t.Helper()
	b := newBuilder(t)
	y := b.Val("y", ir.Float32, yd...)
	b.Node("MatMul", []*ir.Value{b.Input("a", ad...), b.Weight("b", bd...)}, []*ir.Value{y})
	b.G.AddOutput(y)
	g, err := hwdb.Lookup("T4")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Analyze(b.G, b.M, g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r.Totals.TimeS, r.Totals.FLOPs, r.Warnings
}

// TestCubeMatMulMonotone: an n×n×n MatMul on a T4 at n = 2^22 … 2^28.
// Wrapped int64 tile products priced 2^24 at 4× 2^22's time for 64× the
// work, 2^26 faster than 2^22 and 2^28 like 2^24; the time must grow with
// n and stay at or above 2n³ over the fp32 peak.
func TestCubeMatMulMonotone(t *testing.T) {
	g, err := hwdb.Lookup("T4")
	if err != nil {
		t.Fatal(err)
	}
	peak := g.PeakFor(hwdb.FP32)
	prev := 0.0
	for _, e := range []int{22, 24, 26, 28} {
		n := int64(1) << e
		got, _, _ := matmulOnT4(t, []int64{n, n}, []int64{n, n}, []int64{n, n})
		floor := 2 * math.Pow(float64(n), 3) / peak
		if got < floor || got <= prev {
			t.Errorf("n = 2^%d: %g s; want at least 2n³/peak = %g s and more than the previous %g s", e, got, floor, prev)
		}
		prev = got
	}
}

// TestSaturatedViewPriced: a batched MatMul of 2^64 independent 64×64
// products has a GEMM batch past int64, which the rule saturates. The
// kernel must still cost at least its FLOPs over the peak, and the
// report must say which node's view saturated.
func TestSaturatedViewPriced(t *testing.T) {
	const side = int64(1) << 32
	d := []int64{side, side, 64, 64}
	got, flops, warnings := matmulOnT4(t, d, d, d)
	g, _ := hwdb.Lookup("T4")
	want := 2 * math.Exp2(64) * 64 * 64 * 64
	if flops < want*(1-1e-9) {
		t.Fatalf("FLOPs %g, want %g", flops, want)
	}
	if floor := flops / g.PeakFor(hwdb.FP32); got < floor {
		t.Errorf("time %g s, below FLOPs/peak %g s", got, floor)
	}
	n := 0
	for _, w := range warnings {
		if strings.Contains(w, `"MatMul_y"`) && strings.Contains(w, "saturated") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("want one warning naming the saturated MatMul, got %d: %q", n, warnings)
	}
}
