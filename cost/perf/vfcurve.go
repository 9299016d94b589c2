package perf

import "github.com/onnxcost/onnxcost/hwdb"

// The voltage/frequency curve and the power density of a board's process,
// the two facts the power model (power.go) and the time model's sustained
// clock (clockFraction) take from the silicon.
//
// V(f) is flat at vMin of the boost-clock voltage up to vfFloor of the
// boost clock (the lowest voltage the regulator is set to), then rises
// linearly to 1 at boost. Both figures are read off the one datacenter
// board whose nvidia-smi shows voltage at two SM clocks with the memory
// clock unchanged: an A40 (GA102) at 944 mV at its 1740 MHz boost and
// 706 mV at 1095 MHz (NVIDIA/nvidia-docker issue #1447, the readings
// hwdb's A40 idle_w cites). The floor voltage is what every generation's
// clock profile shows at its lowest P0/desktop clock in TechPowerUp's
// reviews: GTX 1080 (Pascal) 0.625 V, RTX 2060 (Turing) 0.718 V, GTX 1660
// Ti 0.656 V, RTX 3060 Ti (GA104) 0.668 V; 0.668 V over 944 mV gives
// vMin = 0.71, and the A40 line (0.369 mV/MHz) meets it at 992 MHz, 0.57
// of boost. The floor voltages of Pascal to Ampere lie within ±7% of
// 0.668 V, so the same shape serves every generation. Hopper's floor
// agrees: an idle H100 SXM5 parked at 345 MHz reads 670 mV, an H200 685 mV
// (hwdb's min_sm_clock_mhz sources). No datacenter voltage at boost of
// Pascal, Volta, Hopper or Ada was found (the line is an assumption there).
// Board power at locked clocks agrees on where the floor ends: GROMACS's
// power on an A100 and an A40 is linear in the clock up to 810 and 975 MHz
// (0.57 and 0.56 of boost) and rises faster above (Afzal et al., arXiv
// 2607.00819; see idleFixedFraction in power.go). Above it the A100's
// dynamic power per MHz stays flat to about 1000 MHz (0.71 of boost) and
// then doubles by boost, a steeper rise than this line's (V(boost)/V(1000
// MHz) of about 1.4 against 1.25 here); one board, not fitted.
const (
	vMin    = 0.71
	vfFloor = 0.57
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
