package cost

import (
	"fmt"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
)

// runtimeOf is the execution profile Analyze prices with: the caller's, or
// the default: a CUDA-graph replay for inference, the training model's
// own (PyTorch eager) for a training step.
func runtimeOf(opt Options) (*hwdb.Runtime, error) {
	if opt.Runtime != nil {
		return opt.Runtime, nil
	}
	name := hwdb.DefaultRuntime
	if opt.Train != nil {
		name = opt.Train.DefaultRuntime()
	}
	r, err := hwdb.LookupRuntime(name)
	if err != nil {
		return nil, fmt.Errorf("analyze: %w", err)
	}
	return r, nil
}

// pipelineTime is the time of a sequence of nodes when a host issues their
// kernels one by one, each node's host_s spread over its launches (a
// view's, with none, only delays the next), to a GPU that runs them in
// order: the host and the device form a two-stage pipeline. A kernel
// starts when it has been issued and the previous one has finished, so
// the total is the slower stage plus the part of the other it cannot hide
// (the first issue when the device is the bottleneck, the last kernel when
// the host is). A node of L host-issued launches and device time t is
// taken as L equal kernels of t/L; for equal kernels the finish time has
// a closed form (the latest of: the device never idling, only the first
// kernel waiting for its issue, only the last one waiting), so a loop
// body of a million launches costs one step.
//
// It returns the pipeline time, the host's issue time and the device time.
func pipelineTime(nodes []report.NodeCost) (total, host, device float64) {
	var issued, finish float64
	for i := range nodes {
		n := &nodes[i]
		device += n.TimeS
		if n.HostWaits {
			issued = max(issued, finish)
		}
		l := n.Launches
		if l <= 0 || n.HostS <= 0 {
			// A view's Python call delays the next issue and launches
			// nothing.
			finish += n.TimeS
			issued += n.HostS
			continue
		}
		// A library's helper kernels (a Winograd filter transform, a
		// split-K reduce) ride in its call's host time: the node is its
		// host-issued launches, each with its share of the device time.
		// Split over every launch, a layer that took a helper as the
		// batch grew issued "faster" and its call finished earlier
		// (FuzzUserGPU: ResNet-18 eager, batch 1 → 2, −0.2%).
		l = max(l-max(n.HelperLaunches, 0), 1)
		dispatch := n.HostS / l
		tau := n.TimeS / l
		finish = max(finish+n.TimeS, issued+dispatch+n.TimeS, issued+l*dispatch+tau)
		issued += n.HostS
	}
	return finish, issued, device
}

// applyRuntime prices the whole model under the execution profile rt:
// the host/device pipeline when the runtime issues kernels from the host,
// the per-call overhead and the memory floor, all recorded in the report.
// A profile with no host dispatch (a graph replay) leaves the device sum
// as the time, unchanged to the last bit.
func applyRuntime(rep *report.Report, gpu *hwdb.GPU, rt *hwdb.Runtime, io callIO) {
	p := perf.DefaultParams()
	launch := perf.LaunchOverhead(gpu, p)
	ri := &report.Runtime{
		Name:        rt.Name,
		KernelGapS:  perf.KernelGap(gpu, rt, p),
		LaunchS:     launch,
		FillShare:   perf.InPlanFillShare,
		DispatchS:   rt.DispatchS,
		ModuleS:     rt.ModuleS,
		OpCallScale: rt.OpCallScale,
		CallS:       rt.CallS,
		Notes:       []string{},
	}
	src := fmt.Sprintf("the GPU entry's launch_us (%s)", usText(launch))
	if gpu.LaunchS <= 0 {
		src = fmt.Sprintf("the calibrated default launch cost (%s; the GPU entry has no launch_us)", usText(launch))
	}
	if rt.KernelGapS > 0 {
		ri.Notes = append(ri.Notes, fmt.Sprintf("each kernel pays the profile's fixed gap of %s (kernel_gap_us), not %s", usText(ri.KernelGapS), src))
	} else {
		ri.KernelGapScale = rt.KernelGapScale
		ri.Notes = append(ri.Notes, fmt.Sprintf("each kernel pays a gap of %s = %g × %s", usText(ri.KernelGapS), rt.KernelGapScale, src))
	}
	ri.KernelRampS = perf.KernelRamp(gpu, rt, p)
	ri.Notes = append(ri.Notes, fmt.Sprintf("of that, %s is the kernel's own ramp (dispatch and completion on the GPU), which a profiler counts in the kernel's duration: the nodes' ramp_s; the idle gap between kernels is their launch_s", usText(ri.KernelRampS)))
	ri.Notes = append(ri.Notes, fmt.Sprintf("GEMM-like kernels add %g of their fitted fill latency (%s): the GPU-side part, whatever the runtime; a library convolution's tiled kernel adds all of it (%s)",
		perf.InPlanFillShare, usText(perf.InPlanFillShare*p.FillLaunches*launch), usText(perf.ConvFillShare*p.FillLaunches*launch)))

	t := &rep.Totals
	hostNodes, waits := 0, 0
	for i, h := range report.NodeHosts(rt.DispatchS, rt.ModuleS, rt.OpCallScale, rep.Nodes) {
		rep.Nodes[i].HostS = h
		if rep.Nodes[i].OnHost {
			hostNodes++
		}
		if rep.Nodes[i].OnHost && rt.DispatchS > 0 {
			rep.Nodes[i].HostS = rt.HostNodeS
		}
		if rep.Nodes[i].HostWaits {
			waits++
		}
	}
	// Host nodes run each call only where the runtime issues node by node.
	onHost := hostNodes
	if rt.DispatchS <= 0 {
		onHost = 0
	}
	if rt.CUDAGraph > 0 {
		ri.Notes = append(ri.Notes, fmt.Sprintf("each call replays the session's kernels captured once in a CUDA graph (cuda_graph): no host work per node; %d host node(s) ran at the capture and are not rerun", hostNodes))
	}
	if onHost > 0 {
		ri.Notes = append(ri.Notes, fmt.Sprintf("%d nodes run on the host (shape arithmetic of a dim symbolic in the file, which the runtime cannot fold when it builds the session: on_host), %s each (host_node_us)", onHost, usText(rt.HostNodeS)))
	}
	if waits > 0 {
		ri.Notes = append(ri.Notes, fmt.Sprintf("the host waits for the GPU %d times a call (a value a kernel wrote, read on the host: host_waits)", waits))
	}
	finish, issue, device := pipelineTime(rep.Nodes)
	if rt.DispatchS <= 0 {
		// No per-kernel host work: the device sum as Analyze added it.
		finish, device = t.TimeS, t.TimeS
	}
	ri.HostS, ri.DeviceS = rt.CallS+issue, device
	ri.KernelS = max(0, device-launchSum(rep.Nodes))
	ri.HostBound = ri.HostS > finish
	copies, warning := io.price(ri, gpu)
	if warning != "" {
		rep.Warnings = append(rep.Warnings, warning)
	}
	// An output copied back to pageable host memory is waited for, as a
	// runtime that synchronizes each call waits for its kernels: the
	// next call's host work cannot overlap this call's device work.
	ri.SyncEachCall = rt.SyncEachCall > 0 || ri.OutputCopyBytes > 0
	ri.LatencyS = rt.CallS + finish + copies
	total := steadyTime(finish, ri.HostS)
	if ri.SyncEachCall {
		total = ri.LatencyS
	}
	if total != t.TimeS && total > 0 {
		// GEMM/conv share is of the whole time, idle GPU included; the
		// GPU draws its idle power while it waits on the host.
		t.GEMMConvTimeShare *= t.TimeS / total
		if wait := total - t.TimeS; wait > 0 {
			ri.WaitS, ri.WaitEnergyJ = wait, perf.IdleW(gpu)*wait
		}
		setTimeEnergy(t, total, t.EnergyJ+ri.WaitEnergyJ)
	}
	if rt.DispatchS > 0 && rt.OpCallScale > 0 {
		s := report.NodesCallsScale(rt.OpCallScale, rep.Nodes)
		ri.Notes = append(ri.Notes, fmt.Sprintf("the host calls each op at its kind's cost (eager PyTorch's, measured per kind: a bare add %s = dispatch_us, a convolution %s, a batch norm %s, a view %s; × %.4g, op_call_scale %g on the calls that follow another in the forward), each further kernel in %s, and each module the nodes enter in %s (module_us × the same; nodes named with the exporter's module scope): each node's host_s; kernels finish %s after the first issue",
			usText(rt.DispatchS*s), usText(report.HostCallS(rt.DispatchS, s, "conv2d")), usText(report.HostCallS(rt.DispatchS, s, "batch_norm.module")),
			usText(report.HostCallS(rt.DispatchS, s, "view")), s, rt.OpCallScale, usText(rt.DispatchS), usText(report.ModuleCallS(rt.ModuleS, s)), usText(finish)))
	} else if rt.DispatchS > 0 && rt.ModuleS > 0 {
		ri.Notes = append(ri.Notes, fmt.Sprintf("the host issues each kernel in %s (dispatch_us), and %s for each module the nodes enter (module_us: nodes named with the exporter's module scope); kernels finish %s after the first issue", usText(rt.DispatchS), usText(rt.ModuleS), usText(finish)))
	} else if rt.DispatchS > 0 {
		ri.Notes = append(ri.Notes, fmt.Sprintf("the host issues each kernel in %s (dispatch_us); kernels finish %s after the first issue", usText(rt.DispatchS), usText(finish)))
	} else {
		ri.Notes = append(ri.Notes, "no per-kernel host dispatch (dispatch_us 0)")
	}
	bound := "the device is the bottleneck"
	if ri.HostBound {
		bound = "the host is the bottleneck: the GPU idles"
	}
	ri.Notes = append(ri.Notes, fmt.Sprintf("host work per call %s (call_us %s + dispatch) vs device %s: %s; time_s is one call of a back-to-back stream", usText(ri.HostS), usText(rt.CallS), usText(device), bound))
	ri.Notes = append(ri.Notes, fmt.Sprintf("one call timed alone (wrapper, issue, kernels, synchronize) takes %s (latency_s)", usText(ri.LatencyS)))
	if ri.SyncEachCall {
		ri.Notes = append(ri.Notes, "each call waits for its kernels before it returns (sync_each_call): back-to-back calls do not overlap, so time_s is latency_s")
	}
	ri.MemoryFloorBytes = rt.MemoryFloor()
	ri.DeviceMemoryBytes = t.PeakMemoryBytes + ri.MemoryFloorBytes
	rep.Runtime = ri
}

// launchSum is the nodes' idle gaps between kernels (their launch_s).
func launchSum(nodes []report.NodeCost) float64 {
	var s float64
	for i := range nodes {
		s += nodes[i].LaunchS
	}
	return s
}

// steadyTime is the time per call when calls run back to back: the host's
// work for one call (its per-call wrapper and the kernels' issue) and the
// device's run of them overlap with the neighbouring calls', so the slower
// stage sets the pace. finish already includes the host's issue that the
// device cannot hide within a call.
func steadyTime(finish, host float64) float64 { return max(finish, host) }

// usText prints seconds for the notes: µs below a millisecond, else ms.
func usText(s float64) string {
	if s >= 1e-3 {
		return fmt.Sprintf("%.4g ms", s*1e3)
	}
	return fmt.Sprintf("%.3g µs", s*1e6)
}
