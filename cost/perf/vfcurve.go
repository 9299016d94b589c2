package perf

import "github.com/onnxcost/onnxcost/hwdb"

// The voltage/frequency curve and the power density of a board's process,
// the two facts the power model (power.go) and the time model's sustained
// clock (clockFraction) take from the silicon.
//
// V(f) is flat at vMin of the boost-clock voltage up to vfFloor of the
// boost clock (the lowest voltage the regulator is set to), then rises to
// 1 at boost along x^vfCurvature, x the clock's share of the way from the
// floor to boost. The floor is read off the one datacenter board whose
// nvidia-smi shows voltage at two SM clocks with the memory clock
// unchanged: an A40 (GA102) at 944 mV at its 1740 MHz boost and 706 mV at
// 1095 MHz (NVIDIA/nvidia-docker issue #1447, the readings hwdb's A40
// idle_w cites). The floor voltage is what every generation's clock
// profile shows at its lowest P0/desktop clock in TechPowerUp's reviews:
// GTX 1080 (Pascal) 0.625 V, RTX 2060 (Turing) 0.718 V, GTX 1660 Ti
// 0.656 V, RTX 3060 Ti (GA104) 0.668 V; 0.668 V over 944 mV gives vMin =
// 0.71, and the A40's two readings' line (0.369 mV/MHz) meets it at 992
// MHz, 0.57 of boost. The floor voltages of Pascal to Ampere lie within
// ±7% of 0.668 V, so the same shape serves every generation. Hopper's
// floor agrees: an idle H100 SXM5 parked at 345 MHz reads 670 mV, an H200
// 685 mV (hwdb's min_sm_clock_mhz sources). No datacenter voltage at
// boost of Pascal, Volta, Hopper or Ada was found (the curve is an
// assumption there).
//
// Board power at locked clocks says where the floor ends and how the
// curve rises above it. GROMACS's power on an A100 and an A40 (Afzal, Li,
// Panzlaff, arXiv 2607.00819; fitted parameters in their Wattlytics tool,
// see idleFixedFraction in power.go) is linear in the clock up to 810 and
// 975 MHz (0.57 and 0.56 of boost) and quadratic above, rising slowly at
// first and steeply near boost: the dynamic power per MHz of the A100 stays
// flat to about 1000 MHz (0.71 of boost), then doubles by boost. A line
// from the floor to boost (vfCurvature 1) put the model's board power
// 7-18% above the four fits (two systems per GPU) between 0.6 and 0.9 of
// boost, and the clock of least energy per unit of compute-bound work at
// 0.57-0.64 of boost where the fits put it at 0.62-0.74 (1015 and 1045
// MHz on the A100, 1085 and 1230 on the A40). Fitted on those four fits
// above their transitions (least squares in log power), the exponent
// comes out at 1.95; 2 is taken: the model is then within 9% of every fit
// at every clock, and its clock of least energy is 980 and 1035 MHz on the
// A100, 1215 and 1260 on the A40 (TestLockedClockPowerMatchesFits). The
// A40's reading at 1095 MHz lies 4% above this curve (675 mV against 706),
// on the line; board power, not voltage, is what the model prices, and a
// transistor's speed rising more slowly than its voltage near the top
// (the alpha-power law), with leakage growing with voltage, both make the
// effective curve steeper there than a line.
const (
	vMin        = 0.71
	vfFloor     = 0.57
	vfCurvature = 2.0
)

// fullClockPower is the power density, W per SM per GHz of boost clock,
// dense compute needs to hold boost on g: the board's own figure where
// hwdb has one (a process unlike the default's), else the time model's.
func fullClockPower(g *hwdb.GPU, p Params) float64 {
	if g != nil && g.ClockPowerW > 0 {
		return g.ClockPowerW
	}
	return p.FullClockPower
}
