package perf

import (
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
)

// TestAloneGridClocksUp: a product of a few more CTAs than a power-
// limited board has SMs, timed alone, keeps its SMs busy for only part of
// its second round, so the limiter lets the clock up and it runs faster
// than the same grid in a plan (whose share busy is every SM); a grid of
// whole rounds, or on a board its TDP holds at boost, runs the same.
func TestAloneGridClocksUp(t *testing.T) {
	alone := Options{Params: calibratedParams, Setting: Isolated}
	plan := PlanOptions()
	gemm := func(m int64) Kernel {
		return Kernel{Class: ClassGEMM, Precision: hwdb.FP16Tensor, M: m, N: 128, K: 4096,
			FLOPs: 2 * float64(m) * 128 * 4096, Bytes: 2 * (float64(m)*4096 + 4096*128 + float64(m)*128), Launches: 1}
	}
	ratio := func(g *hwdb.GPU, m int64) (float64, GEMMPlan) {
		a, ok := ChooseGEMM(g, gemm(m), alone)
		p, ok2 := ChooseGEMM(g, gemm(m), plan)
		if !ok || !ok2 {
			t.Fatalf("%s M=%d: no plan", g.Name, m)
		}
		return a.ComputeS / p.ComputeS, a
	}
	t4 := mustGPU(t, "T4")
	r, pl := ratio(t4, 49*128)
	if pl.CTAs <= float64(t4.SMs) || pl.CTAs >= float64(2*t4.SMs) || !(r < 0.9) {
		t.Errorf("T4, %.0f CTAs on %d SMs: alone %.3f of the plan's time, want under 0.9", pl.CTAs, t4.SMs, r)
	}
	if r, pl := ratio(t4, 80*128); pl.CTAs == float64(2*t4.SMs) && r != 1 {
		t.Errorf("T4, two whole rounds: alone %.3f of the plan's time, want the same", r)
	}
	if r, _ := ratio(mustGPU(t, "GTX-1080-Ti"), 49*128); r != 1 {
		t.Errorf("GTX 1080 Ti (boost held): alone %.3f of the plan's time, want the same", r)
	}
}

// TestAloneGridNeverCheaper: timed alone, a product's time never falls as
// its rows grow, across round edges where the share busy drops, on every
// power-limited board.
func TestAloneGridNeverCheaper(t *testing.T) {
	alone := Options{Params: calibratedParams, Setting: Isolated}
	for _, name := range []string{"T4", "L4", "A10", "A100-PCIe-40GB", "H100-PCIe-80GB"} {
		g := mustGPU(t, name)
		for _, pr := range []hwdb.Precision{hwdb.FP16Tensor, hwdb.FP32, hwdb.INT8} {
			prev := 0.0
			for m := int64(64); m <= 64*int64(8*g.SMs); m += 64 {
				k := Kernel{Class: ClassGEMM, Precision: pr, M: m, N: 256, K: 2048,
					FLOPs: 2 * float64(m) * 256 * 2048, Bytes: 2 * (float64(m)*2048 + 2048*256 + float64(m)*256), Launches: 1}
				kt := EstimateKernel(g, k, alone)
				if kt.TimeS < prev*(1-1e-12) {
					t.Fatalf("%s %s: M=%d takes %.3f µs, M=%d %.3f", name, pr, m, kt.TimeS*1e6, m-64, prev*1e6)
				}
				prev = kt.TimeS
			}
		}
	}
}
