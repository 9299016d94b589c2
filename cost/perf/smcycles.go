package perf

import "github.com/onnxcost/onnxcost/hwdb"

// smCyclesS is the time g's SMs take for cycles SM-cycles of work spread
// over all of them (at the clock p allows); 0 without an SM count.
func smCyclesS(g *hwdb.GPU, p Params, cycles float64) float64 {
	perSecond := smCyclesPerSecond(g, p)
	if !(perSecond > 0) || !(cycles > 0) {
		return 0
	}
	return cycles / perSecond
}
