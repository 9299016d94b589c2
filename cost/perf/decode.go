package perf

import "github.com/onnxcost/onnxcost/hwdb"

// AttnDecode is the KV-cache view of an attention kernel whose queries are
// one token per sequence (a decode step), as flash attention's split-KV
// kernel runs it (see decodeStreamS). Zero when the kernel is not one.
type AttnDecode struct {
	// Heads is the number of independent (sequence, KV head) pairs: the
	// query heads that share a KV head (grouped-query attention) are one
	// CTA's rows, so a decode step's CTAs before any split are Heads.
	Heads int64
	// Keys is the keys each query attends to; HeadDim is the head size.
	Keys, HeadDim int64
}

// A decode step's attention reads the whole KV cache to produce one row
// per head: nothing to tile, everything to stream. Flash attention's
// split-KV kernel (flash-attn 2, which onnxruntime's GroupQueryAttention
// and MultiHeadAttention and PyTorch's scaled_dot_product_attention run)
// gives each (sequence, KV head) pair a CTA that walks its keys in blocks
// of decodeBlockKeys, and splits the walk over several CTAs when the pairs
// alone would leave SMs idle (num_splits_heuristic: the fewest splits whose
// waves of CTAs fill the SMs nearly as well as the best). Each CTA runs
// once: its start (the query load, the cache pointers, the first blocks'
// trip from DRAM) and its end (the softmax merge, the output store) are
// not hidden behind other CTAs' streaming as a many-wave GEMM's are, so the
// kernel's fill adds to its stream instead of overlapping it, and the
// stream goes by waves of SM-count blocks, a partial wave costing a whole
// one's step.
//
// Vidur's A100 flash-attention profile (10,112 decode calls, batch 1-128 ×
// 32-4,032 cached tokens, CodeLlama-34B at TP 2: 4 KV heads of 128) priced
// as a plain stream overlapped with the in-plan fill share came out 20.6%
// too fast (median; calls of a few sequences or short caches took 12-60 µs
// where their bytes need 1-20): with the whole fill (AttnFillShare) added
// to the wave-quantized stream, 8.6% (signed −0.3%; internal/kernelrows
// TestVidurAttention). A floor per step (a lone CTA's dependent K and V
// loads) was tried and is not identified by these rows: any value from
// 0.5 to 4 µs leaves the fit half's median within 0.1 point.

// decodeBlockKeys is the keys of one step of flash attention's split-KV
// kernel on Ampere and later (kBlockN of run_mha_fwd_splitkv_dispatch:
// 256 keys for heads up to 64, 128 up to 128, 64 beyond).
func decodeBlockKeys(headDim int64) int64 {
	switch {
	case headDim <= 64:
		return 256
	case headDim <= 128:
		return 128
	}
	return 64
}

// decodeStreamS is the stream time of a decode attention kernel: its K and
// V blocks spread over the SMs, in waves of one block per SM, each wave
// the time its active SMs' blocks take over DRAM bandwidth; 0 when k is
// not one.
func decodeStreamS(g *hwdb.GPU, k Kernel, p Params) float64 {
	d := k.Decode
	if d.Heads <= 0 || d.Keys <= 0 || d.HeadDim <= 0 || g.SMs <= 0 || g.MemBW <= 0 || !(p.MemEff > 0) {
		return 0
	}
	keys := decodeBlockKeys(d.HeadDim)
	blocks := sizeProd(d.Heads, ceilDiv(d.Keys, keys))
	waves := max(ceilDivF(blocks, int64(g.SMs)), 1)
	active := min(blocks, float64(g.SMs))
	blockBytes := 2 * float64(keys) * float64(d.HeadDim) * elemBytesOr4(k.ElemBytes)
	return waves * active * blockBytes / (g.MemBW * decodeStreamEff(g, p))
}

// decodeStreamEff is the fraction of g's DRAM bandwidth a decode attention
// kernel streams its cache at: hopperDecodeStreamEff on Hopper, else MemEff.
func decodeStreamEff(g *hwdb.GPU, p Params) float64 {
	if isHopper(g) {
		return hopperDecodeStreamEff
	}
	return p.MemEff
}

// On Hopper the same kernels stream nearer the datasheet and start
// sooner. Our H200's scaled_dot_product_attention decode calls
// (testdata/measured/h200_sxm_kernels.csv: batch 1-64 over 256-4,096
// cached tokens, 32 heads of 128, fp16 and bf16, each call timed in a
// CUDA graph of 20) were priced 27% too slow with the A100's figures:
// the largest caches streamed at 94-95% of 4.8 TB/s, and a line through
// the calls starts about 5 µs past the launch, half the A100's fill.
// FITTED on the batch-1 and batch-16 calls (stream efficiency and fill
// share on a grid, least median |error|; with the efficiency left free
// the fit drifts to 0.98 and a 0.70 share, so it is held to what plain
// streams reach on both our Hoppers, 0.91-0.95): median |error| 27.9% →
// 3.2%; held out, the batch-4 and batch-64 calls 27.2% → 3.1%
// (internal/kernelrows TestHopperDecodeAttention). Decode kernels only:
// Hopper's prefill attention is unmeasured here, and the A100's (Vidur)
// keeps AttnFillShare and MemEff.
const (
	hopperDecodeStreamEff = 0.93
	hopperDecodeFillShare = 0.40
)

// isHopper reports whether g is a Hopper-family GPU.
func isHopper(g *hwdb.GPU) bool { return g != nil && g.Family() == "Hopper" }
