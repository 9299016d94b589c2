package generate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/onnxcost/onnxcost/calib"
	"github.com/onnxcost/onnxcost/cost/render"
)

// Serving at steady state with continuous batching (Config.Concurrency):
// the throughput and latency a server reaches when C requests, each of
// Prompt = N tokens in and Output = M tokens out, are in flight at all
// times. The model:
//
//   - A closed loop: a request that finishes is replaced at once, so C
//     slots are always busy (a benchmark client with C workers).
//   - Each decode step serves every slot, one token for each of the C
//     sequences. The slots are at staggered points of their requests, so
//     their cache lengths spread evenly over N … N+M−2; a step's time
//     being linear in the cache lengths summed over the batch (Run's
//     fit), it is what a batch of C sequences at the mean length
//     N+(M−2)/2 costs. D(C) is that: batch C costed at the first and the
//     last length and the two averaged, the line through them at the
//     mean. The decode batch is C even while a slot prefills: the
//     newcomer's slot is counted busy.
//   - Each arriving request's prefill (N tokens over an empty cache,
//     which yields its first token) runs alone, at batch 1, between two
//     decode steps, which wait for it. Prefills are neither batched
//     together nor chunked into decode steps (chunked prefill, the named
//     alternative, spreads the same work more smoothly). P is its time.
//   - A cycle, in which every slot completes one request, so holds C
//     prefills and M−1 decode steps at batch C:
//     cycle = C·P + (M−1)·D(C), for C·M output tokens;
//     output tokens/s = C·M / cycle (the tensor-parallel group's; per
//     GPU, divided by GPUs).
//   - TPOT = cycle / (M−1) = D(C) + C·P/(M−1): a decode step plus the
//     share of the prefills interleaved with a request's decode.
//   - TTFT = D(C) + P: the request waits for the decode step in flight
//     (a whole step, the upper end; half a step on average) and then its
//     prefill runs. Waiting behind other requests' prefills is left out.
//   - e2e = TTFT + (M−1)·TPOT.
//   - Energy per output token = GPUs·(C·E(P) + (M−1)·E(D(C))) / (C·M),
//     the cost model's energy of the same steps (one GPU's, times the
//     GPUs; all-reduce energy and idle power between steps not counted).
//   - Cost per million output tokens = price per GPU-hour · GPUs / 3600
//     / (output tokens/s) · 10⁶.
//   - Memory: each slot's cache is reserved at its final length N+M (as
//     a scheduler that never evicts reserves it), so C·(N+M) positions,
//     of which one GPU holds its heads' share under tensor parallelism
//     (kvShare); the peak adds the weights and the larger of a prefill's
//     and the last decode step's other live tensors. Peak memory grows with C,
//     so the curve stops at the largest listed concurrency that fits,
//     and the largest that fits at all is found as MaxBatch is.

// ServingLeavesOut is what the serving model does not model, as the
// output states it.
const ServingLeavesOut = "scheduling policy details (prefill priority, admission, preemption), paged-attention block waste, speculative decoding, request-length variance (every request is exactly the prompt and output given), prefills queueing behind one another"

// ServingPoint is the steady state at one concurrency.
type ServingPoint struct {
	Concurrency int64 `json:"concurrency"`
	// DecodeStepS is D(C): one decode step at batch C, the cache at the
	// mean length.
	DecodeStepS float64 `json:"decode_step_s"`
	// TTFTS = DecodeStepS + the prefill; TPOTS = cycle/(M−1) (0 when
	// Output is 1); E2ES = TTFTS + (M−1)·TPOTS.
	TTFTS float64 `json:"ttft_s"`
	TPOTS float64 `json:"tpot_s"`
	E2ES  float64 `json:"e2e_s"`
	// TTFTIntervalS, TPOTIntervalS and E2EIntervalS are their 80%
	// intervals: the same sums of the prefill's and the decode steps'
	// bounds (their errors move together); absent where a step has none
	// (TPOT's with one output token).
	TTFTIntervalS []float64 `json:"ttft_interval_s,omitempty"`
	TPOTIntervalS []float64 `json:"tpot_interval_s,omitempty"`
	E2EIntervalS  []float64 `json:"e2e_interval_s,omitempty"`
	// OutputTokensPerS is C·M/cycle, the whole tensor-parallel group's;
	// OutputTokensPerSPerGPU divides it by the GPUs.
	OutputTokensPerS       float64 `json:"output_tokens_per_s"`
	OutputTokensPerSPerGPU float64 `json:"output_tokens_per_s_per_gpu"`
	// EnergyPerTokenJ is every GPU's energy over a cycle per output token.
	EnergyPerTokenJ float64 `json:"energy_per_output_token_j"`
	// USDPerMillionTokens is the GPUs' price over the time of a million
	// output tokens; absent without a price.
	USDPerMillionTokens float64 `json:"usd_per_million_output_tokens,omitempty"`
	// KVCacheBytes is C caches reserved at Prompt+Output positions,
	// KVCacheBytesPerGPU one GPU's part of them; PeakMemoryBytes one
	// GPU's peak, at most the usable memory.
	KVCacheBytes       float64 `json:"kv_cache_bytes"`
	KVCacheBytesPerGPU float64 `json:"kv_cache_bytes_per_gpu"`
	PeakMemoryBytes    float64 `json:"peak_memory_bytes"`
}

// ServingModel is what the serving curve shares.
type ServingModel struct {
	// Model states the model in words; LeavesOut what it leaves out.
	Model     string `json:"model"`
	LeavesOut string `json:"leaves_out"`
	// PrefillS is one request's prefill, batch 1 (P).
	PrefillS float64 `json:"prefill_s"`
	// KVCacheBytesPerRequest is one request's cache at Prompt+Output
	// positions.
	KVCacheBytesPerRequest float64 `json:"kv_cache_bytes_per_request"`
	// Capped lists the concurrencies asked for that do not fit in
	// memory, left off the curve; MaxConcurrency is the largest that fits
	// (0: not even 1, or the GPU's memory is unknown).
	Capped         []int64 `json:"capped"`
	MaxConcurrency int64   `json:"max_concurrency"`
	// PriceUSDPerGPUHour prices the tokens (0: no price).
	PriceUSDPerGPUHour float64 `json:"price_usd_per_gpu_hour"`
}

// ServingBest is the point the service-level objectives pick.
type ServingBest struct {
	// TTFTSLOS and TPOTSLOS are the targets (0: none).
	TTFTSLOS float64 `json:"ttft_slo_s"`
	TPOTSLOS float64 `json:"tpot_slo_s"`
	// Point is the highest-throughput point meeting every target (the
	// lower concurrency on a tie); null when none does.
	Point *ServingPoint `json:"point"`
	// Verdict says so in words.
	Verdict string `json:"verdict"`
}

// checkServing refuses serving settings that cannot be costed.
func checkServing(cfg Config) error {
	name := cfg.Model
	for _, c := range cfg.Concurrency {
		if c < 1 || c > maxBatchLimit {
			return inputErr("%s: --concurrency %d is not between 1 and %d", name, c, maxBatchLimit)
		}
	}
	for _, f := range []struct {
		flag string
		v    float64
	}{{"--ttft-slo", cfg.TTFTSLOS}, {"--tpot-slo", cfg.TPOTSLOS}, {"--price", cfg.PriceUSDPerGPUHour}} {
		switch {
		case f.v < 0 || f.v != f.v:
			return inputErr("%s: %s must be positive, got %g", name, f.flag, f.v)
		case f.v > 0 && len(cfg.Concurrency) == 0:
			return inputErr("%s: %s applies to the serving curve: give --concurrency", name, f.flag)
		}
	}
	return nil
}

// serve adds the serving curve of Config.Concurrency to res.
func (r *runner) serve(res *Result) error {
	cs := slices.Clone(r.cfg.Concurrency)
	if len(cs) == 0 {
		return nil
	}
	slices.Sort(cs)
	cs = slices.Compact(cs)
	n, m := r.cfg.Prompt, r.cfg.Output
	pre, err := r.cost(1, 0, n)
	if err != nil {
		return err
	}
	sm := &ServingModel{
		Model: fmt.Sprintf("continuous batching at steady state: per cycle of C requests, C prefills of %d tokens one at a time (batch 1) and %d decode step(s) at batch C with the cache at its mean length %g; TTFT = a decode step + a prefill, TPOT = cycle/%d",
			n, m-1, float64(n)+float64(m-2)/2, max(m-1, 1)),
		LeavesOut: ServingLeavesOut, PrefillS: pre.timeS, KVCacheBytesPerRequest: pre.present * float64(n+m) / float64(n),
		Capped: []int64{}, PriceUSDPerGPUHour: r.cfg.PriceUSDPerGPUHour,
	}
	if m == 1 {
		sm.Model = fmt.Sprintf("continuous batching at steady state: one output token, so each request is its prefill of %d tokens alone (batch 1), one after another; no decode step", n)
	}
	limit := res.MemoryLimitBytes
	// lasts memoises the last decode step per batch: the curve and the
	// search for the largest concurrency share them.
	lasts := map[int64]step{}
	peak := func(c int64) (float64, error) {
		other := pre.peak - pre.present
		if m > 1 {
			last, ok := lasts[c]
			if !ok {
				var err error
				if last, err = r.cost(c, n+m-2, 1); err != nil {
					return 0, err
				}
				lasts[c] = last
			}
			other = max(other, last.peak-last.present)
		}
		return other + float64(c)*sm.KVCacheBytesPerRequest*r.kvShare, nil
	}
	res.Serving = []ServingPoint{}
	for _, c := range cs {
		if len(sm.Capped) > 0 {
			sm.Capped = append(sm.Capped, c) // peak memory grows with C
			continue
		}
		p, err := peak(c)
		if err != nil {
			return err
		}
		if limit > 0 && p > limit {
			sm.Capped = append(sm.Capped, c)
			continue
		}
		kv := float64(c) * sm.KVCacheBytesPerRequest
		pt := ServingPoint{Concurrency: c, PeakMemoryBytes: p, KVCacheBytes: kv, KVCacheBytesPerGPU: kv * r.kvShare}
		var decodeJ, decodeLo, decodeHi float64
		if m > 1 {
			first, last := lasts[c], lasts[c]
			if m > 2 {
				if first, err = r.cost(c, n, 1); err != nil {
					return err
				}
			}
			pt.DecodeStepS = (first.timeS + last.timeS) / 2
			decodeJ = (first.energyJ + last.energyJ) / 2
			decodeLo, decodeHi = (first.lo+last.lo)/2, (first.hi+last.hi)/2
			if !(first.hi > 0 && last.hi > 0) {
				decodeHi = 0
			}
		}
		r.price(&pt, pre, decodeJ, res.GPUs)
		r.priceIntervals(&pt, pre, decodeLo, decodeHi)
		res.Serving = append(res.Serving, pt)
	}
	p0, err := peak(cs[0])
	if err != nil {
		return err
	}
	if sm.MaxConcurrency, err = largestFitting(limit, cs[0], p0, peak); err != nil {
		return err
	}
	res.ServingModel = sm
	if r.cfg.TTFTSLOS > 0 || r.cfg.TPOTSLOS > 0 {
		res.Best = pickBest(res.Serving, r.cfg.TTFTSLOS, r.cfg.TPOTSLOS)
	}
	return nil
}

// price fills pt's times, throughput, energy and cost from the prefill
// and the decode step at its concurrency (pt.DecodeStepS, decodeJ).
func (r *runner) price(pt *ServingPoint, pre step, decodeJ float64, gpus int) {
	c, m := float64(pt.Concurrency), float64(r.cfg.Output)
	steps := m - 1
	cycle := c*pre.timeS + steps*pt.DecodeStepS
	pt.TTFTS = pt.DecodeStepS + pre.timeS
	if steps > 0 {
		pt.TPOTS = cycle / steps
	}
	pt.E2ES = pt.TTFTS + steps*pt.TPOTS
	if cycle > 0 {
		pt.OutputTokensPerS = c * m / cycle
		pt.OutputTokensPerSPerGPU = pt.OutputTokensPerS / float64(gpus)
	}
	pt.EnergyPerTokenJ = float64(gpus) * (c*pre.energyJ + steps*decodeJ) / (c * m)
	if p := r.cfg.PriceUSDPerGPUHour; p > 0 && pt.OutputTokensPerS > 0 {
		pt.USDPerMillionTokens = USDPerMillionTokens(p, gpus, pt.OutputTokensPerS)
	}
}

// priceIntervals sets pt's intervals from the prefill's bounds and the
// decode step's (decodeLo, decodeHi; 0 when it has none) by price's
// sums, which have positive coefficients, so the bounds map to bounds.
func (r *runner) priceIntervals(pt *ServingPoint, pre step, decodeLo, decodeHi float64) {
	if !(pre.hi > 0) {
		return
	}
	c, steps := float64(pt.Concurrency), float64(r.cfg.Output-1)
	if steps > 0 && !(decodeHi > 0) {
		return
	}
	bound := func(preT, d float64) (ttft, tpot, e2e float64) {
		ttft = calib.RoundBound(d + preT)
		if steps > 0 {
			tpot = calib.RoundBound((c*preT + steps*d) / steps)
		}
		return ttft, tpot, calib.RoundBound(ttft + steps*tpot)
	}
	tl, pl, el := bound(pre.lo, decodeLo)
	th, ph, eh := bound(pre.hi, decodeHi)
	pt.TTFTIntervalS, pt.E2EIntervalS = interval(tl, th), interval(el, eh)
	if steps > 0 {
		pt.TPOTIntervalS = interval(pl, ph)
	}
}

// USDPerMillionTokens is what a million output tokens cost at
// tokensPerS on gpus GPUs at usdPerGPUHour each.
func USDPerMillionTokens(usdPerGPUHour float64, gpus int, tokensPerS float64) float64 {
	return usdPerGPUHour * float64(gpus) / 3600 * (1e6 / tokensPerS)
}

// pickBest picks the highest-throughput point with TTFT ≤ ttft and TPOT
// ≤ tpot (a target of 0 is none), the lower concurrency on a tie.
func pickBest(pts []ServingPoint, ttft, tpot float64) *ServingBest {
	b := &ServingBest{TTFTSLOS: ttft, TPOTSLOS: tpot}
	for i := range pts {
		p := &pts[i]
		if (ttft > 0 && p.TTFTS > ttft) || (tpot > 0 && p.TPOTS > tpot) {
			continue
		}
		if b.Point == nil || p.OutputTokensPerS > b.Point.OutputTokensPerS {
			b.Point = p
		}
	}
	var targets []string
	if ttft > 0 {
		targets = append(targets, fmt.Sprintf("TTFT ≤ %s", render.Seconds(ttft)))
	}
	if tpot > 0 {
		targets = append(targets, fmt.Sprintf("TPOT ≤ %s", render.Seconds(tpot)))
	}
	want := strings.Join(targets, " and ")
	if b.Point == nil {
		b.Verdict = fmt.Sprintf("no concurrency on the curve meets %s", want)
	} else {
		cp := *b.Point
		b.Point = &cp
		b.Verdict = fmt.Sprintf("concurrency %d meets %s at %.1f output tokens/s (TTFT %s, TPOT %s)", cp.Concurrency, want, cp.OutputTokensPerS, render.Seconds(cp.TTFTS), render.Seconds(cp.TPOTS))
	}
	return b
}
