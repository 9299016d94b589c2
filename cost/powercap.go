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

// capClockTolMHz and capPowerTol end the search: the settled clock is
// known to 1 MHz (the driver's clock steps are 15 MHz on the boards whose
// lists are on record), or the run's average is within 0.1% under the cap.
const (
	capClockTolMHz = 1.0
	capPowerTol    = 1e-3
)

// analyzeUnderCap prices the run at the highest SM clock, no higher than
// the lock (or the default clock), whose average power fits the cap. A
// run's average power is its clock-independent draw plus its dynamic
// energy over its time; the energy rises with the clock (V²) and the time
// falls, so the average rises, smoothly: the clock is found by regula
// falsi (the Illinois variant, which halves a stale end's excess so that
// neither end sticks): 6-7 analyses per settled cap against bisection's
// 13 (ResNet-50 training on an A100 or H100).
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
	// excess is the run's average power over the cap: ≤ 0 fits.
	excess := func(r *report.Report) float64 { return r.Totals.AvgPowerW - capW*(1+1e-9) }
	lo, hi := perf.MinClockMHz(gpu), perf.DefaultClockMHz(gpu)
	if l := opt.Power.SMClockMHz; l > 0 {
		hi = min(hi, max(l, lo))
	}
	// unmet says so where even the lowest clock the run can take draws
	// more than the cap.
	unmet := func(r *report.Report, f float64) (*report.Report, error) {
		r.Warnings = append(r.Warnings, fmt.Sprintf("power cap %g W: the run averages %.0f W even at the lowest SM clock (%.0f MHz); its power is reported above the cap", capW, r.Totals.AvgPowerW, f))
		return r, nil
	}
	top, err := at(hi)
	if err != nil || excess(top) <= 0 {
		return top, err
	}
	if !(hi > lo) {
		// The board's own clock is its lowest already (a user's board
		// whose default clock sits under the assumed floor): no lower
		// clock to settle at. This returned the run above the cap
		// without a word (FuzzUserGPU).
		return unmet(top, hi)
	}
	best, err := at(lo)
	if err != nil {
		return nil, err
	}
	eLo, eHi := excess(best), excess(top)
	if eLo > 0 {
		return unmet(best, lo)
	}
	side := 0
	for i := 0; hi-lo > capClockTolMHz && -eLo > capPowerTol*capW && i < 64; i++ {
		f := lo + (hi-lo)*(-eLo)/(eHi-eLo)
		f = min(max(f, lo+capClockTolMHz/2), hi-capClockTolMHz/2)
		r, err := at(f)
		if err != nil {
			return nil, err
		}
		if e := excess(r); e <= 0 {
			lo, eLo, best = f, e, r
			if side == -1 {
				eHi /= 2
			}
			side = -1
		} else {
			hi, eHi = f, e
			if side == 1 {
				eLo /= 2
			}
			side = 1
		}
	}
	return best, nil
}
