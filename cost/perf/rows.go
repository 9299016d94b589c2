package perf

import (
	"math"

	"github.com/onnxcost/onnxcost/hwdb"
)

// Row-wise reductions (softmax, LayerNorm, RMSNorm, a reduction over the
// last axis) run one row per CTA (or per warp for short rows), and two
// physical limits make their memory time depend on the row shape, not
// only on the bytes:
//
// On-chip capacity. A kernel that holds its row on chip (registers, or
// shared memory: PyTorch's persistent softmax for rows up to 1024
// elements, its shared-memory softmax and Apex/FasterTransformer-style
// LayerNorms for rows up to the per-block shared-memory limit) reads the
// row once. A row bigger than that limit must be streamed again for each
// dependent pass: softmax reads it for the maximum, again for the sum of
// exponentials and a third time to normalise and write; a LayerNorm or
// RMSNorm reads it for the statistics and again to normalise. The limit
// is the 48 KiB of shared memory a CTA may use without the dynamic opt-in
// (CUDA C Programming Guide, "Shared Memory", compute capability 3.x-9.0),
// the common case for library kernels that must run on every GPU: 24k fp16
// or 12k fp32 elements. So a softmax over 32k fp16 elements moves about
// (3 reads + 1 write)/(1 + 1) = 2× the bytes of the same tensor in short
// rows, and a LayerNorm 1.5×; the repeated reads are priced like the
// first, from the level the tensor lives in (a multi-pass kernel's CTAs
// stream their rows concurrently, so the earlier passes' data are evicted
// before they are read again unless the whole tensor fits in L2).
//
// Grid under-fill. With fewer rows than the GPU can stream at once, the
// bandwidth is what those CTAs can draw. A CTA's bandwidth is bounded by
// the bytes it keeps in flight over the memory latency (Little's law):
// rowCTAInflightBytes / rowMemLatencyS, about 7 GB/s; a GPU of 2 TB/s
// needs ~300 busy rows to reach its bandwidth, so a decode step's norms
// over a few tokens take the same few microseconds at any token count, as
// Vidur's do.
const (
	// rowOnChipBytes is the largest row a single-pass kernel keeps on chip.
	rowOnChipBytes = 48 << 10
	// rowCTAInflightBytes is what one row's CTA keeps in flight: 3 KiB,
	// 192 threads with one 16-byte vector each, or 768 with one fp32
	// element. FITTED: the least median |error| over Vidur's norm fit rows
	// as kernel durations (sarathi's RMSNorm, PyTorch's LayerNorm; A100,
	// H100, A40 together: internal/kernelrows TestRowInflightFit), 10.56%
	// at 3 KiB (held out 10.60%; 4 KiB 10.62%, held out 10.69%) with a
	// norm's scale and bias priced at full bandwidth (rowStreamTime);
	// with them in the rows' stream, 4 KiB had fitted best (10.58%, held
	// out 10.60%). The 32 KiB of "1024 threads with two 16-byte loads
	// each" gave 11.2% and a P90 of 39% (25% now): the few-token rows,
	// priced 2-6× too fast. The norms' slopes alone say 1-2 KiB
	// (sarathi's 1024 scalar fp16 loads, PyTorch's 128 threads of 8-byte
	// vectors) per round trip, but not every byte priced waits on DRAM:
	// the writes and the second pass's L2 hits do not.
	rowCTAInflightBytes = 3 << 10
	// rowMemLatencyS is the DRAM load latency under load, ~600 ns on
	// Volta-Hopper GPUs (microbenchmark papers report 400-700 ns idle to
	// loaded; Jia et al., "Dissecting the NVIDIA Volta GPU architecture
	// via microbenchmarking", arXiv:1804.06826).
	rowMemLatencyS = 600e-9
)

// rowMemoryTime is the memory time of a row-wise reduction streaming at
// bandwidth bw (already scaled by the achievable fraction): its bytes,
// plus RowPasses−1 more reads of the input when a row does not fit on
// chip, at the bandwidth the busy rows can draw.
func rowMemoryTime(g *hwdb.GPU, k Kernel, bw float64) float64 {
	return rowMemoryTimeWith(k, bw, rowCTAInflightBytes)
}

// rowMemoryTimeWith is rowMemoryTime with inflight bytes per row's CTA.
func rowMemoryTimeWith(k Kernel, bw, inflight float64) float64 {
	if bw <= 0 {
		return 0
	}
	return rowStreamTime(k.Bytes+rowExtraBytes(k), rowSharedBytes(k), bw, rowFillBandwidthWith(k, inflight))
}

// rowStreamTime is the time to move bytes at bandwidth bw when the rows'
// own share of them (all but shared, the bytes every row reads in common)
// can draw at most fill: the shared bytes cost no round trips of a row's
// stream (one DRAM read, then L2 hits alongside each row's loads). Priced
// at the fill rate with the rows', a norm's scale and bias made its time
// fall as rows were added (a decode step's LayerNorms at batch 2 below
// batch 1), the fill rate growing with the rows and the weights not.
func rowStreamTime(bytes, shared, bw, fill float64) float64 {
	return (bytes-shared)/min(bw, fill) + shared/bw
}

// rowSharedBytes is k's RowShared, within its bytes.
func rowSharedBytes(k Kernel) float64 { return min(max(k.RowShared, 0), k.Bytes) }

// RowMemoryWith is an isolated row-wise kernel's memory-side time (its
// stream at the level its working set sits in, combined with its SM-side
// limit as EstimateKernel combines them) with a candidate inflight bytes
// per row's CTA, for the fit that checks rowCTAInflightBytes.
func RowMemoryWith(g *hwdb.GPU, k Kernel, p Params, inflight float64) float64 {
	bw, _ := bandwidthFor(g, k.WorkingSet, p)
	return softSum(rowMemoryTimeWith(k, bw*p.MemEff, inflight), pointwiseS(g, k, p))
}

// RowInflightFitted is the committed rowCTAInflightBytes.
func RowInflightFitted() float64 { return rowCTAInflightBytes }

// rowExtraBytes is the RowPasses−1 further reads of the input a row-wise
// kernel makes when its row does not fit on chip; 0 when it does.
func rowExtraBytes(k Kernel) float64 {
	rowBytes := float64(k.RowLen) * elemBytesOr4(k.ElemBytes)
	if rowBytes > rowOnChipBytes && k.RowPasses > 1 {
		return (k.RowPasses - 1) * float64(k.Rows) * rowBytes
	}
	return 0
}

// rowFillBandwidth is the bandwidth k's rows can draw with their bytes
// in flight (Little's law); +Inf when the kernel has no rows.
func rowFillBandwidth(k Kernel) float64 {
	return rowFillBandwidthWith(k, rowCTAInflightBytes)
}

func rowFillBandwidthWith(k Kernel, inflight float64) float64 {
	if k.Rows <= 0 {
		return math.Inf(1)
	}
	return float64(k.Rows) * rowCTAs(k) * inflight / rowMemLatencyS
}

// rowCTAs is how many CTAs stream one row: one for a row that fits a
// CTA's on-chip share (rowOnChipBytes), which is what Vidur's norms, the
// fit of rowCTAInflightBytes, measure (rows of 5-16 KiB); a longer row
// one per share. Reduction kernels split a long row over CTAs and combine
// their partial results (PyTorch's reduce kernel does when it has fewer
// outputs than SMs to fill), so a sum over a whole tensor streams like
// any kernel of its size; a norm over a long row (a group norm's group)
// is priced the same way, its statistics gathered by several CTAs, an
// assumption no data here checks.
func rowCTAs(k Kernel) float64 {
	rowBytes := float64(k.RowLen) * elemBytesOr4(k.ElemBytes)
	return max(1, math.Ceil(rowBytes/rowOnChipBytes))
}

// elemBytesOr4 is an element size, 4 (fp32) when unset.
func elemBytesOr4(eb float64) float64 {
	if eb <= 0 {
		return 4
	}
	return eb
}
