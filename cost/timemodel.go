package cost

import "github.com/onnxcost/onnxcost/hwdb"

// EstimateKernel is the time-based roofline: time = max(FLOPs/attainable
// compute, bytes/attainable bandwidth) + launch overhead.
//
// This first version uses datasheet peaks with no efficiency curve; the
// calibrated model replaces it.
func EstimateKernel(g *hwdb.GPU, k Kernel) KernelTime {
	launches := k.Launches
	if launches == 0 {
		launches = 1
	}
	t := KernelTime{Level: "hbm", Bandwidth: g.MemBW, AttainableFLOPS: g.PeakFor(k.Precision)}
	if t.AttainableFLOPS > 0 {
		t.ComputeS = k.FLOPs / t.AttainableFLOPS
	}
	if t.Bandwidth > 0 {
		t.MemoryS = k.Bytes / t.Bandwidth
	}
	t.LaunchS = launches * g.LaunchS
	t.TimeS = max(t.ComputeS, t.MemoryS) + t.LaunchS
	switch {
	case t.LaunchS >= max(t.ComputeS, t.MemoryS):
		t.Bound = "launch"
	case t.ComputeS >= t.MemoryS:
		t.Bound = "compute"
	default:
		t.Bound = "memory"
	}
	return t
}
