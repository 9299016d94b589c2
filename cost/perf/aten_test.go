package perf

import (
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
)

// TestStridedIndexBound: a large broadcast op in ATen's non-vectorized
// loop is held by its index arithmetic where its DRAM stream would be
// faster (a binary fp16 op on an H200: 2 elements per SM-cycle against
// the 2.8 its stream delivers), and is not where DRAM is the slower side
// (fp32 on an H100 and a T4); the same op over contiguous operands (a
// stream) has no SM-side time at all.
func TestStridedIndexBound(t *testing.T) {
	p := DefaultParams()
	const outputs = 1 << 27
	add := func(eb float64, strided bool) Kernel {
		bytes := 3 * outputs * eb // two reads and a write
		return Kernel{Class: ClassElementwise, Precision: hwdb.FP16, ElemBytes: eb, FLOPs: outputs,
			Bytes: bytes, WorkingSet: bytes, DRAMBytes: bytes, WriteShare: 1.0 / 3, Strided: strided, Stream: !strided}
	}
	for _, tc := range []struct {
		gpu        string
		eb         float64
		indexBound bool
	}{
		{"H200", 2, true},
		{"H100-SXM5-80GB", 4, false},
		{"T4", 4, false},
	} {
		g, err := hwdb.Lookup(tc.gpu)
		if err != nil {
			t.Fatal(err)
		}
		smCycles := float64(g.SMs) * g.BoostClockMHz * 1e6
		k := add(tc.eb, true)
		idx := pointwiseS(g, k, p)
		if want := outputs * stridedElemInstr / (intLanesPerSM(g) * smCycles); !near(idx, want, 1e-12) {
			t.Errorf("%s: strided SM time %.4g s, want the index arithmetic's %.4g s", tc.gpu, idx, want)
		}
		mem, _, _ := memoryTime(g, k, p)
		if (idx > mem) != tc.indexBound {
			t.Errorf("%s: index arithmetic %.4g s against the stream's %.4g s: index-bound %v, want %v", tc.gpu, idx, mem, idx > mem, tc.indexBound)
		}
		if s := pointwiseS(g, add(tc.eb, false), p); s != 0 {
			t.Errorf("%s: a contiguous add's SM time %.4g s, want 0", tc.gpu, s)
		}
	}
}
