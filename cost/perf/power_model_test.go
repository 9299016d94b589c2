package perf

import (
	"math"
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
)

// capGPUs are the boards of the power-limit sweeps the cap model answers
// for (Pascal to Hopper) and the three Ada boards.
var capGPUs = []string{"P100-PCIe-16GB", "V100-SXM2-16GB", "A100-SXM4-80GB", "A40", "H100-SXM5-80GB", "L4", "L40S", "RTX-4090"}

func lookupAll(t *testing.T, names []string) []*hwdb.GPU {
	t.Helper()
	var out []*hwdb.GPU
	for _, n := range names {
		g, err := hwdb.Lookup(n)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, g)
	}
	return out
}

// TestCapSlowsMemoryBoundLess: under a cap at 60% of TDP a streaming
// kernel (the SMs mostly wait on DRAM, whose clock a cap does not lower)
// slows less than a dense tensor-core GEMM, on every generation.
func TestCapSlowsMemoryBoundLess(t *testing.T) {
	o := PlanOptions()
	ks := powerKernels()
	for _, g := range lookupAll(t, capGPUs) {
		c := PowerControl{CapW: 0.6 * g.TDPWatts}
		slow := func(k Kernel) float64 {
			return UnderControl(g, k, o, c).TimeS / UnderControl(g, k, o, PowerControl{}).TimeS
		}
		mem, comp := slow(ks["stream"]), slow(ks["gemm16"])
		if !(mem < comp) {
			t.Errorf("%s at %.0f W: streaming kernel slows %.3f×, GEMM %.3f×: want the memory-bound one to slow less", g.Name, c.CapW, mem, comp)
		}
		if comp <= 1.01 {
			t.Errorf("%s at %.0f W: a dense GEMM slows only %.3f×; a 60%% cap must bind it", g.Name, c.CapW, comp)
		}
	}
}

// TestLeastEnergyCapInterior: a compute-bound kernel's energy over caps
// from a quarter of TDP to TDP is least strictly between the two ends, at
// the cap that settles it near the V/f floor's clock: above the floor the
// V² of a high clock wastes energy; below it the clock falls with no
// voltage left to save while the fixed share of idle power
// (idleFixedFraction) accrues over the longer run. The least's clock is
// within 5% of the floor's on every board (821 MHz against the A100's 804,
// 1,012 against the A40's 992), and the cap nearest the floor is within
// 3% of the least energy. While the whole idle draw scaled with the clock
// the curve was flat below the floor (L4: 97.2-97.5 mJ from 620 to
// 1,050 MHz) and the least fell anywhere in it.
func TestLeastEnergyCapInterior(t *testing.T) {
	o := PlanOptions()
	k := powerKernels()["gemm16"]
	for _, g := range lookupAll(t, capGPUs) {
		lo, hi := 0.25*g.TDPWatts, g.TDPWatts
		step := (hi - lo) / 30
		floor := vfFloor * g.BoostClockMHz
		best, bestE, bestF, nearE, nearD := 0.0, 0.0, 0.0, 0.0, math.Inf(1)
		for c := lo; c <= hi+step/2; c += step {
			pk := UnderControl(g, k, o, PowerControl{CapW: c})
			e := pk.EnergyJ()
			if best == 0 || e < bestE {
				best, bestE, bestF = c, e, pk.ClockMHz
			}
			if d := math.Abs(pk.ClockMHz - floor); d < nearD {
				nearD, nearE = d, e
			}
		}
		if !(best > lo+step/2 && best < hi-step/2) {
			t.Errorf("%s: least energy at %.0f W, want strictly inside (%.0f, %.0f) W", g.Name, best, lo, hi)
		}
		if math.Abs(bestF/floor-1) > 0.05 {
			t.Errorf("%s: least energy at %.0f MHz (%.0f W), more than 5%% from the V/f floor's %.0f MHz", g.Name, bestF, best, floor)
		}
		if nearE > 1.03*bestE {
			t.Errorf("%s: %.4g J at the cap nearest the V/f floor's %.0f MHz, more than 3%% above the least %.4g J (at %.0f W)", g.Name, nearE, floor, bestE, best)
		}
	}
}

// TestAdaHoldsHigherClock: Ada's 4N process needs about half the power per
// SM-GHz of the 8 nm GA102 (hwdb clock_power_w), so the power-limited L4
// and L40S sustain well above the clock the default density gives, and
// never above boost.
func TestAdaHoldsHigherClock(t *testing.T) {
	p := DefaultParams()
	for _, g := range lookupAll(t, []string{"L4", "L40S", "RTX-4090"}) {
		if !(g.ClockPowerW > 0) {
			t.Fatalf("%s: no clock_power_w", g.Name)
		}
		ada := clockFraction(g, p)
		def := *g
		def.ClockPowerW = 0
		if old := clockFraction(&def, p); !(ada > old) || ada > 1 {
			t.Errorf("%s: sustained fraction %.3f with its own density, %.3f with the default: want higher, at most 1", g.Name, ada, old)
		}
	}
}
