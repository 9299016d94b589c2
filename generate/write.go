package generate

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/onnxcost/onnxcost/cost/render"
)

// intervalNote is " · 80% interval lo – hi" for a row's time, "" when it
// has none.
func intervalNote(iv []float64) string {
	if len(iv) != 2 {
		return ""
	}
	return fmt.Sprintf(" · 80%% interval %s – %s", render.Seconds(iv[0]), render.Seconds(iv[1]))
}

// WriteText writes the run as `onnxcost generate` prints it.
func WriteText(w io.Writer, res *Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "onnxcost %s · generate %s · %s · dtype %s · runtime %s (%s kernels)", res.ToolVersion, render.Clean(res.Model), render.Clean(res.GPU), res.DType, res.Runtime, res.Plan)
	if res.GPUs > 1 {
		fmt.Fprintf(&b, " · %d GPUs", res.GPUs)
	}
	b.WriteString(render.PowerSetting(res.PowerCapW, res.SMClockMHz, " · "))
	if res.Calibration != "" {
		fmt.Fprintf(&b, "\n%s", res.Calibration)
	}
	fmt.Fprintf(&b, "\nbatch %d · prompt %d tokens · output %d tokens · cache %s over %d inputs\n\n", res.Batch, res.Prompt, res.Output, render.Clean(res.CacheDim), res.CacheInputs)
	row := func(name, value, note string) { fmt.Fprintf(&b, "%-22s %10s   %s\n", name, value, note) }
	row("time to first token", render.Seconds(res.TTFTS), fmt.Sprintf("the prompt's step: %d × %d tokens, empty cache", res.Batch, res.Prompt)+intervalNote(res.TTFTIntervalS))
	if res.Output > 1 {
		row("time per output token", render.Seconds(res.TPOTS), fmt.Sprintf("mean of %d decode steps: first %s (cache %d), last %s (cache %d)",
			res.Output-1, render.Seconds(res.FirstStepS), res.Prompt, render.Seconds(res.LastStepS), res.Prompt+res.Output-2)+intervalNote(res.TPOTIntervalS))
	} else {
		row("time per output token", "-", "one output token: no decode step")
	}
	row("end to end", render.Seconds(res.E2ES), fmt.Sprintf("TTFT + %d × TPOT", res.Output-1)+intervalNote(res.E2EIntervalS))
	row("output tokens/s", fmt.Sprintf("%.1f", res.OutputTokensPerS), "batch × output tokens / end to end")
	row("KV cache", render.Bytes(res.KVCacheBytes), fmt.Sprintf("%d positions × batch %d, written in place", res.Prompt+res.Output, res.Batch))
	if res.GPUs > 1 {
		note := fmt.Sprintf("%d of the %d KV heads on each of %d GPUs", (res.KVHeads+int64(res.GPUs)-1)/int64(res.GPUs), res.KVHeads, res.GPUs)
		if res.KVHeads <= 0 {
			note = "the whole cache: no head count to split it by"
		}
		row("KV cache per GPU", render.Bytes(res.KVCacheBytesPerGPU), note)
	}
	verdict := "fits"
	if !res.Fits {
		verdict = "DOES NOT FIT"
	}
	row("peak memory", render.Bytes(res.PeakMemoryBytes), fmt.Sprintf("of %s usable: %s", render.Bytes(res.MemoryLimitBytes), verdict))
	fmt.Fprintf(&b, "largest batch that fits at these lengths: %d\n", res.MaxBatch)
	fmt.Fprintf(&b, "\n%s\n", res.Approximation)
	if res.KVCacheSharding != "" {
		fmt.Fprintf(&b, "%s\n", res.KVCacheSharding)
	}
	if res.ServingModel != nil {
		if err := writeServing(&b, res); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeServing writes the serving curve: a table, then its model, what
// it leaves out, the memory cap and the SLOs' pick.
func writeServing(b *strings.Builder, res *Result) error {
	sm := res.ServingModel
	fmt.Fprintf(b, "\nserving at steady state: %d + %d tokens per request\n", res.Prompt, res.Output)
	priced := sm.PriceUSDPerGPUHour > 0
	err := render.WriteColumns(b, func(add func(cells ...string)) {
		head := []string{"concurrency", "tokens/s", "per GPU", "TTFT", "TPOT", "e2e", "J/token", "KV cache", "peak memory"}
		split := res.GPUs > 1
		if split {
			head = slices.Insert(head, 8, "KV per GPU")
		}
		if priced {
			head = append(head, "$/M tokens")
		}
		add(head...)
		for _, p := range res.Serving {
			row := []string{fmt.Sprint(p.Concurrency), fmt.Sprintf("%.1f", p.OutputTokensPerS), fmt.Sprintf("%.1f", p.OutputTokensPerSPerGPU),
				render.Seconds(p.TTFTS), render.Seconds(p.TPOTS), render.Seconds(p.E2ES), fmt.Sprintf("%.3g", p.EnergyPerTokenJ),
				render.Bytes(p.KVCacheBytes), render.Bytes(p.PeakMemoryBytes)}
			if split {
				row = slices.Insert(row, 8, render.Bytes(p.KVCacheBytesPerGPU))
			}
			if priced {
				row = append(row, fmt.Sprintf("%.4g", p.USDPerMillionTokens))
			}
			add(row...)
		}
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(b, "model: %s\nnot modelled: %s\n", sm.Model, sm.LeavesOut)
	if len(sm.Capped) > 0 {
		list := make([]string, len(sm.Capped))
		for i, c := range sm.Capped {
			list[i] = fmt.Sprint(c)
		}
		fmt.Fprintf(b, "memory caps the curve: concurrency %s %s not fit in %s usable; the largest concurrency that fits is %d\n",
			strings.Join(list, ", "), map[bool]string{true: "does", false: "do"}[len(list) == 1], render.Bytes(res.MemoryLimitBytes), sm.MaxConcurrency)
	} else if sm.MaxConcurrency > 0 {
		fmt.Fprintf(b, "largest concurrency that fits: %d\n", sm.MaxConcurrency)
	}
	if res.Best != nil {
		fmt.Fprintf(b, "best: %s\n", res.Best.Verdict)
	}
	return nil
}

// WriteJSON writes the run as `onnxcost generate --format json` does
// (Schema).
func WriteJSON(w io.Writer, res *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}
