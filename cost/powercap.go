package cost

import (
	"fmt"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
)

// A power cap limits the board's power averaged over about a second, not
// each kernel's: an RTX 5090 held to 600 W drew up to 616 W in 50 ms
// samples while its one-second average stayed under the limit
// (ilya-zlobintsev/LACT issue #1128, nvidia-smi's power.draw.average and
// power.draw.instant). A call or training step is far shorter than that
// window and runs back to back, so the limiter settles one SM clock for
// its whole mix of kernels: the highest at which the run's average power
// fits the cap. Kernels that draw less than the cap at that clock (memory-
// bound, launch-bound, the gaps between kernels) leave room for the dense
// ones to draw more. Settling each kernel at its own clock instead ran
// memory-bound kernels at clocks that buy them no time and held dense
// ones to the cap on their own.

// capClockTolMHz is the precision of the settled clock: the driver's
// clock steps are 15 MHz on the boards whose lists are on record.
const capClockTolMHz = 1.0

// analyzeUnderCap prices the run at the highest SM clock, no higher than
// the lock (or the default clock), whose average power fits the cap, by
// bisection over clock locks. A run's average power is its clock-
// independent draw plus its dynamic energy over its time; the energy
// rises with the clock (V²) and the time falls, so the average rises.
func analyzeUnderCap(g *ir.Graph, m *ir.Model, gpu *hwdb.GPU, opt Options) (*report.Report, error) {
	capW := opt.Power.CapW
	at := func(f float64) (*report.Report, error) {
		o := opt
		o.Power = perf.PowerControl{SMClockMHz: f}
		r, err := analyze(g, m, gpu, o)
		if err != nil {
			return nil, err
		}
		r.Totals.PowerCapW, r.Totals.SMClockCapMHz = capW, opt.Power.SMClockMHz
		return r, nil
	}
	fits := func(r *report.Report) bool { return r.Totals.AvgPowerW <= capW*(1+1e-9) }
	lo, hi := perf.MinClockMHz(gpu), perf.DefaultClockMHz(gpu)
	if l := opt.Power.SMClockMHz; l > 0 {
		hi = min(hi, max(l, lo))
	}
	best, err := at(hi)
	if err != nil || fits(best) || !(hi > lo) {
		return best, err
	}
	low, err := at(lo)
	if err != nil {
		return nil, err
	}
	if !fits(low) {
		low.Warnings = append(low.Warnings, fmt.Sprintf("power cap %g W: the run averages %.0f W even at the lowest SM clock (%.0f MHz); its power is reported above the cap", capW, low.Totals.AvgPowerW, lo))
		return low, nil
	}
	best = low
	for hi-lo > capClockTolMHz {
		mid := (lo + hi) / 2
		r, err := at(mid)
		if err != nil {
			return nil, err
		}
		if fits(r) {
			lo, best = mid, r
		} else {
			hi = mid
		}
	}
	return best, nil
}
