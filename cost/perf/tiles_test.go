package perf

import (
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
)

// TestSplitKIsAChoice: a GEMM whose output fills fewer CTAs than the GPU
// has slots may be split over K, but the unsplit kernel stays a candidate.
// 3136×64×256 int8 (a ResNet-50 1×1 convolution at batch 1) on L4 was
// priced only split 2 ways, whose fp32 partials (2·2·3136·64·4 bytes)
// cost more than the whole unsplit kernel.
func TestSplitKIsAChoice(t *testing.T) {
	g, err := hwdb.Lookup("L4")
	if err != nil {
		t.Fatal(err)
	}
	p := DefaultParams()
	const m, n, k = 3136, 64, 256
	got := gemmCompute(g, hwdb.INT8Tensor, m, n, k, 1, 1, p)
	peak, _ := peakFor(g, hwdb.INT8Tensor)
	perSM := peak / float64(g.SMs) * p.EffTensor
	for _, tl := range ctaTiles {
		ctas := ceilDiv(m, tl.m) * ceilDiv(n, tl.n)
		if unsplit := tileTime(g, hwdb.INT8Tensor, tl, m, n, k, 1, float64(ctas), 1, perSM, p); got > unsplit*(1+1e-12) {
			t.Errorf("tile %dx%d unsplit takes %g s, but the GEMM is priced %g s", tl.m, tl.n, unsplit, got)
		}
	}
}

// TestSplitKPartialsInL2: split-K partial sums that fit in L2 make their
// round trip at L2 bandwidth, not DRAM's.
func TestSplitKPartialsInL2(t *testing.T) {
	g, err := hwdb.Lookup("L4")
	if err != nil {
		t.Fatal(err)
	}
	p := DefaultParams()
	tl := ctaTile{128, 128}
	const m, n, k, split = 256, 256, 4096, 4
	ctas := ceilDiv(m, tl.m) * ceilDiv(n, tl.n)
	with := tileTime(g, hwdb.FP16Tensor, tl, m, n, k, 1, float64(ctas), split, 1e12, p)
	partials := float64(2 * split * m * n * 4) // write and re-read split fp32 slices
	bw, level := bandwidthFor(g, partials, p)
	if level != "l2" {
		t.Fatalf("%g bytes of partials should fit L4's L2", partials)
	}
	noSplitTraffic := with - partials/(bw*p.MemEff)
	if noSplitTraffic <= 0 {
		t.Fatalf("partials' time %g exceeds the kernel's %g", partials/(bw*p.MemEff), with)
	}
}

// TestInPlanFillIsGPUShare: in a plan, a GEMM-like kernel keeps the
// inPlanLaunchFraction share of the isolated fill.
func TestInPlanFillIsGPUShare(t *testing.T) {
	p := DefaultParams()
	const launch = 2.5e-6
	if got, want := fillS(launch, p, InPlan), inPlanLaunchFraction*p.FillLaunches*launch; !near(got, want, 1e-15) {
		t.Errorf("in-plan fill %g, want %g", got, want)
	}
	if got, want := fillS(launch, p, Isolated), p.FillLaunches*launch; !near(got, want, 1e-15) {
		t.Errorf("isolated fill %g, want %g", got, want)
	}
}
