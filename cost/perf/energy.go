package perf

import "github.com/onnxcost/onnxcost/hwdb"

// Energy model: a kernel's energy is its time times the
// board power while it runs, and that power lies between IdleWatts and
// TDPWatts according to how busy the kernel keeps the chip:
//
//	P = idle + (TDP - idle) * activity
//	activity = max(ComputeS/TimeS, memoryActivity * MemoryS/TimeS)
//
// Compute-bound work runs the SMs flat out (activity -> 1, P -> TDP).
// Memory-bound work keeps the memory system busy but the SMs mostly wait,
// so it draws less: memoryActivity = 0.6 is an assumption in line with
// CARLA 2018's observation that capping SM clocks does not slow
// memory-bound work (it draws less than full power), not a measured
// figure. Launch-bound time (tiny kernels) draws about idle power.
const memoryActivity = 0.6

// IdleFraction is the idle power assumed, as a fraction of TDP, when the
// GPU record has no IdleWatts (an assumption; datasheets rarely give it).
const IdleFraction = 0.2

// KernelEnergy is the energy in joules of one kernel estimate.
func KernelEnergy(g *hwdb.GPU, kt KernelTime) float64 {
	return KernelPower(g, kt) * kt.TimeS
}

// KernelPower is the modelled average board power during the kernel.
func KernelPower(g *hwdb.GPU, kt KernelTime) float64 {
	tdp := g.TDPWatts
	if !(tdp > 0) || !(kt.TimeS > 0) {
		return 0
	}
	idle := g.IdleWatts
	if !(idle > 0) || idle > tdp {
		idle = IdleFraction * tdp
	}
	// The fixed latency (pipeline fill and drain) is SM time like the
	// main loop's: it counts as compute activity.
	activity := max((kt.ComputeS+kt.LatencyS)/kt.TimeS, memoryActivity*kt.MemoryS/kt.TimeS)
	activity = min(max(activity, 0), 1)
	return idle + (tdp-idle)*activity
}
