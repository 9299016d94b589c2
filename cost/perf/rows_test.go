package perf

import (
	"math"
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
)

// TestRowMemoryTime states the row-wise reduction arithmetic on a GPU of
// 2 TB/s (1.5 TB/s achievable) and 108 SMs.
func TestRowMemoryTime(t *testing.T) {
	g := &hwdb.GPU{Name: "G", SMs: 108, MemBW: 2e12, BoostClockMHz: 1400}
	const bw = 1.5e12
	softmax := func(rows, rowLen int64) Kernel {
		bytes := 2 * 2 * float64(rows*rowLen) // fp16 read + write
		return Kernel{Class: ClassReduction, Bytes: bytes, ElemBytes: 2, Rows: rows, RowLen: rowLen, RowPasses: 3}
	}
	// The same 64 MiB in short rows (1024 fp16 = 2 KiB, on chip) and in
	// 32k-element rows (64 KiB > 48 KiB): 3 reads + 1 write instead of
	// 1 + 1, twice the time.
	short := rowMemoryTime(g, softmax(32768, 1024), bw)
	long := rowMemoryTime(g, softmax(1024, 32768), bw)
	if want := 2 * 32 * 1024 * 1024 * 2 / bw; math.Abs(short-want)/want > 1e-12 {
		t.Errorf("short rows %g s, want %g s (bytes / bandwidth)", short, want)
	}
	if r := long / short; math.Abs(r-2) > 1e-12 {
		t.Errorf("32k-element rows cost %.3f× the short rows, want 2 (3 reads + 1 write vs 1 + 1)", r)
	}
	// 12k fp16 elements (24 KiB) still fit: one pass.
	if r := rowMemoryTime(g, softmax(2730, 12288), bw) / rowMemoryTime(g, softmax(32760, 1024), bw); math.Abs(r-1) > 0.01 {
		t.Errorf("24 KiB rows cost %.3f× short rows, want 1", r)
	}
	// A LayerNorm (2 passes) over long rows: (2 + 1)/(1 + 1) = 1.5×.
	ln := softmax(1024, 32768)
	ln.RowPasses = 2
	if r := rowMemoryTime(g, ln, bw) / short; math.Abs(r-1.5) > 1e-12 {
		t.Errorf("layer norm long rows %.3f×, want 1.5", r)
	}
	// Under-fill: 8 rows of 4096 fp32 can draw 8 × 3 KiB / 600 ns =
	// 41 GB/s, not 1.5 TB/s.
	k := Kernel{Class: ClassReduction, Bytes: 2 * 4 * 8 * 4096, ElemBytes: 4, Rows: 8, RowLen: 4096, RowPasses: 2}
	want := k.Bytes / (8 * rowCTAInflightBytes / 600e-9)
	if got := rowMemoryTime(g, k, bw); math.Abs(got-want)/want > 1e-12 {
		t.Errorf("8 rows: %g s, want %g s", got, want)
	}
	// A sum of one 16M-element fp32 row is split over a CTA per 48 KiB of
	// it (1366 CTAs): it streams at the bandwidth, not one CTA's 7 GB/s.
	sum := Kernel{Class: ClassReduction, Bytes: 4 << 24, ElemBytes: 4, Rows: 1, RowLen: 1 << 24, RowPasses: 1}
	if got, want := rowMemoryTime(g, sum, bw), sum.Bytes/bw; math.Abs(got-want)/want > 1e-12 {
		t.Errorf("whole-tensor sum: %g s, want %g s (bytes / bandwidth)", got, want)
	}
	// A norm's row within one CTA's on-chip share is one CTA's; a 4 MiB
	// one is 86 CTAs' (one per 48 KiB).
	short1 := Kernel{Class: ClassReduction, Bytes: 2 * 2 * 4096, ElemBytes: 2, Rows: 1, RowLen: 4096, RowPasses: 2}
	if got, want := rowMemoryTime(g, short1, bw), short1.Bytes/(rowCTAInflightBytes/600e-9); math.Abs(got-want)/want > 1e-12 {
		t.Errorf("one 8 KiB norm row: %g s, want %g s (one CTA's fill)", got, want)
	}
	norm := Kernel{Class: ClassReduction, Bytes: 2 * 4 << 20, ElemBytes: 4, Rows: 1, RowLen: 1 << 20, RowPasses: 2}
	if got, want := rowMemoryTime(g, norm, bw), (norm.Bytes+rowExtraBytes(norm))/(86*rowCTAInflightBytes/600e-9); math.Abs(got-want)/want > 1e-12 {
		t.Errorf("one long norm row: %g s, want %g s (86 CTAs' fill)", got, want)
	}
}

// TestRowSharedBytesDoNotFallWithRows: a LayerNorm's time over a few rows
// never falls as rows are added. Its scale and bias, read by every row,
// cost a bandwidth's worth once; priced at the rows' fill rate, which
// grows with the rows, they made a decode step's norms cheaper at batch 2
// than at 1 (GPT-2 small on a B200: 2.17 → 1.95 µs).
func TestRowSharedBytesDoNotFallWithRows(t *testing.T) {
	for _, g := range hwdb.All() {
		prev := 0.0
		for rows := int64(1); rows <= 512; rows++ {
			const rowLen, eb = 768, 4
			const weights = 2 * rowLen * eb
			k := Kernel{Class: ClassReduction, ElemBytes: eb, Rows: rows, RowLen: rowLen, RowPasses: 2,
				Bytes: float64(2*rows*rowLen*eb + weights), RowShared: weights, Launches: 1}
			k.WorkingSet = k.Bytes
			got := EstimateKernel(g, k, PlanOptions()).TimeS
			if got < prev*(1-1e-12) {
				t.Errorf("%s: %d rows %.4g s, below %d rows' %.4g s", g.Name, rows, got, rows-1, prev)
				break
			}
			prev = got
		}
	}
}
