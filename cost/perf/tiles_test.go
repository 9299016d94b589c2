package perf

import (
	"math"
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
		if unsplit := tileTime(g, newPathClock(g, p, hwdb.INT8Tensor), hwdb.INT8Tensor, tl, m, n, k, 1, float64(ctas), 1, perSM, p, gemmLib{}); got > unsplit*(1+1e-12) {
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
	with := tileTime(g, newPathClock(g, p, hwdb.FP16Tensor), hwdb.FP16Tensor, tl, m, n, k, 1, float64(ctas), split, 1e12, p, gemmLib{})
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

// TestConvKeepsWholeFillInPlan: in a plan, a library convolution's tiled
// forward kernel pays its whole fitted fill (ConvFillShare); a GEMM, a
// depthwise (one output channel per group) convolution and a gradient
// kernel keep the assumed GPU share, and an isolated call is unchanged.
func TestConvKeepsWholeFillInPlan(t *testing.T) {
	g, err := hwdb.Lookup("H100-SXM5-80GB")
	if err != nil {
		t.Fatal(err)
	}
	p := DefaultParams()
	launch := launchOverhead(g, p)
	base := Kernel{Precision: hwdb.FP16Tensor, M: 49, N: 512, K: 4608, Batch: 1, FLOPs: 2 * 49 * 512 * 4608, Bytes: 1e6, Launches: 1}
	conv, gemm, depthwise, dgrad := base, base, base, base
	conv.Class, gemm.Class, depthwise.Class, dgrad.Class = ClassConv, ClassGEMM, ClassConv, ClassConv
	depthwise.N, depthwise.K, depthwise.Batch = 1, 9, 512
	dgrad.Grad = GradData
	inPlan := Options{Params: p, Setting: InPlan}
	for _, c := range []struct {
		name  string
		k     Kernel
		share float64
	}{{"conv", conv, ConvFillShare}, {"gemm", gemm, inPlanLaunchFraction}, {"depthwise conv", depthwise, inPlanLaunchFraction}, {"dgrad", dgrad, inPlanLaunchFraction}} {
		if got, want := EstimateKernel(g, c.k, inPlan).LatencyS, c.share*p.FillLaunches*launch; !near(got, want, 1e-12) {
			t.Errorf("%s in a plan: fill %g s, want %g s (share %g)", c.name, got, want, c.share)
		}
	}
	isolated := Options{Params: p, Setting: Isolated}
	if a, b := EstimateKernel(g, conv, isolated).LatencyS, EstimateKernel(g, gemm, isolated).LatencyS; !near(a, b, 1e-12) {
		t.Errorf("isolated: conv fill %g s, gemm %g s; an isolated call's fill does not depend on the class", a, b)
	}
}

// A GEMV-like GEMM's narrow side is padded to a skinny tile whatever its
// length, so a few more rows never make it cheaper: a misaligned narrow
// side (2 under TF32's granule of 4, 2-12 under fp16's 8 and int8's 16)
// must not pay the unaligned penalty the aligned one escapes. It did, and a
// TF32 recurrent layer's step cost less at batch 4 than at batch 2.
func TestNarrowSideAlignmentIsMoot(t *testing.T) {
	p := DefaultParams()
	forTensorPaths(func(g *hwdb.GPU, pr hwdb.Precision) {
		prev := 0.0
		for n := int64(2); n <= gemvMaxCols; n++ {
			got := gemmCompute(g, pr, 1024, n, 1024, 1, 1, p)
			if got < prev*(1-1e-12) {
				t.Errorf("%s %s: 1024×%d×1024 GEMM %.4g s, below %d columns' %.4g s", g.Name, pr, n, got, n-1, prev)
			}
			prev = got
		}
	})
}

// forTensorPaths calls f for every GPU and each TF32, fp16 and int8
// tensor-core path it has.
func forTensorPaths(f func(g *hwdb.GPU, pr hwdb.Precision)) {
	for _, g := range hwdb.All() {
		for _, pr := range []hwdb.Precision{hwdb.TF32Tensor, hwdb.FP16Tensor, hwdb.INT8Tensor} {
			if peak, real := peakFor(g, pr); peak > 0 && isTensor(real) {
				f(g, pr)
			}
		}
	}
}

// TestConvPixelAlignmentIsMoot: a convolution's implicit GEMM never costs
// less for more output pixels, on every GPU and tensor path: the pixel
// dimension is gathered by index and its alignment is moot (gemmLib),
// where charging it priced a 7×7 map at batch 1 (49 pixels) above the
// same layer at batch 8.
func TestConvPixelAlignmentIsMoot(t *testing.T) {
	p := DefaultParams()
	forTensorPaths(func(g *hwdb.GPU, pr hwdb.Precision) {
		for _, lib := range []gemmLib{{pixelRows: true}, {pixelK: true, splitK: true}} {
			prev := 0.0
			for px := int64(33); px <= 400; px++ {
				m, k := px, int64(4608)
				if lib.pixelK {
					m, k = 512, px*64
				}
				got := gemmComputeLib(g, pr, m, 512, k, 1, 1, p, lib)
				if got < prev*(1-1e-12) {
					t.Errorf("%s %s %+v: %d pixels %.4g s, below %d pixels' %.4g s", g.Name, pr, lib, px, got, px-1, prev)
					break
				}
				prev = got
			}
		}
	})
}

// TestLargeKOnHopper: on Hopper an fp32 GEMM with a bias, of a small
// output and a deep reduction (BERT-base's 128-token Linears) is priced as
// cuBLAS's largek kernel runs it, 32×32 tiles split over K, slower than
// the fastest plan the model knows, and the part of its time beyond that
// plan draws no compute power; the same shape without a bias, on an
// Ampere board, at TF32, or with K too shallow (128×3072×768) keeps the
// fastest plan. Across the region's
// edge the price never falls as the rows grow: real cuBLAS's does
// (faster at 193 rows than at 192), the physics standard's does not.
func TestLargeKOnHopper(t *testing.T) {
	p := DefaultParams()
	h200, err := hwdb.Lookup("H200")
	if err != nil {
		t.Fatal(err)
	}
	a100, err := hwdb.Lookup("A100-SXM4-80GB")
	if err != nil {
		t.Fatal(err)
	}
	lib := gemmLib{splitK: true, epilogue: true}
	plan := func(g *hwdb.GPU, pr hwdb.Precision, m, n, k int64) GEMMPlan {
		return gemmPlanLib(g, pr, m, n, k, 1, 1, p, lib)
	}
	if got, fast := gemmPlanLib(h200, hwdb.FP32, 128, 768, 768, 1, 1, p, gemmLib{splitK: true}), fastestPlan(h200, hwdb.FP32, 128, 768, 768, 1, 1, p, lib, false); got != fast {
		t.Errorf("H200 fp32 128×768×768 without a bias: plan %+v, want the fastest %+v (cuBLAS's bare products do not run largek)", got, fast)
	}
	fastest := func(g *hwdb.GPU, pr hwdb.Precision, m, n, k int64) GEMMPlan {
		return fastestPlan(g, pr, m, n, k, 1, 1, p, lib, false)
	}
	for _, s := range [][3]int64{{128, 768, 768}, {128, 768, 3072}} {
		got, fast := plan(h200, hwdb.FP32, s[0], s[1], s[2]), fastest(h200, hwdb.FP32, s[0], s[1], s[2])
		if got.TileM != 32 || got.TileN != 32 || !(got.ComputeS > fast.ComputeS) {
			t.Errorf("H200 fp32 %v: plan %+v, want the largek kernel's 32×32 tiles, slower than the fastest plan (%g s)", s, got, fast.ComputeS)
		}
		if d := got.ComputeS - fast.ComputeS; math.Abs(got.StallS-d) > 1e-15 {
			t.Errorf("H200 fp32 %v: stall %g s, want the time beyond the fastest plan, %g s", s, got.StallS, d)
		}
		for _, c := range []struct {
			g  *hwdb.GPU
			pr hwdb.Precision
		}{{a100, hwdb.FP32}, {h200, hwdb.TF32Tensor}} {
			if got, fast := plan(c.g, c.pr, s[0], s[1], s[2]), fastest(c.g, c.pr, s[0], s[1], s[2]); got != fast {
				t.Errorf("%s %s %v: plan %+v, want the fastest %+v", c.g.Name, c.pr, s, got, fast)
			}
		}
	}
	if got, fast := plan(h200, hwdb.FP32, 128, 3072, 768), fastest(h200, hwdb.FP32, 128, 3072, 768); got != fast {
		t.Errorf("128×3072×768 (K/√(MN) 1.2): plan %+v, want the fastest %+v", got, fast)
	}
	for _, nk := range [][2]int64{{768, 768}, {768, 3072}, {1024, 4096}, {4096, 25088}} {
		prev := 0.0
		for m := int64(1); m <= 600; m++ {
			got := plan(h200, hwdb.FP32, m, nk[0], nk[1]).ComputeS
			if got < prev*(1-1e-12) {
				t.Errorf("%d×%d×%d: %g s, less than %g s at %d rows", m, nk[0], nk[1], got, prev, m-1)
				break
			}
			prev = got
		}
	}
}

// TestLargeKHelpers: a GEMM cuBLAS runs as its largek kernel on Hopper
// carries the zeroing kernel, and the epilogue kernel where it has a bias
// (FLOPs beyond the product's); no other GPU or path does; and with them
// its time still never falls as rows are added, past the region's edge.
func TestLargeKHelpers(t *testing.T) {
	o := PlanOptions()
	gpus := lookupAll(t, []string{"H200", "A100-SXM4-80GB"})
	h200, a100 := gpus[0], gpus[1]
	// A Linear, as PyTorch runs it: F.linear's A·Bᵀ with its bias.
	withBias := func(m, n, k int64, pr hwdb.Precision) Kernel {
		kk := GEMMKernel(m, n, k, 1, pr, 4, 4)
		kk.FLOPs += float64(m) * float64(n)
		kk.TransposedB = true
		return kk
	}
	helpers := func(g *hwdb.GPU, k Kernel) int64 {
		pl, ok := ChooseGEMM(g, k, o)
		if !ok {
			t.Fatalf("%s %+v: no plan", g.Name, k)
		}
		return pl.Helpers
	}
	for _, c := range []struct {
		name string
		g    *hwdb.GPU
		k    Kernel
		want int64
	}{
		{"H200 fp32 Linear 128×768×768", h200, withBias(128, 768, 768, hwdb.FP32), 2},
		{"H200 fp32 MatMul 128×768×768 (no bias: not largek; split, cuBLAS's split-K reduce)", h200, GEMMKernel(128, 768, 768, 1, hwdb.FP32, 4, 4), 1},
		{"H200 fp32 pooler 32×1024×1024 (largeKMinSide)", h200, withBias(32, 1024, 1024, hwdb.FP32), 0},
		{"H200 fp32 128×3072×768 (ratio 1.2)", h200, withBias(128, 3072, 768, hwdb.FP32), 0},
		{"H200 TF32 128×768×768", h200, withBias(128, 768, 768, hwdb.TF32Tensor), 0},
		{"A100 fp32 128×768×768", a100, withBias(128, 768, 768, hwdb.FP32), 0},
	} {
		if got := helpers(c.g, c.k); got != c.want {
			t.Errorf("%s: %d helper kernels, want %d", c.name, got, c.want)
		}
	}
	// The helpers cost time: the Linear is priced above the bare product.
	lin, mm := EstimateKernel(h200, withBias(128, 768, 768, hwdb.FP32), o), EstimateKernel(h200, GEMMKernel(128, 768, 768, 1, hwdb.FP32, 4, 4), o)
	if !(lin.TimeS > mm.TimeS) {
		t.Errorf("128×768×768 with its epilogue kernel %g s, not above the product alone %g s", lin.TimeS, mm.TimeS)
	}
	// Nor as batches are added: a batched product with a bias in the
	// region keeps the largek plan at every batch (a plan that left it
	// at batch 2 priced 128×768×768 18.2 µs there against 21.9 at 1).
	prevB := 0.0
	for b := int64(1); b <= 16; b++ {
		kk := GEMMKernel(128, 768, 768, b, hwdb.FP32, 4, 4)
		kk.FLOPs += float64(128 * 768 * b)
		got := EstimateKernel(h200, kk, o).TimeS
		if got < prevB*(1-1e-12) {
			t.Errorf("128×768×768 with a bias, batch %d: %g s, less than %g s at batch %d", b, got, prevB, b-1)
			break
		}
		prevB = got
	}
	for _, nk := range [][2]int64{{768, 768}, {768, 3072}, {1024, 1024}, {1024, 4096}, {4096, 4096}} {
		prev := 0.0
		for m := int64(1); m <= 700; m++ {
			got := EstimateKernel(h200, withBias(m, nk[0], nk[1], hwdb.FP32), o).TimeS
			if got < prev*(1-1e-12) {
				t.Errorf("%d×%d×%d with a bias: %g s, less than %g s at %d rows", m, nk[0], nk[1], got, prev, m-1)
				break
			}
			prev = got
		}
	}
}

// TestSkinnyFP32Products: an fp32 product of a few rows runs its skinny
// tiles at no more than skinnyPeakShare of the lanes' rate, on its own
// rows: our H200's 8×4096×4096 (testdata/measured/
// h200_sxm_gemm_choices.csv: 43.5 µs, 25 FLOPs per SM-cycle; the skinny
// tiles' reuse alone priced it at 28.3) is priced within a quarter of it
// (scripts/choices TestH200GEMMChoices holds the sweep's ten 8-row
// products). And on every GPU, against 4096×4096 weights, the time never
// falls as rows are added (1-40), nor does the time per row rise up to
// gemvMaxCols rows or when the rows double (as a decode batch does in
// internal/physics): 2 rows are not dearer than two 1-row GEMVs (gemvsS;
// before it, 2×4096×4096 fp32 on a B200 was priced 2.7 times its GEMV).
func TestSkinnyFP32Products(t *testing.T) {
	o := PlanOptions()
	h200 := lookupAll(t, []string{"H200"})[0]
	if got := EstimateKernel(h200, GEMMKernel(8, 4096, 4096, 1, hwdb.FP32, 4, 4), o).TimeS; math.Abs(got/43.5e-6-1) > 0.25 {
		t.Errorf("H200 fp32 8×4096×4096: %.1f µs, measured 43.5", got*1e6)
	}
	for _, g := range hwdb.All() {
		for _, pr := range []hwdb.Precision{hwdb.FP32} {
			times := map[int64]float64{}
			for rows := int64(1); rows <= 40; rows++ {
				times[rows] = EstimateKernel(g, GEMMKernel(rows, 4096, 4096, 1, pr, 4, 4), o).TimeS
				if prev := times[rows-1]; rows > 1 && times[rows] < prev*(1-1e-9) {
					t.Errorf("%s %s: %d rows %.2f µs, %d rows %.2f", g.Name, pr, rows, times[rows]*1e6, rows-1, prev*1e6)
				}
			}
			perRow := func(a, b int64) {
				if times[b]/float64(b) > times[a]/float64(a)*(1+1e-9) {
					t.Errorf("%s %s: %d rows %.2f µs a row, %d rows %.2f", g.Name, pr, b, times[b]*1e6/float64(b), a, times[a]*1e6/float64(a))
				}
			}
			for rows := int64(2); rows <= gemvMaxCols; rows++ {
				perRow(rows-1, rows)
			}
			for rows := int64(2); rows <= 32; rows *= 2 {
				perRow(rows/2, rows)
			}
		}
	}
}

// TestWaveTail: a tensor-core matrix product whose tiles fill one wave
// and one SM more costs less than two waves (waveTailShare), while a
// convolution's tiles and a CUDA-core product's pay the whole second
// round; and on every GPU, from one wave of 128×128 tiles to 80 of them,
// a product's time never falls as its rows grow (internal/physics walks
// batches in powers of two only; TestProductRowsNeverCheaper walks every
// row count below two waves).
func TestWaveTail(t *testing.T) {
	p := DefaultParams()
	a100 := lookupAll(t, []string{"A100-SXM4-80GB"})[0]
	sms := float64(a100.SMs)
	tl := ctaTile{128, 128}
	ratio := func(real hwdb.Precision, lib gemmLib) float64 {
		peak, _ := peakFor(a100, real)
		per := peak / sms
		clk := newPathClock(a100, p, real)
		one := tileTime(a100, clk, real, tl, 128*int64(a100.SMs), 128, 4096, 1, sms, 1, per, p, lib)
		more := tileTime(a100, clk, real, tl, 128*int64(a100.SMs+1), 128, 4096, 1, sms+1, 1, per, p, lib)
		return more / one
	}
	if r, want := ratio(hwdb.FP16Tensor, gemmLib{product: true}), 1+waveTailShare+(1-waveTailShare)/sms; math.Abs(r/want-1) > 1e-9 {
		t.Errorf("fp16 product, one wave and one tile: %.4f of one wave, want %.4f", r, want)
	}
	for _, c := range []struct {
		name string
		real hwdb.Precision
		lib  gemmLib
	}{{"fp16 convolution", hwdb.FP16Tensor, gemmLib{pixelRows: true}}, {"fp32 product", hwdb.FP32, gemmLib{product: true}}} {
		if r := ratio(c.real, c.lib); math.Abs(r/2-1) > 1e-9 {
			t.Errorf("%s, one wave and one tile: %.4f of one wave, want 2", c.name, r)
		}
	}
	o := PlanOptions()
	for _, g := range hwdb.All() {
		pr := ResolvePrecision(g, hwdb.FP16Tensor)
		prev := 0.0
		for m := 16 * int64(g.SMs); m <= 80*int64(g.SMs); m += 32 {
			got := EstimateKernel(g, GEMMKernel(m, 1024, 1024, 1, pr, 2, 2), o).TimeS
			if got < prev*(1-1e-12) {
				t.Errorf("%s %s: %d×1024×1024 %.3f µs, less than %.3f at %d rows", g.Name, pr, m, got*1e6, prev*1e6, m-32)
				break
			}
			prev = got
		}
	}
}

// TestProductRowsNeverCheaper: on every GPU, in fp16 (tensor cores where
// it has them) and fp32, a matrix product's time never falls as one row
// is added, 1-1,024 rows against three weight shapes. Before every split
// depth was on offer and an unaligned M could take the padded plan, it
// fell at 2,200-2,300 row counts per tensor-core GPU: by the Unaligned
// rate (2.3-2.7%) from 8k+7 to 8k+8 rows, and by up to 35% where only the
// deepest split was tried (MI300X fp16 257×768×4096 below 256 rows, RTX
// 3090 129×1024×1024 24% below 128, V100 13%, A40 10%). Under a CUDA
// graph's replay too: with split-K's reduce chosen at the stream gap and
// priced at the replay's, it fell by up to 0.43 µs (A10 fp16
// 161×1024×1024 under graph).
func TestProductRowsNeverCheaper(t *testing.T) {
	for _, rt := range []string{"", "graph", "onnxruntime-cudagraph"} {
		o := PlanOptions()
		if rt != "" {
			o.Runtime = testRT(t, rt)
		}
		for _, g := range hwdb.All() {
			for _, want := range []hwdb.Precision{hwdb.FP16Tensor, hwdb.FP32} {
				pr := ResolvePrecision(g, want)
				for _, nk := range [][2]int64{{768, 4096}, {1024, 1024}, {4096, 768}} {
					prev := 0.0
					for m := int64(1); m <= 1024; m++ {
						got := EstimateKernel(g, GEMMKernel(m, nk[0], nk[1], 1, pr, 2, 2), o).TimeS
						if got < prev*(1-1e-12) {
							t.Errorf("runtime %q, %s %s: %d×%d×%d %.3f µs, less than %.3f at %d rows", rt, g.Name, pr, m, nk[0], nk[1], got*1e6, prev*1e6, m-1)
							break
						}
						prev = got
					}
				}
			}
		}
	}
}

// TestEpilogueUnsplit: on Hopper cuBLASLt runs an fp32 Linear (a product
// with a bias) outside the largek region whole, as VGG-16's 128×4096×4096
// classifier ran (174 µs; priced 94 as a 4-way split); the bare product
// still splits, as do a K past epilogueSplitMinK, a TF32 Linear, an A100's
// and a product of fewer than largeKMinSide rows.
func TestEpilogueUnsplit(t *testing.T) {
	h200, a100 := mustGPU(t, "H200-SXM-141GB"), mustGPU(t, "A100-SXM4-80GB")
	o := PlanOptions()
	linear := func(m, n, k int64, pr hwdb.Precision) Kernel {
		kk := GEMMKernel(m, n, k, 1, pr, 4, 4)
		kk.FLOPs += float64(m * n)
		return kk
	}
	split := func(g *hwdb.GPU, k Kernel) int64 {
		pl, ok := ChooseGEMM(g, k, o)
		if !ok {
			t.Fatalf("%v: no plan", k)
		}
		return pl.Split
	}
	if s := split(h200, linear(128, 4096, 4096, hwdb.FP32)); s != 1 {
		t.Errorf("H200 fp32 Linear 128×4096×4096: split %d ways, want whole", s)
	}
	ort, err := hwdb.LookupRuntime("onnxruntime")
	if err != nil {
		t.Fatal(err)
	}
	if pl, _ := ChooseGEMM(h200, linear(128, 4096, 4096, hwdb.FP32), Options{Params: o.Params, Setting: InPlan, Runtime: ort}); pl.Split < 2 {
		t.Errorf("H200 fp32 Gemm 128×4096×4096 under onnxruntime (bias copied, beta 1): split %d ways, want the fastest plan's split", pl.Split)
	}
	if kt := EstimateKernel(h200, linear(128, 4096, 4096, hwdb.FP32), o); math.Abs((kt.TimeS-kt.LaunchS)/173.8e-6-1) > 0.1 {
		t.Errorf("H200 fp32 Linear 128×4096×4096: %.1f µs, measured 173.8 µs in VGG-16's trace, want within 10%%", (kt.TimeS-kt.LaunchS)*1e6)
	}
	for _, c := range []struct {
		what string
		g    *hwdb.GPU
		k    Kernel
	}{
		{"H200 fp32 bare product 128×4096×4096", h200, GEMMKernel(128, 4096, 4096, 1, hwdb.FP32, 4, 4)},
		{"H200 fp32 Linear 128×4096×25088", h200, linear(128, 4096, 25088, hwdb.FP32)},
		{"H200 TF32 Linear 128×4096×4096", h200, linear(128, 4096, 4096, hwdb.TF32Tensor)},
		{"A100 fp32 Linear 128×4096×4096", a100, linear(128, 4096, 4096, hwdb.FP32)},
		{"H200 fp32 Linear 32×4096×4096", h200, linear(32, 4096, 4096, hwdb.FP32)},
	} {
		if s := split(c.g, c.k); s < 2 {
			t.Errorf("%s: split %d ways, want the fastest plan's split", c.what, s)
		}
	}
}
