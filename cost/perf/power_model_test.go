package perf

import (
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
// from a quarter of TDP to TDP is least strictly between the two ends:
// above TDP the V² of a high clock wastes energy, below the V/f floor the
// clock falls with no voltage left to save while the idle floor's share
// of each (longer) run grows.
func TestLeastEnergyCapInterior(t *testing.T) {
	o := PlanOptions()
	k := powerKernels()["gemm16"]
	for _, g := range lookupAll(t, capGPUs) {
		lo, hi := 0.25*g.TDPWatts, g.TDPWatts
		step := (hi - lo) / 30
		best, bestE := 0.0, 0.0
		for c := lo; c <= hi+step/2; c += step {
			if e := UnderControl(g, k, o, PowerControl{CapW: c}).EnergyJ(); best == 0 || e < bestE {
				best, bestE = c, e
			}
		}
		if !(best > lo+step/2 && best < hi-step/2) {
			t.Errorf("%s: least energy at %.0f W, want strictly inside (%.0f, %.0f) W", g.Name, best, lo, hi)
		}
		// The optimum sits near the V/f floor's clock, not in the
		// idle-dominated tail below it (a GEMM's fill and DRAM time do
		// not stretch with the clock, so a little under the floor can
		// still pay: 0.8 of it).
		if f := UnderControl(g, k, o, PowerControl{CapW: best}).ClockMHz; f < 0.8*vfFloor*g.BoostClockMHz {
			t.Errorf("%s: least-energy cap %.0f W runs at %.0f MHz, under the V/f floor %.0f MHz", g.Name, best, f, vfFloor*g.BoostClockMHz)
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
