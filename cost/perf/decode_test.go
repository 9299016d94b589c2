package perf

import (
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
)

// decodeKernel is a grouped-query decode step's attention: b sequences,
// kvh KV heads of 128 (8 query heads each), keys cached, fp16, cold.
func decodeKernel(b, kvh, keys int64) Kernel {
	const d, groups, eb = 128, 8, 2
	heads := b * kvh * groups
	kv := float64(2*b*kvh*keys*d) * eb
	bytes := kv + float64(2*heads*d)*eb
	return Kernel{Class: ClassAttention, Precision: hwdb.FP16Tensor, ElemBytes: eb,
		FLOPs: float64(4 * heads * keys * d), Bytes: bytes, WorkingSet: bytes, Resident: true, DRAMBytes: bytes,
		M: 1, N: d, K: 2 * keys, Batch: heads, Launches: 1,
		Decode: AttnDecode{Heads: b * kvh, Keys: keys, HeadDim: d}}
}

// TestDecodeAttention checks the decode view (decode.go): the KV stream
// and the whole fill add up, the kernel is memory-bound, its stream goes
// by waves of one block per SM, and the time never falls as the batch or
// the cache grows, on every GPU of the database.
func TestDecodeAttention(t *testing.T) {
	p := DefaultParams()
	o := Options{Params: p, Setting: InPlan}
	a100, err := hwdb.Lookup("A100-SXM4-80GB")
	if err != nil {
		t.Fatal(err)
	}
	k := decodeKernel(8, 4, 4095)
	kt := EstimateKernel(a100, k, o)
	fill := AttnFillShare * p.FillLaunches * launchOverhead(a100, p)
	stream := k.Bytes / (a100.MemBW * p.MemEff)
	if !near(kt.LatencyS, fill, 1e-12) || kt.ComputeS < stream*(1-1e-9) || !near(kt.TimeS, kt.ComputeS+kt.LatencyS+kt.RampS+kt.LaunchS, 1e-12) {
		t.Errorf("A100 decode: %+v; want the whole fill %.3g s after a stream of at least %.3g s", kt, fill, stream)
	}
	if kt.Bound != "memory" || !kt.Streams {
		t.Errorf("A100 decode: bound %q (streams %v), want memory", kt.Bound, kt.Streams)
	}
	// 108 SMs: 27 sequences × 4 KV heads × one 128-key block fill one
	// wave; one more sequence needs a second.
	one, two := decodeStreamS(a100, decodeKernel(27, 4, 128), p), decodeStreamS(a100, decodeKernel(28, 4, 128), p)
	if !near(two, 2*one, 1e-12) {
		t.Errorf("A100: 108 blocks stream in %.3g s, 112 in %.3g s: want a second wave as long as the first", one, two)
	}
	for _, g := range hwdb.All() {
		prev := 0.0
		for b := int64(1); b <= 300; b++ {
			tb := EstimateKernel(g, decodeKernel(b, 4, 1000), o).TimeS
			if tb < prev {
				t.Errorf("%s: decode at batch %d takes %.4g s, less than batch %d's %.4g s", g.Name, b, tb, b-1, prev)
				break
			}
			prev = tb
		}
		prev = 0
		for keys := int64(1); keys <= 4096; keys += 7 {
			tk := EstimateKernel(g, decodeKernel(1, 8, keys), o).TimeS
			if tk < prev {
				t.Errorf("%s: decode over %d keys takes %.4g s, less than over %d keys", g.Name, keys, tk, keys-7)
				break
			}
			if floor := decodeKernel(1, 8, keys).Bytes / g.MemBW; tk < floor {
				t.Errorf("%s: decode over %d keys takes %.4g s, below its bytes over DRAM bandwidth %.4g s", g.Name, keys, tk, floor)
				break
			}
			prev = tk
		}
	}
}
