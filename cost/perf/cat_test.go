package perf

import (
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
)

// TestChannelsLastCatBinds: a channels_last cat's index work (0.72 SM
// cycles an element) outlasts its fp16 stream on HBM boards, whose DRAM
// delivers far more bytes per SM cycle, and not on a GeForce board, where
// the bytes still set the pace (an RTX 4080 concatenates DenseNet-like
// channels_last fp16 maps near its DRAM rate: intel/torch-xpu-ops issue
// #1764 reports 0.7 ms for 398 MB moved, 0.8 of its datasheet); the
// kernel's time never falls as elements are added.
func TestChannelsLastCatBinds(t *testing.T) {
	const elems = 128 * 512 * 28 * 28 // 205 MB in fp16, beyond every L2
	cat := func(n float64) Kernel {
		return Kernel{Class: ClassData, Precision: hwdb.FP16, ElemBytes: 2, Bytes: 4 * n, WorkingSet: 4 * n, DRAMBytes: 4 * n,
			WriteShare: 0.5, ChannelsLastCatElements: n}
	}
	for _, c := range []struct {
		gpu   string
		index bool // the index work is the longer term
	}{{"H200-SXM-141GB", true}, {"H100-SXM5-80GB", true}, {"A100-SXM4-80GB", true}, {"RTX-4090", false}, {"L4", false}} {
		g := mustGPU(t, c.gpu)
		kt := EstimateKernel(g, cat(elems), PlanOptions())
		if index := kt.ComputeS > kt.MemoryS; index != c.index {
			t.Errorf("%s: index work %.3g s, stream %.3g s: index-bound %v, want %v", c.gpu, kt.ComputeS, kt.MemoryS, index, c.index)
		}
		prev := 0.0
		for n := 1.0; n <= 1<<30; n *= 4 {
			if s := EstimateKernel(g, cat(n), PlanOptions()).TimeS; s < prev {
				t.Errorf("%s: %g elements in %.3g s, fewer took %.3g s", c.gpu, n, s, prev)
			} else {
				prev = s
			}
		}
	}
}
