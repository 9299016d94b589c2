package kernelrows

import (
	"math"
	"path/filepath"
	"testing"
)

// vidurAttnRows loads and prices Vidur's A100 attention profile.
func vidurAttnRows(t *testing.T) []Priced {
	t.Helper()
	rows, err := LoadVidurAttention(filepath.Join("..", "..", VidurAttnFile))
	if err != nil {
		t.Fatal(err)
	}
	priced, err := PriceAll(rows)
	if err != nil {
		t.Fatal(err)
	}
	return priced
}

// TestVidurAttention prices Vidur's A100 flash-attention calls as
// GroupQueryAttention nodes. Decode calls are what the decode view was
// built on (perf decode.go: 20.6% → 8.6% median |error| over all 10,112
// calls, nothing fitted); prefill is a known miss, logged: sarathi's flash_attn_with_kvcache
// over a paged cache of 16-token blocks runs a 4,032-token causal prefill at
// 114 TFLOP/s counted over the whole score rectangle (57 counting the
// causal half), where the model prices flash attention near its GEMM rate,
// so these rows come out about half their measured time. Contiguous flash
// attention (onnxruntime's, PyTorch's) runs far faster than this paged
// kernel, and no data here times it: the prefill pricing is left as it is.
func TestVidurAttention(t *testing.T) {
	priced := vidurAttnRows(t)
	region := func(p Priced) []string {
		k := p.Kernel.Decode
		if k.Heads == 0 {
			return []string{p.Op}
		}
		size := "cache < 256"
		if k.Keys > 1024 {
			size = "cache > 1024"
		} else if k.Keys >= 256 {
			size = "cache 256-1024"
		}
		return []string{p.Op, size}
	}
	for _, key := range []func(Priced) []string{func(p Priced) []string { return []string{p.Op} }, region} {
		for _, s := range Stats(priced, key) {
			t.Logf("%-32v n=%5d median |error| %5.1f%%, signed %+6.1f%%, P90 %5.1f%%", s.Key, s.N, 100*s.MedianAbs, 100*s.MedianSigned, 100*s.P90)
		}
	}
	for _, s := range Stats(priced, func(p Priced) []string { return []string{p.Op} }) {
		// Regression guards at the measured values plus a margin.
		switch s.Key[0] {
		case "attn_decode":
			if s.MedianAbs > 0.10 || math.Abs(s.MedianSigned) > 0.05 {
				t.Errorf("decode: median |error| %.1f%%, signed %+.1f%%: want ≤ 10%% and within ±5%% (8.6%%, -0.3%% measured)", 100*s.MedianAbs, 100*s.MedianSigned)
			}
		case "attn_prefill":
			if s.MedianAbs > 0.55 {
				t.Errorf("prefill: median |error| %.1f%%, above the 46%% known miss by more than the margin", 100*s.MedianAbs)
			}
		}
	}
}
