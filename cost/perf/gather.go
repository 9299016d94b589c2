package perf

import (
	"math"

	"github.com/onnxcost/onnxcost/hwdb"
)

// IndexedCopy is the view of a kernel that copies slices of a tensor
// through an index tensor (a Gather, an embedding lookup): Indices slices
// of SliceElems elements each. Zero when the kernel is not one.
type IndexedCopy struct {
	Indices, SliceElems int64
	// Rows marks slices that are whole rows of the data: every dimension
	// before the gathered axis has size 1 (an embedding table's axis 0),
	// so each slice is one contiguous run, as PyTorch's vectorized gather
	// needs (vectorGather).
	Rows bool
}

// PyTorch before 2.8 runs an embedding lookup (F.embedding →
// weight.index_select(0, ids)) and index_select of more than 16 indices
// with indexSelectLargeIndex (index_select_out_cuda_impl,
// aten/src/ATen/native/cuda/Indexing.cu; 2.8 and later: below): one element per
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

// PyTorch 2.8 and later run index_select differently (pytorch/pytorch
// PR #151715, "Use gather in index_select", April 2025, on top of PR
// #151490's faster gather): for more than 16 indices
// index_select_out_cuda_impl calls gather_out with the index expanded
// over the slice, and the gather takes vectorized_gather_kernel when
// TensorIterator leaves it two dimensions with contiguous slices whose
// bytes and pointers are whole 16-byte vectors
// (fast_gather_kernel_eligible, aten/src/ATen/native/cuda/
// IndexKernelUtils.h): one block per index, each thread one 16-byte load
// and store, so the bytes bound it. Every embedding lookup of our H200's
// PyTorch 2.11 Kineto traces (calib/profile/testdata/kineto_h200) ran it,
// grid [indices, 1, 1]: GPT-2's token and position tables (2,048 and 64
// rows of 512 bytes: 2.75 and 1.41 µs), the small LLaMA's (512 rows,
// 2.18 µs) and BERT's three (128 rows of 3 KB, 1.66-2.21 µs); the
// indexSelectLargeIndex loop above priced GPT-2's token lookup at 5.05
// µs. Otherwise (a gather along an inner axis, slices not whole vectors)
// the gather runs its generic loop, _scatter_gather_elementwise_kernel,
// which works out each element's three offsets as TensorIterator's
// strided loop does. Up to 16 indices still run indexSelectSmallIndex;
// priced as the gather for the reason given above (time may not fall as
// the indices grow), which under-prices it as before. Vidur's rows were
// measured on an older PyTorch: a runtime with IndexSelectGather 0 keeps
// the loop they fitted.

// GathersIndexSelect reports whether r's PyTorch runs index_select as a
// gather (hwdb.Runtime.IndexSelectGather); nil, the default CUDA-graph
// replay, does.
func GathersIndexSelect(r *hwdb.Runtime) bool { return r == nil || r.IndexSelectGather > 0 }

// vectorGather reports whether the indexed copy k runs PyTorch's
// vectorized gather: its slices are whole rows of the data, each a whole
// number of 16-byte vectors at the priced element size.
func vectorGather(k Kernel) bool {
	ic := k.Indexed
	return ic.Rows && math.Mod(float64(ic.SliceElems)*elemBytesOr4(k.ElemBytes), 16) == 0
}

// scatterGatherUnroll is the elements a thread of the generic gather loop
// takes whatever their size (_scatter_gather_elementwise_kernel's
// thread_work_size, ScatterGatherKernel.cu), one after another as in
// ATen's strided loop.
const scatterGatherUnroll = 4

// indexedCopyTime is the latency and SM time of the indexed copy k on g
// under the runtime r, which runs ATen's kernels. Where r's PyTorch runs
// index_select as a gather: its index's round trip, which its slices'
// loads wait for (the slices' own first load is the TensorIterator
// kernel's, which cost's analyzer marks: pointwiseLoadCycles, so a lone
// kernel repeated pays neither twice), then, in the generic loop, the
// strided loop's index arithmetic; the vectorized copy's bytes do the
// rest. Otherwise the indexSelectLargeIndex loop's.
func indexedCopyTime(g *hwdb.GPU, k Kernel, p Params, r *hwdb.Runtime) (latency, compute float64) {
	if !GathersIndexSelect(r) {
		return indexSelectTime(g, k, p)
	}
	ic := k.Indexed
	if k.Class != ClassData || ic.Indices <= 0 || ic.SliceElems <= 0 || g.SMs <= 0 || g.BoostClockMHz <= 0 {
		return 0, 0
	}
	index := PointwiseLoadS(g)
	if vectorGather(k) {
		return index, 0
	}
	latency = index + StridedLoopS(g, scatterGatherUnroll)
	if lanes := intLanesPerSM(g); lanes > 0 {
		compute = float64(ic.Indices) * float64(ic.SliceElems) * stridedElemInstr / (lanes * float64(g.SMs) * g.BoostClockMHz * 1e6)
	}
	return latency, compute
}

// GatherCTAs is the CTAs PyTorch's vectorized_gather_kernel launches for
// the indexed copy k under r, one per index and 4 KB of its slice (grid
// [indices, ⌈slice bytes / 4,096⌉], at most 256 threads of one 16-byte
// vector each); 0 where r runs another kernel for it. Each is a small CTA
// for a tiny piece of work, which the SMs retire at their lifetime over
// the CTAs an SM holds (GatherCTAThreads sizes them) whatever their
// bytes (Kernel.SmallCTAs, smallctas.go), as cuDNN's NCHW batch norm's
// are. Not fitted here: GPT-2's token lookup (2,048 CTAs of 512 bytes,
// 1.23 µs at that rate on the H200 against 0.54 µs of bytes) ran 1.34 µs
// longer than its 64-row position lookup.
func GatherCTAs(k Kernel, r *hwdb.Runtime) float64 {
	if k.Class != ClassData || k.Indexed.Indices <= 0 || !runsATenKernels(r) || !GathersIndexSelect(r) || !vectorGather(k) {
		return 0
	}
	slice := float64(k.Indexed.SliceElems) * elemBytesOr4(k.ElemBytes)
	return float64(k.Indexed.Indices) * math.Ceil(slice/4096)
}

// GatherCTAThreads is the threads of each of GatherCTAs' CTAs: one
// 16-byte vector of the slice's 4 KB piece each, at most 256.
func GatherCTAThreads(k Kernel) int64 {
	slice := float64(k.Indexed.SliceElems) * elemBytesOr4(k.ElemBytes)
	return int64(max(min(math.Ceil(min(slice, 4096)/16), 256), 1))
}

// smallIndexMax is the most indices PyTorch's index_select copies with
// indexSelectSmallIndex (index_select_out_cuda_impl).
const smallIndexMax = 16

// IndexedCopyKernel names the kernel PyTorch runs for the indexed copy k
// under r, as a node's note says it: the small-index kernel (priced as
// the larger lookups' kernel: see above), the vectorized gather, the
// generic gather loop, or the older index_select loop.
func IndexedCopyKernel(k Kernel, r *hwdb.Runtime) string {
	ic := k.Indexed
	switch {
	case ic.Indices <= 0:
		return ""
	case ic.Indices <= smallIndexMax && GathersIndexSelect(r) && vectorGather(k):
		return "PyTorch's indexSelectSmallIndex (at most 16 indices), priced as its vectorized_gather_kernel, which it outlasts"
	case ic.Indices <= smallIndexMax:
		return "PyTorch's indexSelectSmallIndex (at most 16 indices), priced as the larger lookups' kernel, which it outlasts"
	case !GathersIndexSelect(r):
		return "PyTorch's indexSelectLargeIndex loop (index_select before PyTorch 2.8: the runtime's index_select_gather is 0)"
	case vectorGather(k):
		return "PyTorch's vectorized_gather_kernel: one CTA an index, its row copied as 16-byte vectors"
	}
	return "PyTorch's generic gather loop (_scatter_gather_elementwise_kernel): its slices are not whole rows of 16-byte vectors"
}

// runsATenKernels reports whether the runtime r runs PyTorch's own kernels
// (the eager plan: PyTorch eager, or its kernels replayed in a CUDA
// graph); nil is the default CUDA-graph replay. Other runtimes (TensorRT,
// onnxruntime, Inductor) run gathers of their own, whose time we have no
// measurement of: they keep the bytes model.
func runsATenKernels(r *hwdb.Runtime) bool { return r == nil || r.Plan == "eager" }

// indexSelectTime is the time the index_select kernels of PyTorch before
// 2.8 take for the indexed copy of k on g: latency, the first dependent chain, which no
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
