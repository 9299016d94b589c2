package perf

import (
	"math"
	"testing"
)

// TestAllReducePhysics: for every kind and GPU count the time does not
// fall as the bytes grow, never beats the bytes over the link, grows with
// the GPU count at zero bytes, and is nothing for one GPU.
func TestAllReducePhysics(t *testing.T) {
	const link = 100e9
	for name, m := range map[string]AllReduceFit{"nvlink": AllReduceNVLink, "pcie": AllReducePCIe} {
		if m.Time(1, 1<<30, link) != 0 {
			t.Errorf("%s: one GPU costs %g", name, m.Time(1, 1<<30, link))
		}
		if !math.IsInf(m.Time(2, 1, 0), 1) {
			t.Errorf("%s: no link costs %g", name, m.Time(2, 1, 0))
		}
		for n := 2; n <= 16; n++ {
			if n > 2 && m.Latency(n) < m.Latency(n-1) {
				t.Errorf("%s: latency at %d GPUs %g < at %d %g", name, n, m.Latency(n), n-1, m.Latency(n-1))
			}
			if f := m.BusFraction(n); f <= 0 || f > 1 {
				t.Errorf("%s: bus fraction at %d GPUs %g", name, n, f)
			}
			prev := 0.0
			for b := 0.0; b <= 1<<30; b = b*4 + 1024 {
				tm := m.Time(n, b, link)
				if tm < prev || tm < b/link || tm <= 0 {
					t.Errorf("%s: %d GPUs, %g B: %g s (previous %g, link floor %g)", name, n, b, tm, prev, b/link)
				}
				prev = tm
			}
		}
	}
}
