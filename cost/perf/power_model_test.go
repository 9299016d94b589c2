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
		out = append(out, mustGPU(t, n))
	}
	return out
}

// mustGPU is the database's GPU of that name, or the test's end.
func mustGPU(t *testing.T, name string) *hwdb.GPU {
	t.Helper()
	g, err := hwdb.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return g
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
// a clock above the V/f floor: below the floor the clock falls with no
// voltage left to save while the fixed share of idle power
// (idleFixedFraction) accrues over the longer run; just above it the
// voltage barely rises (vfCurvature), so energy keeps falling with a
// higher clock until the V² of the steep top of the curve outweighs it.
// The least's clock is within the range of the GROMACS locked-clock
// fits' (0.62-0.74 of boost on an A100 and an A40), widened by 0.02 each
// way: 0.64-0.68 of boost on every board. With a straight V/f line above
// the floor it sat at the floor (821 MHz against the A100's 804); while
// the whole idle draw scaled with the clock the curve was flat below the
// floor (L4: 97.2-97.5 mJ from 620 to 1,050 MHz) and the least fell
// anywhere in it.
func TestLeastEnergyCapInterior(t *testing.T) {
	o := PlanOptions()
	k := powerKernels()["gemm16"]
	for _, g := range lookupAll(t, capGPUs) {
		lo, hi := 0.25*g.TDPWatts, g.TDPWatts
		step := (hi - lo) / 30
		best, bestE, bestF := 0.0, 0.0, 0.0
		for c := lo; c <= hi+step/2; c += step {
			pk := UnderControl(g, k, o, PowerControl{CapW: c})
			if e := pk.EnergyJ(); best == 0 || e < bestE {
				best, bestE, bestF = c, e, pk.ClockMHz
			}
		}
		if !(best > lo+step/2 && best < hi-step/2) {
			t.Errorf("%s: least energy at %.0f W, want strictly inside (%.0f, %.0f) W", g.Name, best, lo, hi)
		}
		if fr := bestF / g.BoostClockMHz; fr < 0.60 || fr > 0.76 {
			t.Errorf("%s: least energy at %.0f MHz (%.0f W), %.2f of boost, outside the locked-clock fits' 0.60-0.76", g.Name, bestF, best, fr)
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

// TestVectorPowerNeed: an SM of 128 FP32 lanes needs more power per clock
// for a CUDA-core GEMM than one of 64 (vectorPowerNeed), so a board whose
// TDP per SM-GHz lies between the two needs (H100 SXM: 2.68) holds boost
// for the 64-lane need and not for its own, while 64-lane boards (V100,
// whose datasheet peak gives 64.1 FMAs per SM-cycle, A100) and a
// 128-lane board with power to spare (GTX 1080 Ti) keep their clock.
// Fewer busy SMs never lower it.
func TestVectorPowerNeed(t *testing.T) {
	p := DefaultParams()
	for _, g := range lookupAll(t, []string{"V100-SXM2-16GB", "A100-SXM4-80GB", "T4", "GTX-1080-Ti"}) {
		if got, want := clockFractionPath(g, p, 1, hwdb.FP32), clockFraction(g, p); got != want {
			t.Errorf("%s: fp32 GEMM clock %.4f, want the board's %.4f", g.Name, got, want)
		}
	}
	h := lookupAll(t, []string{"H100-SXM5-80GB"})[0]
	full := clockFractionPath(h, p, 1, hwdb.FP32)
	if want := math.Sqrt(h.TDPWatts / (float64(h.SMs) * h.BoostClockMHz / 1000) / vectorPowerNeed(h, p)); clockFraction(h, p) != 1 || !near(full, want, 1e-12) || !(full < 0.96) {
		t.Errorf("H100 fp32 GEMM clock %.4f (board %.4f), want %.4f, below boost", full, clockFraction(h, p), want)
	}
	if half := clockFractionPath(h, p, 0.5, hwdb.FP32); !(half > full) || half > 1 {
		t.Errorf("H100 fp32 GEMM clock with half the SMs busy %.4f, all %.4f: want higher, at most 1", half, full)
	}
}

// TestIntegerDotHoldsHigherClock: a DP4A GEMM needs intVectorPowerShare
// of an FP32 GEMM's power density, so on a board whose TDP does not hold
// boost (T4) it settles at the higher clock that share gives and still
// draws its limit, and on one whose TDP holds boost (GTX 1080 Ti) both
// paths run at boost.
func TestIntegerDotHoldsHigherClock(t *testing.T) {
	p := DefaultParams()
	t4 := mustGPU(t, "T4")
	f32, i8 := clockFractionPath(t4, p, 1, hwdb.FP32), clockFractionPath(t4, p, 1, hwdb.INT8)
	if want := f32 / math.Sqrt(intVectorPowerShare); !near(i8, want, 1e-12) || !(i8 > 1.2*f32) || !(i8 < 1) {
		t.Errorf("T4: DP4A GEMM clock %.4f, FP32 %.4f: want %.4f (FP32's over √%.2f), a fifth above FP32's, below boost", i8, f32, want, intVectorPowerShare)
	}
	o := PlanOptions()
	k := Kernel{Class: ClassGEMM, Precision: hwdb.INT8, M: 4096, N: 4096, K: 4096,
		FLOPs: 2 * 4096 * 4096 * 4096, Bytes: 3 * 4096 * 4096, Launches: 1}
	pk := UnderControl(t4, k, o, PowerControl{})
	if pk.Bound != "compute" || pk.PowerW > t4.TDPWatts*(1+1e-9) || pk.PowerW < 0.9*t4.TDPWatts {
		t.Errorf("T4 DP4A 4096³ GEMM: %s-bound, %.1f W: want compute-bound at its %g W limit", pk.Bound, pk.PowerW, t4.TDPWatts)
	}
	if peak := k.FLOPs / t4.PeakFor(hwdb.INT8) / i8; pk.TimeS < peak {
		t.Errorf("T4 DP4A 4096³ GEMM: %g s, under its FLOPs at the peak rate at that clock, %g s", pk.TimeS, peak)
	}
	ti := mustGPU(t, "GTX-1080-Ti")
	if f, i := clockFractionPath(ti, p, 1, hwdb.FP32), clockFractionPath(ti, p, 1, hwdb.INT8); f != 1 || i != 1 {
		t.Errorf("GTX 1080 Ti: FP32 clock %.4f, DP4A %.4f: want both at boost", f, i)
	}
}

// TestPowerPricesThePathThatRuns: a kernel asking for a path its GPU
// lacks runs the fallback (peakFor), and draws that path's power as the
// time model prices that path's clock: a V100's int8 GEMM runs DP4A and
// a TF32 one FP32 on the CUDA cores, priced alike whichever was asked.
func TestPowerPricesThePathThatRuns(t *testing.T) {
	v100 := mustGPU(t, "V100-SXM2-16GB")
	o := PlanOptions()
	for _, c := range []struct{ asked, runs hwdb.Precision }{
		{hwdb.INT8Tensor, hwdb.INT8},
		{hwdb.TF32Tensor, hwdb.FP32},
	} {
		if _, real := peakFor(v100, c.asked); real != c.runs {
			t.Fatalf("V100 %s runs %s, want %s", c.asked, real, c.runs)
		}
		k := Kernel{Class: ClassGEMM, Precision: c.asked, M: 4096, N: 4096, K: 4096,
			FLOPs: 2 * 4096 * 4096 * 4096, Bytes: 3 * 4096 * 4096, Launches: 1}
		asked := UnderControl(v100, k, o, PowerControl{})
		k.Precision = c.runs
		runs := UnderControl(v100, k, o, PowerControl{})
		if asked.TimeS != runs.TimeS || !near(asked.PowerW, runs.PowerW, 1e-9) {
			t.Errorf("V100 4096³ GEMM asked %s: %.4g s at %.1f W; run as %s: %.4g s at %.1f W", c.asked, asked.TimeS, asked.PowerW, c.runs, runs.TimeS, runs.PowerW)
		}
	}
}
