package generate

import _ "embed"

// SchemaVersion versions the JSON form of Result (Schema).
const SchemaVersion = 1

// Schema is the JSON Schema (draft 2020-12) of Result as `onnxcost
// generate --format json` writes it; fields are added, never renamed.
// TestSchema checks real results against it.
//
//go:embed generate.schema.json
var Schema []byte

// Result is what generating Output tokens after a Prompt-token prompt
// costs, for Batch sequences at once. Times are one GPU's (with GPUs > 1,
// each of the tensor-parallel GPUs').
type Result struct {
	SchemaVersion int    `json:"schema_version"`
	ToolVersion   string `json:"tool_version"`
	Model         string `json:"model"`
	GPU           string `json:"gpu"`
	DType         string `json:"dtype"`
	Plan          string `json:"plan"`
	Runtime       string `json:"runtime"`
	// Calibration says which measured calibration corrected the kernel
	// times (cost/report.Report's); absent when none.
	Calibration string `json:"calibration,omitempty"`
	GPUs        int    `json:"gpus"`
	// PowerCapW and SMClockMHz are the power cap and SM clock lock every
	// step was priced under; absent at the GPU's default.
	PowerCapW  float64 `json:"power_cap_w,omitempty"`
	SMClockMHz float64 `json:"sm_clock_mhz,omitempty"`
	Batch      int64   `json:"batch"`
	Prompt     int64   `json:"prompt_tokens"`
	Output     int64   `json:"output_tokens"`
	// CacheDim is the symbol bound to the cached length (the zoo's and
	// Optimum's past_sequence_length); CacheInputs counts the cache
	// inputs (two per layer: keys and values).
	CacheDim    string `json:"cache_dim"`
	CacheInputs int    `json:"cache_inputs"`

	// TTFTS is the prompt's step: Batch prompts of Prompt tokens over an
	// empty cache, which also yields the first output token.
	TTFTS float64 `json:"ttft_s"`
	// TPOTS is the mean time of the Output−1 decode steps (0 when
	// Output is 1); FirstStepS and LastStepS are the first (cache of
	// Prompt positions) and last (Prompt+Output−2) of them, each costed.
	TPOTS      float64 `json:"tpot_s"`
	FirstStepS float64 `json:"first_step_s"`
	LastStepS  float64 `json:"last_step_s"`
	// E2ES = TTFTS + (Output−1)·TPOTS.
	E2ES float64 `json:"e2e_s"`
	// TTFTIntervalS, TPOTIntervalS and E2EIntervalS are the 80%
	// intervals [low, high] of the three times (calib.Interval on each
	// costed step; TPOT's is the decode steps' bounds in proportion to
	// their times, E2E's the bounds summed as E2ES is: the steps' errors
	// move together). Absent where there is none (TPOT with one output
	// token).
	TTFTIntervalS []float64 `json:"ttft_interval_s,omitempty"`
	TPOTIntervalS []float64 `json:"tpot_interval_s,omitempty"`
	E2EIntervalS  []float64 `json:"e2e_interval_s,omitempty"`
	// OutputTokensPerS = Batch·Output / E2ES: every generated token of
	// every sequence, the prompt's step included in the time.
	OutputTokensPerS float64 `json:"output_tokens_per_s"`
	// KVCacheBytes is the whole cache at Prompt+Output positions for
	// Batch sequences, at the compute dtype; KVCacheBytesPerGPU is the
	// part one GPU holds, the cache being split by its KVHeads key/value
	// heads over the GPUs (KVCacheSharding states the rule; one GPU: the
	// whole cache). KVHeads is 0 when the cache inputs' shapes do not
	// show it, and the cache then counts whole on every GPU.
	KVCacheBytes       float64 `json:"kv_cache_bytes"`
	KVCacheBytesPerGPU float64 `json:"kv_cache_bytes_per_gpu"`
	KVHeads            int64   `json:"kv_heads"`
	KVCacheSharding    string  `json:"kv_cache_sharding,omitempty"`
	// PeakMemoryBytes is one GPU's peak over the run: weights (split ones
	// divided over the GPUs), its part of the cache allocated at its final
	// length, and the larger of the prompt step's and the last decode
	// step's other live tensors, replicated on every GPU. Fits compares
	// it with MemoryLimitBytes (the GPU's usable memory).
	PeakMemoryBytes  float64 `json:"peak_memory_bytes"`
	MemoryLimitBytes float64 `json:"memory_limit_bytes"`
	Fits             bool    `json:"fits"`
	// MaxBatch is the largest batch whose peak fits at these lengths (0:
	// not even 1).
	MaxBatch int64 `json:"max_batch"`
	// Fit is how the decode steps' total was found.
	Fit StepFit `json:"decode_fit"`
	// Approximation states Fit in words.
	Approximation string `json:"approximation"`
	// Serving is the steady-state curve of Config.Concurrency (serve.go),
	// one point per concurrency that fits, and ServingModel what the
	// points share; both absent without Config.Concurrency. Best is the
	// point the SLOs pick, absent without an SLO.
	Serving      []ServingPoint `json:"serving,omitzero"`
	ServingModel *ServingModel  `json:"serving_model,omitempty"`
	Best         *ServingBest   `json:"best,omitempty"`
	Warnings     []string       `json:"warnings"`
}

// StepFit describes the decode time: either every step costed
// ("exact") or a line through a few costed cache lengths, summed over
// every step exactly ("linear").
type StepFit struct {
	Method string `json:"method"`
	// Points are the costed steps.
	Points []StepPoint `json:"points"`
	// InterceptS and SlopeS are the line time(past) = InterceptS +
	// SlopeS·past (both 0 when Method is exact).
	InterceptS float64 `json:"intercept_s"`
	SlopeS     float64 `json:"slope_s_per_token"`
	// MaxRelResidual is the largest |time − line| / time over Points.
	MaxRelResidual float64 `json:"max_rel_residual"`
}

// StepPoint is one costed decode step: Past cached positions, one new
// token per sequence.
type StepPoint struct {
	Past  int64   `json:"past"`
	TimeS float64 `json:"time_s"`
}
