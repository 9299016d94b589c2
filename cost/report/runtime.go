package report

import "github.com/onnxcost/onnxcost/ir"

// Runtime says which execution profile priced a report and what it
// applied: the per-kernel gap, the host's issue time against the device's
// run time, the per-call overhead and the memory floor. Every figure is
// the one used, on the report's GPU, so a reader can redo the arithmetic.
type Runtime struct {
	// Name is the profile (hwdb/runtimes.yaml, or the user's file).
	Name string `json:"name"`
	// KernelGapS is the device-side gap each kernel launch paid;
	// LaunchS the GPU's back-to-back launch cost it derives from
	// (KernelGapScale × LaunchS, unless the profile gives an absolute
	// gap, then KernelGapScale is 0).
	KernelGapS     float64 `json:"kernel_gap_s"`
	KernelGapScale float64 `json:"kernel_gap_scale"`
	// KernelRampS is the part of KernelGapS that is the kernel's own
	// device-side minimum duration (perf.KernelRamp), counted in each
	// node's ramp_s and so in its kernel time as a profiler sees it; the
	// rest is each node's launch_s, the idle gap between kernels.
	KernelRampS float64 `json:"kernel_ramp_s,omitempty"`
	LaunchS     float64 `json:"launch_s"`
	// FillShare is the share of a GEMM-like kernel's fitted fill latency
	// (pipeline fill and drain, in launches) a plan still pays; a library
	// convolution's tiled kernel pays all of it (perf.ConvFillShare).
	FillShare float64 `json:"fill_share"`
	// DispatchS is the host time to issue one kernel (an eager op's call
	// by its kind: OpCallScale); HostS the host's work for one call
	// (CallS + the nodes' host_s);
	// DeviceS the sum of the kernels' device times. Totals.TimeS is the
	// time per call of back-to-back calls: the host/device pipeline of
	// the kernels (cost's pipelineTime) or HostS, whichever is longer;
	// HostBound when it is HostS (the GPU waits on the host).
	DispatchS float64 `json:"dispatch_s"`
	// ModuleS is the host time of one module call, charged once per
	// module scope the nodes enter (NodeHosts); 0 for runtimes with no
	// Python between kernels. OpCallScale, where set, prices each node's
	// call by its op's kind (HostKindS) and scales ModuleS.
	ModuleS     float64 `json:"module_s,omitempty"`
	OpCallScale float64 `json:"op_call_scale,omitempty"`
	HostS       float64 `json:"host_s"`
	// WaitS is the time per call the GPU idles waiting on the host
	// (Totals.TimeS less the kernels), and WaitEnergyJ its idle energy,
	// included in Totals.EnergyJ; absent when the device is the
	// bottleneck.
	WaitS       float64 `json:"wait_s,omitempty"`
	WaitEnergyJ float64 `json:"wait_energy_j,omitempty"`
	DeviceS     float64 `json:"device_s"`
	// KernelS is the part of DeviceS the kernels themselves run, the idle
	// gaps between them (each node's launch_s) left out: what a
	// profiler's kernel sum measures (Nsight Systems' kernel summary,
	// Kineto's kernel events, `calibrate --profile`).
	KernelS   float64 `json:"kernel_s"`
	HostBound bool    `json:"host_bound"`
	// CallS is the fixed cost of one call (enqueue, wrapper, guards,
	// synchronize); LatencyS = CallS + the kernels' pipeline is one call
	// timed alone with a synchronize, as a host clock around it sees it.
	CallS    float64 `json:"call_s"`
	LatencyS float64 `json:"latency_s"`
	// SyncEachCall is true when every call waits for its kernels before
	// it returns (hwdb.Runtime.SyncEachCall, or an output copied back to
	// host memory): calls never overlap and Totals.TimeS is LatencyS.
	SyncEachCall bool `json:"sync_each_call,omitempty"`
	// InputCopyBytes and OutputCopyBytes are what one call copies from
	// host memory to the device (the graph inputs its kernels read) and
	// back (the outputs they wrote) when the runtime is fed host arrays
	// (hwdb.Runtime.HostIO); InputCopyS and OutputCopyS the copies' time
	// over the host link, before the first kernel and after the last, in
	// LatencyS and Totals.TimeS.
	InputCopyBytes  float64 `json:"input_copy_bytes,omitempty"`
	OutputCopyBytes float64 `json:"output_copy_bytes,omitempty"`
	InputCopyS      float64 `json:"input_copy_s,omitempty"`
	OutputCopyS     float64 `json:"output_copy_s,omitempty"`
	// MemoryFloorBytes is what the runtime holds before any tensor (CUDA
	// context, library workspaces); DeviceMemoryBytes =
	// Totals.PeakMemoryBytes + MemoryFloorBytes, what nvidia-smi would show.
	MemoryFloorBytes  float64 `json:"memory_floor_bytes"`
	DeviceMemoryBytes float64 `json:"device_memory_bytes"`
	// ArenaReservedBytes, under a runtime that allocates from
	// onnxruntime's BFC arena (hwdb.Runtime.BFCArena), is what its
	// regions hold after two runs; DeviceMemoryBytes is then the weights,
	// this and the floor. MemoryPatternBytes is the memory pattern's
	// block, which every run after the first allocates.
	ArenaReservedBytes float64 `json:"arena_reserved_bytes,omitempty"`
	MemoryPatternBytes float64 `json:"memory_pattern_bytes,omitempty"`
	// Notes say in words what was applied (the launch_us scaling above
	// all, which a --gpu-file user would otherwise not see).
	Notes []string `json:"notes"`
}

// LibraryLaunchHostS is the host time of a kernel launched from inside a
// library call (cuDNN's own transposes, which a profile shows it
// "dispatches from inside the convolution call"):
// the driver's launch alone, no framework dispatch. meta-pytorch/
// tritonbench PR #1017 times a raw cuLaunchKernel at 3.0-3.3 us on GB200
// (hwdb/runtimes.yaml, onnxruntime dispatch_us); 3 us taken.
const LibraryLaunchHostS = 3e-6

// LibraryLaunchHost is LibraryLaunchHostS under a runtime whose whole op
// dispatch is dispatch: never more than that (a CUDA-graph replay, with no
// per-kernel host work, stays at none).
func LibraryLaunchHost(dispatch float64) float64 { return min(dispatch, LibraryLaunchHostS) }

// ModuleScoped reports whether a node name carries an exporter's module
// scope: torch.onnx names a node after the modules that called it,
// "/layer1/layer1.0/conv1/Conv" (module path, then the op; ir.NamePath
// reads it); a graph built op by op ("matmul_0") has none. NodeCost.Module
// says the same of a report that has it, for the dynamo exporter's nodes
// too; the name serves reports saved before it.
func ModuleScoped(name string) bool { return ir.NamePath(name) != "" }

// ScopedName is the node's name with its module path in front when the
// name lacks it (a dynamo export's "node_conv2d" called from
// /layer1/layer1.0/layer1.0.conv1): what tools that read the module from
// a TorchScript-style name (pprof stacks) can split.
func (n *NodeCost) ScopedName() string {
	if n.Module == "" || ModuleScoped(n.Name) {
		return n.Name
	}
	return n.Module + "/" + n.Name
}

// HostCopyS is the time one call spends copying its inputs and outputs
// between host and device memory.
func (r *Runtime) HostCopyS() float64 { return r.InputCopyS + r.OutputCopyS }
