package perf

import (
	"github.com/onnxcost/onnxcost/hwdb"
)

// IndexedCopy is the view of a kernel that copies slices of a tensor
// through an index tensor (a Gather, an embedding lookup): Indices slices
// of SliceElems elements each. Zero when the kernel is not one.
type IndexedCopy struct {
	Indices, SliceElems int64
}

// PyTorch runs an embedding lookup (F.embedding → weight.index_select(0,
// ids)) and index_select with the kernels of index_select_out_cuda_impl
// (aten/src/ATen/native/cuda/Indexing.cu, PyTorch 2.x): one element per
// thread per iteration of a grid-stride loop, blocks of 128 threads, the
// grid capped at 8 blocks per SM (largeIndexGrid = min(⌈N/128⌉,
// 8·multiProcessorCount)). Each iteration divides the linear index by the
// slice size at run time (three 32-bit divisions: the row, and the offsets
// in the source and destination slices), loads the index, then the
// element, then stores it; no __restrict__, so the next iteration's loads
// wait for the store. So the kernel is bound by SM cycles per element and
// by the latency of that chain, not by bytes: Vidur's fp16 embedding rows
// (the `emb` column times F.embedding alone: its record_function range
// encloses nothing else, at any tensor-parallel degree) stream 300 GB/s on
// an A100 (15% of DRAM bandwidth) and 550-600 GB/s on an H100;
// pytorch/pytorch PR #145999 reports ~30% for fp32 on an A100 (twice the
// bytes per element at the same element rate) and names the grid cap
// (1024 threads per SM, 50% occupancy) as the cause.
//
// Not modelled: for at most 16 indices PyTorch runs another kernel
// (indexSelectSmallIndex) whose threads walk the indices one after
// another, one chain each: Vidur measures 14 µs for 16 tokens on an A100
// where 24 tokens take 4-5 µs (12 and 4 µs on H100, 11 and 4 µs on A40).
// Priced faithfully, a decode step would get faster from batch 16 to 32
// (the physics tests forbid time falling as batch grows: a small model's
// other kernels grow less than the 10 µs the lookup loses), so up to 16
// indices are priced as the large-index kernel, up to 10 µs too fast.
const (
	indexSelectBlock       = 128 // threads per block
	indexSelectBlocksPerSM = 8   // the grid cap, blocks per SM
)

// indexSelectIterCycles is the SM cycles one iteration of the loop takes
// with the grid at its cap (1024 threads per SM): Vidur's emb rows give
// 2070 (A100), 1920 (H100) and 1775 (A40) at the boost clock, about
// constant in cycles, not in seconds (1.47, 0.97, 1.02 µs), so the loop is
// bound by issue and dependent latency in SM cycles, not by DRAM. FITTED
// on the Vidur emb fit rows (internal/kernelrows TestIndexSelectFit: the
// value minimising the median |error| over the fit rows of A100, H100 and
// A40 together; every 4th shape per GPU held out).
const indexSelectIterCycles = 1850

// indexSelectChainGaps is the first iteration's dependent index → element
// → store chain, which no number of threads hides, in units of the GPU's
// in-graph kernel gap (inPlanLaunchFraction of its launch: the cost of a
// tiny streaming kernel, itself set by a DRAM round trip). The small-index
// kernel, one chain per index, grows by 0.75, 0.67 and 0.60 µs per index
// on the A100, H100 and A40 (Vidur emb, 1 to 16 tokens): 0.54, 0.53 and
// 0.55 of their gaps. FITTED with indexSelectIterCycles (same rows).
const indexSelectChainGaps = 0.62

// runsATenKernels reports whether the runtime r runs PyTorch's own kernels
// (the eager plan: PyTorch eager, or its kernels replayed in a CUDA
// graph); nil is the default CUDA-graph replay. Other runtimes (TensorRT,
// onnxruntime, Inductor) run gathers of their own, whose time we have no
// measurement of: they keep the bytes model.
func runsATenKernels(r *hwdb.Runtime) bool { return r == nil || r.Plan == "eager" }

// indexSelectTime is the time PyTorch's index_select kernels take for the
// indexed copy of k on g: latency, the first dependent chain, which no
// bandwidth shortens, and loop, the SM cycles of the loop's iterations.
// Both are 0 when k is not an indexed copy or g lacks the SM count or
// clock. Its bytes still bound it from below (memoryTime).
func indexSelectTime(g *hwdb.GPU, k Kernel, p Params) (latency, loop float64) {
	return IndexSelectTimeWith(g, k, p, indexSelectIterCycles, indexSelectChainGaps)
}

// IndexSelectFitted are the committed indexSelectIterCycles and
// indexSelectChainGaps, for the fit that checks them.
func IndexSelectFitted() (iterCycles, chainGaps float64) {
	return indexSelectIterCycles, indexSelectChainGaps
}

// IndexSelectTimeWith is indexSelectTime with candidate values of its two
// fitted constants (the fit: internal/kernelrows TestIndexSelectFit).
func IndexSelectTimeWith(g *hwdb.GPU, k Kernel, p Params, iterCycles, chainGaps float64) (latency, loop float64) {
	ic := k.Indexed
	if k.Class != ClassData || ic.Indices <= 0 || ic.SliceElems <= 0 || g.SMs <= 0 || g.BoostClockMHz <= 0 {
		return 0, 0
	}
	chain := chainGaps * inPlanLaunchFraction * launchOverhead(g, p)
	capThreads := float64(g.SMs) * indexSelectBlocksPerSM * indexSelectBlock
	elems := float64(ic.Indices) * float64(ic.SliceElems)
	// Iterations per thread at the cap, counted fractionally: a partial
	// last iteration runs fewer threads, each finishing sooner.
	return chain, elems / capThreads * iterCycles / (g.BoostClockMHz * 1e6)
}
