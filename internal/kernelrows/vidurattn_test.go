package kernelrows

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/hwdb"
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

// TestH100AttentionRows: a decode-attention row of scripts/measure_gpu.py
// --kernels (op Attention, shape BxHxLxD) is priced as ONNX's Attention
// with the decode view, never faster than its KV cache over DRAM.
func TestH100AttentionRows(t *testing.T) {
	f := filepath.Join(t.TempDir(), "k.csv")
	if err := os.WriteFile(f, []byte("op,dtype,shape,ms\nAttention,fp16,8x32x1024x128,0.05\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, err := LoadOwn(OwnFile{f, h100GPU, SourceH100})
	if err != nil {
		t.Fatal(err)
	}
	r := rows[0]
	if want := (perf.AttnDecode{Heads: 8 * 32, Keys: 1024, HeadDim: 128}); r.Class != perf.ClassAttention || r.Kernel.Decode != want {
		t.Fatalf("class %s, decode view %+v; want attention, %+v", r.Class, r.Kernel.Decode, want)
	}
	g, err := hwdb.Lookup(h100GPU)
	if err != nil {
		t.Fatal(err)
	}
	kv := 2.0 * 8 * 32 * 1024 * 128 * 2
	if kt := Price(r, g); kt.TimeS < kv/g.MemBW || kt.Bound != "memory" {
		t.Errorf("priced %+v: want memory-bound, at least the cache over DRAM bandwidth (%.3g s)", kt, kv/g.MemBW)
	}
}

// TestColdMatMulRows: a MatMulCold row (scripts/measure_gpu.py --kernels:
// the weight rotated through 20 copies, read from DRAM every call) is
// priced as the same MatMul, as its own op group, since the one-node
// graph already reads every input from DRAM.
func TestColdMatMulRows(t *testing.T) {
	f := filepath.Join(t.TempDir(), "k.csv")
	if err := os.WriteFile(f, []byte("op,dtype,shape,ms\nMatMul,fp16,1x4096x4096,0.011\nMatMulCold,fp16,1x4096x4096,0.014\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, err := LoadOwn(OwnFile{f, "H200-SXM-141GB", SourceH200})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[1].Op != "MatMulCold fp16" || rows[1].Kernel != rows[0].Kernel {
		t.Fatalf("rows %+v: want the cold row its own op, priced as the same kernel", rows)
	}
}

// TestHopperDecodeAttention checks the Hopper decode-attention figures
// (cost/perf decode.go: stream efficiency and fill share) on our H200's
// scaled_dot_product_attention calls: fitted on batch 1 and 16, held out
// at batch 4 and 64. With the A100's figures both halves were 27-28% too
// slow (median |error|).
func TestHopperDecodeAttention(t *testing.T) {
	var fit, held []float64
	for _, p := range priced(t) {
		if p.Source != SourceH200 || p.Kernel.Class != perf.ClassAttention || p.Kernel.Decode.Heads == 0 {
			continue
		}
		batch, err := strconv.Atoi(strings.SplitN(p.Shape, "x", 2)[0])
		if err != nil {
			t.Fatalf("%s: shape %q", p.Op, p.Shape)
		}
		e := math.Abs(p.Err())
		switch batch {
		case 1, 16:
			fit = append(fit, e)
		case 4, 64:
			held = append(held, e)
		}
	}
	if len(fit) < 10 || len(held) < 10 {
		t.Fatalf("%d fit and %d held-out H200 decode attention rows", len(fit), len(held))
	}
	t.Logf("H200 decode attention: fit median |error| %.1f%% (n=%d), held out %.1f%% (n=%d)", 100*median(fit), len(fit), 100*median(held), len(held))
	if median(fit) > 0.06 || median(held) > 0.08 {
		t.Errorf("H200 decode attention: median |error| %.1f%% fit, %.1f%% held out; want ≤ 6%% and ≤ 8%% (3.2%% and 3.1%% measured)", 100*median(fit), 100*median(held))
	}
}
