package perf

import (
	"math"
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
)

// testGPU is a T4-like GPU from datasheet figures (NVIDIA T4 datasheet:
// 40 SMs, 8.1 TFLOPS fp32, 65 TFLOPS fp16 tensor, 130 TOPS int8 tensor,
// 320 GB/s, 4 MiB L2), with a fixed launch overhead.
func testGPU() *hwdb.GPU {
	return &hwdb.GPU{
		Name: "test-T4", SMs: 40,
		Peak:    map[hwdb.Precision]float64{hwdb.FP32: 8.1e12, hwdb.FP16Tensor: 65e12, hwdb.INT8Tensor: 130e12},
		MemBW:   320e9,
		L2Bytes: 4 << 20,
		LaunchS: 3e-6,
	}
}

func near(got, want, rel float64) bool { return math.Abs(got-want) <= rel*math.Abs(want) }

func TestEstimateKernelMemoryBound(t *testing.T) {
	g, p := testGPU(), DefaultParams()
	const n = 64 << 20 // elements, far beyond L2
	k := Kernel{Class: ClassElementwise, Precision: hwdb.FP32, FLOPs: n, Bytes: 2 * 4 * n, WorkingSet: 2 * 4 * n}
	got := EstimateKernel(g, k, Options{Params: p, Setting: Isolated})
	wantMem := 2 * 4 * n / (g.MemBW * p.MemEff) // read + write fp32 at the attainable DRAM rate
	if !near(got.MemoryS, wantMem, 1e-12) || got.Level != "hbm" {
		t.Errorf("memory time %g (%s), want %g (hbm)", got.MemoryS, got.Level, wantMem)
	}
	if got.Bound != "memory" {
		t.Errorf("bound %q, want memory", got.Bound)
	}
	if want := max(got.ComputeS, got.MemoryS) + g.LaunchS; !near(got.TimeS, want, 1e-12) {
		t.Errorf("time %g, want max(compute, memory)+launch = %g", got.TimeS, want)
	}
}

func TestEstimateKernelL2(t *testing.T) {
	g, p := testGPU(), DefaultParams()
	const bytes = 1 << 20 // fits in the 4 MiB L2
	got := EstimateKernel(g, Kernel{Class: ClassElementwise, Precision: hwdb.FP32, Bytes: bytes, WorkingSet: bytes}, Options{Params: p, Setting: Isolated})
	want := bytes / (g.MemBW * p.L2Factor * p.MemEff) // L2 bandwidth unknown: L2Factor × DRAM
	if got.Level != "l2" || !near(got.MemoryS, want, 1e-12) {
		t.Errorf("got %s %g, want l2 %g", got.Level, got.MemoryS, want)
	}
}

func TestEstimateKernelLaunchBound(t *testing.T) {
	g := testGPU()
	got := EstimateKernel(g, Kernel{Class: ClassElementwise, Precision: hwdb.FP32, FLOPs: 1024, Bytes: 8192, Launches: 2}, Options{Params: DefaultParams(), Setting: Isolated})
	if got.Bound != "launch" {
		t.Errorf("bound %q, want launch", got.Bound)
	}
	if want := 2 * g.LaunchS; got.LaunchS != want {
		t.Errorf("launch %g, want 2 launches × %g", got.LaunchS, g.LaunchS)
	}
}

func TestGEMMFullWaves(t *testing.T) {
	// M = 128·SMs·4, N = 128: exactly four full waves of 128×128 tiles,
	// so the only losses are the asymptotic efficiency and the K ramp.
	g := testGPU()
	p := DefaultParams()
	p.KHalf = 0 // isolate wave arithmetic from the ramp
	m, n, k := int64(128*g.SMs*4), int64(128), int64(4096)
	got := gemmCompute(g, hwdb.FP32, m, n, k, 1, 1, p)
	want := 2 * float64(m*n*k) / (g.Peak[hwdb.FP32] * p.EffVector) // GEMM FLOPs at eff × peak
	if !near(got, want, 1e-9) {
		t.Errorf("full-wave GEMM %g s, want %g s", got, want)
	}
	// One more tile row costs a whole extra wave of that tile, or a
	// smaller-tile schedule; either way it cannot be cheaper.
	if more := gemmCompute(g, hwdb.FP32, m+1, n, k, 1, 1, p); more <= got {
		t.Errorf("M+1 took %g s, not more than %g s", more, got)
	}
}

func TestGEMMRampAndTensor(t *testing.T) {
	g, p := testGPU(), DefaultParams()
	short := gemmCompute(g, hwdb.FP16Tensor, 4096, 4096, 64, 1, 1, p)
	long := gemmCompute(g, hwdb.FP16Tensor, 4096, 4096, 64*64, 1, 1, p)
	if rate := func(s float64, k int64) float64 { return 2 * 4096 * 4096 * float64(k) / s }; rate(short, 64) >= rate(long, 64*64) {
		t.Errorf("short-K GEMM is not slower per FLOP (%g vs %g FLOP/s)", rate(short, 64), rate(long, 64*64))
	}
	vec := gemmCompute(g, hwdb.FP32, 4096, 4096, 4096, 1, 1, p)
	tc := gemmCompute(g, hwdb.FP16Tensor, 4096, 4096, 4096, 1, 1, p)
	if tc >= vec {
		t.Errorf("tensor-core GEMM %g s not faster than fp32 %g s", tc, vec)
	}
}

func TestPeakFallback(t *testing.T) {
	g := testGPU()
	if v, pr := peakFor(g, hwdb.INT8); pr != hwdb.INT8 || v != 4*g.Peak[hwdb.FP32] {
		t.Errorf("dp4a on a GPU with int8 tensor cores: %g %s, want 4×fp32", v, pr)
	}
	if v, pr := peakFor(g, hwdb.TF32Tensor); pr != hwdb.FP32 || v != g.Peak[hwdb.FP32] {
		t.Errorf("tf32 on Turing: %g %s, want the fp32 path", v, pr)
	}
	if v, _ := peakFor(g, hwdb.FP64); v != 0 {
		t.Errorf("fp64 missing should give 0, got %g", v)
	}
}

func TestRNNStepsSerialise(t *testing.T) {
	g := testGPU()
	one := EstimateKernel(g, RNNKernel("LSTM", 1024, 1024, 8, 10, 1, hwdb.FP32, 4), PlanOptions())
	two := EstimateKernel(g, RNNKernel("LSTM", 1024, 1024, 8, 20, 1, hwdb.FP32, 4), PlanOptions())
	// Doubling the steps doubles the sequential part; the one input GEMM
	// grows less, so the ratio is a little under 2 but well above 1.5.
	if r := two.TimeS / one.TimeS; r < 1.5 || r > 2.01 {
		t.Errorf("20 steps / 10 steps = %.2f, want about 2", r)
	}
}

// TestRNNStepLatencyByKind checks each kind of step takes its own latency:
// a batch of at most gemvMaxCols the GEMV-like one, a wider batch the
// tiled one, and a parameter set without the GEMV-like latency (zero) the
// tiled one.
func TestRNNStepLatencyByKind(t *testing.T) {
	p := DefaultParams()
	gemv, tiled := p.RNNGemvStepLaunches, p.RNNStepLaunches
	for _, c := range []struct {
		batch int64
		want  float64
	}{
		{1, gemv}, {gemvMaxCols, gemv}, {gemvMaxCols + 1, tiled},
		{2 * gemvMaxCols, tiled}, {128, tiled},
	} {
		k := RNNKernel("LSTM", 256, 0, c.batch, 10, 1, hwdb.FP32, 4)
		if got := rnnStepLatency(k, p); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("batch %d: step latency %.4g launches, want %.4g", c.batch, got, c.want)
		}
	}
	q := p
	q.RNNGemvStepLaunches = 0
	if got := rnnStepLatency(RNNKernel("LSTM", 256, 0, 1, 10, 1, hwdb.FP32, 4), q); got != tiled {
		t.Errorf("without a GEMV-like latency, batch 1 takes %.4g launches, want the tiled %.4g", got, tiled)
	}
}

// TestRNNBatchNeverDearerPerSequence prices LSTM and GRU layers of several
// widths on every GPU at batch 1-130: the layer's time never falls as the
// batch grows, and its recurrent step's time per sequence never rises
// (the step's throughput never falls: rnnStep's cap). The layers skip the
// input projection (DeepBench's mode), whose one GEMM is priced by the
// GEMM model, wave quantisation and all, and is not what these rules are
// about.
func TestRNNBatchNeverDearerPerSequence(t *testing.T) {
	p := DefaultParams()
	for _, g := range hwdb.All() {
		launch := launchOverhead(g, p)
		for _, op := range []string{"LSTM", "GRU"} {
			for _, hidden := range []int64{16, 64, 512, 2048} {
				prev, prevStep := 0.0, math.Inf(1)
				for b := int64(1); b <= 130; b++ {
					k := RNNKernel(op, hidden, 0, b, 20, 1, hwdb.FP32, 4)
					tb := EstimateKernel(g, k, PlanOptions()).TimeS
					if tb < prev*(1-1e-9) {
						t.Errorf("%s %s hidden %d: batch %d %.4g s < batch %d %.4g s", g.Name, op, hidden, b, tb, b-1, prev)
					}
					prev = tb
					step := rnnStep(g, k, 1, 4, p, launch) / float64(b)
					if step > prevStep*(1+1e-9) {
						t.Errorf("%s %s hidden %d: a step costs %.4g s a sequence at batch %d, %.4g s at %d", g.Name, op, hidden, step, b, prevStep, b-1)
					}
					prevStep = step
				}
			}
		}
	}
}

func TestEstimateConvChoosesAlgorithm(t *testing.T) {
	g := testGPU()
	g.Arch = "Turing (TU104)"
	c3 := ConvGeom{N: 16, C: 256, H: 28, W: 28, K: 256, R: 3, S: 3, PadH: 1, PadW: 1, StrideH: 1, StrideW: 1}
	k, _ := EstimateConv(g, c3, hwdb.FP32, 4, 4, PlanOptions())
	if k.Class != ClassWinograd {
		t.Errorf("3×3 fp32 conv with 256 channels chose %s, want winograd", k.Class)
	}
	// The same part as a Hopper: its library has no Winograd kernels
	// (LibraryWinograd), so implicit GEMM runs, slower here.
	h := *g
	h.Arch = "Hopper (GH100)"
	if k, kt := EstimateConv(&h, c3, hwdb.FP32, 4, 4, PlanOptions()); k.Class != ClassConv {
		t.Errorf("3×3 fp32 conv on a Hopper chose %s, want implicit GEMM", k.Class)
	} else if _, wt := EstimateConv(g, c3, hwdb.FP32, 4, 4, PlanOptions()); !(kt.TimeS > wt.TimeS) {
		t.Errorf("implicit GEMM %.3g s is not slower than Winograd %.3g s on the same figures", kt.TimeS, wt.TimeS)
	}
	c1 := c3
	c1.R, c1.S, c1.PadH, c1.PadW = 1, 1, 0, 0
	if k, _ := EstimateConv(g, c1, hwdb.FP32, 4, 4, PlanOptions()); k.Class != ClassConv {
		t.Errorf("1×1 conv chose %s, want implicit GEMM", k.Class)
	}
	want := 2.0 * 16 * 256 * 28 * 28 * 256 * 3 * 3 // 2·N·K·P·Q·C·R·S
	if got := ConvKernel(c3, hwdb.FP32, 4, 4).FLOPs; got != want {
		t.Errorf("conv FLOPs %g, want %g", got, want)
	}
}

func TestLibraryWinogradFamilies(t *testing.T) {
	for arch, want := range map[string]bool{
		"Maxwell (GM200)": true, "Pascal (GP102)": true, "Volta (GV100)": true, "Turing (TU104)": true,
		"Ampere (GA100)": true, "Ada Lovelace (AD102)": true, "Vega 10 (GCN 5)": true,
		"Hopper (GH100)": false, "Blackwell (GB100, 2 dies)": false, "CDNA 3 (8 XCDs)": false, "": false,
	} {
		if got := LibraryWinograd(&hwdb.GPU{Arch: arch}); got != want {
			t.Errorf("LibraryWinograd(%q) = %v, want %v", arch, got, want)
		}
	}
	if LibraryWinograd(nil) {
		t.Error("LibraryWinograd(nil) = true")
	}
}

func TestEstimateKernelNoPanicOnDegenerate(t *testing.T) {
	g := testGPU()
	for _, k := range []Kernel{
		{},
		{Class: ClassGEMM, M: 1, N: 1, K: 1},
		{Class: ClassRNN, M: 4, N: 1, K: 1},
		{Class: ClassGEMM, Precision: hwdb.FP64, M: 8, N: 8, K: 8, FLOPs: 1024},
	} {
		got := EstimateKernel(g, k, PlanOptions())
		if math.IsNaN(got.TimeS) || math.IsInf(got.TimeS, 0) || got.TimeS < 0 {
			t.Errorf("%+v: time %g", k, got.TimeS)
		}
	}
	if got := EstimateKernel(nil, Kernel{}, PlanOptions()); got.TimeS != 0 {
		t.Errorf("nil GPU: %+v", got)
	}
}

func BenchmarkEstimateKernelGEMM(b *testing.B) {
	g := testGPU()
	k := GEMMKernel(4096, 4096, 4096, 1, hwdb.FP16Tensor, 2, 2)
	for b.Loop() {
		EstimateKernel(g, k, PlanOptions())
	}
}

func TestClockFraction(t *testing.T) {
	p := DefaultParams()
	p.FullClockPower = 2.5
	g := testGPU()
	g.TDPWatts, g.BoostClockMHz = 70, 1590
	rho := 70 / (40 * 1.590) // TDP per SM per GHz of boost clock
	if got, want := clockFraction(g, p), math.Sqrt(rho/2.5); !near(got, want, 1e-12) {
		t.Errorf("power-capped clock fraction %g, want sqrt(rho/full) = %g", got, want)
	}
	g.TDPWatts = 400 // ample power: boost clock holds
	if got := clockFraction(g, p); got != 1 {
		t.Errorf("unconstrained clock fraction %g, want 1", got)
	}
	g.SustainedClockMHz = 1200 // a measured figure wins over the estimate
	if got, want := clockFraction(g, p), 1200.0/1590; !near(got, want, 1e-12) {
		t.Errorf("measured clock fraction %g, want %g", got, want)
	}
	// Compute slows with the clock; memory does not. In a plan: timed
	// alone, the grid's partial last round lowers its average share busy
	// (gridBusy), and a sustained clock is scaled by that share.
	g.SustainedClockMHz = 795 // half the boost clock
	k := GEMMKernel(4096, 4096, 4096, 1, hwdb.FP32, 4, 4)
	half := EstimateKernel(g, k, Options{Params: p, Setting: InPlan})
	g.SustainedClockMHz = 0
	full := EstimateKernel(g, k, Options{Params: p, Setting: InPlan})
	// The fixed latency (LatencyS) is not clock-scaled.
	if !near(half.ComputeS, 2*full.ComputeS, 1e-9) || half.LatencyS != full.LatencyS || half.MemoryS != full.MemoryS {
		t.Errorf("half clock: compute %g vs %g, memory %g vs %g", half.ComputeS, full.ComputeS, half.MemoryS, full.MemoryS)
	}
}

func TestConvPathFallback(t *testing.T) {
	first := ConvGeom{N: 8, C: 3, H: 224, W: 224, K: 64, R: 7, S: 7, PadH: 3, PadW: 3, StrideH: 2, StrideW: 2}
	for _, pr := range []hwdb.Precision{hwdb.INT8, hwdb.INT8Tensor, hwdb.FP16Tensor} {
		if got := convPath(first, pr); got != hwdb.FP32 {
			t.Errorf("%s conv with 3 channels runs %s, want the fp32 fallback", pr, got)
		}
	}
	packed := first
	packed.C = 64 // a multiple of every pack (4 dp4a, 8 fp16 tensor, 16 int8 tensor)
	for _, pr := range []hwdb.Precision{hwdb.INT8, hwdb.INT8Tensor, hwdb.FP16Tensor, hwdb.FP32} {
		if got := convPath(packed, pr); got != pr {
			t.Errorf("%s conv with 64 channels runs %s", pr, got)
		}
	}
}

// TestInPlanFixedCost: a kernel inside a plan pays the in-graph gap
// (inPlanLaunchFraction of the stream launch cost) and the GPU-side share
// of the fill (the same fraction of FillLaunches, see fillS); the same
// kernel timed in isolation pays the launch and all of FillLaunches.
func TestInPlanFixedCost(t *testing.T) {
	g, p := testGPU(), DefaultParams()
	k := GEMMKernel(128, 768, 768, 1, hwdb.FP16Tensor, 2, 2)
	iso := EstimateKernel(g, k, Options{Params: p, Setting: Isolated})
	plan := EstimateKernel(g, k, Options{Params: p, Setting: InPlan})
	if want := inPlanLaunchFraction * g.LaunchS; !near(plan.RampS+plan.LaunchS, want, 1e-12) || !near(plan.RampS, kernelRampShare*want, 1e-12) {
		t.Errorf("in-plan launch %g + ramp %g, want %g × %g, %g of it the ramp", plan.LaunchS, plan.RampS, inPlanLaunchFraction, g.LaunchS, kernelRampShare)
	}
	if iso.RampS != 0 {
		t.Errorf("isolated ramp %g: an isolated call's launch holds its whole per-call cost", iso.RampS)
	}
	// The device-side fill is the same in a plan and alone; the host
	// side of the fill is a floor on an isolated call (DeepBench's async
	// calls), not added to it.
	if iso.LatencyS != plan.LatencyS || iso.ComputeS != plan.ComputeS {
		t.Errorf("isolated latency %g / compute %g, in-plan %g / %g: want the same device-side work", iso.LatencyS, iso.ComputeS, plan.LatencyS, plan.ComputeS)
	}
	if floor := (1-inPlanLaunchFraction)*p.FillLaunches*g.LaunchS + g.LaunchS; iso.TimeS < floor*(1-1e-12) {
		t.Errorf("isolated time %g below the host-side floor %g", iso.TimeS, floor)
	}
	if got := EstimateKernel(g, k, PlanOptions()); got != plan {
		t.Errorf("PlanOptions is not the in-plan setting with the committed parameters")
	}
}

// TestGEMVMemoryBound: a batch-1 fully connected layer (AlexNet fc6 at
// batch 1, [1×9216]·[9216×4096] fp32) streams its 151 MB of weights;
// it is priced as a GEMV (gemvCompute), not as padded rows of a tile.
func TestGEMVMemoryBound(t *testing.T) {
	g, p := testGPU(), DefaultParams()
	k := GEMMKernel(1, 4096, 9216, 1, hwdb.FP32, 4, 4)
	got := EstimateKernel(g, k, Options{Params: p, Setting: Isolated})
	if got.Bound != "memory" {
		t.Errorf("GEMV bound %q (compute %g s, memory %g s), want memory", got.Bound, got.ComputeS, got.MemoryS)
	}
	weights := 4.0 * 9216 * 4096 // fp32 weight bytes, read once
	if got.MemoryS < weights/(g.MemBW*p.MemEff) {
		t.Errorf("memory time %g s below the weight stream %g s", got.MemoryS, weights/(g.MemBW*p.MemEff))
	}
}

// TestOneRowNeverDearerThanFour: a library runs one row on its tiled
// tensor-core kernels too (padded to the tile) where they beat its GEMV,
// so a 1-row product's main loop never costs more than 4 rows'. On a
// board whose vector fp16 rate is far below its tensor rate (a user's
// file giving a B200 the tensor peak of a thousand; FuzzUserGPU) the
// GEMV's arithmetic cost more than the 4-row tile's, and a decode step
// was cheaper at batch 4 than at 1.
func TestOneRowNeverDearerThanFour(t *testing.T) {
	b200, err := hwdb.Lookup("B200")
	if err != nil {
		t.Fatal(err)
	}
	g := b200.Clone()
	g.Peak[hwdb.FP16Tensor] *= 1000
	o := Options{Params: DefaultParams(), Setting: Isolated}
	for _, nk := range [][2]int64{{256, 256}, {4096, 4096}, {64, 8192}} {
		one := EstimateKernel(g, GEMMKernel(1, nk[0], nk[1], 1, hwdb.FP16Tensor, 2, 2), o)
		four := EstimateKernel(g, GEMMKernel(4, nk[0], nk[1], 1, hwdb.FP16Tensor, 2, 2), o)
		if one.ComputeS > four.ComputeS*(1+1e-12) {
			t.Errorf("1×%d×%d: compute %g s, above 4 rows' %g s", nk[0], nk[1], one.ComputeS, four.ComputeS)
		}
	}
}

// TestRowsNeverDearerThanTheirGEMVs: r rows of a product never cost
// more than r one-row GEMVs (gemvsS) at any precision: a library has that
// choice. A small fp16 or int8 product (4×64×172, a tiny decoder's MLP)
// was priced as its padded tensor tile on 2 SMs.
func TestRowsNeverDearerThanTheirGEMVs(t *testing.T) {
	for _, c := range []struct {
		gpu string
		pr  hwdb.Precision
		eb  float64
	}{{"A100-SXM4-80GB", hwdb.FP16Tensor, 2}, {"H100-SXM5-80GB", hwdb.INT8Tensor, 1}, {"T4", hwdb.FP16Tensor, 2}} {
		g, err := hwdb.Lookup(c.gpu)
		if err != nil {
			t.Fatal(err)
		}
		o := Options{Params: DefaultParams(), Setting: Isolated}
		one := EstimateKernel(g, GEMMKernel(1, 64, 172, 1, c.pr, c.eb, c.eb), o)
		for _, r := range []int64{2, 4, 8} {
			k := EstimateKernel(g, GEMMKernel(r, 64, 172, 1, c.pr, c.eb, c.eb), o)
			if bound := float64(r) * max(one.ComputeS, k.MemoryS); k.ComputeS > bound*(1+1e-12) {
				t.Errorf("%s %s: %d rows' main loop %g s, above %d GEMVs' %g s", c.gpu, c.pr, r, k.ComputeS, r, bound)
			}
		}
	}
}

// TestClockBusyFraction: a power-capped board throttles a kernel that
// fills every SM but not one that keeps a quarter of them busy enough to
// fit the power budget: f ∝ √(ρ/(busy·FullClockPower)), capped at boost.
func TestClockBusyFraction(t *testing.T) {
	p := DefaultParams()
	g := &hwdb.GPU{SMs: 40, BoostClockMHz: 1590, TDPWatts: 70} // T4: ρ = 70/(40·1.59) = 1.10 W/(SM·GHz)
	rho := 70 / (40 * 1.59)
	if got, want := clockFractionBusy(g, p, 1), math.Sqrt(rho/p.FullClockPower); !near(got, want, 1e-12) {
		t.Errorf("full load %g, want %g", got, want)
	}
	if got := clockFractionBusy(g, p, 0.25); got != 1 {
		t.Errorf("a quarter busy: %g, want boost (1): 0.25·%g W/(SM·GHz) is under ρ = %g", got, p.FullClockPower, rho)
	}
}

// TestWinogradNotOnTensorCores: cuDNN's Winograd kernels run on the
// vector units, so tf32 Winograd is fp32 vector and fp16 Winograd fp16
// vector, while GEMM-like kernels at those dtypes use tensor cores.
func TestWinogradNotOnTensorCores(t *testing.T) {
	for _, c := range []struct {
		dtype      string
		wino, gemm hwdb.Precision
	}{
		{"tf32", hwdb.FP32, hwdb.TF32Tensor},
		{"fp16", hwdb.FP16, hwdb.FP16Tensor},
		{"fp32", hwdb.FP32, hwdb.FP32},
	} {
		if got := WantedPrecision(c.dtype, ClassWinograd); got != c.wino {
			t.Errorf("%s Winograd: %s, want %s", c.dtype, got, c.wino)
		}
		if got := WantedPrecision(c.dtype, ClassGEMM); got != c.gemm {
			t.Errorf("%s GEMM: %s, want %s", c.dtype, got, c.gemm)
		}
	}
}

// TestVectorTileFeed checks the shared-memory feed model of vector tiles:
// an SM with 128 FP32 lanes (GP102-like) needs the full 128×128 tile,
// while one with 64 lanes (GP100-like) runs a 64×64 tile at full rate.
func TestVectorTileFeed(t *testing.T) {
	p := DefaultParams()
	p.TileReuse = 4 // 8×8 outputs per thread: 64 FMAs per 16 words
	wide := &hwdb.GPU{Name: "wide", SMs: 28, BoostClockMHz: 1000,
		Peak: map[hwdb.Precision]float64{hwdb.FP32: 2 * 128 * 28 * 1e9}} // 128 lanes/SM
	narrow := &hwdb.GPU{Name: "narrow", SMs: 56, BoostClockMHz: 1000,
		Peak: map[hwdb.Precision]float64{hwdb.FP32: 2 * 64 * 56 * 1e9}} // 64 lanes/SM
	if got := vectorFMAsPerClock(wide, hwdb.FP32); !near(got, 128, 1e-12) {
		t.Errorf("lanes %g, want 128", got)
	}
	// 32 words/clock × 4 FMAs/word × √(64·64/128²) = 64 FMAs/clock.
	if got, want := vectorTileEff(wide, hwdb.FP32, 64*64, p), 32*4*0.5/128.0; !near(got, want, 1e-12) {
		t.Errorf("128-lane SM, 64×64 tile: %g of peak, want %g", got, want)
	}
	if got := vectorTileEff(wide, hwdb.FP32, 128*128, p); got != 1 {
		t.Errorf("128-lane SM, 128×128 tile: %g of peak, want 1", got)
	}
	if got := vectorTileEff(narrow, hwdb.FP32, 64*64, p); got != 1 {
		t.Errorf("64-lane SM, 64×64 tile: %g of peak, want 1", got)
	}
	// dp4a packs four int8 per word: the same 4× rate needs no more words.
	wide.Peak[hwdb.INT8] = 4 * wide.Peak[hwdb.FP32]
	if a, b := vectorTileEff(wide, hwdb.INT8, 64*64, p), vectorTileEff(wide, hwdb.FP32, 64*64, p); !near(a, b, 1e-12) {
		t.Errorf("dp4a tile feed %g, fp32 %g: want equal", a, b)
	}
}

// TestSmallKernelsLatencyBound: a batch-1 GEMV ([1,512]×[512,512] fp32)
// and a 960-channel 5×5 depthwise convolution on 33×33 are not priced as
// padded GEMM tiles (they were 10.7 µs "compute-bound" and 111 µs at 2%
// of peak on A100) and, where the fixed fill and drain every GEMM-like
// kernel pays exceeds both their arithmetic and their memory time, they
// say so: bound "latency". A large GEMM stays compute-bound.
func TestSmallKernelsLatencyBound(t *testing.T) {
	g, err := hwdb.Lookup("A100")
	if err != nil {
		t.Fatal(err)
	}
	gemv := EstimateKernel(g, GEMMKernel(1, 512, 512, 1, hwdb.FP32, 4, 4), PlanOptions())
	if gemv.Bound != "latency" || gemv.ComputeS > gemv.MemoryS || gemv.TimeS > 8e-6 {
		t.Errorf("GEMV: %+v, want latency-bound, arithmetic under memory time, under 8 µs", gemv)
	}
	dw := ConvGeom{N: 1, C: 960, H: 33, W: 33, K: 960, R: 5, S: 5, PadH: 2, PadW: 2, StrideH: 1, StrideW: 1, Group: 960}
	k := ConvKernel(dw, hwdb.FP32, 4, 4)
	dt := EstimateKernel(g, k, PlanOptions())
	peak, _ := peakFor(g, hwdb.FP32)
	if dt.Bound == "compute" || dt.TimeS > 20e-6 || k.FLOPs/dt.TimeS < 0.1*peak {
		t.Errorf("depthwise: %+v (%.1f%% of peak), want not compute-bound, under 20 µs, at least 10%% of peak", dt, 100*k.FLOPs/dt.TimeS/peak)
	}
	big := EstimateKernel(g, GEMMKernel(4096, 4096, 4096, 1, hwdb.FP32, 4, 4), PlanOptions())
	if big.Bound != "compute" {
		t.Errorf("4096³ GEMM: bound %q, want compute", big.Bound)
	}
}

// TestVectorizedKernels checks the SM-side limit of vectorized library
// kernels: a layer norm priced as one is faster than the same kernel
// charged by its FLOPs, never faster than its bytes over DRAM bandwidth,
// and an fp32 one moves more bytes per SM-cycle than an fp16 one (a vector
// holds four elements either way for a norm), on every GPU with a clock.
func TestVectorizedKernels(t *testing.T) {
	for _, name := range []string{"A100", "H100", "A40", "T4", "L4"} {
		g, err := hwdb.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		o := Options{Params: DefaultParams(), Setting: Isolated}
		perByte := map[float64]float64{}
		for _, eb := range []float64{2, 4} {
			rows, rowLen := int64(8192), int64(4096)
			bytes := 2 * float64(rows*rowLen) * eb
			k := Kernel{Class: ClassReduction, FLOPs: 8 * float64(rows*rowLen), Bytes: bytes, WorkingSet: bytes,
				ElemBytes: eb, Rows: rows, RowLen: rowLen, RowPasses: 2, Launches: 1, Precision: hwdb.FP32}
			byFLOPs := EstimateKernel(g, k, o)
			k.Vectorized = true
			vec := EstimateKernel(g, k, o)
			if !(vec.MemoryS < byFLOPs.MemoryS) {
				t.Errorf("%s %g-byte layer norm: vectorized %.3g s, by FLOPs %.3g s: want the vectorized kernel faster", name, eb, vec.MemoryS, byFLOPs.MemoryS)
			}
			if floor := bytes / g.MemBW; vec.TimeS < floor {
				t.Errorf("%s %g-byte layer norm: %.3g s, below its bytes over DRAM bandwidth %.3g s", name, eb, vec.TimeS, floor)
			}
			perByte[eb] = vec.MemoryS / bytes
		}
		if !(perByte[4] < perByte[2]) {
			t.Errorf("%s: an fp32 layer norm takes %.3g s per byte, fp16 %.3g: want fp32 the faster per byte", name, perByte[4], perByte[2])
		}
	}
}

// TestKernelRampKeepsTime: the ramp is a re-split of a plan's per-kernel
// cost, not an added one. On every GPU and runtime, each kernel's ramp
// and gap add up to the runtime's KernelGap (times its launches), its
// time is its terms plus both, and its ramp is half the runtime's gap:
// a stream launch's kernel (pytorch, onnxruntime) lasts longer than a
// graph replay's.
func TestKernelRampKeepsTime(t *testing.T) {
	p := DefaultParams()
	kernels := map[string]Kernel{
		"tiny add":  {Class: ClassElementwise, FLOPs: 65536, Bytes: 3 * 4 * 65536, Precision: hwdb.FP32, Launches: 1},
		"gemm":      GEMMKernel(512, 512, 512, 1, hwdb.FP16Tensor, 2, 2),
		"two steps": {Class: ClassElementwise, FLOPs: 1e6, Bytes: 12e6, Precision: hwdb.FP32, Launches: 2},
	}
	for _, g := range hwdb.All() {
		for _, rtName := range []string{"graph", "pytorch", "onnxruntime"} {
			rt, err := hwdb.LookupRuntime(rtName)
			if err != nil {
				t.Fatal(err)
			}
			for name, k := range kernels {
				kt := EstimateKernel(g, k, Options{Params: p, Setting: InPlan, Runtime: rt})
				n := max(k.Launches, 1)
				perKernel := KernelGap(g, rt, p)
				if !near(kt.RampS+kt.LaunchS, n*perKernel, 1e-12) || !near(kt.RampS, n*kernelRampShare*perKernel, 1e-12) {
					t.Errorf("%s %s %s: ramp %g + gap %g, want %g launches × %g (ramp %g)", g.Name, rtName, name, kt.RampS, kt.LaunchS, n, perKernel, KernelRamp(g, rt, p))
				}
				if graph := KernelRamp(g, nil, p); rtName != "graph" && !(KernelRamp(g, rt, p) > graph) {
					t.Errorf("%s %s: ramp %g, not above a graph replay's %g", g.Name, rtName, KernelRamp(g, rt, p), graph)
				}
				if want := BodyS(k.Class, kt.ComputeS, kt.LatencyS, kt.MemoryS) + kt.RampS + kt.LaunchS; !near(kt.TimeS, want, 1e-12) {
					t.Errorf("%s %s %s: time %g, want terms + ramp + gap %g", g.Name, rtName, name, kt.TimeS, want)
				}
			}
		}
	}
}

// TestIsolatedConvDoesNotSplitK: a convolution timed alone is a cuDNN
// forward call, whose algorithms do not split the K loop (splitsK), so a
// small grid over a long K leaves SMs idle: DeepBench's int8 convolution
// of 49 × 128 outputs over K = 20,800 took 418 µs on a Titan Xp, priced
// 24 µs with split-K. A GEMM and a weight gradient may still split.
func TestIsolatedConvDoesNotSplitK(t *testing.T) {
	o := Options{Params: DefaultParams(), Setting: Isolated}
	conv := Kernel{Class: ClassConv, Precision: hwdb.FP32, M: 49, N: 128, K: 20800, Batch: 1}
	if splitsK(conv, o) {
		t.Error("an isolated forward convolution splits K")
	}
	for name, k := range map[string]Kernel{"GEMM": {Class: ClassGEMM, M: 49, N: 128, K: 20800},
		"weight gradient": {Class: ClassConv, Grad: GradWeight, M: 49, N: 128, K: 20800}} {
		if !splitsK(k, o) {
			t.Errorf("isolated %s: no split-K", name)
		}
	}
	g, err := hwdb.Lookup("Titan-Xp")
	if err != nil {
		t.Fatal(err)
	}
	unsplit := gemmComputeLib(g, hwdb.FP32, 49, 128, 20800, 1, 1, o.Params, gemmLib{})
	split := gemmComputeLib(g, hwdb.FP32, 49, 128, 20800, 1, 1, o.Params, gemmLib{splitK: true})
	if !(unsplit > 2*split) {
		t.Errorf("Titan Xp 49×128×20800: %.1f µs unsplit, %.1f µs split; want the tiny grid to cost more than twice", unsplit*1e6, split*1e6)
	}
}

// TestChooseGEMM: the plan ChooseGEMM reports is the one EstimateKernel
// prices (its main loop is the kernel's compute term); a GPU-filling
// fp16 GEMM runs whole 128×128 tiles unsplit, a 128-token fp32 Linear on
// an H100 (6 such tiles for 132 SMs) splits K, and a GEMV is priced
// another way. The split is the model's choice, not cuBLAS's (GEMMPlan).
func TestChooseGEMM(t *testing.T) {
	h100, err := hwdb.Lookup("H100-SXM5-80GB")
	if err != nil {
		t.Fatal(err)
	}
	o := PlanOptions()
	for _, c := range []struct {
		k         Kernel
		tile      int64
		wantSplit bool
	}{
		{GEMMKernel(8192, 8192, 8192, 1, hwdb.FP16Tensor, 2, 2), 128, false},
		{GEMMKernel(768, 128, 768, 1, hwdb.FP32, 4, 4), 0, true},
	} {
		pl, ok := ChooseGEMM(h100, c.k, o)
		if !ok {
			t.Fatalf("%d×%d×%d: no plan", c.k.M, c.k.N, c.k.K)
		}
		if kt := EstimateKernel(h100, c.k, o); pl.ComputeS != kt.ComputeS {
			t.Errorf("%d×%d×%d: plan %g s, kernel's compute %g s: want the one EstimateKernel prices", c.k.M, c.k.N, c.k.K, pl.ComputeS, kt.ComputeS)
		}
		if c.tile > 0 && (pl.TileM != c.tile || pl.TileN != c.tile) {
			t.Errorf("%d×%d×%d: tile %d×%d, want %d×%d", c.k.M, c.k.N, c.k.K, pl.TileM, pl.TileN, c.tile, c.tile)
		}
		if (pl.Split > 1) != c.wantSplit || pl.Passes != 1 || !(pl.CTAs > 0) {
			t.Errorf("%d×%d×%d: %+v; want split %v, one pass", c.k.M, c.k.N, c.k.K, pl, c.wantSplit)
		}
	}
	if _, ok := ChooseGEMM(h100, GEMMKernel(1, 4096, 4096, 1, hwdb.FP16Tensor, 2, 2), o); ok {
		t.Error("a GEMV has a tiled plan")
	}
}

// linearKernel is an M×N×K fp32 product with a bias (a Linear's
// epilogue: hasEpilogue).
func linearKernel(m, n, k int64) Kernel {
	kk := GEMMKernel(m, n, k, 1, hwdb.FP32, 4, 4)
	kk.FLOPs += float64(m) * float64(n)
	return kk
}

// TestSIMTGEMMSplitCapped: a CUDA-core Linear (a product with a bias) on
// an NVIDIA GPU splits K at most simtGEMMMaxSplit ways, as cuBLAS's
// sgemm_largek does in our H200 trace (BERT-base's 128-token Linears: 2
// and 4), where the fastest plan would split 22 ways; the same product on
// the TF32 tensor-core path, on AMD's rocBLAS and a weight-gradient
// convolution (cuDNN) keep the deeper split.
func TestSIMTGEMMSplitCapped(t *testing.T) {
	split := func(gpu string, k Kernel) int64 {
		t.Helper()
		return planSplit(t, lookupAll(t, []string{gpu})[0], k)
	}
	linear := linearKernel(128, 768, 3072)
	if s := split("H200-SXM-141GB", linear); s < 2 || s > simtGEMMMaxSplit {
		t.Errorf("fp32 128×768×3072 on an H200: split %d, want 2..%d (cuBLAS's sgemm_largek)", s, simtGEMMMaxSplit)
	}
	tf32 := linear
	tf32.Precision = hwdb.TF32Tensor
	if s := split("H200-SXM-141GB", tf32); s <= simtGEMMMaxSplit {
		t.Errorf("tf32 128×768×3072 on an H200: split %d, want the uncapped plan's deeper split", s)
	}
	if s := split("MI250X", linear); s <= simtGEMMMaxSplit {
		t.Errorf("fp32 128×768×3072 on an MI250X: split %d, want rocBLAS uncapped", s)
	}
	wgrad := ConvWgradKernel(ConvGeom{N: 32, C: 64, H: 56, W: 56, K: 64, R: 1, S: 1, StrideH: 1, StrideW: 1}, hwdb.FP32, 4, 4)
	if s := split("H200-SXM-141GB", wgrad); s <= simtGEMMMaxSplit {
		t.Errorf("an fp32 weight gradient on an H200: split %d, want cuDNN's deeper split", s)
	}
}

// TestSIMTSplitOnlyWhereCuBLASSplits: cuBLAS's CUDA-core Linears split K
// for a deep K or a small output only (simtLargeKRatio, simtSmallOutput),
// as our H200 trace shows; bare products (bareSIMTProduct) for outputs
// up to simtBareSmallOutput or a deep K, as our H100/H200 rows and the
// H200's GEMM-choice sweep show; a weight gradient, whose K is the
// batch's rows, keeps the split it always had, so its time never falls
// as the batch grows.
func TestSIMTSplitOnlyWhereCuBLASSplits(t *testing.T) {
	o := PlanOptions()
	h200 := lookupAll(t, []string{"H200-SXM-141GB"})[0]
	for _, c := range []struct {
		m, n, k int64
		bias    bool
		split   bool
	}{
		{128, 768, 768, true, true},      // sgemm_largek_lds64, grid depth 2 (K/√(MN) 2.4)
		{128, 768, 3072, true, true},     // depth 4 (9.8)
		{128, 3072, 768, true, false},    // an unsplit 128×32-tile ffma kernel (1.2; 393k outputs)
		{128, 3072, 768, false, true},    // bare: 64×64 tiles split 4 ways (the choice sweep)
		{1024, 768, 768, false, true},    // bare: split 2 (786k outputs)
		{1024, 1024, 1024, false, false}, // 63-68 µs measured: the unsplit plan's time
		{512, 512, 512, false, true},     // 16 µs: the split plan's (a small output)
		{128, 4096, 4096, false, true},   // 93 µs: the split plan's (5.7)
	} {
		k := GEMMKernel(c.m, c.n, c.k, 1, hwdb.FP32, 4, 4)
		if c.bias {
			k = linearKernel(c.m, c.n, c.k)
		}
		pl, ok := ChooseGEMM(h200, k, o)
		if !ok {
			t.Fatalf("%d×%d×%d: no plan", c.m, c.n, c.k)
		}
		if got := pl.Split > 1; got != c.split {
			t.Errorf("fp32 %d×%d×%d (bias %v) on an H200: split %d, want split %v", c.m, c.n, c.k, c.bias, pl.Split, c.split)
		}
	}
	for _, g := range lookupAll(t, []string{"H100-SXM5-80GB", "A100-SXM4-40GB", "V100-SXM2-16GB", "T4"}) {
		prev := 0.0
		for rows := int64(512); rows <= 4096; rows += 64 {
			k := GEMMKernel(768, 768, rows, 1, hwdb.FP32, 4, 4)
			k.Grad = GradWeight
			tm := EstimateKernel(g, k, o).TimeS
			if tm < prev {
				t.Errorf("%s: a 768×768 weight gradient over %d rows takes %.3g s, less than over %d (%.3g s)", g.Name, rows, tm, rows-64, prev)
			}
			prev = tm
		}
	}
}

// TestReadWriteMix: a stream that writes as much as it reads (an in-place
// activation) runs at the board's read-write share of its stream
// efficiency, a triad (an Add) at the full figure, a mix between them in
// between; boards with no such loss measured, and kernels held by their
// SMs rather than by DRAM (not Stream), keep the full figure.
func TestReadWriteMix(t *testing.T) {
	p := DefaultParams()
	for _, tc := range []struct {
		gpu         string
		stream      bool
		writeShare  float64
		wantOfTriad float64
	}{
		{"H200", true, 1.0 / 3, 1},
		{"H200", true, 0.5, 0.9},
		{"H200", true, 5.0 / 12, 0.95},
		{"H200", true, 0.9, 0.9},
		{"H200", false, 0.5, 1},
		{"H100-SXM5-80GB", true, 0.5, 0.93},
		{"H100-PCIe-80GB", true, 0.5, 0.93},
		{"A100-SXM4-80GB", true, 0.5, 1},
		{"T4", true, 0.5, 1},
	} {
		g, err := hwdb.Lookup(tc.gpu)
		if err != nil {
			t.Fatal(err)
		}
		k := Kernel{Class: ClassElementwise, Stream: tc.stream, WriteShare: 1.0 / 3}
		triad := dramEff(g, k, p)
		k.WriteShare = tc.writeShare
		if got := dramEff(g, k, p) / triad; !near(got, tc.wantOfTriad, 1e-12) {
			t.Errorf("%s stream=%v write share %.3f: %.4f of the triad's efficiency, want %.4f", tc.gpu, tc.stream, tc.writeShare, got, tc.wantOfTriad)
		}
	}
}

// TestStreamEffElementwiseOnly: a board's measured stream efficiency
// (hwdb stream_eff) prices the DRAM stream of an elementwise kernel, the
// contiguous read-combine-write such measurements time; a GEMM's operand
// traffic (but on Hopper, whose GEMMs load by TMA: tmaStreamsGEMM), a
// row-wise kernel's rows, the L2 level and a board without the figure
// keep the fitted MemEff.
func TestStreamEffElementwiseOnly(t *testing.T) {
	p := DefaultParams()
	const bytes = 768 << 20 // far beyond any L2
	for _, tc := range []struct {
		gpu   string
		class KernelClass
		rows  bool
		eff   float64
	}{
		{"H100-SXM5-80GB", ClassElementwise, false, 0.9},
		{"H200", ClassElementwise, false, 0.9},
		{"A100-PCIe-40GB", ClassElementwise, false, 0.9},
		{"V100-PCIe-32GB", ClassElementwise, false, 0.9},
		{"H100-SXM5-80GB", ClassGEMM, false, 0.9},
		{"A100-PCIe-40GB", ClassGEMM, false, p.MemEff},
		{"H100-SXM5-80GB", ClassData, false, p.MemEff},
		{"H100-SXM5-80GB", ClassReduction, true, p.MemEff},
		{"T4", ClassElementwise, false, p.MemEff},
		{"A40", ClassElementwise, false, p.MemEff},
		{"MI300X", ClassElementwise, false, p.MemEff},
	} {
		g, err := hwdb.Lookup(tc.gpu)
		if err != nil {
			t.Fatal(err)
		}
		k := Kernel{Class: tc.class, Precision: hwdb.FP16, ElemBytes: 2, Bytes: bytes, WorkingSet: bytes}
		if tc.rows {
			k.Rows, k.RowLen = bytes/2/4096, 4096
		}
		for _, resident := range []bool{false, true} {
			k.Resident, k.DRAMBytes = resident, bytes
			s, bw, level := memoryTime(g, k, p)
			want := bytes / (g.MemBW * tc.eff)
			if tc.rows {
				want = s // row-wise: only the efficiency's use is checked below
				if got := dramEff(g, k, p); got != tc.eff {
					t.Errorf("%s %s: DRAM efficiency %g, want %g", tc.gpu, tc.class, got, tc.eff)
				}
			}
			if level != "hbm" || bw != g.MemBW || !near(s, want, 1e-12) {
				t.Errorf("%s %s resident=%v: %g s at %s, want %g s at hbm (%.2f of %g B/s)", tc.gpu, tc.class, resident, s, level, want, tc.eff, g.MemBW)
			}
		}
		// A working set in L2 streams at L2 bandwidth × MemEff whatever the class.
		small := Kernel{Class: tc.class, Precision: hwdb.FP16, ElemBytes: 2, Bytes: 1 << 20, WorkingSet: 1 << 20}
		if s, _, level := memoryTime(g, small, p); level != "l2" || !near(s, (1<<20)/(L2Bandwidth(g, p)*p.MemEff), 1e-12) {
			t.Errorf("%s %s: L2 stream %g s at %s, want MemEff of L2 bandwidth", tc.gpu, tc.class, s, level)
		}
	}
}

// TestBareSIMTProductSplitsDeeper: a bare fp32 product (no bias) on a
// part running cuBLAS's sm80 kernels splits K past simtGEMMMaxSplit, as
// the H200's GEMM-choice sweep shows (8×768×3,072: 32 ways), at most
// simtBareMaxSplit; with a bias, on an older part (Volta, Turing) or as a
// weight gradient it keeps the Linears' bound. Its time never falls as
// its rows grow, across the output bound where splitting stops.
func TestBareSIMTProductSplitsDeeper(t *testing.T) {
	o := PlanOptions()
	gs := lookupAll(t, []string{"H200-SXM-141GB", "A100-SXM4-80GB", "L4", "V100-SXM2-16GB", "T4"})
	bare := GEMMKernel(8, 768, 3072, 1, hwdb.FP32, 4, 4)
	for _, g := range gs[:3] {
		if s := planSplit(t, g, bare); s <= simtGEMMMaxSplit || s > simtBareMaxSplit {
			t.Errorf("%s: bare fp32 8×768×3072 split %d, want %d..%d", g.Name, s, simtGEMMMaxSplit+1, simtBareMaxSplit)
		}
		if s := planSplit(t, g, linearKernel(8, 768, 3072)); s > simtGEMMMaxSplit {
			t.Errorf("%s: fp32 Linear 8×768×3072 split %d, want at most %d", g.Name, s, simtGEMMMaxSplit)
		}
		wgrad := bare
		wgrad.Grad = GradWeight
		if s := planSplit(t, g, wgrad); s > simtGEMMMaxSplit {
			t.Errorf("%s: fp32 weight gradient 8×768×3072 split %d, want at most %d", g.Name, s, simtGEMMMaxSplit)
		}
	}
	for _, g := range gs[3:] {
		if s := planSplit(t, g, bare); s > simtGEMMMaxSplit {
			t.Errorf("%s: bare fp32 8×768×3072 split %d, want at most %d (no sm80 kernels)", g.Name, s, simtGEMMMaxSplit)
		}
	}
	for _, g := range gs {
		for _, nk := range [][2]int64{{768, 768}, {768, 3072}, {3072, 768}, {1024, 1024}} {
			prev, prevM := 0.0, int64(0)
			for m := int64(8); m <= 4096; m += 8 {
				tm := EstimateKernel(g, GEMMKernel(m, nk[0], nk[1], 1, hwdb.FP32, 4, 4), o).TimeS
				if tm < prev*(1-1e-9) {
					t.Errorf("%s: bare fp32 %d×%d×%d takes %.4g s, less than %d rows (%.4g s)", g.Name, m, nk[0], nk[1], tm, prevM, prev)
				}
				prev, prevM = tm, m
			}
		}
	}
}

// planSplit is the K split of the plan ChooseGEMM prices k with on g.
func planSplit(t *testing.T, g *hwdb.GPU, k Kernel) int64 {
	t.Helper()
	pl, ok := ChooseGEMM(g, k, PlanOptions())
	if !ok {
		t.Fatalf("%s %d×%d×%d: no plan", g.Name, k.M, k.N, k.K)
	}
	return pl.Split
}

// TestVectorConvScale: a board's measured forward-convolution rate (hwdb
// vector_conv_scale) moves its CUDA-core forward convolutions' main loop,
// implicit GEMM and Winograd alike, and nothing else: not their gradients,
// not its products (vector_gemm_scale's), not a tensor-core convolution.
func TestVectorConvScale(t *testing.T) {
	g := mustGPU(t, "GTX-1080-Ti")
	if !(g.VectorConvScale > 0 && g.VectorConvScale < 1) {
		t.Fatalf("GTX 1080 Ti vector_conv_scale %g: want a measured figure below 1", g.VectorConvScale)
	}
	plain := g.WithoutVectorConvScale()
	o := Options{Params: DefaultParams(), Setting: Isolated}
	for _, c := range []struct {
		name string
		geom ConvGeom
	}{
		{"3x3 (Winograd's)", ConvGeom{N: 16, C: 128, H: 28, W: 28, K: 128, R: 3, S: 3, PadH: 1, PadW: 1, StrideH: 1, StrideW: 1}},
		{"1x1 (implicit GEMM)", ConvGeom{N: 16, C: 256, H: 28, W: 28, K: 512, R: 1, S: 1, StrideH: 1, StrideW: 1}},
	} {
		_, with := EstimateConv(g, c.geom, hwdb.FP32, 4, 4, o)
		_, without := EstimateConv(plain, c.geom, hwdb.FP32, 4, 4, o)
		if r := with.ComputeS / without.ComputeS; math.Abs(r-g.VectorConvScale) > 1e-9 {
			t.Errorf("%s forward: main loop %.4g s with the scale, %.4g without (×%.3f), want ×%.3f", c.name, with.ComputeS, without.ComputeS, r, g.VectorConvScale)
		}
		for _, grad := range []Grad{GradData, GradWeight} {
			_, a := EstimateConvGrad(g, c.geom, grad, hwdb.FP32, 4, 4, o)
			_, b := EstimateConvGrad(plain, c.geom, grad, hwdb.FP32, 4, 4, o)
			if a.TimeS != b.TimeS {
				t.Errorf("%s %s gradient moved by the forward scale: %g → %g s", c.name, grad, b.TimeS, a.TimeS)
			}
		}
	}
	gemm := GEMMKernel(2048, 2048, 2048, 1, hwdb.FP32, 4, 4)
	if a, b := EstimateKernel(g, gemm, o), EstimateKernel(plain, gemm, o); a.TimeS != b.TimeS {
		t.Errorf("a product moved by the convolution scale: %g → %g s", b.TimeS, a.TimeS)
	}
	t4 := mustGPU(t, "T4")
	geom := ConvGeom{N: 16, C: 128, H: 28, W: 28, K: 128, R: 3, S: 3, PadH: 1, PadW: 1, StrideH: 1, StrideW: 1}
	_, a := EstimateConv(t4, geom, hwdb.FP16Tensor, 2, 2, o)
	_, b := EstimateConv(t4.WithoutVectorConvScale(), geom, hwdb.FP16Tensor, 2, 2, o)
	if a.TimeS != b.TimeS {
		t.Errorf("a tensor-core convolution moved by the CUDA-core scale: %g → %g s", b.TimeS, a.TimeS)
	}
}
