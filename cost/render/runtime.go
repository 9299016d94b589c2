package render

import (
	"fmt"

	"github.com/onnxcost/onnxcost/cost/report"
)

// RuntimeLine says which execution profile priced the report and what it
// applied, in one line: the per-kernel gap and where it comes from (a
// --gpu-file launch_us is scaled, and the reader must see by how much), the
// host dispatch against the device time, the per-call overhead and the
// memory floor. "" for a report saved before profiles existed.
func RuntimeLine(r *report.Report) string {
	rt := r.Runtime
	if rt == nil {
		return ""
	}
	gap := fmt.Sprintf("kernel gap %s", Seconds(rt.KernelGapS))
	switch {
	case rt.KernelGapScale > 0 && rt.KernelRampS > 0:
		gap += fmt.Sprintf(" (%g × launch %s; %s of it the kernel's ramp)", rt.KernelGapScale, Seconds(rt.LaunchS), Seconds(rt.KernelRampS))
	case rt.KernelGapScale > 0:
		gap += fmt.Sprintf(" (%g × launch %s)", rt.KernelGapScale, Seconds(rt.LaunchS))
	case rt.KernelRampS > 0:
		gap += fmt.Sprintf(" (%s of it the kernel's ramp)", Seconds(rt.KernelRampS))
	}
	host := "no host dispatch"
	if rt.DispatchS > 0 {
		host = fmt.Sprintf("host dispatch %s/kernel: host %s vs device %s", Seconds(rt.DispatchS), Seconds(rt.HostS), Seconds(rt.DeviceS))
		if rt.OpCallScale > 0 {
			host = fmt.Sprintf("host calls by op kind (a bare add %s; each node's host_s): host %s vs device %s", Seconds(rt.DispatchS*rt.OpCallScale), Seconds(rt.HostS), Seconds(rt.DeviceS))
		}
		if rt.HostBound {
			host += " (host-bound)"
		}
	}
	// Under tensor parallelism the floor is added to one GPU's share.
	peak := r.Totals.PeakMemoryBytes
	if r.Totals.GPUs > 1 {
		peak = r.Totals.PerGPUPeakMemoryBytes
	}
	if tr := r.Totals.Train; tr != nil {
		// The training memory line counts the floor in its nvidia-smi view.
		return fmt.Sprintf("runtime %s · %s · %s · per call %s · memory floor %s (context %s, in the training memory's nvidia-smi view)",
			rt.Name, gap, host, Seconds(rt.CallS), Bytes(rt.MemoryFloorBytes), Bytes(tr.Memory.RuntimeBytes))
	}
	call := fmt.Sprintf("per call %s", Seconds(rt.CallS))
	if c := rt.HostCopyS(); c > 0 {
		call += fmt.Sprintf(" + host copies %s (%s in, %s out)", Seconds(c), Bytes(rt.InputCopyBytes), Bytes(rt.OutputCopyBytes))
	}
	call += fmt.Sprintf(", latency %s", Seconds(rt.LatencyS))
	if rt.SyncEachCall {
		call += " (each call synchronized: time = latency)"
	}
	if rt.ArenaReservedBytes > 0 {
		return fmt.Sprintf("runtime %s · %s · %s · %s · memory floor %s (weights %s + BFC arena %s + floor = %s; tensors' peak %s)",
			rt.Name, gap, host, call, Bytes(rt.MemoryFloorBytes), Bytes(r.Totals.ParamBytes), Bytes(rt.ArenaReservedBytes), Bytes(rt.DeviceMemoryBytes), Bytes(r.Totals.PeakActivationBytes))
	}
	return fmt.Sprintf("runtime %s · %s · %s · %s · memory floor %s (peak %s + floor = %s)",
		rt.Name, gap, host, call, Bytes(rt.MemoryFloorBytes), Bytes(peak), Bytes(rt.DeviceMemoryBytes))
}
