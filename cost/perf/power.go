package perf

import (
	"math"

	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/detmath"
)

// The power model: what a kernel draws at an SM clock, and what a power
// cap or an SM clock lock does to its time.
//
// Board power while a kernel runs is
//
//	P(f) = P_idle(f) + u_c·w·P_c(f) + u_m·(ρ(f)·P_io + P_ls(f))
//
// u_c = compute time / kernel time (times the share of SMs a GEMM's CTAs
// hold and the share of their time in the main loop, gemmActivity) and
// u_m = memory time / kernel time are how busy the SMs and the memory
// system are (both at clock f); w is the
// compute path's weight (tensorPowerWeight for tensor cores,
// vectorPowerWeight for CUDA cores). P_c(f) is the dynamic power of the
// whole chip's SMs computing flat out, CMOS dynamic power C·V²·f summed
// over the SMs:
//
//	P_c(f) = P_c(f_boost) · (V(f)/V(f_boost))² · f/f_boost
//	P_c(f_boost) = FullClockPower·SMs·f_boost[GHz] − P_idle (at least TDP − P_idle)
//
// FullClockPower is the time model's power density a GPU needs to hold its
// boost clock under dense compute (see clockFraction in timemodel.go), so
// the clock the time model sustains at the default limit is the clock at
// which this model's dense compute meets TDP: the two agree.
//
// V(f) is the voltage/frequency curve (vfcurve.go): flat at vMin of the
// boost voltage up to vfFloor of the boost clock, then rising, slowly at
// first and steeply near boost, to 1 at boost: the floor read off an A40's
// nvidia-smi voltages and the floor voltage every generation's clock
// profile shows, the rise fitted to board power at locked clocks on an
// A100 and an A40. Below the floor a lower clock saves no voltage, so a
// compute-bound kernel's energy per run stops falling there while the idle
// floor's share grows; just above it the voltage barely rises, so the
// clock of least energy lies above the floor (0.70-0.73 of boost on the
// A100 and A40 fits), and so does the cap that settles it, not the lowest
// cap. FullClockPower is the board's own (hwdb clock_power_w) on a
// process unlike the default's (Ada's 4N).
//
// Memory traffic draws P_io (DRAM and its PHY: the memory clock does not
// change under an SM cap), at ρ(f) the share of its saturated rate the
// interface moves bytes at (dramRate: 1 down to f_sat, below which the
// SMs' issue sets the memory time), plus P_ls(f), the on-chip path
// (load/store issue, crossbar, L2), which scales like P_c. Together at
// boost they are the bytes a second the kernel moves times the board's
// energy per byte (hwdb mem_pj_per_byte: each of the three NVIDIA HBM
// boards with a streaming reading its own, 110-120 pJ/B, and 130 on the
// others), or, where hwdb has no such figure (GDDR boards),
// memoryActivity·(TDP−P_idle); P_io is
// memFixedShare of that. HBM2 access costs about 3.9 pJ/bit (O'Connor et
// al., "Fine-Grained DRAM", MICRO 2017), 31 of the 130 pJ/B:
// memFixedShare = 0.25 rounds that up for the PHY (an assumption for
// other memories and GPUs).
//
// Time at clock f is the time model re-run with its sustained clock set to
// f (clockFractionBusy in timemodel.go), so whatever the time model prices
// with the clock (GEMM tiles, vector work, a recurrent layer's step GEMMs)
// slows as 1/f and the rest (launch overhead, a recurrent layer's per-step
// latency, a GEMM's fill, DRAM traffic) does not. DRAM stays saturated down
// to f_sat = memSatFraction of the boost clock (below it the SMs cannot
// issue requests fast enough): memory time grows as f_sat/f under it.
// The clock-bound share of compute time (u_c above counts only it) is
// found by pricing the kernel at f0 and f0/2: C(f) = active·f0/f + fixed.
//
// P_idle, the draw between kernels at the default clock (hwdb idle_w),
// mostly stays below that clock: idleFixedFraction of it is leakage,
// memory and board power that a loaded GPU's clock does not change, and
// only the rest scales as V²·f (idleScale).
//
// Limits: kernels that fill only a few SMs run, in the time model, above
// the sustained clock (their power allows it); a clock lock is modelled the
// same way, so such kernels may run above the locked clock. The fixed idle
// share has no voltage or temperature dependence.

// memSatFraction is the SM clock, as a fraction of boost, down to which a
// streaming kernel still saturates DRAM bandwidth (assumption in line with
// Mei et al. 2017: memory-bound kernels' time is flat over the upper half
// of the core-clock range).
const memSatFraction = 0.5

// tensorPowerWeight and vectorPowerWeight scale P_c for the compute path:
// tensor-core GEMMs are the densest switching a GPU does and define it;
// CUDA-core FP32 draws somewhat less at the same clock (assumption).
const (
	tensorPowerWeight = 1.0
	vectorPowerWeight = 0.85
)

// memFixedShare is the share of a streaming kernel's dynamic power that
// does not scale with the SM clock (DRAM and PHY; see above).
const memFixedShare = 0.25

// minClockFraction is the lowest SM clock assumed, as a fraction of boost,
// when the GPU record has no MinSMClockMHz (assumption).
const minClockFraction = 0.3

// PowerControl is a user's power or clock setting. Zero values mean the
// default (power limit = TDP, no clock lock).
type PowerControl struct {
	// CapW is the board power limit (`nvidia-smi -pl`).
	CapW float64
	// SMClockMHz locks the SM clock at most this high (`nvidia-smi -lgc`).
	SMClockMHz float64
}

// IsDefault reports whether c changes nothing.
func (c PowerControl) IsDefault() bool { return c.CapW <= 0 && c.SMClockMHz <= 0 }

// PoweredKernel is a kernel's time under a PowerControl, the SM clock it
// ran at and its average board power.
type PoweredKernel struct {
	KernelTime
	ClockMHz float64
	PowerW   float64
	// OverCap is set when the kernel draws more than the cap even at the
	// lowest SM clock (the cap is below what it can be held to).
	OverCap bool
}

// EnergyJ is the kernel's energy: power × time.
func (k PoweredKernel) EnergyJ() float64 { return k.PowerW * k.TimeS }

// IdleW is the GPU's idle power, or IdleFraction of TDP when unknown:
// what the board draws while it waits (on the host, on a collective).
func IdleW(g *hwdb.GPU) float64 { return idleW(g) }

// idleW is the GPU's idle power, or IdleFraction of TDP when unknown.
func idleW(g *hwdb.GPU) float64 {
	idle := g.IdleWatts
	if !(idle > 0) || idle > g.TDPWatts {
		idle = IdleFraction * g.TDPWatts
	}
	return idle
}

// DefaultClockMHz is the SM clock the time model sustains under dense
// compute at the default power limit.
func DefaultClockMHz(g *hwdb.GPU) float64 {
	return g.BoostClockMHz * clockFraction(g, DefaultParams())
}

// MinClockMHz is the lowest SM clock a cap or lock can push the GPU to.
func MinClockMHz(g *hwdb.GPU) float64 {
	if g.MinSMClockMHz > 0 && g.MinSMClockMHz < g.BoostClockMHz {
		return g.MinSMClockMHz
	}
	return minClockFraction * g.BoostClockMHz
}

// voltage is V(f)/V(f_boost) (see the model above).
func voltage(fr float64) float64 { return voltageRising(fr, vfCurvature) }

// voltageRising is a V/f curve flat at vMin up to vfFloor and rising as
// x^curvature to 1 at boost, x the clock's share of the way there:
// curvature vfCurvature is the model's, 1 the straight line
// defaultClockAnchor keeps the default clock's level with.
func voltageRising(fr, curvature float64) float64 {
	if fr <= vfFloor {
		return vMin
	}
	return vMin + (1-vMin)*detmath.Pow(min((fr-vfFloor)/(1-vfFloor), 1), curvature)
}

// dynScale is (V(f)/V(f_boost))²·f/f_boost for the clock fraction fr.
func dynScale(fr float64) float64 {
	v := voltage(fr)
	return v * v * fr
}

// clocked prices kernels at any SM clock: the time model re-run on a copy
// of the GPU whose sustained clock is set to f (the time model's own clock
// hook, see clockFractionBusy), plus DRAM falling out of saturation below
// memSatFraction of boost.
type clocked struct {
	g  *hwdb.GPU
	k  Kernel
	o  Options
	f0 float64    // the default sustained clock
	t0 KernelTime // the kernel at f0, exactly as EstimateKernel gives it
	// anchor is defaultClockAnchor of g at f0, the same for every clock.
	anchor float64
	// active is the part of t0.ComputeS that scales with 1/clock (the SMs
	// computing); the rest (per-step latency of a recurrent layer, a
	// GEMM's fill, split-K's partial sums) does not and draws no compute
	// power. Found from the time at f0/2: C(f) = active·f0/f + fixed.
	active float64
	// path is the clock the kernel's main loop runs at over the board's
	// (pathClock.ratio: below 1 for a path needing more power than the
	// board's default, above for one needing less), 1 for a kernel the
	// time model prices at the board's clock; see rawPower.
	path float64
	// real is the path the kernel really runs (peakFor's fallback: a
	// V100's int8 GEMM runs DP4A, not tensor cores), whose power the
	// kernel draws, as the time model clocks it.
	real hwdb.Precision
}

// newClocked returns a value, not a pointer, so that UnderControl keeps
// it on its stack: it is priced once per node, and the heap copies were
// 7 MB of Analyze's 73 MB on a 112k-node LLaMA-shaped graph.
func newClocked(g *hwdb.GPU, k Kernel, o Options) clocked {
	c := clocked{g: g, k: k, o: o, f0: DefaultClockMHz(g), t0: EstimateKernel(g, k, o), path: 1, real: RunPath(g, k.Precision)}
	c.anchor = defaultClockAnchor(g, c.f0)
	if c.f0 > 0 {
		half := c.at(c.f0 / 2)
		busy, loop, gemm := gemmPlanActivity(g, k, o)
		c.active = min(max(half.ComputeS-c.t0.ComputeS, 0), c.t0.ComputeS) * busy * loop
		if gemm {
			c.path = newPathClock(g, o.Params, c.real).ratio(busy)
		}
	}
	return c
}

// smBusy is the share of g's SMs kernel k's CTAs keep switching: a GEMM
// or convolution of fewer CTAs than SMs (a batch-1 layer) leaves the
// rest idle, and dynamic power is the switching SMs' (the time model's
// clock rule says the same: clockFractionBusy). 1 for any other kernel.
func smBusy(g *hwdb.GPU, k Kernel, o Options) float64 {
	busy, _ := gemmActivity(g, k, o)
	return busy
}

// gemmActivity is smBusy's share of SMs and, for a GEMM-like kernel, the
// share of each CTA's compute time its main loop runs: kPer/(kPer+KHalf)
// for the K slice kPer a CTA reduces, the ramp the time model prices the
// loop at (tileTime). The rest is the CTA's prologue and epilogue (its
// first tiles' loads, its output's stores), when its tensor cores or FMA
// lanes wait, so it draws no compute power (its bytes are the memory
// side's, u_m). Counted as computing, a short-K GEMM drew a long one's
// power: our H100 and H200 fp32 MobileNet-V2 and ResNet-50 rows at batch
// 32 were priced 9-15% over their board power; with it the two boards'
// power rows went 6.3% → 5.8% and 6.6% → 6.0% (cmd/onnxcost
// TestMeasuredEndToEndH100/H200). A plan slower than the fastest one
// (GEMMPlan.StallS: cuBLAS's largek kernel) computes for only the fastest
// plan's share of its time, and cuBLAS's alignment-1 fallback for its
// aligned plan's share of its time plus fallbackIssuePower of the rest.
// Rows a library computes on zeros (Kernel.ZeroRows: cuDNN FFT's 32-image
// tiles at batch 1) draw none: their operands do not switch. Counted,
// DenseNet-121's fp32 batch-1 layers of 32 output channels, which the
// model runs as FFT on Hopper, drew 269 W on our H100 and 275 on our
// H200 where the boards read 158 and 179 (191 and 197 without them).
// 1, 1 for any other kernel.
func gemmActivity(g *hwdb.GPU, k Kernel, o Options) (busy, mainLoop float64) {
	busy, mainLoop, _ = gemmPlanActivity(g, k, o)
	return busy, mainLoop
}

// gemmPlanActivity is gemmActivity, and whether k has a GEMM plan (whose
// main loop the time model clocks on its path: pathClock).
func gemmPlanActivity(g *hwdb.GPU, k Kernel, o Options) (busy, mainLoop float64, gemm bool) {
	pl, ok := ChooseGEMM(g, k, o)
	if !ok || !(pl.CTAs > 0) || g.SMs <= 0 {
		return 1, 1, false
	}
	loop := loopRamp(ceilDiv(k.K, max(pl.Split, 1)), o.Params)
	if pl.StallS > 0 && pl.ComputeS > 0 {
		loop *= 1 - pl.StallS/pl.ComputeS
	}
	if f := misalignedGEMMS(g, k, o.Params, o.Runtime); f > pl.ComputeS && pl.ComputeS > 0 {
		share := pl.ComputeS / f
		loop *= share + fallbackIssuePower*(1-share)
	}
	if k.ZeroRows > 0 && k.ZeroRows < k.M {
		loop *= float64(k.M-k.ZeroRows) / float64(k.M)
	}
	return min(pl.CTAs/float64(g.SMs), 1), loop, true
}

// fallbackIssuePower is the share of its path's dense compute power the
// SMs of cuBLAS's alignment-1 fallback (misalignedGEMMS) draw beyond its
// tensor work: the kernel does the aligned plan's MMAs, at that plan's
// power for that plan's time, while the rest of its time goes to issuing
// scalar loads, its SMs busy but its tensor cores mostly idle. Fitted on
// our H200's GPT-2-style fp16 replays at batch 8 and 32, whose 50,257-
// token head runs the fallback for 56% and 78% of the kernel time
// (testdata/measured/h200_sxm_pytorch.csv, gpt2_hf_small; cmd/onnxcost
// TestMeasuredEndToEndH200): 317 and 389 W measured, 453 and 604 W
// priced with the fallback drawing dense power throughout, 237 and 274 W
// with it drawing only its tensor work's, 313 and 391 W at 0.25. Held
// out, the TF32 rows at batch 8 and 32 (the fallback 69% of the kernel
// time at 32): 394 and 519 W measured, 449 and 604 W before, 389 and
// 500 W at 0.25. The H200's 75 power rows: 6.0% → 5.4% (P90 15.9% →
// 13.1%).
const fallbackIssuePower = 0.25

// at is the kernel's time at SM clock f.
func (c *clocked) at(f float64) KernelTime {
	if f == c.f0 || !(f > 0) {
		return c.t0
	}
	g := *c.g
	g.SustainedClockMHz = f
	t := EstimateKernel(&g, c.k, c.o)
	if fsat := dramSatClock(c.g, streamRatio(c.g, c.k, c.o.Params)); f < fsat {
		t.MemoryS *= fsat / max(f, 1)
		t.TimeS = BodyS(c.k.Class, t.ComputeS, t.LatencyS, t.MemoryS) + t.RampS + t.LaunchS
		t.Bound = boundOf(t)
	}
	return t
}

// activeAt is the clock-bound part of the compute time at clock f.
func (c *clocked) activeAt(f float64) float64 { return c.active * c.f0 / f }

// rawPower is the model's board power for c's kernel timed kt (at clock
// f, active seconds of it computing) and its idle share, before the
// default limit is applied.
func (c *clocked) rawPower(kt KernelTime, active, f float64) (idle, dyn float64) {
	g, k := c.g, c.k
	tdp := g.TDPWatts
	if !(tdp > 0) || !(kt.TimeS > 0) || !(g.BoostClockMHz > 0) {
		return 0, 0
	}
	idle0 := idleW(g)
	idle = idle0 * idleScale(g, f)
	// Dense compute at boost: the power density the time model says
	// holding boost needs on the kernel's own path (a wide tensor core's,
	// a 128-lane SM's FP32: pathPowerNeed), and at
	// least the TDP (a GPU whose limit allows boost still reaches its
	// limit on dense GEMMs). With the default board's density for every
	// path, a GEMM the time model holds below boost for want of power was
	// priced below the limit: our H100's fp32 and TF32 BERT-large at batch
	// 32 at 614 and 589 W, measured 694 and 693; the H100's 57 rows went
	// 7.5% → 6.3% (signed −6.1% → −1.9%), the H200's 75 7.5% → 7.2%
	// (+2.3% → +6.1%; cmd/onnxcost TestMeasuredEndToEndH100/H200).
	// A path needing less than the board's density (DP4A:
	// intVectorPowerShare) runs its main loop above the board's clock,
	// and draws the limit at that clock (path over 1): at the board's
	// clock a T4 DP4A GEMM drew 58 W of its 70. A path needing more keeps
	// the board's clock here, its density's excess held to the limit by
	// powerScale, as those rows were fitted: at its own (lower) clock the
	// H100's 57 power rows went 5.9% → 9.0% (signed −7.6%).
	// The path is the one that really runs (c.real), as in the time
	// model: a V100's int8 GEMM, which runs DP4A, was priced at the
	// tensor cores' density and weight while its time was priced at
	// DP4A's clock.
	pcBoost := pathPowerNeed(g, DefaultParams(), c.real) * float64(g.SMs) * g.BoostClockMHz / 1000
	pcBoost = max(pcBoost-idle0, tdp-idle0)
	w := vectorPowerWeight
	if isTensor(c.real) {
		w = tensorPowerWeight
	}
	p := DefaultParams()
	eff := dramEffAt(g, f, dramEff(g, k, p), p.MemEff)
	memBoost := memoryPowerW(g, idle0, eff)
	uc := min(active/kt.TimeS, 1)
	um := min(kt.MemoryS/kt.TimeS, 1)
	s := dynScale(min(f*max(c.path, 1)/g.BoostClockMHz, 1)) * c.anchor
	return idle, uc*w*pcBoost*s + um*memBoost*(memFixedShare*dramRate(g, f, eff/p.MemEff)+(1-memFixedShare)*s)
}

// defaultClockAnchor keeps the dynamic power of a board whose default
// sustained clock f0 is below boost (a power-limited one) at the level it
// had at f0 before the V/f curve's rise above its floor was fitted to
// locked-clock board power (a straight line from the floor to boost),
// and lets the fitted curve shape only how power falls below f0 (and
// rises above it, for kernels that fill few SMs). That level is where the
// time model's clock rule (clockFraction: dynamic power as f² of boost's,
// which the line tracks within 10% above 0.7 of boost) settles the board
// under dense compute, and what reports at the default limit were checked
// with; the locked-clock fits say how power varies with the clock, not
// what a power-limited board draws at its limit. Scaled to dense compute
// at f0 meeting TDP exactly instead, a T4 running BERT-large at its
// default limit went from 69.9 to 63.1 W, where a T4 under load reads its
// 70 W limit; scaled to f² there, an MI250X's ResNet-50 from 387 to 411 W.
// 1 on a board that holds boost. f0 is DefaultClockMHz(g).
func defaultClockAnchor(g *hwdb.GPU, f0 float64) float64 {
	fb := g.BoostClockMHz
	if !(f0 > 0) || f0 >= fb {
		return 1
	}
	fr := f0 / fb
	line := voltageRising(fr, 1)
	return line * line * fr / dynScale(fr)
}

// memoryPowerW is the dynamic power, at boost, of a kernel streaming
// DRAM at the attainable rate (u_m = 1), eff of the datasheet bandwidth
// (dramEff): the board's energy per byte times that rate where hwdb gives
// it, else memoryActivity of TDP above idle; never above TDP − idle.
func memoryPowerW(g *hwdb.GPU, idle0, eff float64) float64 {
	room := g.TDPWatts - idle0
	if g.MemPJPerByte > 0 && g.MemBW > 0 {
		return min(g.MemPJPerByte*1e-12*g.MemBW*eff, room)
	}
	return memoryActivity * room
}

// dramRate is the share of its saturated rate at which the DRAM interface
// moves a streaming kernel's bytes at SM clock f: 1 down to f_sat, f/f_sat
// below, where the SMs' slower issue, not the interface, sets the memory
// time (clocked.at stretches it by f_sat/f). DRAM and its PHY draw for the
// bytes they move, so P_io follows the rate while the on-chip path, busy
// at its clock's pace, follows the clock: with P_io held whole, a
// weight-streaming GEMM under an H200's 200 W minimum cap drew 214 W at
// the lowest SM clock, above any cap its DRAM traffic could meet.
func dramRate(g *hwdb.GPU, f, ratio float64) float64 {
	fsat := dramSatClock(g, ratio)
	if !(f > 0) || f >= fsat {
		return 1
	}
	return f / fsat
}

// dramEffAt is the share of g's DRAM bandwidth a kernel that streams at
// eff of it (dramEff) moves at SM clock f, where eff is above the fitted
// memEff (a board's measured stream_eff): all of it at and above its
// saturating clock (dramSatClock), and below it what the SMs issue, which
// does not depend on eff: a memEff stream's rate, f/f_sat of it (f_sat
// memEff's threshold), and that rate's memEff share of the bandwidth at
// and below f_sat, where dramRate scales it further. So the memory power
// of a faster stream equals a memEff stream's wherever the SMs, not DRAM,
// set the rate.
func dramEffAt(g *hwdb.GPU, f, eff, memEff float64) float64 {
	if !(eff > memEff) || !(memEff > 0) {
		return eff
	}
	return min(eff, memEff*max(1, f/dramSatClock(g, 1)))
}

// streamRatio is kernel k's DRAM stream efficiency over the fitted MemEff
// of p: 1 for every kernel but an elementwise one on a board with a
// measured stream_eff (dramEff).
func streamRatio(g *hwdb.GPU, k Kernel, p Params) float64 {
	if !(p.MemEff > 0) {
		return 1
	}
	return dramEff(g, k, p) / p.MemEff
}

// dramSatClock is f_sat, the SM clock down to which a kernel streaming at
// ratio times the fitted MemEff (streamRatio) saturates DRAM: the one
// threshold clocked.at's memory time and dramRate's DRAM power share.
// memSatFraction is the threshold of a stream at MemEff; the rate the SMs
// can issue at a clock does not depend on how much of it the DRAM
// absorbs, so a stream that DRAM serves faster (a board's measured
// stream_eff) stops saturating it at a proportionally higher clock, and
// below that moves what the SMs issue, as the MemEff stream does.
func dramSatClock(g *hwdb.GPU, ratio float64) float64 {
	f := memSatFraction * g.BoostClockMHz
	if ratio > 0 {
		f *= ratio
	}
	return min(f, g.BoostClockMHz)
}

// idleScale is the between-kernel draw at SM clock f relative to the
// default sustained clock: idleFixedFraction of it does not follow the
// clock, the rest scales as V²·f like the SMs' dynamic power. At the
// default clock the factor is 1, so reports without a cap do not change.
func idleScale(g *hwdb.GPU, f float64) float64 {
	f0 := DefaultClockMHz(g)
	if !(f0 > 0) || !(f > 0) || f >= f0 {
		return 1
	}
	return idleFixedFraction + (1-idleFixedFraction)*dynScale(f/g.BoostClockMHz)/dynScale(f0/g.BoostClockMHz)
}

// IdleAtClockW is the board's draw between kernels with the SM clock
// locked at f: the entry's idle figure (or IdleFraction of TDP) at the
// default clock, scaled as idleScale says below it. It is the floor no
// kernel's average power falls under at that clock.
func IdleAtClockW(g *hwdb.GPU, f float64) float64 { return idleW(g) * idleScale(g, f) }

// idleFixedFraction is the share of a loaded GPU's P0 idle draw that
// stays when a lock or a cap lowers the SM clock (leakage of a warm die,
// memory and board): GROMACS's board power at locked SM clocks on an A100
// and an A40 fits P = c1 + b1·f below a transition clock (810 of the
// A100's 1410 MHz boost, 975 of the A40's 1740: 0.57 and 0.56 of boost,
// where vfFloor puts the voltage floor), b1 growing with the system size
// far more than c1: 59.5-61.8 W on the A100 over seven sizes, 62.8-83.2 W
// (median 66.8) on the A40 (Afzal, Li, Panzlaff, "Modeling and Chasing
// the Energy-Efficiency Sweet Spots in Modern GPUs", arXiv 2607.00819;
// the fitted parameters are published in the authors' Wattlytics tool,
// AyeshaAfzal91/PerfPerTCO Inputs/DVFS_PARAMS.js). Against hwdb's idle_w
// (A100 67 W, A40 84 W) that is 0.90 and 0.80: 0.85, an assumption for
// other GPUs. With it the model's power at 210 MHz, 500 MHz and the V/f
// floor is within 8% of both GPUs' fits (TestLockedClockPowerMatchesFits);
// with the whole idle scaled as V²·f down to a parked floor of 0.3 it was
// 34-54% under (the A100 at 210 MHz: 34.6 W against 74.9), so a cap's
// energy kept falling to the lowest cap (ResNet-50 training on an A100:
// −50.7% at 100 W, against the 8.7-27% that clock or power capping saves
// in published sweeps, docs/accuracy.md). An idle A40 with no process
// reads 30.5 W at 1095 MHz (NVIDIA/nvidia-docker issue #1447), 0.36 of
// its 84 W at 1740 MHz: an unloaded board whose clocks dropped, which the
// loaded fits above do not show.
const idleFixedFraction = 0.85

// powerScale is the factor that holds the kernel's power at the default
// clock f0 to the default limit (TDP): the time model's sustained clock is
// where the power limiter settles, so a kernel this model puts above TDP
// there reads TDP, and its dynamic power is scaled alike at every clock.
// This keeps an explicit cap at TDP identical to no cap.
func powerScale(c *clocked) float64 {
	g := c.g
	idle, dyn := c.rawPower(c.t0, c.active, c.f0)
	if dyn > 0 && idle+dyn > g.TDPWatts {
		return (g.TDPWatts - idle) / dyn
	}
	return 1
}

// powerAt is the kernel's board power and time at clock f, its dynamic
// power scaled by r (powerScale).
func (c *clocked) powerAt(f, r float64) (float64, KernelTime) {
	t := c.at(f)
	idle, dyn := c.rawPower(t, c.activeAt(f), f)
	return idle + r*dyn, t
}

// UnderControl prices kernel k (as EstimateKernel does with o) under c.
// The kernel runs at the highest clock no higher than the default
// sustained clock, the lock, and the clock at which its own power meets
// the cap: k run back to back, alone, for as long as the power limiter
// averages (about a second). A model's mix of kernels settles one clock
// for the whole run instead (cost.Analyze prices it under the lock that
// clock is). With c at its default the time is EstimateKernel's exactly.
func UnderControl(g *hwdb.GPU, k Kernel, o Options, c PowerControl) PoweredKernel {
	ck := newClocked(g, k, o)
	f0 := ck.f0
	if g == nil || !(f0 > 0) || !(ck.t0.TimeS > 0) {
		return PoweredKernel{KernelTime: ck.t0, ClockMHz: f0}
	}
	r := powerScale(&ck)
	f := f0
	if c.SMClockMHz > 0 {
		f = min(f, max(c.SMClockMHz, MinClockMHz(g)))
	}
	p := func(f float64) float64 { w, _ := ck.powerAt(f, r); return w }
	// A cap at (or within rounding of) what the kernel draws changes nothing.
	if c.CapW > 0 && p(f) > c.CapW*(1+1e-9) {
		lo, hi := MinClockMHz(g), f
		if p(lo) >= c.CapW {
			f = lo // the cap is below what the slowest clock draws
		} else {
			// Power rises with the clock (V²·f grows faster than the
			// busy fractions fall), so bisect for the highest clock
			// within the cap, to 1 MHz.
			for hi-lo > 0.5 {
				mid := (lo + hi) / 2
				if p(mid) > c.CapW {
					hi = mid
				} else {
					lo = mid
				}
			}
			f = lo
		}
	}
	w, t := ck.powerAt(f, r)
	return PoweredKernel{KernelTime: t, ClockMHz: f, PowerW: w, OverCap: c.CapW > 0 && w > c.CapW*(1+1e-9)}
}

// Calibrated is pk with its compute, latency and memory terms multiplied
// by fc, fl and fm, the factors a measured calibration found for kernels
// like kn (package calib), its body (the time less launch and gap)
// BodyS of the scaled terms again, never below kn's physical floor
// on g: its FLOPs at the peak rate of its precision, its DRAM traffic at
// the full DRAM bandwidth. Each term is scaled on its own, so a body
// that grows with batch still grows (calib keeps each term's factor ×
// size rising in size). The kernel's work energy is kept and idle power
// accrues (or is saved) over the changed time, so a kernel made slower
// draws less power and one made faster more, but never more than the
// larger of its uncalibrated draw and the board limit (the cap when one
// is set).
func (pk PoweredKernel) Calibrated(g *hwdb.GPU, kn Kernel, fc, fl, fm, capW float64) PoweredKernel {
	body := pk.TimeS - pk.RampS - pk.LaunchS
	ok := func(f float64) bool { return f > 0 && !math.IsInf(f, 0) }
	if !ok(fc) || !ok(fl) || !ok(fm) || (fc == 1 && fl == 1 && fm == 1) || !(body > 0) {
		return pk
	}
	out := pk
	out.ComputeS, out.LatencyS, out.MemoryS = pk.ComputeS*fc, pk.LatencyS*fl, pk.MemoryS*fm
	nb := max(BodyS(kn.Class, out.ComputeS, out.LatencyS, out.MemoryS), physicalFloor(g, kn))
	out.TimeS = nb + pk.RampS + pk.LaunchS
	limit := g.TDPWatts
	if capW > 0 {
		limit = capW
	}
	e := pk.EnergyJ() + idleW(g)*(out.TimeS-pk.TimeS)
	out.PowerW = min(max(e/out.TimeS, 0), max(pk.PowerW, limit))
	return out
}

// physicalFloor is the least time any implementation of kn could take
// on g: FLOPs at the peak rate of its precision, DRAM traffic at full
// bandwidth (the bytes when no residency model set DRAMBytes).
func physicalFloor(g *hwdb.GPU, kn Kernel) float64 {
	var t float64
	if peak := g.Peak[kn.Precision]; peak > 0 {
		t = kn.FLOPs / peak
	}
	bytes := kn.Bytes
	if kn.Resident {
		bytes = kn.DRAMBytes
	}
	if g.MemBW > 0 {
		t = max(t, bytes/g.MemBW)
	}
	return t
}
