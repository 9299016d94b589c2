package perf

import (
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
)

// TestResidentCTAs: how many CTAs an SM holds follows the architecture's
// resident-thread and resident-block limits, so a small-CTA kernel's CTAs
// retire at the lifetime over that many.
func TestResidentCTAs(t *testing.T) {
	for _, c := range []struct {
		gpu     string
		threads int64
		want    float64
	}{
		{"H100-SXM5-80GB", 64, 32}, {"H100-SXM5-80GB", 128, 16}, {"H100-SXM5-80GB", 256, 8}, {"H100-SXM5-80GB", 512, 4},
		{"H100-SXM5-80GB", 9, 32}, {"A100-SXM4-80GB", 512, 4}, {"V100-SXM2-16GB", 64, 32}, {"P100-PCIe-16GB", 64, 32},
		{"T4", 64, 16}, {"T4", 512, 2}, {"A40", 64, 16}, {"A40", 512, 3}, {"L4", 64, 24}, {"L4", 512, 3},
		{"H100-SXM5-80GB", 4096, 1},
	} {
		g, err := hwdb.Lookup(c.gpu)
		if err != nil {
			t.Fatal(err)
		}
		if got := residentCTAs(g, c.threads); got != c.want {
			t.Errorf("%s, %d threads a CTA: %g resident, want %g", c.gpu, c.threads, got, c.want)
		}
	}
}

// TestSmallCTAsBySize: the same CTAs take longer the larger each is
// (fewer reside), 64 threads keep the rate the norms were fitted at
// (160 cycles a CTA on 32 resident), and more CTAs never take less time.
func TestSmallCTAsBySize(t *testing.T) {
	g, err := hwdb.Lookup("H200-SXM-141GB")
	if err != nil {
		t.Fatal(err)
	}
	p := Params{}
	at := func(ctas, threads int64) float64 {
		return smallCTAS(g, Kernel{SmallCTAs: ctas, SmallCTAThreads: threads}, p)
	}
	if a, b := at(1000, 0), at(1000, 64); a != b {
		t.Errorf("unsized CTAs %.4g s, 64-thread %.4g s: want the same", a, b)
	}
	if want := smCyclesS(g, p, 1000*160); !closeTo(at(1000, 64), want, 1e-9) {
		t.Errorf("1,000 64-thread CTAs %.4g s, want 160 cycles apiece: %.4g s", at(1000, 64), want)
	}
	if a, b := at(1000, 256), at(1000, 64); !closeTo(a, 4*b, 1e-9) {
		t.Errorf("256-thread CTAs %.4g s against 64-thread %.4g s: want 4x (8 resident against 32)", a, b)
	}
	for n := int64(1); n < 5000; n += 37 {
		if at(n+1, 512) < at(n, 512) {
			t.Fatalf("%d CTAs priced under %d", n+1, n)
		}
	}
}

func closeTo(a, b, rel float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= rel*max(a, b)
}
