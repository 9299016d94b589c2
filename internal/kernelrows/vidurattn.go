package kernelrows

import (
	"fmt"
	"os"
	"strconv"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
)

// Vidur's one attention profile (testdata/vidur_attention): sarathi-serve's
// FLASH_ATTENTION backend on an A100, flash-attn 2's flash_attn_with_kvcache
// over a paged fp16 KV cache (block 16), for CodeLlama-34B at tensor
// parallelism 2: 32 query heads and 4 key/value heads of 128 per GPU.
// Decode rows run one new token for each of batch_size sequences holding
// kv_cache_size tokens; prefill rows one sequence of prefill_chunk_size new
// tokens after kv_cache_size cached ones. Each time is the sum of the CUDA
// kernels the call ran (Kineto), the median of 5 calls, so it holds no
// launch gap.
//
// Each row is priced as the ONNX op that computes it, onnxruntime's
// GroupQueryAttention (com.microsoft) with its present cache the past's
// buffer (past_present_share_buffer, the cache written in place as
// flash_attn_with_kvcache does) and total_sequence_length known: the cache
// rows attended are read, the new rows written. The input and output
// reshapes Vidur times beside the call are copies sarathi's wrapper makes
// around it, not attention, and are left out.

// VidurAttnFile is the profile, relative to the repository root.
const VidurAttnFile = "internal/kernelrows/testdata/vidur_attention/a100_attention.csv.gz"

// SourceVidurAttn is the rows' source.
const SourceVidurAttn = "vidur-attention"

// vidurAttnGPU is the hwdb entry the a100 folder is priced as (vidurGPUs).
const vidurAttnGPU = "A100-SXM4-80GB"

// The profile's model shape per GPU (its n_q_head 64 and n_kv_head 8 at
// num_tensor_parallel_workers 2) and its cache's length (max_model_len).
const (
	vidurAttnHeads   = 32
	vidurAttnKVHeads = 4
	vidurAttnHeadDim = 128
	vidurAttnMaxLen  = 4096
)

// vidurAttnKey is one measured configuration.
type vidurAttnKey struct {
	prefill  bool
	batch    int64 // sequences
	newToks  int64 // new tokens per sequence
	cacheLen int64 // tokens already cached per sequence
}

// LoadVidurAttention reads the profile at file and returns one row per
// configuration (the profile repeats some prefill chunk sizes: the median
// of their medians), decode rows as op "attn_decode", prefill rows as
// "attn_prefill". All are held out: nothing is fitted to them.
func LoadVidurAttention(file string) ([]Row, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, col, err := csvTable(file, f)
	if err != nil {
		return nil, err
	}
	for _, need := range []string{"is_prefill", "batch_size", "prefill_chunk_size", "kv_cache_size",
		"n_q_head", "n_kv_head", "num_tensor_parallel_workers", "n_embd",
		"time_stats.attn_decode.median", "time_stats.attn_prefill.median"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("%s: no %s column", file, need)
		}
	}
	times := map[vidurAttnKey][]float64{}
	var keys []vidurAttnKey
	for i, rec := range recs {
		k, ms, err := vidurAttnRecord(rec, col)
		if err != nil {
			return nil, fmt.Errorf("%s: row %d: %v", file, i+2, err)
		}
		if _, seen := times[k]; !seen {
			keys = append(keys, k)
		}
		times[k] = append(times[k], ms)
	}
	gpu, err := lookupGPU(vidurAttnGPU, file)
	if err != nil {
		return nil, err
	}
	rows := make([]Row, 0, len(keys))
	for _, k := range keys {
		spec := vidurAttnSpec(k)
		kern, err := spec.kernel(gpu)
		if err != nil {
			return nil, fmt.Errorf("%s: %+v: %v", file, k, err)
		}
		op, shape := "attn_decode", fmt.Sprintf("B=%d cache=%d", k.batch, k.cacheLen)
		if k.prefill {
			op, shape = "attn_prefill", fmt.Sprintf("chunk=%d cache=%d", k.newToks, k.cacheLen)
		}
		rows = append(rows, Row{Source: SourceVidurAttn, GPU: vidurAttnGPU, Op: op, Shape: shape,
			Class: kern.Class, Kernel: kern, Compute: "fp16", Setting: perf.InPlan,
			MeasuredS: median(times[k]) * 1e-3, HeldOut: true, spec: &spec})
	}
	return rows, nil
}

// vidurAttnRecord parses one record: its configuration and time in ms.
// It checks the model shape, so that a profile of another shape is
// refused rather than priced as this one.
func vidurAttnRecord(rec []string, col map[string]int) (vidurAttnKey, float64, error) {
	num := func(name string) (int64, error) {
		v, err := strconv.ParseInt(rec[col[name]], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s %q is not an integer", name, rec[col[name]])
		}
		return v, nil
	}
	var k vidurAttnKey
	for _, c := range []struct {
		name string
		want int64
	}{{"n_q_head", 2 * vidurAttnHeads}, {"n_kv_head", 2 * vidurAttnKVHeads},
		{"num_tensor_parallel_workers", 2}, {"n_embd", 2 * vidurAttnHeads * vidurAttnHeadDim}} {
		v, err := num(c.name)
		if err != nil {
			return k, 0, err
		}
		if v != c.want {
			return k, 0, fmt.Errorf("%s %d: the profile this loader reads has %d", c.name, v, c.want)
		}
	}
	var err error
	if k.batch, err = num("batch_size"); err != nil {
		return k, 0, err
	}
	if k.cacheLen, err = num("kv_cache_size"); err != nil {
		return k, 0, err
	}
	timeCol := "time_stats.attn_decode.median"
	switch rec[col["is_prefill"]] {
	case "True":
		k.prefill, timeCol = true, "time_stats.attn_prefill.median"
		if k.newToks, err = num("prefill_chunk_size"); err != nil {
			return k, 0, err
		}
	case "False":
		k.newToks = 1
	default:
		return k, 0, fmt.Errorf("is_prefill %q is not True or False", rec[col["is_prefill"]])
	}
	ms, err := strconv.ParseFloat(rec[col[timeCol]], 64)
	if err != nil || !(ms > 0) {
		return k, 0, fmt.Errorf("%s %q is not a positive number", timeCol, rec[col[timeCol]])
	}
	if k.batch <= 0 || k.newToks <= 0 || k.cacheLen < 0 || k.cacheLen+k.newToks > vidurAttnMaxLen {
		return k, 0, fmt.Errorf("batch %d, %d new tokens after %d cached: outside the profile's %d-token cache", k.batch, k.newToks, k.cacheLen, vidurAttnMaxLen)
	}
	return k, ms, nil
}

// vidurAttnSpec is the GroupQueryAttention node of a configuration: Q, K
// and V of the new tokens, the shared [B, kvH, max_len, d] caches, the
// per-sequence lengths and total_sequence_length as a constant.
func vidurAttnSpec(k vidurAttnKey) nodeSpec {
	b, s := k.batch, k.newToks
	cache := tensorSpec{dt: ir.Float16, dims: []int64{b, vidurAttnKVHeads, vidurAttnMaxLen, vidurAttnHeadDim}}
	kv := tensorSpec{dt: ir.Float16, dims: []int64{b, s, vidurAttnKVHeads * vidurAttnHeadDim}}
	q := tensorSpec{dt: ir.Float16, dims: []int64{b, s, vidurAttnHeads * vidurAttnHeadDim}}
	return nodeSpec{
		op: "GroupQueryAttention", domain: "com.microsoft", compute: "fp16",
		ins: []tensorSpec{q, kv, kv, cache, cache,
			{dt: ir.Int32, dims: []int64{b}},
			{dt: ir.Int32, dims: []int64{1}}},
		consts: map[int][]int64{6: {k.cacheLen + s}},
		out:    q,
		more:   []tensorSpec{cache, cache},
		attrs: []*ir.Attribute{ir.IntAttr("num_heads", vidurAttnHeads),
			ir.IntAttr("kv_num_heads", vidurAttnKVHeads)},
	}
}
