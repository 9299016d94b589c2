package perf

import (
	"math"
	"slices"
	"strings"

	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/detmath"
)

// The calibrated time model, a time-based roofline:
//
//	time = max(compute time, memory time) + launch overhead
//
// Compute time is not FLOPs/peak: GEMM-like kernels (GEMM, implicit-GEMM
// convolution, Winograd, the GEMMs inside RNN steps) are modelled the way
// cuBLAS/cuDNN run them. The output is cut into CTA tiles; tiles run in
// waves over the SMs (wave quantisation); a tile that overhangs the matrix
// edge still costs a full tile (tile quantisation); each tile's main loop
// over K pays a prologue/epilogue that small K cannot amortise (the K ramp);
// small outputs with long K are split over K (split-K) to fill the GPU. The
// tile shape is the cheapest of a few candidates, like a library heuristic.
// What remains is one asymptotic fraction of peak per kind of compute path.
//
// Every fitted parameter is dimensionless (fractions of a datasheet peak,
// tile-size ratios, K in elements) or a latency in launches, so that one
// set calibrated on DeepBench's GPUs carries over to GPUs it never saw.
// CALIBRATION.md has the fit and its held-out error per GPU.

// Params are the time model's fitted parameters.
type Params struct {
	// EffVector is the fraction of the vector-unit peak (fp32, fp16 or
	// dp4a int8 on CUDA cores) a large, well-shaped GEMM reaches.
	EffVector float64 `json:"eff_vector"`
	// EffTensor is the same fraction for tensor-core paths.
	EffTensor float64 `json:"eff_tensor"`
	// EffConv scales the GEMM efficiency for implicit-GEMM convolution
	// (the on-the-fly im2col gather costs issue slots and cache traffic).
	EffConv float64 `json:"eff_conv"`
	// EffWinograd scales the GEMM efficiency for the batched GEMMs of a
	// Winograd convolution (input/output transforms ride along).
	EffWinograd float64 `json:"eff_winograd"`
	// EffWgrad scales the convolution efficiency (EffConv, EffWinograd)
	// for a convolution's weight gradient (cuDNN's backward-filter). Its
	// implicit GEMM reduces over the N·P·Q pixels, so both operands, the
	// im2col view of X and dY, are gathered along the reduction, where the
	// forward gathers one; a plain GEMM with the same small-output,
	// long-reduction shape (an RNN's weight gradient) is priced right by
	// the forward parameters, so the slowdown is the gather's, not the
	// shape's. Fitted on DeepBench's backward training split only.
	EffWgrad float64 `json:"eff_wgrad"`
	// KHalf is the K (elements of the reduction, per CTA) at which the
	// main loop reaches half its asymptotic rate: ramp = K/(K+KHalf).
	KHalf float64 `json:"k_half"`
	// SmallTile is, on tensor-core paths, the relative rate lost each time
	// the CTA tile's area halves below 128×128 (less operand reuse per
	// loaded byte). Vector paths use the shared-memory feed model instead
	// (TileReuse, vectorTileEff).
	SmallTile float64 `json:"small_tile"`
	// TileReuse is, on vector paths, the FMAs a 128×128 CTA tile's threads
	// do per operand word they read from shared memory (register blocking:
	// 256 threads holding 8×8 outputs each read 8+8 words for 64 FMAs, 4).
	// A tile of area a reuses each word TileReuse·√(a/128²) times. See
	// vectorTileEff.
	TileReuse float64 `json:"tile_reuse"`
	// Unaligned is the fraction of the tensor-core rate kept when a GEMM
	// dimension is not a multiple of the tensor-core granule (8 for 16-bit
	// types, 16 for 8-bit): the library falls back to slower kernels.
	Unaligned float64 `json:"unaligned"`
	// MemEff is the fraction of the datasheet DRAM bandwidth streamed.
	MemEff float64 `json:"mem_eff"`
	// L2Factor is L2 bandwidth as a multiple of DRAM bandwidth when the
	// GPU's L2 bandwidth is unknown (assumed, not fitted: DeepBench does
	// not isolate L2).
	L2Factor float64 `json:"l2_factor"`
	// RNNStepLaunches is the per-time-step latency of a recurrent layer
	// whose step runs tiled GEMM kernels (a batch over gemvMaxCols,
	// where rnnStep caps the tiled price by GEMV-like steps), in units of
	// the kernel launch overhead: the step's GEMM and gate kernels, their
	// fill and drain, and the dependency between steps.
	RNNStepLaunches float64 `json:"rnn_step_launches"`
	// RNNGemvStepLaunches is the same latency for a step that runs a
	// GEMV-like kernel (a batch of at most gemvMaxCols): one short kernel
	// streaming the weights, and the gate kernel. Zero means
	// RNNStepLaunches (parameter sets from before it existed).
	RNNGemvStepLaunches float64 `json:"rnn_gemv_step_launches"`
	// RNNTiledBatchHalf is the batch at which a tiled recurrent step's
	// GEMM reaches half its path's asymptotic rate: cuDNN's step GEMMs at
	// batch N run at N/(N+RNNTiledBatchHalf) of it, on every GPU alike
	// (see rnnTiledStep). Zero prices the step with the GEMM tile model
	// (parameter sets from before it existed).
	RNNTiledBatchHalf float64 `json:"rnn_tiled_batch_half"`
	// Occupancy is the exponent of the rate lost by an SM that holds fewer
	// small CTAs than fill it: rate × (held/needed)^Occupancy. DeepBench
	// does not identify it: the fit drives it to about 2e-6, which makes
	// the factor 1 (the term is effectively off). It is kept only so the
	// committed numbers stay identical; the next calibration revision
	// should drop it.
	Occupancy float64 `json:"occupancy"`
	// FillLaunches is the fixed latency of a GEMM-like kernel beyond the
	// launch itself (pipeline fill and drain, the last wave's tail), in
	// units of the launch overhead; it is part of compute time.
	FillLaunches float64 `json:"fill_launches"`
	// FullClockPower is the board power per SM per GHz of boost clock
	// (W/(SM·GHz)) a GPU needs to hold its boost clock under dense compute;
	// a GPU whose TDP allows less runs compute at a lower sustained clock
	// (see clockFraction). Assumed from measurements, not fitted: DeepBench
	// has one GPU below it (T4).
	FullClockPower float64 `json:"full_clock_power"`
	// LaunchS is the per-kernel overhead used when the GPU entry has none
	// (measured back-to-back: launch plus fill and drain).
	LaunchS float64 `json:"launch_s"`
	// TensorPowerExp is how the power density a tensor-core GEMM needs to
	// hold boost clock grows with the width of the SM's tensor cores:
	// FullClockPower·(w/tensorRefWidth)^TensorPowerExp, w the GPU's dense
	// fp16 tensor FLOPs per SM per cycle (see clockFractionPath). Turing
	// and GA102 (1024) need FullClockPower; GA100 (2048) and GH100 (~3800)
	// switch twice and four times the multipliers per SM-cycle. Fitted on
	// Vidur's GEMMs (A100, H100, A40) with DeepBench's T4 fp16 rows.
	TensorPowerExp float64 `json:"tensor_power_exp"`
	// PointwiseRate is the arithmetic a pointwise, reduction or data
	// kernel sustains, in counted FLOPs per SM per clock cycle (see
	// pointwiseS): such kernels are latency-bound (each thread's loads,
	// then its dependent arithmetic and reductions), far below the
	// vector peak. Fitted on Vidur's norms, rotary and SiLU·mul kernels
	// (A100, H100, A40); 0 turns the limit off.
	PointwiseRate float64 `json:"pointwise_rate"`
}

// DefaultParams are the committed, calibrated parameters (see
// calibration_params.go, written by `go run ./scripts/calibrate -fit -write`).
func DefaultParams() Params { return calibratedParams }

// Setting is how a kernel is run, which decides its fixed per-kernel cost.
type Setting int

const (
	// Isolated is a kernel timed alone, called through a library in a loop
	// (DeepBench): every call pays the launch and the library's fixed cost
	// (FillLaunches: host-side heuristics and argument set-up, pipeline fill
	// and the tail of the last wave), which the calibration fits. The calls
	// are asynchronous, so the host prepares call i+1 while the GPU runs
	// call i: the host-side share of the fill overlaps the kernel and only
	// sets a floor on the time per call (the small-kernel floor), while the
	// GPU-side share (the one a plan pays, see fillS) runs in series with
	// the main loop. Adding the whole fill priced DeepBench's kernels under
	// 10 µs 2.3× too slow.
	Isolated Setting = iota
	// InPlan is one kernel of an inference engine's plan (TensorRT,
	// CUDA graphs): kernels were chosen at build time and are issued back
	// to back in one stream, so the host runs ahead and the next launch
	// overlaps the running kernel. What remains per kernel is the GPU-side
	// gap between dependent kernels (inPlanLaunchFraction of the
	// back-to-back launch cost) and, for GEMM-like kernels, the GPU-side
	// share of the fill (fillS); there is no library call to pay for.
	InPlan
)

// inPlanLaunchFraction is the per-kernel cost inside a CUDA graph as a
// fraction of the back-to-back stream launch cost, measured with the same
// tiny streaming kernel (te42kyfo/gpu-benches, gpu-small-kernels, on
// GitHub): A100 1.34/2.6 = 0.52, H200 1.26/2.4 = 0.53,
// A40 1.09/2.05 = 0.53, L40 0.94/1.6 = 0.59; the median of the four. It
// includes the tiny kernel's own DRAM round trip, i.e. a minimal kernel's
// fill and drain. Not fitted.
const inPlanLaunchFraction = 0.53

// Options are how EstimateKernel prices a kernel: with which parameters
// and in which setting. Params must be set: DefaultParams for the committed
// calibration, a candidate during a fit.
type Options struct {
	Params  Params
	Setting Setting
	// Runtime is the execution profile whose per-kernel gap an InPlan
	// kernel pays (see KernelGap); nil is the default CUDA-graph replay,
	// inPlanLaunchFraction of the launch. Isolated kernels ignore it: they
	// are timed as a library call in a loop, the calibration's setting.
	Runtime *hwdb.Runtime
}

// PlanOptions prices kernels as Analyze does: the committed parameters, each
// kernel one of a whole-model plan.
func PlanOptions() Options { return Options{Params: calibratedParams, Setting: InPlan} }

// EstimateKernel is the time-based roofline with the calibrated
// efficiency model: time = max(compute, memory) (a GEMM's a 4-norm of
// the two: BodyS) + the per-kernel cost of o.Setting. Analyze prices
// every node with PlanOptions; the DeepBench calibration fits and tests
// Params in the Isolated setting.
func EstimateKernel(g *hwdb.GPU, k Kernel, o Options) KernelTime {
	p, s := o.Params, o.Setting
	var t KernelTime
	if g == nil {
		t.Bound = "launch"
		return t
	}
	launches := k.Launches
	if launches <= 0 {
		launches = 1
	}
	launch := launchOverhead(g, p)
	perKernel := launch
	if s == InPlan {
		perKernel = KernelGap(g, o.Runtime, p)
		ramp := kernelRampShare * perKernel // KernelRamp, from the gap at hand
		t.RampS = launches * ramp
		perKernel -= ramp
		// A pointwise kernel lasts at least the in-graph ramp and its
		// first load; a host-launched kernel's longer ramp already holds
		// the load (aten.go, pointwiseLoadCycles).
		if load := pointwiseLoadLatencyS(g, k); load > 0 {
			if least := KernelRamp(g, nil, p) + load; least > ramp {
				t.RampS += launches * (least - ramp)
			}
		}
	}
	t.LaunchS = launches * perKernel
	// ATen's fixed latencies run in series with the kernel's loads and
	// stores, like its ramp: a profiler counts them in its duration.
	t.RampS += launches * (stridedLatencyS(g, k) + reduceTreeLatencyS(g, k))

	peak, _ := peakFor(g, k.Precision)
	peak *= clockFraction(g, p)
	t.MemoryS, t.Bandwidth, t.Level = memoryTime(g, k, p)
	t.MemoryS = softSum(t.MemoryS, pointwiseS(g, k, p))
	if f := batchedGEMVStretch(g, k, p, o.Runtime); f > 1 {
		t.MemoryS *= f
		t.Bandwidth /= f
	}

	switch {
	case k.PointwiseComplexMACs > 0:
		t.ComputeS = smCyclesS(g, p, k.PointwiseComplexMACs*complexPointwiseCycles)
	case k.Direct.Outputs > 0:
		t.ComputeS = directConvTime(g, k)
		if peak > 0 && k.FLOPs > 0 {
			t.ComputeS = max(t.ComputeS, k.FLOPs/(peak*pathEff(k.Precision, p)))
		}
	case k.Class == ClassRNN && k.M > 0 && k.N > 0 && k.K > 0:
		t.ComputeS, t.MemoryS = rnnTime(g, k, p, launch)
	case isGEMMClass(k.Class) && (k.M == 1 || k.N == 1) && k.K > 0:
		t.ComputeS = gemvCompute(g, k, kernelEff(k, p), p)
		// The library's tiled kernels take one row too, padded to their
		// tile: a GEMV never costs more than they do, or a few rows could
		// cost less than one where the vector rate is far below the
		// tensor path's (FuzzUserGPU: a user's board with a thousandfold
		// tensor peak priced a decode step faster at batch 4 than at 1;
		// no board of the table prices differently with it).
		if k.M > 0 && k.N > 0 {
			if tiled := gemmComputeLib(g, k.Precision, k.M, k.N, k.K, max(k.Batch, 1), tiledEff(g, k, p), p, libOf(g, k, o)); tiled > 0 {
				t.ComputeS = min(t.ComputeS, tiled)
			}
		}
	case isGEMMClass(k.Class) && (k.DequantFLOPs > 0 || convertsOperands(k)) && k.M > 0 && k.N > 0 && k.K > 0:
		t.ComputeS = weightOnlyCompute(g, k, kernelEff(k, p), p)
	case k.Class == ClassData && k.Indexed.Indices > 0 && runsATenKernels(o.Runtime):
		t.LatencyS, t.ComputeS = indexedCopyTime(g, k, p, o.Runtime)
	case isGEMMClass(k.Class) && k.M > 0 && k.N > 0 && k.K > 0:
		t.ComputeS = gemmComputeLib(g, k.Precision, k.M, k.N, k.K, max(k.Batch, 1), tiledEff(g, k, p), p, libOf(g, k, o))
		if f := misalignedGEMMS(g, k, p, o.Runtime); f > t.ComputeS {
			t.ComputeS, t.AlignmentFallback = f, true
		}
		t.ComputeS = min(t.ComputeS, gemvsS(g, k, t.MemoryS, p))
		if k.FLOPs > 0 && t.ComputeS > 0 {
			// Rules may count extra work (bias, activation epilogue) in
			// FLOPs; the GEMM view already prices the main loop, so only
			// scale up when FLOPs exceed it.
			gemmFLOPs := productFLOPs(k)
			if main := k.FLOPs - k.DequantFLOPs; main > gemmFLOPs {
				t.ComputeS *= main / gemmFLOPs
			}
		}
	default:
		if peak > 0 && k.FLOPs > 0 {
			t.ComputeS = k.FLOPs / (peak * pathEff(k.Precision, p) * classEff(k.Class, p))
		}
	}
	if k.DequantFLOPs > 0 && isGEMMClass(k.Class) {
		t.ComputeS += dequantCompute(g, k, p)
	}
	if k.Class == ClassAttention && k.Decode.Heads > 0 && t.Level == "hbm" && p.MemEff > 0 {
		// Its plain stream at the decode kernel's own rate (decode.go).
		t.MemoryS *= p.MemEff / decodeStreamEff(g, p)
	}
	if st := decodeStreamS(g, k, p); k.Class == ClassAttention && st > t.ComputeS {
		// In the compute term, so that the fill adds to it (decode.go).
		t.ComputeS, t.Streams = st, true
	}
	if c := transcendentalChainS(g, k); c > t.ComputeS {
		t.ComputeS = c // its threads' dependent chains (aten.go)
	}
	if c := channelsLastCatS(g, k, p); c > t.ComputeS {
		t.ComputeS = c // its index arithmetic (cat.go)
	}
	if tr := smCyclesS(g, p, k.TransformCycles); tr > t.ComputeS {
		t.ComputeS = tr // its butterflies (fftconv.go)
	}
	if tr := layoutTransposeS(g, k, p); tr > t.ComputeS {
		t.ComputeS = tr // its tiles' shared-memory round trips (transpose.go)
	}
	if pl := maxPoolS(g, k, p); pl > t.ComputeS {
		t.ComputeS = pl // its index arithmetic (pool.go)
	}
	if b := smallCTAS(g, k, p); b > t.MemoryS {
		t.MemoryS = b // its CTAs' loads, one round trip each (smallctas.go)
	}
	if k.ViewSaturated() && peak > 0 && k.FLOPs > 0 {
		// A size the rule saturated at math.MaxInt64 stands for a larger
		// one: the view prices less work than the kernel does, while
		// FLOPs (a float64) still counts all of it.
		t.ComputeS = max(t.ComputeS, k.FLOPs/(peak*pathEff(k.Precision, p)*classEff(k.Class, p)))
	}
	if k.BiasPassBytes > 0 {
		// A kernel of its own before the product, in series: a fixed
		// part of the node's time that no efficiency of the product's
		// changes, as a ramp is.
		t.RampS += biasPassS(g, k, o)
	}
	var hostFill float64
	if k.M > 0 && k.N > 0 && k.K > 0 && (isGEMMClass(k.Class) || k.Class == ClassRNN) {
		t.LatencyS = fillS(launch, p, InPlan)
		if s == Isolated {
			hostFill = fillS(launch, p, Isolated) - t.LatencyS
		} else {
			t.LatencyS *= gpuFillScale(g, k)
		}
	}
	if t.ComputeS+t.LatencyS > 0 {
		t.AttainableFLOPS = k.FLOPs / (t.ComputeS + t.LatencyS)
	}
	gpu := BodyS(k.Class, t.ComputeS, t.LatencyS, t.MemoryS)
	t.TimeS = max(gpu, hostFill) + t.RampS + t.LaunchS
	t.Bound = boundOf(t)
	if hostFill > gpu {
		t.Bound = "launch"
	}
	return t
}

// Memory-bound kernels that do arithmetic per element (a norm, a rotary
// embedding, SiLU·mul, a softmax) do not reach the bandwidth a plain
// stream (an add, a copy) does. Vidur's fp16 profiles (fit rows, tensors
// far beyond L2) show it: a residual add streams at 86% of DRAM bandwidth
// on A100 and A40, while RMSNorm reaches 34% on A100 and H100 and 61% on
// A40, rotary 43-46% and 78%, SiLU·mul 49-57% and 78%. The slow kernels'
// rate is about constant in counted FLOPs per SM per cycle (4.2-6.2 on
// A100 and H100 for all three), not in bytes per second: their threads
// wait on a load, then on the dependent arithmetic and the row reduction,
// so how many elements an SM finishes per cycle is set by latency in SM
// cycles, not by the DRAM interface. A GPU with a low bandwidth per SM
// cycle (A40: 696 GB/s over 84 SMs at 1.74 GHz, 4.8 bytes per SM-cycle
// against A100's 13.4) stays nearer its stream rate, as measured.
//
// The two limits do not add as a hard maximum: the measured rate falls
// below both near the crossover (queueing: loads issued while the
// interface is busy wait longer, so fewer elements are in flight per
// unit time). softSum combines them as an L2 norm (pointwiseExp).

// pointwiseExp is the exponent of the norm softSum combines a kernel's
// stream time and its pointwise time with. ESTIMATE: 2 fits the A40
// rows, where the two limits are close (RMSNorm at 61% of the stream rate
// with the pointwise limit 1.2× the stream one; a hard maximum would
// predict 100% of it); larger exponents tend to the hard maximum.
const pointwiseExp = 2

// softSum is normSum with q = pointwiseExp.
func softSum(a, b float64) float64 { return normSum(a, b, pointwiseExp) }

// normSum is (a^q + b^q)^(1/q) for q a power of two: max(a, b) when one
// is zero, never below the larger, at most 2^(1/q) times it, continuous
// and increasing in both. It squares and takes square roots, both
// correctly rounded on every target, so the browser app's WebAssembly and
// the command give the same bits (a Pow goes through Exp and Log, whose
// amd64 assembly and WebAssembly Go differ in the last bit).
func normSum(a, b float64, q int) float64 {
	hi, lo := max(a, b), min(a, b)
	if !(lo > 0) {
		return hi
	}
	rq := lo / hi
	for n := q; n > 1; n /= 2 {
		rq *= rq
	}
	s := 1 + rq
	for n := q; n > 1; n /= 2 {
		s = math.Sqrt(s)
	}
	return hi * s
}

// pointwiseS is the time a pointwise, reduction or data kernel needs on
// the SMs at boost clock (these kernels draw little power: a power-capped
// board holds its clock for them): its counted FLOPs at PointwiseRate
// FLOPs per SM per cycle, or, for a vectorized library kernel, its vector
// accesses at vectorsPerSMCycle, or, for a strided pointwise kernel
// (k.Strided: ATen's non-vectorized loop), at least its index arithmetic,
// stridedElemInstr integer instructions an output element; 0 for a plain
// elementwise stream (k.Stream), other classes or where the GPU entry
// lacks the SM count or clock.
//
// PointwiseRate was fitted on sarathi's scalar kernels (below), whose
// threads wait on each load and then on dependent arithmetic. A
// runtime's own kernel for a standard elementwise op over contiguous
// operands (PyTorch's vectorized TensorIterator loop: 16-byte accesses,
// several elements a thread) needs a few instructions an element: an
// Add's 3-4 at 64 lanes per SM is 16-21 elements per SM-cycle, against
// the 1.7 (fp32) or 3.4 (fp16) an A100's or H100's DRAM delivers; even a
// Sigmoid's two SFU operations (16 a cycle per SM) leave it 8. Held to the
// scalar rate, such kernels were priced above their stream: our H200's
// fp16 Adds of 16M and 134M elements +9.8% and +13.8% (−1.3% and +1.8%
// as streams; testdata/measured/h200_sxm_kernels.csv), Vidur's residual
// adds on the A100 +12.2% (+5.6%), and an fp32 Sigmoid over 64M elements
// on an A100 1.30x its stream, an fp16 one 1.94x.
func pointwiseS(g *hwdb.GPU, k Kernel, p Params) float64 {
	switch k.Class {
	case ClassElementwise, ClassReduction, ClassData:
	default:
		return 0
	}
	if g.SMs <= 0 || g.BoostClockMHz <= 0 || k.Stream {
		return 0
	}
	smCycles := float64(g.SMs) * g.BoostClockMHz * 1e6
	if k.Vectorized {
		return vectorPointwiseS(k, smCycles, vectorsPerSMCycle)
	}
	idx := stridedIndexS(g, k, smCycles)
	if p.PointwiseRate <= 0 || !(k.FLOPs > 0) {
		return idx
	}
	return max(idx, k.FLOPs/(smCycles*p.PointwiseRate))
}

// The FLOP-rate limit above was fitted on Vidur's gated models, whose
// norm, rotary and SiLU·mul are sarathi's own CUDA kernels (scalar
// loads, a block per token). The vectorized library kernels an ONNX
// runtime runs for a LayerNormalization or a Gelu are not slowed by their
// arithmetic: Vidur's phi-2 rows (PyTorch's layer norm, 8 counted FLOPs
// per element, and GELU, 5) run faster per byte than sarathi's RMSNorm
// (4 FLOPs per element): on the H100 7.2 and 9.0 bytes per SM-cycle
// against 4.9, on the A100 5.9 and 8.6 against 4.7. Charged by FLOPs they
// came out 2.3× (A100) and 2.8× (H100) too slow. What bounds them is how
// many bytes each SM keeps in flight (Little's law: throughput = bytes in
// flight / latency), and a thread keeps a fixed number of vector accesses
// in flight: a kernel moves a fixed number of vectors per SM-cycle, so
// its element rate scales with the elements per vector. PyTorch's layer
// norm loads vectors of four elements (vectorized_layer_norm_kernel,
// vec_size 4); its elementwise loop up to 16 bytes (eight fp16, four
// fp32 elements): GELU's rows run at about 1.7 times the layer norm's
// element rate, on each of the three GPUs.

// vectorsPerSMCycle is the vector accesses (reads and writes) a
// vectorized kernel completes per SM per cycle at boost clock: the least
// median |error| over Vidur's phi-2 layer-norm and GELU fit rows on the
// A100, H100 and A40 together (internal/kernelrows TestVectorRateFit
// refits it and checks the held-out rows).
const vectorsPerSMCycle = 1.1

// vectorElems is the elements per vector access of a vectorized kernel:
// four for a row-wise one (a norm), up to 16 bytes for a pointwise one.
func vectorElems(k Kernel, elemBytes float64) float64 {
	if k.Rows > 0 {
		return 4
	}
	return min(8, max(1, math.Floor(16/elemBytes)))
}

// vectorPointwiseS is a vectorized kernel's SM-side time at rate vector
// accesses per SM-cycle; 0 where its size is unknown.
func vectorPointwiseS(k Kernel, smCycles, rate float64) float64 {
	if !(k.Bytes > 0) || rate <= 0 {
		return 0
	}
	eb := elemBytesOr4(k.ElemBytes)
	return k.Bytes / eb / vectorElems(k, eb) / (smCycles * rate)
}

// VectorRateFitted is the committed vectorsPerSMCycle, for the refit
// test.
func VectorRateFitted() float64 { return vectorsPerSMCycle }

// VectorPointwiseWith is the memory-side time (stream time and SM-side
// limit combined as EstimateKernel combines them) of a vectorized kernel
// at a candidate rate, for the refit test.
func VectorPointwiseWith(g *hwdb.GPU, k Kernel, p Params, rate float64) float64 {
	m, _, _ := memoryTime(g, k, p)
	if g.SMs <= 0 || g.BoostClockMHz <= 0 {
		return m
	}
	return softSum(m, vectorPointwiseS(k, float64(g.SMs)*g.BoostClockMHz*1e6, rate))
}

// KernelGap is the device-side cost per kernel of a plan run under the
// execution profile r on g: the profile's absolute gap when it gives one,
// else its scale times the GPU's back-to-back launch cost (the fitted
// default when the GPU entry has none). A nil profile is the default CUDA
// graph replay, inPlanLaunchFraction of the launch. The product is written
// launch·scale in both branches so that a profile whose scale equals
// inPlanLaunchFraction (the built-in graph profile) gives bit-identical
// times to the nil default.
func KernelGap(g *hwdb.GPU, r *hwdb.Runtime, p Params) float64 {
	launch := launchOverhead(g, p)
	switch {
	case r == nil:
		return launch * inPlanLaunchFraction
	case r.KernelGapS > 0:
		return r.KernelGapS
	}
	return launch * r.KernelGapScale
}

// KernelRamp is the device-side part of the per-kernel cost of a plan
// run under r on g (KernelGap): what a profiler times as the kernel's own
// duration when it does almost nothing (its CTAs' dispatch, the first
// loads' round trip, the last CTA's completion and the memory flush
// before the next kernel may start), the rest of the gap being idle time
// between kernels. A plan's kernel pays it in series with its body;
// EstimateKernel moves it out of the gap (LaunchS) into RampS, so a
// kernel's time is unchanged and its body, time less gap, is what a
// profile's kernel duration measures. It is a share of the runtime's own
// gap: a kernel launched from the host onto an idle stream lasts longer
// than the same kernel replayed from a graph (kernelRampShare).
func KernelRamp(g *hwdb.GPU, r *hwdb.Runtime, p Params) float64 {
	return kernelRampShare * KernelGap(g, r, p)
}

// IdleGap is the part of KernelGap(g, r, p) left between kernels once
// the kernel's ramp (KernelRamp) is counted in its duration: a plan's
// LaunchS per kernel.
func IdleGap(g *hwdb.GPU, r *hwdb.Runtime, p Params) float64 {
	return KernelGap(g, r, p) - KernelRamp(g, r, p)
}

// kernelRampShare is the ramp's share of a runtime's per-kernel cost
// (KernelGap), which gpu-benches measured with a tiny kernel, back to
// back in a CUDA graph (inPlanLaunchFraction of a launch) and from the
// host (a launch), and so includes that kernel's own duration. ESTIMATE
// from measurements, not fitted. In a graph: our H100 CUDA-graph replays
// (testdata/measured/h100_sxm5_pytorch.csv) leave a median 0.61 µs per
// kernel between kernels (graph time less the profiler's kernel sum, over
// the kernel count; 0.57-0.87 µs at batch 1) of the 1.27 µs in-graph cost,
// a share of 0.52 for the ramp; Vidur's profiler-timed residual add of
// one to four tokens (a few KB) lasts a median 1.0 µs on H100 and A40 and
// 2.0 µs on A100, which, timed to whole microseconds, allows any share
// from about 0.4 to all of it. Before the split, those replays' kernel
// bodies were priced 19-33% under the profiler's sums at batch 1 and
// their gaps 1.5-2.2× over. From the host: our H200's eager Kineto traces
// (calib/profile/testdata/kineto_h200) time PyTorch's small elementwise,
// copy and gather kernels at a median 1.22 µs (BERT-base fp32 batch 1,
// n=68), 1.09 (GPT-2-small fp16 batch 32, n=10) and 1.18 (a small LLaMA
// fp16 batch 8, n=45) of the 2.4 µs a launch costs there: 0.45-0.51.
// Charged only the in-graph ramp (0.64 µs), those traces' nodes were
// priced a median 41%, 24% and 54% off under --runtime pytorch, their
// elementwise kernels 34% and 51% under (BERT, LLaMA); with half the
// launch 29%, 20% and 17%, 9% and 16%. The per-kernel cost does not
// change, so no time does: only what of it is the kernel's. These traces
// are of host-bound calls, whose kernels each start on an idle GPU; a
// replay's kernels, queued back to back, last as long (our H200's
// LLaMA-7B decode step, 2026-12-04: 1.18 µs in the replay, 1.09 eager),
// longer than the in-graph ramp, so a pointwise kernel's ramp is at least
// the in-graph ramp plus its first load (aten.go, pointwiseLoadCycles).
// Before that, our H100 and H200 rows' profiled kernel sums (eager calls at
// batch 1-128, cmd/onnxcost TestMeasuredEndToEndH100/H200) against the
// eager plan's priced bodies come out signed −0.1% and +1.3% (−4.2% and
// −5.5% against the replay's) but a median |error| of 7.9% and 9.0%
// (5.3%, 7.6%), the large batches now over.
const kernelRampShare = 0.5

// InPlanFillShare is the share of a GEMM-like kernel's fitted fill that a
// plan still pays (the GPU-side part; see fillS), for reports that state
// what was applied.
const InPlanFillShare = inPlanLaunchFraction

// LaunchOverhead is the GPU's back-to-back launch cost the time model
// uses: the entry's launch_us, else the fitted default.
func LaunchOverhead(g *hwdb.GPU, p Params) float64 { return launchOverhead(g, p) }

// fillS is the fixed latency of a GEMM-like kernel beyond its launch.
// Isolated, it is the fitted FillLaunches launches: the library call's
// host-side set-up plus the GPU-side pipeline fill (the first operand
// tiles' trip from DRAM before any tensor-core work, the multi-stage
// pipeline's ramp) and drain (epilogue store, the last wave's tail).
// In a plan the host-side part overlaps the previous kernel but the
// GPU-side part does not. DeepBench cannot separate the two, so the
// GPU-side share is taken to be the one measured for the launch itself
// (inPlanLaunchFraction: what is left of a tiny kernel's back-to-back
// cost inside a CUDA graph). Assumed, not fitted to whole-model figures.
func fillS(launch float64, p Params, s Setting) float64 {
	if s == InPlan {
		return inPlanLaunchFraction * p.FillLaunches * launch
	}
	return p.FillLaunches * launch
}

// ConvFillShare is the share of its fitted fill (FillLaunches launches)
// that a library convolution's kernel spends on the GPU: all of it.
// DeepBench cannot separate the host's part of a call from the kernel's,
// and fillS takes the GPU's share of a GEMM-like kernel to be the one
// measured for a tiny kernel's launch (inPlanLaunchFraction), an
// assumption. Our H100 CUDA-graph replays, where no host work is left
// between kernels, say a cuDNN convolution keeps at least its whole fill:
// the convolution-heavy models at batch 1, where the fill is most of a
// convolution's time, ran 20-36% longer than priced with the plan's kernel
// count matched (ResNet-50 174 of 174, DenseNet-121 426 against 433) and
// the missing time inside the kernels (profiler kernel sums; the gaps
// between kernels measured 0.3-1.1 µs against the 1.27 µs priced). Fitted
// on the ResNet-50 rows the share comes out above 1 (1.25), more than the
// isolated calls allow, so it is 1: the fill is the implicit-GEMM kernel's
// own prologue (its per-CTA filter and input offsets) and the multi-stage
// pipeline's fill and drain. The models not fitted (DenseNet-121, VGG-16,
// MobileNet-V2) went from a graph median of 19.8% to 14.6% (signed −19.8%
// → −12.5%). cuBLAS GEMMs keep the assumed share: our H100 in-graph MatMul
// rows (512³ fp16 in 3.7 µs, the whole fill being 9.4 µs) leave no room
// for more; so do depthwise convolutions (one output channel per group, a
// GEMV-like kernel with no tiled main loop). Its input and filter in L2,
// a convolution pays the warm share of it, as a GEMM does (warmFill):
// the whole models' convolutions read their filters first from DRAM, and
// our H200's conv-choice sweep, each convolution repeated in a CUDA
// graph, ran its batch-1 layers (ResNet-50's and VGG-16's, 6-16 µs with
// the bias kernel) 24-52% under their price with the cold fill
// (scripts/choices TestH200ConvChoices: fp32 NCHW batch 1 median |error|
// 33.9% → 7.5%, fp16 channels_last 59.2% → 19.0%, fp16 NCHW 31.6% →
// 18.9%, all 90 rows 8.8% → 6.6%).
const ConvFillShare = 1

// gpuFillScale scales a GEMM-like kernel's in-plan fill (fillS) to its
// kernel's GPU share: ConvFillShare over the assumed share for a tiled
// library convolution's forward kernel, and the warm share where the
// operands are in L2 (warmFill) for a GEMM, and for a convolution
// repeated back to back (k.FollowsItself), 1 otherwise. The gradient kernels
// keep the assumed share: the replays time only forward passes, and our
// H100 training steps' priced device time is already above their measured
// kernel sums (ResNet-50 AMP: 17.4 ms against 14.3 ms).
//
// A convolution inside a plan keeps its whole fill however warm its
// operands: the warm share was measured for convolutions only as calls of
// a loop of themselves (the conv-choice sweep), and whole models whose
// filters stay in L2 from one CUDA-graph replay to the next say it does
// not carry over to a convolution that follows other kernels: priced with
// their filters and inputs warm (report --warm, their dead activations'
// lines reclaimed: residency.go), MobileNet-V2 at batch 1 came out 11-19%
// under our H100 and H200 replays in fp32 and fp16 and 39-40% under in
// TF32, and DenseNet-121 fp16 22-27% under, where with the whole fill
// they are −14% to +21% and +6% to +12% (cmd/onnxcost
// TestMeasuredEndToEnd, GRAPH_WARM=1). The prologue of cuDNN's implicit
// GEMM works out each CTA's filter and input offsets, which warm data
// does not shorten; what a repeated call skips is not measured apart.
// A GEMM's warm share was read off kernels that follow others (the
// attention products of our Kineto traces: WarmGEMMFill).
func gpuFillScale(g *hwdb.GPU, k Kernel) float64 {
	switch {
	case k.Class == ClassGEMM && k.Resident:
		return warmFill(k)
	case k.Class == ClassConv && k.Grad == "" && min(k.M, k.N) > 1:
		if k.FollowsItself {
			return ConvFillShare / inPlanLaunchFraction * warmFill(k)
		}
		return ConvFillShare / inPlanLaunchFraction
	case k.Class == ClassAttention && k.Grad == "" && k.Decode.Heads > 0 && isHopper(g):
		return hopperDecodeFillShare / inPlanLaunchFraction
	case k.Class == ClassAttention && k.Grad == "":
		return AttnFillShare / inPlanLaunchFraction
	}
	return 1
}

// warmFill is the share of its cold fill a kernel pays as it starts with
// OperandsWarm of its coldest operand in L2 (WarmGEMMFill where all of
// it is), 1 where no residency model followed its operands.
func warmFill(k Kernel) float64 {
	if !k.Resident {
		return 1
	}
	return 1 - k.OperandsWarm*(1-WarmGEMMFill)
}

// WarmGEMMFill is the share of its in-plan fill a GEMM pays when every
// operand is in L2 as it starts. The fill is the prologue's wait for the
// first tiles of both operands (and the epilogue's drain); from L2 that
// wait is shorter than from DRAM (a weight's first touch may also miss the
// TLB, which these traces cannot separate). Read off our
// H200 Kineto traces (calib/profile/testdata/kineto_h200) as each kernel's
// duration less its priced main loop and ramp, over the 4.98 µs cold
// fill: the attention GEMMs of BERT-base fp32 batch 1 (Q·Kᵀ 4.54 µs, P·V
// 5.73: 0.33, 0.46), GPT-2-small fp16 batch 32 (2.56-2.88 µs: 0.36) and
// the small LLaMA fp16 batch 8 (2.37 µs: 0.32), whose operands the
// previous kernels had just written; the median, 0.35. Held out, our
// whole-model rows (cmd/onnxcost TestMeasuredEndToEndH100/H200) moved
// H100 graph replays 6.8% → 5.5% (signed −3.4% → −3.5%), all 118 H100
// times 8.36% → 7.75%, all 156 H200 times 11.05% → 10.7%. The same
// traces' projection GEMMs were read as cold-weight kernels; they were
// not: the small LLaMA's weights (2.8 MB) stay in L2 from one call to
// the next once dead activations give their lines back (residency.go),
// and priced warm its 15 projections come to 2.6 µs each, as measured
// (2.5-3.8), against 5.9-6.6 cold. Fitted on Hopper; the effect (L2
// against DRAM latency) is every GPU's, so it applies to all, and to a
// library convolution repeated back to back (gpuFillScale).
const WarmGEMMFill = 0.35

// AttnFillShare is the share of its fitted fill that a fused attention
// kernel (flash attention) spends on the GPU: all of it, as for a library
// convolution. Vidur's A100 flash-attention profile is kernel time only
// (no host work), and its smallest decode calls (a few sequences, a few
// dozen cached tokens) take 9-17 µs, above even the whole fill (10.2 µs on
// the A100). With the assumed share (5.4 µs) and the cache streamed after
// it (decodeStreamS) its 10,112 decode calls are priced 4.8% too fast
// (signed median; |error| 8.7%), with the whole fill 0.3% (8.6%); prefill
// calls 49% → 46% too fast (internal/kernelrows TestVidurAttention).
// Backward attention kernels keep the assumed share, as gradient
// convolutions do.
const AttnFillShare = 1

// clockFraction is the sustained compute clock as a fraction of the boost
// clock that datasheet peaks assume. A measured sustained clock in the
// GPU entry wins. Otherwise it is estimated from the power budget: dynamic
// power is P ≈ SMs·C·V²·f, and over the upper part of the voltage/frequency
// curve V grows about as √f, so P ∝ SMs·f². A board whose TDP per SM per
// GHz of boost clock (ρ = TDP/(SMs·f_boost)) is below the power density
// dense compute needs at boost (FullClockPower) settles where the two meet:
// f = f_boost·√(ρ/FullClockPower). Memory bandwidth is not scaled: the
// memory clock does not drop under a power cap.
func clockFraction(g *hwdb.GPU, p Params) float64 { return clockFractionBusy(g, p, 1) }

// clockFractionBusy is clockFraction for a kernel that keeps only the
// fraction busy (0 < busy ≤ 1) of the SMs working: dynamic power scales
// with the switching SMs, P ∝ busy·SMs·f², so a kernel of a few CTAs
// (a batch-1 layer) stays at boost clock on a power-capped board where a
// GPU-filling one throttles: f = f_boost·√(ρ/(busy·FullClockPower)).
// A measured sustained clock is a full-load figure; it is scaled alike.
func clockFractionBusy(g *hwdb.GPU, p Params, busy float64) float64 {
	return clockFractionNeed(g, busy, fullClockPower(g, p))
}

// clockFractionPath is clockFractionBusy for a kernel whose main loop
// runs on path real. A tensor-core path whose tensor cores are wider than
// tensorRefWidth, or a CUDA-core path whose SMs have more FP32 lanes than
// vectorRefLanes, needs more power to hold a clock
// (tensorPowerNeed, vectorPowerNeed), so it settles lower than the
// board's default clock by the ratio of the two power-limited clocks. The
// ratio multiplies whatever clock the board runs at, a measured or
// locked one included (power.go prices a cap through that hook), so a
// lower cap never speeds such a kernel up.
func clockFractionPath(g *hwdb.GPU, p Params, busy float64, real hwdb.Precision) float64 {
	return newPathClock(g, p, real).at(busy)
}

// pathClock is clockFractionPath for one GPU and path with their power
// needs worked out once: a GEMM's plan search prices every tile and
// split depth at its own busy share, and the needs' powers and logs
// were most of its time.
type pathClock struct {
	g          *hwdb.GPU
	full, need float64
}

func newPathClock(g *hwdb.GPU, p Params, real hwdb.Precision) pathClock {
	return pathClock{g: g, full: fullClockPower(g, p), need: pathPowerNeed(g, p, real)}
}

// at is the clock fraction with a share busy of the SMs computing.
func (c pathClock) at(busy float64) float64 {
	return min(clockFractionNeed(c.g, busy, c.full)*c.ratio(busy), 1)
}

// ratio is the path's power-limited clock over the board's default one
// with a share busy of the SMs computing.
func (c pathClock) ratio(busy float64) float64 {
	if base := powerClockFraction(c.g, busy, c.full); base > 0 {
		return powerClockFraction(c.g, busy, c.need) / base
	}
	return 1
}

// pathPowerNeed is the power density (W per SM per GHz) dense compute on
// path pr needs to hold boost on g: tensorPowerNeed on tensor cores,
// vectorPowerNeed on CUDA cores, intVectorPowerShare of it for the
// integer dot products (DP4A) of the INT8 path.
func pathPowerNeed(g *hwdb.GPU, p Params, pr hwdb.Precision) float64 {
	if isTensor(pr) {
		return tensorPowerNeed(g, p)
	}
	if pr == hwdb.INT8 {
		return intVectorPowerShare * vectorPowerNeed(g, p)
	}
	return vectorPowerNeed(g, p)
}

// intVectorPowerShare is the power density a CUDA-core INT8 GEMM (DP4A:
// four 8-bit products summed into a 32-bit accumulator, an instruction a
// lane each clock as FFMA) needs to hold a clock, as a share of an FP32
// GEMM's on the same SM: its operands arrive and its result leaves as an
// FFMA's do, but four 8-bit multipliers switch far less than one 24-bit
// mantissa multiplier (Horowitz, ISSCC 2014, 45 nm: 0.2 pJ an 8-bit
// integer multiply against 3.7 pJ a 32-bit float one). On a board its TDP
// does not hold at boost the integer loop therefore runs at a higher
// clock. DeepBench's T4 (70 W, 1.10 W/(SM·GHz)) shows it: its large int8
// GEMMs, which run DP4A (hwdb's T4 notes), reach 0.68 of the DP4A peak
// where its fp32 ones reach 0.50 (medians, rows over 100 µs), while on
// the three Pascal boards, whose TDP holds boost, int8 reaches less than
// fp32 does (0.77-0.80 against 0.82-0.94); priced at the FP32 need the
// T4's were 24% too slow (signed median, 75 rows). The share is
// fitted on the 50 fit rows of those GEMMs (|error| flat 22.8% from 0.62
// to 0.64, 33.9% at 1; rows over 100 µs −1.4% signed); the 25 held out go
// 28.5% → 17.1%. DeepBench's int8 (and fp16) operands are zeros, which
// switch less than data: the share is measured against the board's fp16
// tensor-core GEMMs on zeros too, which the model prices right (+1-3%
// signed, rows over 100 µs) at FullClockPower, the need it shares with
// FP32 on T4; its fp32 GEMMs, on data, run slower still (hwdb
// vector_gemm_scale 1.198). Tensor-core paths keep their need: Hopper's
// FP8, half the bits of BF16, sustains less of its peak (MAMF 71%
// against 80%).
const intVectorPowerShare = 0.63

// PathClockFraction is the share of the clock path pr's peak is quoted at
// that a GPU-filling GEMM on that path sustains at g's default power
// limit, as the time model prices it: the board's clock (clockFraction)
// times what a wide tensor core or a 128-lane SM's FP32 needs beyond it
// (clockFractionPath). For `gpus show`.
func PathClockFraction(g *hwdb.GPU, pr hwdb.Precision) float64 {
	if g == nil {
		return 0
	}
	p := DefaultParams()
	real := RunPath(g, pr)
	return clockFractionPath(g, p, 1, real)
}

// clockFractionNeed is the sustained clock fraction of a kernel keeping
// busy of the SMs working on a board that needs need W/(SM·GHz) at boost;
// a measured sustained clock in the entry wins (scaled by busy alike).
func clockFractionNeed(g *hwdb.GPU, busy, need float64) float64 {
	if !(busy > 0) || busy > 1 {
		busy = 1
	}
	if g.SustainedClockMHz > 0 && g.BoostClockMHz > 0 {
		full := min(g.SustainedClockMHz/g.BoostClockMHz, 1)
		return min(full/math.Sqrt(busy), 1)
	}
	return powerClockFraction(g, busy, need)
}

// powerClockFraction is the power-limited clock fraction
// f/f_boost = √(ρ/(busy·need)), at most 1; 1 where the entry lacks the
// figures or need is not positive.
func powerClockFraction(g *hwdb.GPU, busy, need float64) float64 {
	if !(busy > 0) || busy > 1 {
		busy = 1
	}
	if need <= 0 || g.TDPWatts <= 0 || g.SMs <= 0 || g.BoostClockMHz <= 0 {
		return 1
	}
	return min(math.Sqrt(PowerDensity(g)/(busy*need)), 1)
}

// PowerDensity is ρ, the power a board's TDP gives each SM at its boost
// clock, W/(SM·GHz): what sets how far a dense kernel's clock falls under
// the limit (powerClockFraction). 0.61 on an L4 to 9.7 on a Titan X
// Maxwell in the table.
func PowerDensity(g *hwdb.GPU) float64 {
	return g.TDPWatts / (float64(g.SMs) * g.BoostClockMHz / 1000)
}

// tensorRefWidth is the dense fp16 tensor-core FLOPs per SM per clock of
// Turing and GA102 (8 tensor cores of 64 FMA, or 4 of 128: 1024; Turing
// and GA102 whitepapers), the width FullClockPower was set on (T4; A40).
const tensorRefWidth = 1024

// tensorPowerNeed is the power density (W per SM per GHz) a tensor-core
// GEMM needs to hold boost clock on g: FullClockPower scaled by the tensor
// width per SM relative to tensorRefWidth, to the TensorPowerExp. Measured
// best bf16 GEMMs (stas00/ml-engineering MAMF, in gpus.yaml) show it: A100
// SXM 87% and H100 SXM 80% of dense peak where T4/A40-width parts lose
// only what their TDP per SM explains.
func tensorPowerNeed(g *hwdb.GPU, p Params) float64 {
	w := 0.0
	if g.SMs > 0 && g.BoostClockMHz > 0 {
		w = g.PeakFor(hwdb.FP16Tensor) / (float64(g.SMs) * g.BoostClockMHz * 1e6)
	}
	if w <= tensorRefWidth || p.TensorPowerExp <= 0 {
		return fullClockPower(g, p)
	}
	return fullClockPower(g, p) * detmath.Pow(w/tensorRefWidth, p.TensorPowerExp)
}

// vectorRefLanes is the FP32 lanes (FMAs per clock) of the SMs
// FullClockPower was set on (T4's fp32 GEMMs): 64, as Pascal GP100,
// Volta, Turing and Ampere GA100 have.
const vectorRefLanes = 64

// vectorPowerNeed is the power density (W per SM per GHz) a CUDA-core GEMM
// needs to hold boost clock on g: FullClockPower scaled, as the tensor
// path's (tensorPowerNeed), by the SM's FP32 lanes relative to
// vectorRefLanes to the TensorPowerExp. An SM of 128 FP32
// lanes (Maxwell, GP102, GA102, Ada, Hopper) switches twice the lanes per
// cycle. Our own H100 and H200 rows show it (testdata/measured): fp32
// BERT-large at batch 32 and VGG-16 at 128, whose kernels are CUDA-core
// GEMMs and convolutions, draw 688-694 W against the 700 W limit on both
// boards, and every large fp32 GEMM (2048³ to 8192³) runs 6-7% under the
// time the model gives it at the 1980 MHz boost it held those boards at
// (ρ = 2.68 W/(SM·GHz) above FullClockPower); at the 128-lane need, 2.96,
// they settle at 0.95 of boost. No DeepBench board is affected: its
// 128-lane GPUs (Maxwell, GP102) have 5-10 W/(SM·GHz) of TDP. The
// exponent is the tensor path's, not fitted to these rows: the L40's
// fall to 1.3-1.55 GHz under gpu-benches' FP32 FMA roofline at 300 W
// (hwdb's L40S notes) says a dense FP32 load on such an SM needs more
// than clock_power_w, and these rows that it is less than twice as much.
func vectorPowerNeed(g *hwdb.GPU, p Params) float64 {
	// Lanes come in powers of two; a datasheet peak rounded from its
	// clock lands near one (V100: 64.1 FMAs per SM-cycle).
	lanes := math.Exp2(math.Round(detmath.Log2(vectorFMAsPerClock(g, hwdb.FP32) / vectorRefLanes)))
	if !(lanes > 1) || p.TensorPowerExp <= 0 {
		return fullClockPower(g, p)
	}
	return fullClockPower(g, p) * detmath.Pow(lanes, p.TensorPowerExp)
}

// FMAFLOPs is the number of FLOPs in one fused multiply-add: the
// convention the cost rules count with (see cost.FLOPConvention) and the
// time model divides by.
const FMAFLOPs = 2

// boundOf classifies a kernel: "launch" when the launch overhead exceeds
// both the SM time (main loop and fixed latency) and the memory time;
// else the largest of main loop ("compute"), fixed latency ("latency")
// and memory time ("memory"). A batch-1 GEMV or a small depthwise
// convolution spends most of its time in the fill and drain every GEMM
// kernel pays: neither more FLOP/s nor more bandwidth would speed it up,
// so it is neither compute- nor memory-bound.
func boundOf(t KernelTime) string {
	switch {
	case t.RampS+t.LaunchS > t.ComputeS+t.LatencyS && t.RampS+t.LaunchS > t.MemoryS:
		return "launch"
	case t.LatencyS > t.ComputeS && t.LatencyS > t.MemoryS:
		return "latency"
	case t.ComputeS >= t.MemoryS && !t.Streams:
		return "compute"
	default:
		return "memory"
	}
}

func isGEMMClass(c KernelClass) bool {
	return c == ClassGEMM || c == ClassConv || c == ClassWinograd || c == ClassAttention
}

// classEff is the efficiency multiplier of a kernel class relative to a
// plain GEMM.
func classEff(c KernelClass, p Params) float64 {
	switch c {
	case ClassConv:
		return p.EffConv
	case ClassWinograd:
		return p.EffWinograd
	}
	return 1
}

// kernelEff is classEff with the weight-gradient factor for a
// convolution's backward-filter kernel (see Params.EffWgrad). A weight
// gradient of a GEMM (Grad set on a ClassGEMM kernel) keeps the GEMM
// rate, and so does a Winograd weight gradient: cuDNN's non-fused
// Winograd transforms X and dY in kernels of their own and runs plain
// batched GEMMs on the tiles, with no im2col gather.
func kernelEff(k Kernel, p Params) float64 {
	e := classEff(k.Class, p)
	if k.Class == ClassWinograd && k.WinogradFused {
		// DeepBench's 153 rows where cuDNN ran the fused WINOGRAD
		// algorithm (7 GPUs): the fused F(2×2) kernel's padded batched
		// GEMM priced at EffWinograd is 1.54× too slow (median
		// predicted/measured), at EffConv 0.91 (CALIBRATION.md, "Fused
		// Winograd"). EffWinograd stands for the non-fused algorithm's
		// transform kernels and their workspace round trips, which the
		// fused kernel does not have.
		e = p.EffConv
	}
	if k.Grad == GradWeight && k.Class == ClassConv && p.EffWgrad > 0 {
		e *= p.EffWgrad
	}
	return e
}

// tiledEff is kernel k's efficiency in a tiled GEMM plan: kernelEff, less
// for a product over a transposed B on a vector path (TransposedBCost).
func tiledEff(g *hwdb.GPU, k Kernel, p Params) float64 {
	e := kernelEff(k, p)
	real := RunPath(g, k.Precision)
	if k.TransposedB && k.Class == ClassGEMM && !isTensor(real) {
		e /= TransposedBCost
	}
	if tmaIm2col(g, k, real) && p.EffConv > 0 {
		e /= p.EffConv
	}
	if cudnnDP4AKernels(g, real, k) && p.EffConv > 0 {
		e *= dp4aGatherEff(p) / p.EffConv
	}
	return e
}

// dp4aGatherEff is the implicit-GEMM rate, relative to a GEMM's, of a
// convolution on the DP4A path: EffConv charges the gather's address
// arithmetic and scattered loads by the word, and one DP4A word carries
// four channels, so a quarter of the loss per MAC remains.
func dp4aGatherEff(p Params) float64 {
	return 1 - (1-p.EffConv)/elemsPerWord(hwdb.INT8)
}

// tmaIm2col reports whether forward convolution k, on path real, runs on
// g as an implicit GEMM whose activation tiles the TMA unit gathers
// (Hopper's im2col mode of the tensor memory accelerator): then the
// gather that EffConv charges an implicit GEMM for (its address
// arithmetic and the scattered loads, issued by the SMs) is done by the
// copy engine, and the main loop runs at the GEMM rate. Our H200's
// conv-choice sweep (testdata/measured/h200_sxm_conv_choices.csv) runs
// every fp16 NHWC layer of VGG-16 and ResNet-50 at batch 32 and 128 as
// cuDNN's sm90_xmma_fprop_implicit_gemm kernels; at EffConv those 20 rows
// were priced a median 15% slow, VGG-16's fp16 layers 10-23% slow in its
// Kineto trace, and our whole-model rows' kernel sums put the tensor-core
// convolutions at 0.93 (H100) and 0.89 (H200) of their priced time where
// every other class sat at 0.98-1.06. 16-bit paths only: our TF32
// products run Ampere's kernels (cutlass_80_tensorop_s1688) at small and
// medium sizes and no TF32 convolution is traced; the data and weight
// gradients are not traced either, nor is a grouped convolution (the
// kernels' names carry g1; a grouped one is a batch of GEMMs here).
func tmaIm2col(g *hwdb.GPU, k Kernel, real hwdb.Precision) bool {
	return k.Class == ClassConv && k.Grad == "" && k.Batch <= 1 && (real == hwdb.FP16Tensor || real == hwdb.BF16Tensor) &&
		tmaGEMMFamilies[g.Family()]
}

// TransposedBCost is how much longer cuBLAS's CUDA-core GEMM kernels take
// over A·Bᵀ, B stored [N, K] (cuBLAS "TN": a linear layer's weight as
// PyTorch's F.linear reads it), than over the same product as A·B ("NN"):
// the median ratio of DeepBench's fp32 GEMMs timed both ways, the same M,
// N and K with both rows in the fit half, 189 pairs on seven NVIDIA GPUs
// (internal/calibrate's split): 1.05 (per GPU 1.01 on the P100, 1.03
// GTX 1080 Ti, 1.04 Titan Xp, 1.08 T4, 1.10 Titan X Pascal, 1.12 Titan X
// Maxwell, 1.13 M40; the 14 held-out pairs 1.01; rocBLAS on the MI25
// 1.18, not counted). The library's kernels and heuristics differ by
// layout; tensor-core ones do not (the T4's fp16 pairs: 1.01). Our own
// H200 shows more on a few shapes (VGG-16's 128×4096×4096 classifier
// Linear, fp32: 174 µs as TN in its trace, 96 µs as NN in
// testdata/measured/h200_sxm_gemm_choices.csv). Held out, our fp32
// whole-model rows, which run their Linears as TN: H100 all times 5.84%
// → 5.58% (graph 3.7% → 3.5%), H200 8.80% → 7.80% (graph P90 16.5% →
// 14.7%); their CUDA-core GEMMs' kernel sums went from 1.08× and 1.10×
// the priced time to 1.03× and 1.06×.
const TransposedBCost = 1.05

// launchOverhead is the GPU's per-kernel launch overhead, or the fitted
// default when the entry has none.
func launchOverhead(g *hwdb.GPU, p Params) float64 {
	if g.LaunchS > 0 {
		return g.LaunchS
	}
	return p.LaunchS
}

// memoryTime is the kernel's memory time with the bandwidth and level
// (hbm or l2) that bound it. Without residency (k.Resident false) the
// level is picked from the working set as a benchmark loop sees it. With
// residency, both interfaces bound it: the DRAM traffic over DRAM
// bandwidth, and all the bytes over L2 bandwidth (DRAM traffic passes
// through L2 too); the slower names the level. So no kernel of a plan
// streams a cold weight or KV cache faster than DRAM delivers it,
// however small.
func memoryTime(g *hwdb.GPU, k Kernel, p Params) (s, bw float64, level string) {
	if !k.Resident {
		bw, level = bandwidthFor(g, k.WorkingSet, p)
		eff := p.MemEff
		if level == "hbm" {
			eff = dramEff(g, k, p)
		}
		if bw > 0 && k.Bytes > 0 {
			s = k.Bytes / (bw * eff)
			if k.Rows > 0 && k.RowLen > 0 {
				s = rowMemoryTime(g, k, bw*eff)
			}
		}
		return s, bw, level
	}
	l2 := L2Bandwidth(g, p)
	if g.MemBW <= 0 || l2 <= 0 {
		return 0, g.MemBW, "hbm"
	}
	dram, all := k.DRAMBytes, k.Bytes
	dramBW, l2BW := g.MemBW*dramEff(g, k, p), l2*p.MemEff
	tDRAM, tL2 := dram/dramBW, all/l2BW
	if k.Rows > 0 && k.RowLen > 0 {
		// A row too long to keep on chip is read again per pass: from L2
		// when the whole input fits there, else from DRAM (rows.go).
		extra := rowExtraBytes(k)
		all += extra
		if float64(k.Rows)*float64(k.RowLen)*elemBytesOr4(k.ElemBytes) > g.L2Bytes {
			dram += extra
		}
		fill := rowFillBandwidth(k)
		shared := rowSharedBytes(k)
		tDRAM = rowStreamTime(dram, min(shared, dram), dramBW, fill)
		tL2 = rowStreamTime(all, shared, l2BW, fill)
	}
	if tDRAM >= tL2 {
		return tDRAM, g.MemBW, "hbm"
	}
	return tL2, l2, "l2"
}

// dramEff is the fraction of g's DRAM bandwidth kernel k streams at: the
// board's measured stream efficiency (hwdb.GPU.StreamEff) for an
// elementwise kernel, whose loads and stores are the plain contiguous
// stream such measurements time, else the fitted MemEff. The fitted
// figure stands for the rest: a GEMM's operand tiles, a norm's rows, a
// gather's or a layout copy's scattered lines, and the GDDR boards that
// dominate the fit. A vectorized library kernel (PyTorch's GELU) keeps it
// too: its SM-side rate (vectorsPerSMCycle) was fitted on Vidur's phi-2
// rows against MemEff streams, and refitted against stream_eff it falls
// to 0.90 and the held-out layer-norm rows go from 15.3% to 20.7%
// (internal/kernelrows TestVectorRateFit): PyTorch's GELU over 170 MB
// streams at 64% (A100) and 73% (H100) of the datasheet, well short of a
// plain add's 87-98%. L2 bandwidth keeps MemEff: the entries' L2 figures
// are measured reads divided by it. A GEMM on a GPU whose library kernels
// load tiles by TMA streams at the board's stream efficiency too
// (tmaStreamsGEMM).
func dramEff(g *hwdb.GPU, k Kernel, p Params) float64 {
	if k.Class == ClassElementwise && !k.Vectorized && g.StreamEff > 0 {
		if k.Stream {
			return g.StreamEff * readWriteMix(g, k.WriteShare)
		}
		return g.StreamEff
	}
	if tmaStreamsGEMM(g, k) {
		return g.StreamEff
	}
	return p.MemEff
}

// tmaStreamsGEMM reports whether GEMM k's operands stream from DRAM at g's
// measured stream efficiency rather than the fitted MemEff: on a GPU whose
// GEMM kernels load tiles by TMA (tmaGEMMFamilies), bulk asynchronous
// copies that keep DRAM as busy as a plain stream does. Vidur's H100 fp16
// GEMMs that are memory-bound (the main loop under 0.3 of the operand
// stream: a few tokens against a weight) show it: over 32 MB-2 GB of
// weights they ran at 2.2-3.0 TB/s, 0.90 of the datasheet at 512 MB and
// more, and priced at MemEff (0.81) they were 11-13% slow at every size;
// at the H100's stream_eff (0.90, gpu-benches' triads, nothing fitted)
// the fit rows' median priced/measured went 1.12 → 1.02 (365 and 327
// rows, those the main loop leaves memory-bound; kernel durations). The
// A100's rows stream at 0.79-0.84 of its datasheet (SXM4 or PCIe: Vidur
// does not say) and the A40's at 0.78, where MemEff holds them within
// 1-2%. Held out: Vidur's H100 rows 8.6% → 8.4%; our LLaMA-7B decode
// replays (224 such products a step) +1.3/+3.4/+2.6% → −3.7/−0.0/+0.9%
// (H100, batch 1/8/32) and +5.5/+2.9/+2.3% → +1.1/−0.0/+0.9% (H200);
// graph replays H100 3.4% →
// 3.4%, H200 5.1% → 4.8% (cmd/onnxcost TestMeasuredEndToEnd). Boards
// with no measured stream_eff (B200) keep MemEff, and so do the products
// whose kernels are not the library's TMA ones: a batched GEMV
// (batchedGEMV: cuBLAS's gemvx, batchedGEMVStretch) and a product over
// packed low-bit weights (onnxruntime's MatMulNBits kernel dequantizes as
// it loads).
func tmaStreamsGEMM(g *hwdb.GPU, k Kernel) bool {
	return k.Class == ClassGEMM && !batchedGEMV(k) && !(k.DequantFLOPs > 0) &&
		g.StreamEff > 0 && tmaGEMMFamilies[g.Family()]
}

// readWriteMix is the share of its StreamEff that g's DRAM keeps for a
// stream (Kernel.Stream: DRAM sets its pace; a kernel its SMs hold back,
// sarathi's rotary at 43-46% of the bandwidth, leaves the bus room to
// turn, and priced with the loss Vidur's H100 rotary rows went +11.4% →
// +13.1%) writing writeShare of its bytes: 1 up to a triad's third
// (StreamEff is measured on triads, two reads a write), the board's
// StreamRWEff from half on (a read and a write: an in-place activation,
// a cast, a bias add), linear between. Where reads and writes mix more
// the bus turns around more often; gpu-benches' streams show it on Hopper
// (a read and a write at 0.93 of a triad's rate on an H100 PCIe, 0.90 on
// an H200) and not on Volta or Ampere (0.98-1.02). A write-only stream
// keeps the half-and-half figure: no elementwise op writes much more than
// it reads, and gpu-benches' stores run faster than its triads anyway.
func readWriteMix(g *hwdb.GPU, writeShare float64) float64 {
	rw := g.StreamRWEff
	if !(rw > 0) || !(writeShare > 1.0/3) {
		return 1
	}
	x := min(1, (writeShare-1.0/3)/(1.0/2-1.0/3))
	return 1 - x*(1-rw)
}

// WarmBytes is how much of a tensor of b bytes, written by the kernel just
// before, its reader finds in L2: all of it when it fits the L2's reuse
// capacity (hwdb.GPU.L2ReuseBytes), none when it does not, for a larger
// tensor's resident tail is evicted by the reader's misses on its head
// before the reader gets there (the reach rule cost/residency.go applies
// to a plan's tensors in full). For the places that price such a
// hand-off outside that simulation: a training step's backward, cuDNN's
// layout copies.
func WarmBytes(g *hwdb.GPU, b float64) float64 {
	if g == nil || !(b > 0) || b > g.L2ReuseBytes() {
		return 0
	}
	return b
}

// L2Bandwidth is the GPU's L2 bandwidth: the entry's, else L2Factor
// times its DRAM bandwidth.
func L2Bandwidth(g *hwdb.GPU, p Params) float64 {
	if g.L2BW > 0 {
		return g.L2BW
	}
	return g.MemBW * p.L2Factor
}

// bandwidthFor picks the memory level: L2 when the working set fits in
// it, else DRAM.
func bandwidthFor(g *hwdb.GPU, workingSet float64, p Params) (float64, string) {
	if workingSet > 0 && g.L2Bytes > 0 && workingSet <= g.L2Bytes {
		return L2Bandwidth(g, p), "l2"
	}
	return g.MemBW, "hbm"
}

// isTensor reports whether a precision runs on tensor cores.
func isTensor(pr hwdb.Precision) bool {
	switch pr {
	case hwdb.TF32Tensor, hwdb.FP16Tensor, hwdb.BF16Tensor, hwdb.FP8Tensor, hwdb.INT8Tensor, hwdb.FP64Tensor:
		return true
	}
	return false
}

// pathEff is the asymptotic fraction of peak for a compute path.
func pathEff(pr hwdb.Precision, p Params) float64 {
	if isTensor(pr) {
		return p.EffTensor
	}
	return p.EffVector
}

// PathPeak is the datasheet peak (FLOP/s) of the path a kernel asking for
// pr really runs on g (peakFor's fallback chain); 0 when g has none.
func PathPeak(g *hwdb.GPU, pr hwdb.Precision) float64 {
	v, _ := peakFor(g, pr)
	return v
}

// RunPath is the path a kernel asking for pr really runs on g
// (peakFor's fallback chain): int8 asks on a V100 run DP4A, on a P100
// FP32.
func RunPath(g *hwdb.GPU, pr hwdb.Precision) hwdb.Precision {
	_, real := peakFor(g, pr)
	return real
}

// peakFor returns the peak rate for a precision and the path that really
// runs. A GPU without the requested path runs the next one a library
// would fall back to: tf32 -> fp32, fp16/bf16 tensor -> vector -> fp32,
// fp8 -> fp16 tensor, int8 tensor -> dp4a int8. Where the entry has no
// dp4a figure, dp4a is taken as 4× fp32 on GPUs that have int8 tensor
// cores (Turing and later all have dp4a) and as fp32 otherwise.
func peakFor(g *hwdb.GPU, pr hwdb.Precision) (float64, hwdb.Precision) {
	for range 6 { // the chain is at most a few links long
		if v := g.PeakFor(pr); v > 0 {
			return v, pr
		}
		switch pr {
		case hwdb.TF32Tensor, hwdb.FP16, hwdb.BF16:
			pr = hwdb.FP32
		case hwdb.FP16Tensor:
			pr = hwdb.FP16
		case hwdb.BF16Tensor:
			pr = hwdb.BF16
		case hwdb.FP8Tensor:
			pr = hwdb.FP16Tensor
		case hwdb.INT8Tensor:
			pr = hwdb.INT8
		case hwdb.INT8:
			if g.PeakFor(hwdb.INT8Tensor) > 0 {
				return 4 * g.PeakFor(hwdb.FP32), hwdb.INT8
			}
			pr = hwdb.FP32
		case hwdb.FP64Tensor:
			pr = hwdb.FP64
		default:
			return 0, pr
		}
	}
	return 0, pr
}

// tensorGranule is the dimension multiple tensor-core kernels need.
func tensorGranule(pr hwdb.Precision) int64 {
	switch pr {
	case hwdb.INT8Tensor, hwdb.FP8Tensor:
		return 16
	case hwdb.TF32Tensor:
		return 4
	}
	return 8
}

// ctaTile is a candidate CTA output tile.
type ctaTile struct{ m, n int64 }

// refTileArea is the tile area that fills one SM (128×128): smaller
// tiles run several CTAs per SM.
const refTileArea = 128 * 128

// cudnnSIMTTile is the output tile of cuDNN's sm80 fp32 forward
// implicit-GEMM kernel (sm80_xmma_fprop_implicit_gemm_f32f32_..._
// tilesize256x64x8_..._ffma_aligna4_alignc4): 256 pixels by 64 output
// channels, 128 threads at 255 registers each. cudnn.benchmark picks it
// on our H200 for the fp32 NCHW layers of VGG-16 and ResNet-50 at batch
// 32 and 128 (testdata/measured/h200_sxm_conv_choices.csv) that it runs
// neither as FFT nor with an older kernel (the 3-channel first layers'
// implicit_convolve_sgemm; 1024→512 1×1 at 14×14, batch 32,
// precomputed_convolve_sgemm, measured within 2% of its price as this
// tile), and for MobileNet-V2's layers of 64·j output channels
// (calib/profile/testdata/kineto_h200/mobilenet_v2_fp32_b128.json.gz);
// its layers of 16, 32 and 96 channels run 128×32 and 32×32 tiles, as
// does a grid too small to fill the SMs (56 CTAs of 512→512 at 7×7,
// batch 1's layers).
var cudnnSIMTTile = ctaTile{256, 64}

// cudnnSIMTResident is how many cudnnSIMTTile CTAs an SM holds: its
// 65,536 registers over 128 threads × 255 registers (the kernel's, in the
// sweep's regs column) is 2. A grid that fills the SMs runs in rounds of
// 2 CTAs per SM, each CTA at half the SM's rate: 392 CTAs on the H200's
// 264 slots take two rounds, as 528 do. The sweep's layers fit it:
// 512→256 1×1 at 28×28 (392 CTAs, 1.48 rounds) ran at 30.5 TFLOP/s,
// 128→128 3×3 stride 2 (196 CTAs) at 31.6, 256→128 1×1 at 56×56 (784,
// 2.97 rounds) at 37.7, against 41.8-42.9 for grids of 12-95 rounds. The
// model's own 128×128 plan counted one CTA per SM on 132 slots, finer
// rounds than the library's, and priced the 512→256 layer 29% short. A
// grid of fewer CTAs than SMs, one per SM, runs each faster than half an
// SM (MobileNet-V2's of 98-125 CTAs: 44-58% of the SM's peak a CTA,
// against 63% for two), which is one reason the tile is the plan only
// where its grid fills the SMs (fastestPlan).
const cudnnSIMTResident = 2

// cudnnSIMTRate is cudnnSIMTTile's main-loop rate as a share of the rate
// the model gives a 128×128 tile of the same area (vectorTileEff at the
// fitted vector efficiency): 8 warps per SM, two per scheduler, where a
// 128×128 CTA of 256 threads has 16. Measured, not derived: the sweep's
// four fp32 layers of ≥ 3,136 CTAs (VGG-16's 64→64 at 224×224, batch 32
// and 128; 64→128 and 128→128 at 112×112), whose rounds leave no wave
// quantization, ran 1.086-1.099× (median 1.095) the main loop priced
// at 1. The sweep's other layers of this tile (fewer rounds) and the
// whole-model replays of both GPUs are held out.
const cudnnSIMTRate = 0.91

// cudnnSIMTRateLanes is the fp32 lanes per SM above which cudnnSIMTRate
// applies: it was measured on Hopper's 128-lane SM, whose schedulers
// issue a warp's FFMA every cycle, so eight warps must hide the kernel's
// latencies in half the cycles they have on GA100's 64-lane SM (a warp's
// FFMA over two cycles). Unmeasured there, GA100 (A100, A30) keeps the
// rate of the model's 128×128 tile; its rounds of two CTAs per SM stay
// (the registers bound it as on every part).
const cudnnSIMTRateLanes = 96

var ctaTiles = []ctaTile{
	{128, 128}, {128, 64}, {64, 128}, {64, 64},
	{128, 32}, {32, 128}, {64, 32}, {32, 64}, {32, 32},
	// Skinny tiles for GEMV-like shapes (M or N of a few rows: a batch-1
	// fully connected layer): libraries run these as GEMV/small-M kernels
	// that stream the weights instead of padding the rows to a full tile.
	{16, 128}, {128, 16}, {8, 128}, {128, 8},
}

// libConvMinTileArea is the smallest CTA output tile of a library's
// tensor-core convolution kernels (cuDNN's, under a runtime that calls
// them: splitsK false): four warps of 32×32, as the tiles their names
// carry (sm80_xmma_fprop_implicit_gemm_tf32…_tilesize128x128x16 on A100,
// pytorch/pytorch issue #81940; volta_fp16_s884cudnn_fp16_256x128 on
// V100, NVIDIA/apex issue #666; 128x32 among TensorRT's). The one- and
// two-warp tiles the model otherwise picks for a small grid are GEMM
// library shapes (cuBLAS's split-K and GEMV-like kernels), which cuDNN's
// forward convolutions do not use. With them, our H100 batch-1 CNNs in a
// CUDA-graph replay were priced even further below their measured times
// (ResNet-50 TF32 −42%, −32% without them; DenseNet-121 TF32 −36%, −25%;
// fp16 −31% and −26%, −25% and −20%); batches 32 and 128 barely move
// (DenseNet-121 −30.2% → −28.8% at most), nor do TensorRT's or any GEMM's.
const libConvMinTileArea = 64 * 64

// splitKMinK is the smallest K slice a split-K kernel gives a CTA.
const splitKMinK = 128

// simtGEMMMaxSplit is the most K slices cuBLAS's CUDA-core (SIMT) GEMMs
// split a Linear (a product with a bias; bare products:
// simtBareMaxSplit) into: our H200 trace of BERT-base's 128-token fp32
// Linears (scripts/choices/testdata/bert_fp32_h200.csv) shows
// sgemm_largek_lds64 at grid depth 2 for K = 768 and 4 for K = 3072,
// where the fastest plan the model knows splits 6 and 22 ways (the three
// products priced 45%, 65% and 41% under the trace; capped, 46%, 36% and
// 34%: go run ./scripts/choices -gpu H200 FILE). On DeepBench's
// held-out fp32 GEMMs, whose sheets fitted nothing of it, the cap took
// the seven NVIDIA GPUs' medians down 0.2-2.8 points (all GPUs' GEMMs
// 16.6% → 15.9%; a cap of 2 or 3 gave 16.4%, 8 16.4%: go run
// ./scripts/calibrate).
const simtGEMMMaxSplit = 4

// simtLargeKRatio and simtSmallOutput say which CUDA-core GEMMs cuBLAS
// splits over K at all: a deep reduction onto its output (K at least
// simtLargeKRatio·√(M·N): its "largek" kernels) or a small output (M·N
// at most simtSmallOutput); other shapes run unsplit, SMs idle or not.
// Our H200 trace of BERT-base's 128-token fp32 Linears (scripts/choices/
// testdata/bert_fp32_h200.csv) shows sgemm_largek_lds64 split 2 ways for
// 128×768×768 (K/√(MN) = 2.4) and 4 ways for 128×768×3072 (9.8), and an
// unsplit 128×32-tile sm80_xmma ffma kernel for 128×3072×768 (1.2, an
// output of 393k). Our H100 and H200 1024³ products (ratio 1, 1M) measure
// 63-68 µs, the time of 64×64 tiles unsplit (split, they were priced
// −27% and −21%); their 512³ (262k) measure 16 µs, the split plan's time
// (unsplit −3% → +33%), and 128×4096×4096 (ratio 5.7) 93 µs, split's
// again. Both bounds lie between two measured shapes (the ratio between
// 1.2 and 2.4, the output between 262k and 393k). Effect (go test
// ./cost -run TestMeasuredKernels, ./cmd/onnxcost -run
// TestMeasuredEndToEnd): the 1024³ rows −27% → −6.5% (H100) and −21% →
// +1.6% (H200), which moves the MatMul medians 7.3% → 6.9% and 9.7% →
// 8.7%; CUDA-graph replays of BERT-base fp32 at batch 8 −14.6% → −7.6%
// (H100) and −14.3% → −7.2% (H200), BERT-large −16.9% → −9.5% and
// −18.2% → −10.9%, batch 1 five points closer; graph medians H100 5.9%,
// H200 8.0% → 7.9%. DeepBench's fp32 GEMMs (boards of at most 56 SMs,
// whose split plans are rare) stay at 15.9% (go run ./scripts/calibrate).
// The ratio was 2 until the largek kernel's helpers were priced
// (largeKHelpers); no row tells 1.5 from 2 (the 1.2 shape is out by its
// output, so the ratio lies between 512³'s 1 and 2.4), and 1.5, nearer
// their geometric mean, moves the cap of BERT-base's largek Linears
// (gemmPlanLib: the fastest plan of 193 rows, now 342) so that their
// helpers fit under it: its batch-1 fp32 replays −21.3% → −15.4% (H100)
// and −21.8% → −15.9% (H200), while BERT-large's, whose cap the output
// bound sets, move −10.4% → −11.9% and −11.9% → −13.4% (the cap's
// 257-row product may now split); DeepBench unchanged. Outputs over
// simtSmallOutput with a ratio from 1.5 to 2 may now split on every
// NVIDIA board (BERT-large's grouped QKV product, 128×3072×1024, on a
// V100: 109 → 91 µs), which no row measures either way.
const (
	simtLargeKRatio = 1.5
	simtSmallOutput = 512 * 512
)

// maxSplit is the most K slices the library behind an M×N×K GEMM-like
// kernel on path real splits it into: for cuBLAS's CUDA-core GEMMs,
// simtGEMMMaxSplit for the shapes it splits (simtSmallOutput,
// simtLargeKRatio), or, for a bare product on a part with the sm80
// kernels (bareSIMTProduct), simtBareMaxSplit for outputs up to
// simtBareSmallOutput or the same deep K; else none; otherwise no bound
// but the SMs' slots. cuDNN's convolutions are
// not capped (a weight gradient reduces over every pixel of the batch
// and its kernels split far deeper: capped, our H100 AMP training steps
// went from 1.9% to 20% off), nor are tensor-core GEMMs or those of a
// board not marked NVIDIA (AMD's rocBLAS: on DeepBench's MI25 the cap
// moved held-out GEMMs 27.4% → 27.8%), for which no trace shows a bound. The bound shrinks as M or N grows, so a
// bigger batch never gets a deeper split than a smaller one; a weight
// gradient, whose K is the batch's rows, keeps simtGEMMMaxSplit (no trace
// of one: it is priced as before the rule).
func maxSplit(g *hwdb.GPU, real hwdb.Precision, lib gemmLib, m, n, k int64) int64 {
	if isTensor(real) || lib.pixelRows || lib.pixelK || !strings.EqualFold(g.Vendor, "NVIDIA") {
		return math.MaxInt64
	}
	small, most := float64(simtSmallOutput), int64(simtGEMMMaxSplit)
	if bareSIMTProduct(g, lib) {
		small, most = simtBareSmallOutput, simtBareMaxSplit
	}
	if out := float64(m) * float64(n); !lib.wgrad && out > small && float64(k) < simtLargeKRatio*math.Sqrt(out) {
		return 1
	}
	return most
}

// bareSIMTProduct reports whether lib is a matrix product with no
// epilogue (no bias or activation for cuBLASLt to apply: torch.matmul, a
// Linear without bias) on a part whose cuBLAS runs the sm80 CUDA-core
// kernels (sm80Families), which cuBLAS splits over K far more
// freely than the Linears of maxSplit's bounds. Our H200's GEMM-choice
// sweep (testdata/measured/h200_sxm_gemm_choices.csv: bare fp32
// torch.matmul, 130 products) runs cutlass_80_simt_sgemm and
// sm80_xmma_gemm ffma kernels split 2-39 ways, summed by cublasLt's
// splitKreduce_kernel or in the kernel, for every output up to 768×1,024
// whatever its K (512×768×768 4 ways, 1,024×768×768 2, 128×3,072×768
// 4, 8×768×3,072 32) and for larger ones with a deep K (4,096×768×3,072
// 8 ways, 1,024×11,008×4,096 3); unsplit only from 1M outputs with
// K/√(MN) under 1 (1,024³, 2,048×1,024×1,024, 2,048×512×512, 2,048×768×
// 768). Held to the Linears' bounds (4 slices, outputs to 512²), the
// table's fp32 products were priced +6.3% (median |error| 11.3%; those
// under 30 µs +11.8%, 14.9%: 128×3,072×768 +52%, 512×768×768 +60%);
// with simtBareSmallOutput and simtBareMaxSplit −2.5% (9.1%; under 30 µs
// −2.3%, 10.9%), and our H100 and H200 kernel rows (testdata/measured/
// *_kernels.csv, bare torch.matmul, held out) do not move: their 1,024³
// stays unsplit, as measured (63-68 µs), where letting it split priced
// it −27% and −21%.
func bareSIMTProduct(g *hwdb.GPU, lib gemmLib) bool {
	return lib.product && !lib.epilogue && !lib.wgrad && !lib.complex && sm80Families[g.Family()]
}

// simtBareSmallOutput and simtBareMaxSplit are maxSplit's bounds for a
// bare product (bareSIMTProduct): the largest output cuBLAS splits
// whatever its K, and the most K slices. The sweep's 512×768×768 and
// 1,024×768×768 (786k outputs) split, 1,024³ (1M) does not: a bound of
// 512² leaves the sweep's fp32 products at 10.4%, one of 1M at 9.1% with
// the held-out 1,024³ split and −21..−27% off. The sweep splits up to 39
// ways; caps of 8, 11, 16 and 32 leave its products at 9.1%, 9.1%, 9.1%
// and 9.8% (those under 30 µs 11.2%, 9.7%, 10.9%, 11.8%): a deeper cap
// prices the smallest products faster than the splitKreduce kernel that
// sums their slices lets them run.
const (
	simtBareSmallOutput = 768 * 1024
	simtBareMaxSplit    = 16
)

// sm80Families are the architectures on which cuDNN and cuBLAS run their
// sm80 CUDA-core kernels (cuDNN's implicit-GEMM convolutions, cuBLAS's
// cutlass_80_simt_sgemm and sm80_xmma_gemm ffma GEMMs): compute
// capability 8.x (Ampere, Ada: a cubin runs on later minor revisions of
// its major version) and our H100's and H200's Hopper, whose traces run
// them under those names. Blackwell is left out: no trace of it here.
var sm80Families = map[string]bool{"Ampere": true, "Ada Lovelace": true, "Hopper": true}

// splitsK reports whether the library behind kernel k, run under o, may
// split its K loop over CTAs. cuBLAS GEMMs and cuDNN's weight-gradient
// kernels do; cuDNN's forward convolution algorithms (implicit GEMM,
// precomputed implicit GEMM, GEMM, FFT, Winograd: cudnnConvolutionFwdAlgo_t)
// and its data-gradient ones are not split over K, so under a runtime that
// calls them (hwdb.Runtime.ConvSplitK 0: PyTorch, the ONNX Runtime CUDA
// EP) a convolution whose output tiles do not fill the GPU leaves SMs
// idle. TensorRT (ConvSplitK 1) and the default profile, which is
// TensorRT's, time their own tactics and keep split-K where it wins. An
// isolated convolution is a cuDNN call (DeepBench's setting): not split.
// Evidence: it moves our H100 batch-1 CNNs, whose late layers have a few
// dozen output tiles, from −59% to −26% (ResNet-50 fp32) under the
// CUDA-graph runtime; on DeepBench's held-out forward rows (`go run
// ./scripts/calibrate`, parameters as fitted with split-K allowed) the
// convolutions whose 64×64 tiles fill less than one wave went from 0.55
// to 0.68 of their measured time (int8, n=161) and 0.56 to 0.81 (fp32,
// n=14), T4 15.3% → 14.5%, Titan X Pascal 17.3% → 17.0%, MI25 29.0% →
// 28.5%, Titan X Maxwell 18.2% → 18.6%, all 18.2% → 18.1% (P90 58.3% →
// 57.3%); their backward 25.1% → 24.8%.
func splitsK(k Kernel, o Options) bool {
	if k.Class != ClassConv || k.Grad == GradWeight {
		return true
	}
	if o.Setting != InPlan {
		return false
	}
	return o.Runtime == nil || o.Runtime.ConvSplitK > 0
}

// gemmCompute is the compute time of batch independent M×N×K GEMMs.
func gemmCompute(g *hwdb.GPU, pr hwdb.Precision, m, n, k, batch int64, classEff float64, p Params) float64 {
	return gemmComputeLib(g, pr, m, n, k, batch, classEff, p, gemmLib{splitK: true})
}

// gemmLib is what the library kernel behind a GEMM-like kernel does with
// its shape.
type gemmLib struct {
	// splitK: it may split the K loop over CTAs (splitsK).
	splitK bool
	// complex: a product of complex operands (Kernel.Complex).
	complex bool
	// epilogue: the product has an epilogue, a bias or an activation
	// (FLOPs beyond the product's), which cuBLASLt's kernel choice
	// depends on (simtLargeK).
	epilogue bool
	// wgrad: K is the reduction over the batch's rows (a weight
	// gradient), which maxSplit's shape rule must not see: a bigger batch
	// would deepen K past simtLargeKRatio and let the kernel split, so a
	// weight gradient's time could fall as the batch grows.
	wgrad bool
	// pixelRows, pixelK: M (a forward or data-gradient convolution's
	// pixels, N·P·Q) or K (a weight gradient's reduction over them) is an
	// implicit-GEMM convolution's pixel dimension, which the kernel
	// gathers by index, one pixel's channels at a time: its vector loads
	// run along the channels, so that dimension's alignment to the
	// tensor-core granule is moot, as a GEMM's is for whichever dimension
	// is not contiguous in memory. Charged, a convolution over a 7×7 map
	// (49 pixels) at batch 1 cost 2.7% more than at batch 8 (392) with
	// the same tiles, and ResNet-18's eager call on an RTX 3090 was
	// priced faster at batch 8 than at 1.
	pixelRows, pixelK bool
	// alone: the kernel is timed alone, called in a loop (the Isolated
	// setting), so the power limiter holds the clock to its own grid's
	// draw averaged over its calls (gridBusy).
	alone bool
	// product: a matrix product (not a convolution or a recurrent
	// step): its skinny fp32 tiles run at most skinnyPeakShare of the
	// lanes' rate, and its tensor-core tiles' partial last wave costs
	// waveTailShare of a wave at the least.
	product bool
	// fwdConv: a forward convolution (implicit GEMM or Winograd), whose
	// CUDA-core main loop runs at the board's measured convolution rate
	// where it has one (hwdb vector_conv_scale).
	fwdConv bool
	// cudnnSIMT: a forward convolution on the fp32 vector path that
	// cuDNN runs with its sm80 implicit-GEMM kernels (cudnnSIMTKernels):
	// a grid of cudnnSIMTTile that fills the SMs, over output channels
	// in 64s, runs that tile (cudnnSIMTResident, cudnnSIMTRate).
	cudnnSIMT bool
	// cudnnDP4A: a forward convolution on the int8 vector path (DP4A)
	// that cuDNN runs with its int8 implicit-GEMM kernel
	// (cudnnDP4AKernels): one cudnnDP4ATile a CTA, K whole.
	cudnnDP4A bool
	// cudnnIMMA: a forward convolution on the int8 tensor-core path that
	// cuDNN runs with its interleaved-layout kernel (cudnnIMMAKernels):
	// one cudnnIMMATile a CTA, K whole, after reformatting the filter
	// (reformatS, gap included).
	cudnnIMMA bool
	reformatS float64
	// helpers, helperS: the kernels the library launches around its
	// largek kernel (simtLargeK) and their time, gaps included
	// (largeKHelpers); none elsewhere.
	helpers int64
	helperS float64
	// reduceS: the time of the kernel that sums a split plan's K slices
	// (splitKReduceS), gap included; 0 where the library runs none.
	reduceS float64
}

// onlyTile is the one tile library kernel l runs, K loop whole, where it
// has one: cuDNN's int8 convolutions (cudnnDP4ATile, cudnnIMMATile).
func (l gemmLib) onlyTile() (ctaTile, bool) {
	switch {
	case l.cudnnDP4A:
		return cudnnDP4ATile, true
	case l.cudnnIMMA:
		return cudnnIMMATile, true
	}
	return ctaTile{}, false
}

// productFLOPs is the FLOPs of GEMM-like kernel k's product alone, its
// M×N×K view over its batch.
func productFLOPs(k Kernel) float64 {
	return FMAFLOPs * float64(k.M) * float64(k.N) * float64(k.K) * float64(max(k.Batch, 1))
}

// hasEpilogue reports whether GEMM-like kernel k does work beyond its
// product (a bias, an activation: the FLOPs a rule counts past it, less
// a weight-only dequantization's).
func hasEpilogue(k Kernel) bool { return k.FLOPs-k.DequantFLOPs > productFLOPs(k) }

// libOf is the library kernel behind GEMM-like kernel k run under o on
// g.
func libOf(g *hwdb.GPU, k Kernel, o Options) gemmLib {
	conv := k.Class == ClassConv
	// A bias the runtime adds with a call of its own (BiasPassBytes) is
	// no epilogue of the library's: a plain call.
	lib := gemmLib{splitK: splitsK(k, o), complex: k.Complex, epilogue: hasEpilogue(k) && !(k.BiasPassBytes > 0),
		wgrad: k.Grad == GradWeight, pixelRows: conv && k.Grad != GradWeight, pixelK: conv && k.Grad == GradWeight,
		product: k.Class == ClassGEMM, alone: o.Setting == Isolated,
		fwdConv: (conv || k.Class == ClassWinograd) && k.Grad == ""}
	real := RunPath(g, k.Precision)
	lib.cudnnSIMT = cudnnSIMTKernels(g, real, k) && callsCuDNN(o.Runtime)
	lib.cudnnDP4A = cudnnDP4AKernels(g, real, k) && callsCuDNN(o.Runtime)
	if lib.cudnnIMMA = ReformatsFilter(g, k, o); lib.cudnnIMMA {
		lib.reformatS = filterReformatS(g, k, o)
	}
	if epilogueUnsplit(g, real, lib, k, o) {
		lib.splitK = false
	}
	if simtLargeK(g, real, lib, k.M, k.N, k.K) {
		lib.helpers, lib.helperS = largeKHelpers(g, k, o)
	}
	// At the stream gap under a replay too: the library's choice weighs
	// it so (ChoiceOptions), and a plan priced otherwise than it was
	// chosen let a replay's time fall as rows grew (an unsplit plan
	// giving way to a split one with the replay's shorter gap on its
	// reduce: A10 fp16 161×1024×1024 under graph 0.43 µs below 160 rows;
	// TestProductRowsNeverCheaper).
	lib.reduceS = splitKReduceS(g, k, ChoiceOptions(o), real, lib)
	return lib
}

// epilogueUnsplit reports whether cuBLASLt runs fp32 product k, which has
// an epilogue (a Linear's bias), on path real with its K loop whole: on
// Hopper, under a runtime that fuses the bias into cuBLASLt
// (fusesBiasInCuBLASLt), a forward product of at least largeKMinSide rows
// and columns outside the largek region
// (simtLargeK, whose kernel splits and launches its helpers) with K at
// most epilogueSplitMinK. Splitting would need a pass of its own to add
// the bias after the slices are summed, as largek's helper kernel does.
// Our H200 traces: VGG-16's fp32 classifier Linear 128×4096×4096 ran
// sm80_xmma_gemm_..._tn_n_tilesize64x64x8 unsplit (2×64 CTAs) in 174 µs,
// priced 94 µs as a 4-way split (calib/profile/testdata/kineto_h200/
// vgg16_fp32_b128.json.gz), 174.5 µs unsplit; BERT-base's 128×3072×768
// ran a 128×32-tile kernel unsplit (bert_base_fp32_b1.json.gz); our
// H100's and H200's BERT fp32 calls at batch 8 and 32 count the same
// kernels (251-252, 491), no split-K reduce or epilogue kernel among
// them. The bare products of the GEMM-choice sweep (no bias) split, with
// cublasLt's splitKreduce_kernel.
func epilogueUnsplit(g *hwdb.GPU, real hwdb.Precision, lib gemmLib, k Kernel, o Options) bool {
	return real == hwdb.FP32 && lib.epilogue && k.Class == ClassGEMM && k.Grad == "" && g.Family() == "Hopper" &&
		fusesBiasInCuBLASLt(o.Runtime) && k.K <= epilogueSplitMinK && min(k.M, k.N) >= largeKMinSide && !simtLargeK(g, real, lib, k.M, k.N, k.K)
}

// fusesBiasInCuBLASLt reports whether runtime r hands a Linear's bias to
// cuBLASLt as the GEMM's epilogue: PyTorch's addmm, eager and replayed
// (nil: the default replay), and under Inductor, which leaves addmm to
// aten. The onnxruntime CUDA EP's Gemm copies the bias into the output
// and accumulates onto it (beta = 1), a plain cuBLAS call that may split.
func fusesBiasInCuBLASLt(r *hwdb.Runtime) bool {
	return r == nil || r.Plan == "eager" || r.Plan == "inductor"
}

// epilogueSplitMinK is the deepest K cuBLASLt keeps whole in an fp32
// product with an epilogue (epilogueUnsplit). VGG-16's first classifier
// Linear, K = 25,088, ran cutlass's 256×128 SIMT kernel split 8 ways,
// summed in the kernel (no reduce kernel in its trace); 4,096 ran whole.
// Between them 8,192 is a guess.
const epilogueSplitMinK = 8192

// cudnnSIMTKernels reports whether cuDNN runs forward convolution k,
// whose compute path resolves to real on g, with its sm80 fp32
// implicit-GEMM kernels (cudnnSIMTTile): an
// ungrouped convolution (the kernels' names carry g1; no grouped layer
// was traced) on the fp32 vector path whose input channels come in fours
// (the kernels' alignc4; a 3-channel first layer runs cuDNN's older
// implicit_convolve_sgemm, our H200's pick) on a part those kernels run
// on (sm80Families).
func cudnnSIMTKernels(g *hwdb.GPU, real hwdb.Precision, k Kernel) bool {
	return ungroupedForwardConv(k) && real == hwdb.FP32 &&
		k.ConvChannels > 0 && k.ConvChannels%4 == 0 && sm80Families[g.Family()]
}

// ungroupedForwardConv reports whether k is the forward pass of an
// ungrouped convolution over real operands (a grouped one carries its
// groups as the batch), the kind cuDNN's fixed-tile implicit-GEMM kernels
// (cudnnSIMTKernels, cudnnDP4AKernels, cudnnIMMAKernels) run.
func ungroupedForwardConv(k Kernel) bool {
	return k.Class == ClassConv && k.Grad == "" && !k.Complex && k.Batch <= 1
}

// cudnnDP4AKernels reports whether cuDNN runs forward convolution k,
// whose compute path resolves to real on g, with its int8 implicit-GEMM
// kernel: an ungrouped convolution on the int8 vector path (DP4A: Pascal
// GP10x and Volta, the NVIDIA parts with an int8 rate and no int8
// tensor cores), whose input channels come in fours (a DP4A word; other
// channel counts resolve to fp32 in the rules).
func cudnnDP4AKernels(g *hwdb.GPU, real hwdb.Precision, k Kernel) bool {
	return ungroupedForwardConv(k) && real == hwdb.INT8 && strings.EqualFold(g.Vendor, "NVIDIA")
}

// cudnnDP4ATile is the output tile of cuDNN's int8 forward convolution
// on the DP4A path, the only one it runs, with its K loop whole.
// DeepBench's int8 convolutions (conv_bench's NHWC int8 on cuDNN 7) on
// the three GP102 boards say so: a grid that leaves SMs idle takes the
// time of its 128×128 CTAs, not of its work. 7×7 maps of 832 channels
// into 128 with 5×5 filters (98 pixels at batch 2, K = 20,800) took
// 419 µs on a Titan Xp, what one such CTA takes at its SM's DP4A peak
// (421 µs), where the fastest plan of any tile (16 CTAs of 32×32)
// priced 145 µs; 512 → 512 3×3 at 7×7 (four CTAs) took 100 µs at batch
// 1 and 93 at 2. Over the boards' 321 int8 rows (fit and held out),
// read off the dump of go run ./scripts/calibrate, rounds of this tile
// at 0.92-0.96 of the DP4A peak come within a median 10-14% of each
// board; no other tile fits as well (128×64 20-26%, 64×64 44-48%). With
// the tile and dp4aGatherEff the rows went 26.6% → 16.6% (GTX 1080 Ti;
// signed −19.4% → +13.7%), 28.2% → 19.5% (Titan X Pascal, −23.6% →
// +16.0%) and 30.0% → 15.1% (Titan Xp, −28.4% → +7.2%); what is left
// over is the boards' own, which their fp32 convolutions share (priced
// +10..+26% slow: GeForce clocks above the rated boost). The T4's int8
// rows run its tensor cores (hwdb int8_tensor): cudnnIMMAKernels.
var cudnnDP4ATile = ctaTile{128, 128}

// cudnnIMMAKernels reports whether cuDNN runs forward convolution k,
// whose compute path resolves to real on g, with its int8 tensor-core
// (IMMA) kernel on Turing: an ungrouped convolution on hwdb.INT8Tensor.
// That kernel reads its filter reordered within its INT8x32 words (the
// NCHW_VECT_C layout DeepBench's conv_bench asks for on compute
// capability 7.5), which cuDNN does in a kernel of its own on every call
// unless the caller reordered the filter once beforehand
// (cudnnReorderFilterAndBias and CUDNN_NO_REORDER on the convolution
// descriptor, cuDNN 7.6 on; the conv_bench source we read calls
// neither): filterReformatS. Like the DP4A kernel on Pascal
// (cudnnDP4ATile), it covers the output with one tile, its K loop whole
// (cudnnIMMATile). DeepBench's T4 int8 convolutions (the inference
// sheet's, on cuDNN 7, 96 rows) say so: 14×14, 512 → 48 5×5
// (K = 12,800; two and four CTAs, one round) took 165 and 167 µs at
// batch 1 and 2, what its CTAs take at the SM's int8 tensor rate (168
// priced), where the fastest plan of any tile priced 93; 7×7, 512 → 512
// 3×3 took 96 and 93 µs (priced 39, now 84). With the tile alone the rows
// went 61.9% → 33.6% (signed −38.2% → −24.9%; those over 30 µs −7.7%,
// 30.8% off), with the reformat too 20.3% (−10.9%; those over 30 µs
// 16.9%, +0.4%), the held-out third 50.9% → 26.2%. What is left: the
// sheet's smallest convolutions take 17-18 µs whatever their size (its
// fp16 ones too: a floor of the benchmark's call, not of the kernels),
// and grids of many rounds are priced up to 26% slow at the 70 W board's
// power-capped clock (those of two or three rounds, 26-43% slow with
// every SM counted busy, are 1-23% with the grid's average: gridBusy).
// Other families keep the fastest plan: no trace of their int8 kernels.
func cudnnIMMAKernels(g *hwdb.GPU, real hwdb.Precision, k Kernel) bool {
	return ungroupedForwardConv(k) && real == hwdb.INT8Tensor &&
		strings.EqualFold(g.Vendor, "NVIDIA") && g.Family() == "Turing"
}

// ReformatsFilter reports whether the library behind convolution k, run
// under o on g, reorders the filter itself before its kernel
// (filterReformatS, a helper of the plan): a layout transpose of the
// filter around the call would repeat it.
func ReformatsFilter(g *hwdb.GPU, k Kernel, o Options) bool {
	if g == nil {
		return false
	}
	real := RunPath(g, k.Precision)
	return cudnnIMMAKernels(g, real, k) && callsCuDNN(o.Runtime)
}

// cudnnIMMATile is the output tile of cuDNN's int8 tensor-core forward
// convolution on Turing, K loop whole (see cudnnIMMAKernels). Fitted as
// rounds of one tile at a fitted share of the SM's peak over the T4 rows
// with the reformat (a Python read of the dump of go run
// ./scripts/calibrate, on its fit rows): 128×128 8.8% of the 63 fit
// rows at 0.8 of peak, 11.5% of the 33 held out (256×64 the same,
// 11.8%); 128×64 and 64×128 13.3% and 15-17%, 256×128 and 128×256
// 29-31%, 64×64 33%.
var cudnnIMMATile = ctaTile{128, 128}

// filterReformatS is the time, gap included, of the kernel cuDNN runs
// before its int8 tensor-core convolution to reorder the filter for it
// (see cudnnIMMAKernels): it reads and writes the K×N filter once, an
// int8 byte an element.
func filterReformatS(g *hwdb.GPU, k Kernel, o Options) float64 {
	b := float64(k.K) * float64(k.N)
	rf := Kernel{Class: ClassData, Bytes: 2 * b, WorkingSet: 2 * b, Precision: hwdb.INT8, ElemBytes: 1, Launches: 1}
	return EstimateKernel(g, rf, helperOptions(o)).TimeS
}

// callsCuDNN reports whether runtime r runs a convolution as cuDNN's
// algorithm search picks it: PyTorch eager and its CUDA-graph replay
// (nil: the default replay; cudnn.benchmark), Inductor (which leaves
// convolutions to aten) and the onnxruntime CUDA execution provider
// (cudnnFind). TensorRT times its own tactics, tile configurations
// included, and keeps the fastest: the model's fastest plan.
func callsCuDNN(r *hwdb.Runtime) bool { return runsCuBLAS(r) }

// gemmComputeLib is gemmCompute for the library kernel lib.
func gemmComputeLib(g *hwdb.GPU, pr hwdb.Precision, m, n, k, batch int64, classEff float64, p Params, lib gemmLib) float64 {
	return gemmPlanLib(g, pr, m, n, k, batch, classEff, p, lib).ComputeS
}

// GEMMPlan is the library kernel the time model prices a tiled GEMM-like
// kernel as: the fastest CTA tile and K split among those it knows
// (ctaTiles, splitKMinK; at most simtGEMMMaxSplit slices for cuBLAS's
// CUDA-core GEMMs), except where a trace shows the library picking a
// slower one (simtLargeK: cuBLAS's largek kernel on Hopper, 32×32 tiles
// where the fastest plan is 64×64). scripts/measure_gpu.py --gemm-choices
// records the library's choice across shapes; go run ./scripts/choices
// sets it beside this plan.
type GEMMPlan struct {
	TileM, TileN int64
	// Split is the K slices per output tile (1: none); Passes the
	// GEMV-width passes a GEMM a little too wide for a GEMV-like kernel
	// runs as (1: one kernel).
	Split, Passes int64
	// CTAs is one pass's CTAs: tiles × split × batch.
	CTAs float64
	// ComputeS is the tiled main loop's time: EstimateKernel's ComputeS
	// unless a misaligned operand's floor or FLOPs beyond the GEMM's
	// (a rule's epilogue) raise it.
	ComputeS float64
	// StallS is the part of ComputeS a kernel slower than the fastest
	// plan (cuBLAS's largek: simtLargeK) spends beyond that plan's time,
	// its warps waiting on their loads rather than computing, and its
	// helper kernels' time: no compute power is drawn for it
	// (gemmActivity).
	StallS float64
	// Helpers are the kernels the library launches besides the GEMM's
	// own for this plan (largek's zeroing and bias epilogue:
	// largeKHelpers), whose time ComputeS holds: the report counts them
	// among the node's launches.
	Helpers int64
}

// ChooseGEMM is the plan EstimateKernel prices kernel k with under o: ok
// is false for a kernel priced another way (not GEMM-like, a GEMV, a
// weight-only quantized GEMM, unsized).
func ChooseGEMM(g *hwdb.GPU, k Kernel, o Options) (GEMMPlan, bool) {
	if g == nil || !isGEMMClass(k.Class) || k.M <= 0 || k.N <= 0 || k.K <= 0 || k.M == 1 || k.N == 1 ||
		k.DequantFLOPs > 0 || convertsOperands(k) {
		return GEMMPlan{}, false
	}
	pl := gemmPlanLib(g, k.Precision, k.M, k.N, k.K, max(k.Batch, 1), tiledEff(g, k, o.Params), o.Params, libOf(g, k, o))
	return pl, pl.ComputeS > 0
}

// gemmPlanLib is the plan for batch M×N×K GEMMs run by the library
// kernel lib: the fastest the model knows (fastestPlan), or, for the
// shapes cuBLAS sends to its largek kernel on Hopper (simtLargeK), that
// kernel's: the fastest plan of its 32×32 tiles, with its helper kernels
// (lib.helperS).
func gemmPlanLib(g *hwdb.GPU, pr hwdb.Precision, m, n, k, batch int64, classEff float64, p Params, lib gemmLib) GEMMPlan {
	best := fastestPlan(g, pr, m, n, k, batch, classEff, p, lib, false)
	real := RunPath(g, pr)
	if !simtLargeK(g, real, lib, m, n, k) {
		return best
	}
	lk := fastestPlan(g, pr, m, n, k, batch, classEff, p, lib, true)
	if !(lk.ComputeS > best.ComputeS) {
		lk = best
	}
	// More rows are never priced faster (the rows are what a batch
	// grows): grown along M just out of the largek region, the same GEMM
	// takes the fastest plan, with no helper kernels, and this one, its
	// helpers included, costs no more than that. Real cuBLAS is not bound
	// so; the physics standard is (internal/physics).
	out := min(float64(simtSmallOutput), detmath.Pow(float64(k)/simtLargeKRatio, 2))
	grown := fastestPlan(g, pr, int64(out)/n+1, n, k, batch, classEff, p, lib, false)
	lk.ComputeS = max(min(lk.ComputeS+lib.helperS, grown.ComputeS), best.ComputeS)
	lk.StallS = lk.ComputeS - best.ComputeS
	lk.Helpers = lib.helpers
	return lk
}

// largeKHelpers are the kernels cuBLAS launches around its largek kernel
// and their time under o, gaps included: a scal_kernel that zeroes the
// output the K slices accumulate into, and, for a GEMM with a bias or
// activation epilogue (FLOPs beyond the product's), cublasLt's epilogue
// kernel, which applies it once the slices are summed. Our H200 trace of
// BERT-base's 128-token fp32 Linears (calib/profile/testdata/kineto_h200/
// bert_base_fp32_b1.json.gz) runs both with each of its 60 largek
// kernels: 0.91 and 1.88 µs on average. Each is priced as the
// elementwise kernel it is: the zeroing writes the output, the epilogue
// reads it and the bias and writes it back.
func largeKHelpers(g *hwdb.GPU, k Kernel, o Options) (int64, float64) {
	n, s := int64(1), outputPassS(g, k, o, 4) // fp32: the path largek runs
	if hasEpilogue(k) {
		out := float64(k.M) * float64(k.N) * float64(max(k.Batch, 1)) * 4
		bias := float64(k.N) * 4
		epi := Kernel{Class: ClassElementwise, FLOPs: out / 4, Bytes: 2*out + bias, WorkingSet: 2*out + bias, Precision: hwdb.FP32, ElemBytes: 4, Launches: 1}
		n, s = n+1, s+EstimateKernel(g, epi, helperOptions(o)).TimeS
	}
	return n, s
}

// biasPassS is the time, gap included, of the call that adds kernel k's
// bias (Kernel.BiasPassBytes), priced as the elementwise kernel it is.
// onnxruntime's CUDA Gemm broadcasts a C of [N] or [1, N] into the
// output with a K = 1 cuBLAS product (copies an [M, N] one, fills a
// scalar with cublasCopy) and then calls the GEMM with beta = 1
// (core/providers/cuda/math/gemm.cc, ComputeDefault): a pass that writes
// the output once. Its Conv, whose cuDNN-frontend graph takes the bias
// only when the provider's fuse_conv_bias option is set (off by default)
// or the node is a FusedConv, which its CUDA provider no longer makes,
// adds it after the convolution with cudnnAddTensor
// (core/providers/cuda/nn/conv.cc, ComputeInternal): a pass that reads
// the output and writes it back.
func biasPassS(g *hwdb.GPU, k Kernel, o Options) float64 {
	return elementwisePassS(g, k.BiasPassBytes, max(k.ElemBytes, 1), o)
}

// outputPassS is the time, gap included, of a library's helper kernel
// that writes GEMM-like kernel k's whole output once at eb bytes an
// element (largek's zeroing, split-K's reduce), priced as the in-plan
// elementwise kernel it is.
func outputPassS(g *hwdb.GPU, k Kernel, o Options, eb float64) float64 {
	return elementwisePassS(g, float64(k.M)*float64(k.N)*float64(max(k.Batch, 1))*eb, eb, o)
}

// elementwisePassS is the time, gap included, of a library's helper
// kernel that moves bytes of elements of eb bytes once, in a plan under
// o's runtime.
func elementwisePassS(g *hwdb.GPU, bytes, eb float64, o Options) float64 {
	pass := Kernel{Class: ClassElementwise, Bytes: bytes, WorkingSet: bytes, Precision: hwdb.FP32, ElemBytes: eb, Launches: 1}
	return EstimateKernel(g, pass, helperOptions(o)).TimeS
}

// helperOptions prices a library's helper kernel under o: in a plan,
// with o's runtime's gap.
func helperOptions(o Options) Options {
	return Options{Params: o.Params, Setting: InPlan, Runtime: o.Runtime}
}

// simtLargeK reports whether cuBLAS runs an M×N×K GEMM on path real as
// its largek kernel (sgemm_largek_lds64: 32×32 output tiles, K split a
// few ways, each CTA's loop bound by its loads' latency): a CUDA-core
// GEMM with a small output (M·N at most simtSmallOutput, both sides at
// least largeKMinSide) and a deep reduction onto it (K at least simtLargeKRatio·
// √(M·N)), on Hopper. Our H200 trace of BERT-base's 128-token fp32
// Linears (scripts/choices/testdata/bert_fp32_h200.csv) shows it for
// 128×768×768 and 128×768×3072, 25.5 and 55.2 µs, where the fastest plan
// (64×64 tiles split 4 ways) was priced 13.9 and 35.6; 128×3072×768 (K/√(MN)
// 1.2) runs a 128×32-tile kernel unsplit, priced within 3%. On the
// DeepBench boards (Maxwell to Turing, cuBLAS of 2017-2018) 32×32 tiles
// for the same region fit some boards and not others (held-out fp32
// GEMMs 15.9% → 16.7%: M40 28.1% → 23.8%, T4 10.6% → 13.7%), so the rule
// is Hopper's, the one family with a trace of the kernel. cuDNN FFT's
// complex product never goes there: our VGG-16 fp32 trace at batch 128
// (calib/profile/testdata/kineto_h200/vgg16_fp32_b128.json.gz) runs it,
// 128×512×512 per frequency over 544 frequencies, as
// sm80_xmma_gemm_cf32cf32_..._64x64x8 at 55 TFLOP/s, where the largek
// plan priced it at 26 (its 28×28 layers +74%). Nor does a product
// without an epilogue (a Linear's bias): in our H200's --gemm-choices
// sweep (testdata/measured/h200_sxm_gemm_choices.csv, bare torch.matmul)
// none of the 21 fp32 products in the region ran largek (cutlass split-K
// with cublasLt's splitKreduce_kernel, or xmma 64×64 tiles), and priced
// as largek they came out +5% to +117% (median +51%); the BERT trace's
// Linears, with their bias, run it.
func simtLargeK(g *hwdb.GPU, real hwdb.Precision, lib gemmLib, m, n, k int64) bool {
	if lib.complex || !lib.epilogue || isTensor(real) || !lib.splitK || lib.wgrad || lib.pixelRows || lib.pixelK || g.Family() != "Hopper" {
		return false
	}
	out := float64(m) * float64(n)
	return min(m, n) >= largeKMinSide && out <= simtSmallOutput && float64(k) >= simtLargeKRatio*math.Sqrt(out)
}

// largeKMinSide is the fewest rows (and columns) of a GEMM simtLargeK
// sends to the largek kernel. Our H100 profiles count as many kernels in
// BERT-large's fp32 call at batch 32 as at 8 (491): its pooler,
// 32×1024×1024 with a bias and a tanh, did not run with the largek
// kernel's two helpers (largeKHelpers) at 32 rows; the H200 trace runs it
// at 128. Between them, 64 is a guess. From 32 rows, the fastest plan
// priced VGG-16's fp32 classifier at batch 32 nearer its CUDA-graph
// replay (+10.8% against +12.0%).
const largeKMinSide = 64

// largeKTile is the output tile of cuBLAS's largek kernel
// (sgemm_largek_lds64's grid in our H200 trace: N/32 × M/32 × split).
var largeKTile = ctaTile{32, 32}

// vectorScale is the board's measured time of lib's CUDA-core main loop
// over the model's: vector_gemm_scale for a matrix product,
// vector_conv_scale for a forward convolution, 0 (none) otherwise.
func vectorScale(g *hwdb.GPU, lib gemmLib) float64 {
	switch {
	case lib.product:
		return g.VectorGEMMScale
	case lib.fwdConv:
		return g.VectorConvScale
	}
	return 0
}

// fastestPlan is the fastest plan for batch M×N×K GEMMs run by the
// library kernel lib: each tile that serves the shape (largeK: the largek
// kernel's only), unsplit and, where its CTAs leave SM slots idle, split
// over K.
func fastestPlan(g *hwdb.GPU, pr hwdb.Precision, m, n, k, batch int64, classEff float64, p Params, lib gemmLib, largeK bool) GEMMPlan {
	peak, real := peakFor(g, pr)
	if peak <= 0 || g.SMs <= 0 {
		return GEMMPlan{}
	}
	eff := pathEff(real, p) * classEff
	if s := vectorScale(g, lib); real == hwdb.FP32 && s > 0 {
		// The board's measured CUDA-core rate (hwdb vector_gemm_scale,
		// vector_conv_scale), never above the lanes' peak.
		eff = min(eff/s, 1)
	}
	if isTensor(real) {
		// A side of at most gemvMaxCols runs in a GEMV-like kernel's
		// skinny tile, padded whatever its length, so its alignment is
		// moot: charged, a recurrent layer's step at batch 2 cost more
		// than at batch 4 under TF32 (granule 4), and a model's time fell
		// as its batch grew.
		q := tensorGranule(real)
		mUnaligned := m%q != 0 && m > gemvMaxCols && !lib.pixelRows
		kUnaligned := k%q != 0 && !lib.pixelK
		if mUnaligned || (n%q != 0 && n > gemvMaxCols) || kUnaligned {
			eff *= p.Unaligned
		}
	}
	perSMBoost := peak / float64(g.SMs) * eff
	best := GEMMPlan{ComputeS: math.Inf(1)}
	clk := newPathClock(g, p, real)
	try := func(tl ctaTile, ctas float64, split int64) {
		t := tileTime(g, clk, real, tl, m, n, k, batch, ctas, split, perSMBoost, p, lib)
		var helpers int64
		var stall float64
		if split > 1 && lib.reduceS > 0 {
			// The reduce kernel runs after the split one: in series,
			// drawing no tensor-core power (StallS).
			t, helpers, stall = t+lib.reduceS, 1, lib.reduceS
		}
		if t < best.ComputeS {
			best = GEMMPlan{TileM: tl.m, TileN: tl.n, Split: split, Passes: 1, CTAs: ctas * float64(split), ComputeS: t, Helpers: helpers, StallS: stall}
		}
	}
	if tl, ok := lib.onlyTile(); ok {
		// The library's one tile, unsplit, after the filter reorder it
		// runs first, if any: in series, drawing no tensor-core power
		// (StallS).
		try(tl, sizeProd(ceilDiv(m, tl.m), ceilDiv(n, tl.n), batch), 1)
		if lib.reformatS > 0 {
			best.ComputeS += lib.reformatS
			best.StallS += lib.reformatS
			best.Helpers++
		}
		return best
	}
	// The deepest split any tile may take: K slices of splitKMinK at
	// least, and the library's own bound.
	splitCap := min(k/splitKMinK, maxSplit(g, real, lib, m, n, k))
	if lib.cudnnSIMT {
		// The library's tile is always a candidate, so that where the
		// grid grows into the SMs and the library takes it alone, more
		// pixels never cost less.
		tl := cudnnSIMTTile
		ctas := sizeProd(ceilDiv(m, tl.m), ceilDiv(n, tl.n), batch)
		try(tl, ctas, 1)
		if ctas >= float64(g.SMs) && n%tl.n == 0 {
			return best
		}
	}
	for _, tl := range ctaTiles {
		if !tileServes(tl, m, n) || (!lib.splitK && isTensor(real) && tl.m*tl.n < libConvMinTileArea) || (largeK && tl != largeKTile) ||
			(lib.complex && !slices.Contains(complexTiles, tl)) {
			continue
		}
		// ctasPerSM tiles of this size together fill one SM.
		ctasPerSM := max(refTileArea/(tl.m*tl.n), 1)
		// A float64 count: the tiles of a huge output overflow int64.
		ctas := sizeProd(ceilDiv(m, tl.m), ceilDiv(n, tl.n), batch)
		// Split-K is a choice, as in a library heuristic: the kernel
		// without it is always a candidate, because the partial sums'
		// round trip can cost more than the idle SMs it fills.
		try(tl, ctas, 1)
		if slots := int64(g.SMs) * ctasPerSM; lib.splitK && ctas < float64(slots) {
			// Every depth the idle slots allow, not only the deepest: a
			// deep split's partial sums can outgrow L2 or cost more than
			// the K it saves, and with only the deepest on offer a
			// product's time fell as its rows grew (MI300X fp16
			// 257×768×4096 35% below 256 rows, RTX 3090 129×1024×1024
			// 24% below 128). Past the depth whose partial sums alone
			// cost more than the best plan, none can win. Weight
			// gradients and NVIDIA's CUDA-core convolutions and RNN
			// steps keep the deepest only: their fitted parameters were
			// fitted so (refitted with every depth, eff_wgrad went 0.62
			// → 0.55 and rnn_tiled_batch_half 29.9 → 27.2:
			// internal/calibrate TestFitBackwardRecoversEffWgrad,
			// TestFitRNNRecoversLatencies), and neither the batch-by-batch
			// walk of ResNet-50's convolutions (internal/physics
			// TestTimeNeverFallsBatchByBatch) nor the physics suite found
			// their time falling.
			deepest := min(slots/int64(ctas), splitCap)
			shallowest := deepest
			if (lib.product || isTensor(real) || !strings.EqualFold(g.Vendor, "NVIDIA")) && !lib.wgrad {
				shallowest = 2
			}
			for split := max(shallowest, 2); split <= deepest; split++ {
				if partialSumsS(g, m, n, batch, split, p) >= best.ComputeS {
					break
				}
				try(tl, ctas, split)
			}
		}
	}
	if narrow := min(m, n); narrow > gemvMaxCols && narrow < 32 {
		// A library can run a GEMM a little too wide for its GEMV-like
		// kernels as a few of them, one per gemvMaxCols columns: so 16
		// columns never cost more than twice 8 (the 32-wide tiles'
		// padding otherwise made a batch-16 decode step slower per token
		// than batch 8 where the GEMMs are compute-bound).
		passes := ceilDiv(narrow, gemvMaxCols)
		sm, sn := m, n
		if m <= n {
			sm = gemvMaxCols
		} else {
			sn = gemvMaxCols
		}
		if sub := fastestPlan(g, pr, sm, sn, k, batch, classEff, p, lib, false); float64(passes)*sub.ComputeS < best.ComputeS {
			best = sub
			best.Passes *= passes
			best.ComputeS *= float64(passes)
		}
	}
	if q := tensorGranule(real); isTensor(real) && q > 1 && m%q != 0 && m > gemvMaxCols && !lib.pixelRows {
		// A library can pad the rows to the tensor-core granule and run
		// the aligned kernel: an unaligned M never costs more than the
		// next aligned one (charged the Unaligned rate alone, 4095 rows
		// cost 2.6% more than 4096 on every tensor-core GPU).
		if padded := fastestPlan(g, pr, ceilDiv(m, q)*q, n, k, batch, classEff, p, lib, largeK); padded.ComputeS < best.ComputeS {
			best = padded
		}
	}
	return best
}

// gemvsS is the main loop of a matrix product of r = 2..gemvMaxCols rows
// (or columns) run as r GEMVs, each streaming the weights (memoryS, the
// product's own traffic, about one GEMV's where the weights dominate): a
// library has that choice, so r rows never cost more than r single rows,
// and a decode step's throughput never falls from batch 1 to 2. The
// tiled plans did not keep to it where a few CTAs of a padded 8-row tile
// cover the GPU: 2×4096×4096 fp32 on a B200 was priced 26 µs, 2.7 times
// its 1-row GEMV. It held for fp32 alone until FuzzUserGPU's board of 691
// small SMs ran a 4×64×172 fp16 tile on 2 of them for 18.6 µs against
// 14 ns a GEMV: every precision now (weights big enough to stream, the
// tensor tile is the cheaper by far; the table's fixtures moved ≤ 0.42%,
// the measured rows not at all). +Inf where it does not apply.
func gemvsS(g *hwdb.GPU, k Kernel, memoryS float64, p Params) float64 {
	r := min(k.M, k.N)
	if k.Class != ClassGEMM || r < 2 || r > gemvMaxCols {
		return math.Inf(1)
	}
	return float64(r) * max(gemvCompute(g, gemvRow(k), kernelEff(k, p), p), memoryS)
}

// gemvRow is the one-row GEMV of GEMM-like kernel k (its narrow side, M
// or the smaller N, cut to 1), what a library runs each of a few rows as;
// it carries what gemvCompute reads.
func gemvRow(k Kernel) Kernel {
	one := Kernel{Precision: k.Precision, M: 1, N: k.N, K: k.K, Batch: max(k.Batch, 1)}
	if k.M > k.N {
		one.M, one.N = k.M, 1
	}
	return one
}

// gemvWarpsPerCTA is how many outputs one CTA of a GEMV kernel computes:
// a warp per output row (its dot product over K), four warps per CTA.
const gemvWarpsPerCTA = 4

// gemvCompute is the compute time of a GEMM with one row or one column per
// batch entry (M = 1 or N = 1): a batch-1 fully connected layer, or a
// depthwise convolution, whose implicit GEMM has one output channel per
// group. Libraries run these as GEMV and direct depthwise kernels, not as
// tiled GEMMs: each warp reduces one output's K products, streaming its
// operands with no tile to pad to and no operand reuse to feed, on the
// vector units (GEMV kernels do not use tensor cores). So the arithmetic
// runs at the vector path's asymptotic rate on the SMs its outputs keep
// busy, and the time is usually set by memory (the kernel's bytes) or by
// its fixed latency. Pricing the M = 1 row as a padded 8- or 128-row tile
// made a 1×512×512 GEMV "compute-bound" at 9 µs on A100 and a 960-channel
// 5×5 depthwise convolution 110 µs at 2% of peak.
func gemvCompute(g *hwdb.GPU, k Kernel, classEff float64, p Params) float64 {
	peak, real := peakFor(g, vectorPath(k.Precision))
	if peak <= 0 || g.SMs <= 0 {
		return 0
	}
	batch := max(k.Batch, 1)
	outputs := sizeProd(k.M, k.N, batch)
	if !(outputs > 0) {
		return 0 // an empty output (M or N = 0): no SM busy, and 0/0 below
	}
	busy := min(ceilDivF(outputs, gemvWarpsPerCTA)/float64(g.SMs), 1)
	rate := peak * busy * pathEff(real, p) * classEff * clockFractionBusy(g, p, busy)
	return FMAFLOPs * outputs * float64(k.K) / rate
}

// weightOnlyCompute is the main loop of a weight-only quantized GEMM
// (DequantFLOPs > 0). Its kernels run a few rows as batched GEMVs over the
// packed weights, more rows as passes of gemvMaxCols or as tiles, so r
// rows never cost more than r GEMVs, nor more than ⌈r/8⌉ times 8 rows:
// priced as tiles alone, 2 rows over int4 weights (whose bytes no longer
// hide the padded tile's compute) cost more than two 1-row GEMVs. The
// passes re-read the packed weights, from L2 where they fit; only the
// first read is in the kernel's bytes, so many passes are optimistic
// where the weights exceed L2.
func weightOnlyCompute(g *hwdb.GPU, k Kernel, eff float64, p Params) float64 {
	batch := max(k.Batch, 1)
	rows := func(r int64) float64 {
		m, n := r, k.N
		if k.M > k.N {
			m, n = k.M, r
		}
		t := gemmCompute(g, k.Precision, m, n, k.K, batch, eff, p)
		if r <= gemvMaxCols {
			t = min(t, float64(r)*gemvCompute(g, gemvRow(k), eff, p))
		}
		return t
	}
	narrow := min(k.M, k.N)
	t := rows(narrow)
	if narrow > gemvMaxCols {
		t = min(t, float64(ceilDiv(narrow, gemvMaxCols))*rows(gemvMaxCols))
	}
	return t
}

// convertsOperands reports whether a GEMM's 8-bit operands run on a
// wider compute path (a GPU with no int8 or fp8 rate: int8 on Maxwell and
// GP100 resolves to fp32): they are converted as they load and the math
// runs at the wider type, the structure of a weight-only quantized GEMM
// (weights streamed narrow, arithmetic wider), so it takes that family's
// kernels (weightOnlyCompute): a few rows as GEMVs, more as passes of
// gemvMaxCols. Priced as skinny fp32 tiles instead, 2 rows of a P100's
// int8 decode step cost 18× one row's GEMV, and an int8 LLaMA-7B step's
// throughput fell by a fifth to a third from batch 1 to 2 on a P100, an
// M40 and a Titan X (Maxwell). Convolutions keep cuDNN's implicit GEMM:
// taken there too, DeepBench's T4 int8 convolutions that fall back to
// fp32 (already priced 3-7× fast) came out faster still.
func convertsOperands(k Kernel) bool {
	return k.Class == ClassGEMM && k.ElemBytes == 1 && !isInt8(k.Precision) && k.Precision != hwdb.FP8Tensor
}

// dequantCompute is the time of a quantized GEMM's weight dequantization
// (Kernel.DequantFLOPs) on the CUDA cores at the activation precision's
// vector rate, every SM busy: the weights are spread over all CTAs.
func dequantCompute(g *hwdb.GPU, k Kernel, p Params) float64 {
	peak, real := peakFor(g, vectorPath(k.Precision))
	if peak <= 0 {
		return 0
	}
	return k.DequantFLOPs / (peak * pathEff(real, p) * clockFraction(g, p))
}

// tileTime is the compute time of a GEMM run as ctas CTA tiles of shape
// tl, each K loop split split ways, on an SM rate of perSMBoost at boost.
func tileTime(g *hwdb.GPU, clk pathClock, real hwdb.Precision, tl ctaTile, m, n, k, batch int64, ctas float64, split int64, perSMBoost float64, p Params, lib gemmLib) float64 {
	sms := int64(g.SMs)
	ctasPerSM := max(refTileArea/(tl.m*tl.n), 1)
	kPer := ceilDiv(k, split)
	// The busiest SM holds onSM CTAs; it is fully used only when it
	// holds ctasPerSM of them at once, and a lone small CTA cannot
	// hide its own latency (occupancy). split > 1 only when ctas is
	// below the SMs' slots, so ctas·split is exact.
	work := ctas * float64(split)
	onSM := ceilDivF(work, sms)
	cudnnSIMT := lib.cudnnSIMT && tl == cudnnSIMTTile
	if cudnnSIMT {
		// Rounds of cudnnSIMTResident CTAs, each at its share of the
		// SM's rate.
		onSM = cudnnSIMTResident * ceilDivF(work, sms*cudnnSIMTResident)
	}
	// The busiest SM's time in rounds of its CTAs: a tensor-core
	// product's partial last wave costs less than a whole round
	// (waveTailShare of one when few SMs share it, rising to a whole
	// round as it fills; never below the ideal rounds nor above onSM, and
	// rising with the work, so more rows never cost less).
	span := onSM
	rounds := work / float64(sms)
	if f := rounds - math.Floor(rounds); lib.product && isTensor(real) && rounds > 1 && rounds < ExactSizeLimit && f > 0 {
		span = onSM - (1-waveTailShare)*(1-f)
	}
	// The SMs that get any CTA set the power draw, hence the clock; a
	// kernel timed alone draws its grid's average (gridBusy).
	busy := min(work/float64(sms), 1)
	if lib.alone {
		busy = gridBusy(work, float64(sms), onSM, span)
	}
	perSM := perSMBoost * clk.at(busy)
	occ := 1.0
	if fill := onSM / float64(ctasPerSM); fill < 1 {
		occ = detmath.Pow(fill, p.Occupancy)
	}
	var smFLOPs float64
	if onSM < ExactSizeLimit {
		smFLOPs = FMAFLOPs * sizeProd(tl.m, tl.n, kPer, int64(onSM))
	} else {
		smFLOPs = FMAFLOPs * sizeProd(tl.m, tl.n, kPer) * onSM
	}
	tileEff := tileEffFor(g, real, tl, p, lib.complex)
	if narrow := min(tl.m, tl.n); lib.product && real == hwdb.FP32 && narrow < 32 && perSMBoost > 0 {
		if lanes := vectorFMAsPerClock(g, real); lanes > 0 {
			// On the product's own rows, not the padded tile's: a
			// skinny kernel loops over the rows it has.
			rows := float64(min(m, n, narrow))
			rate := skinnyPeakShare * FMAFLOPs * lanes * g.BoostClockMHz * 1e6 // FLOP/s per SM at boost
			tileEff = min(tileEff, rate/perSMBoost*float64(narrow)/rows)
		}
	}
	if cudnnSIMT && vectorFMAsPerClock(g, real) > cudnnSIMTRateLanes {
		tileEff *= cudnnSIMTRate
	}
	t := smFLOPs / (perSM * tileEff * loopRamp(kPer, p) * occ)
	if span != onSM {
		t *= span / onSM
	}
	if split > 1 {
		t += partialSumsS(g, m, n, batch, split, p)
	}
	return t
}

// gridBusy is the share of sms SMs a grid of work CTAs keeps switching
// over its time, span rounds of the busiest SM's onSM (span < onSM where
// its partial last round costs less than a whole one), for a kernel
// timed alone in a loop: the power limiter holds the clock to the
// board's power averaged over many calls, so SMs idle while a partial
// last round runs on the others save power and the clock rises. Each
// CTA but the last round's keeps its SM a round; the last round's,
// span − (onSM − 1) of one. Time still rises with the work: on a board
// its TDP holds below boost it goes as span·√busy, both of which rise
// within a round, and past a round's edge span grows by more than √busy
// falls.
//
// DeepBench's T4 (70 W, its clock held far below boost by dense work)
// shows it: its int8 tensor-core convolutions of two or three rounds
// (49-55 CTAs of 128×128 on 40 SMs) were priced 26-43% slow with the
// clock of every SM busy throughout, 1-23% with this; its held-out
// convolutions went 15.5% → 13.0% (median |error|; the fp16 ones' mean
// 20.5% → 15.5%). A kernel of a plan keeps the share of SMs it holds at
// once: its neighbours' draw sets the limiter's average too, and the
// same rule there took Vidur's H100 and A40 kernels 8.4% → 9.5% and
// 7.3% → 7.8% off (A100 7.4% → 6.6%), our H200's model rows 5.70% →
// 5.98%.
func gridBusy(work, sms, onSM, span float64) float64 {
	if !(work > sms) || !(span > 0) {
		return min(work/sms, 1)
	}
	whole := math.Ceil(work/sms) - 1
	if onSM != whole+1 {
		// Rounds of several resident CTAs (cudnnSIMT): no partial-round
		// pricing, so each CTA holds a slot of the span.
		return min(work/(sms*onSM), 1)
	}
	last := work - whole*sms
	return min((whole*sms+last*(span-whole))/(sms*span), 1)
}

// partialSumsS is the time a K loop split split ways spends on its
// partial sums: split fp32 slices of the output written and read back,
// from L2 when they fit there.
func partialSumsS(g *hwdb.GPU, m, n, batch, split int64, p Params) float64 {
	partials := sizeProd(2, split, m, n, batch, 4)
	bw, _ := bandwidthFor(g, partials, p)
	return partials / (bw * p.MemEff)
}

// loopRamp is the share of its asymptotic rate a CTA's main loop reaches
// over a K slice of kPer: kPer/(kPer+KHalf), the rest of the CTA's time
// its prologue and epilogue.
func loopRamp(kPer int64, p Params) float64 {
	return float64(kPer) / (float64(kPer) + p.KHalf)
}

// tileEffFor is the fraction of an SM's peak a CTA tile can feed. A
// complex tile (Kernel.Complex) does 4 real FMAs per output and K step on
// 2 complex operands, 4 words: per word loaded, twice a real tile's
// work, which a real tile gets from 4 times the area (its reuse grows as
// √area: vectorTileEff). So it is priced as a real tile of 4 times its
// area: cuDNN FFT's cf32 product on our H200 (calib/profile/testdata/
// kineto_h200/vgg16_fp32_b128.json.gz; testdata/measured/
// h200_sxm_conv_choices.csv) ran 64×64 tiles at 53-55 TFLOP/s and 32×64
// ones at 43-46, where a real 32×64 tile's reuse priced it at 25.
func tileEffFor(g *hwdb.GPU, real hwdb.Precision, tl ctaTile, p Params, complex bool) float64 {
	area := float64(tl.m * tl.n)
	if isTensor(real) {
		return detmath.Pow(p.SmallTile, detmath.Log2(float64(refTileArea)/area))
	}
	if complex {
		area *= complexTileArea
	}
	return vectorTileEff(g, real, area, p)
}

// complexTileArea is the real tile area a complex tile's operand reuse
// matches, per unit of its own area (tileEffFor).
const complexTileArea = 4

// complexTiles are the CTA tiles of the complex GEMM kernels cuDNN's FFT
// calls, rows (images) by columns (output channels): sm80_xmma_gemm_
// cf32cf32_..._tilesize32x64x8 at batch 32 and _64x64x8 at 128 in our
// H200's picks (testdata/measured/h200_sxm_conv_choices.csv) and
// VGG-16 trace; no other was seen, so a layer of 32 output channels
// (DenseNet-121's 3×3s) leaves half of each tile idle. With the model's
// narrower real tiles (128×32) FFT was priced faster than implicit GEMM
// for all 52 of DenseNet-121's 3×3 layers at batch 128 (640 kernels),
// where our H200's replay counts 573 (36 such layers with these tiles:
// 576).
var complexTiles = []ctaTile{{32, 64}, {64, 64}}

// smemWordsPerClock is the shared-memory bandwidth of one SM (or AMD CU)
// in 4-byte words per clock: 32 banks of 4 bytes on every NVIDIA GPU since
// Maxwell, and 128 bytes per clock for AMD's LDS (CUDA C Programming
// Guide, compute capability 5.x-9.0 shared memory; AMD GCN/CDNA ISA LDS).
const smemWordsPerClock = 32

// vectorTileEff is the rate a CTA tile of the given area can sustain on a
// vector path, as a fraction of peak. Every FMA's operands come from
// shared memory through registers; a tile of area a reuses each word it
// reads TileReuse·√(a/128²) times (register blocking grows with the
// square root of the per-thread output block). The SM reads
// smemWordsPerClock words per clock, while its lanes demand
// lanes·elemsPerWord-th of a word per FMA. So the tile feeds
//
//	min(1, smemWordsPerClock·TileReuse·√(a/128²) / (FMAs per clock / elements per word))
//
// of peak. An SM with 128 FP32 lanes (Maxwell, GP102) needs the full
// 128×128 tile to run at peak; one with 64 (GP100, Volta, Turing, Ampere
// A100, AMD CUs) runs a 64×64 or 128×32 tile at peak. The lanes are
// derived from the GPU's own figures: peak / (2·SMs·boost clock).
func vectorTileEff(g *hwdb.GPU, real hwdb.Precision, area float64, p Params) float64 {
	fmaPerClock := vectorFMAsPerClock(g, real)
	if fmaPerClock <= 0 || p.TileReuse <= 0 {
		return detmath.Pow(p.SmallTile, detmath.Log2(float64(refTileArea)/area))
	}
	wordsNeeded := fmaPerClock / elemsPerWord(real)
	return min(1, smemWordsPerClock*p.TileReuse*math.Sqrt(area/refTileArea)/wordsNeeded)
}

// vectorFMAsPerClock is the path's peak in FMAs per clock per SM, from the
// datasheet peak, the SM count and the boost clock; 0 when unknown.
func vectorFMAsPerClock(g *hwdb.GPU, real hwdb.Precision) float64 {
	peak, _ := peakFor(g, real)
	if peak <= 0 || g.SMs <= 0 || g.BoostClockMHz <= 0 {
		return 0
	}
	return peak / (FMAFLOPs * float64(g.SMs) * g.BoostClockMHz * 1e6)
}

// elemsPerWord is how many operand elements of a vector path one 4-byte
// shared-memory word carries (packed fp16x2, dp4a's four int8).
func elemsPerWord(pr hwdb.Precision) float64 {
	switch pr {
	case hwdb.FP16, hwdb.BF16:
		return 2
	case hwdb.INT8:
		return 4
	case hwdb.FP64:
		return 0.5
	}
	return 1
}

func ceilDiv(a, b int64) int64 {
	switch {
	case b <= 0:
		return 0
	case a < 0:
		return (a + b - 1) / b
	}
	// a+b-1 wraps for a near math.MaxInt64.
	q := a / b
	if a%b != 0 {
		q++
	}
	return q
}

// rnnStepSplitsK reports whether a recurrent layer's per-step M×N GEMM may
// split its K loop over CTAs to fill idle SMs: only in the GEMV-like
// regime (N, the batch, at most gemvMaxCols), where the K split stands in
// for the GEMV kernels' warp-per-row parallelism over all SMs (batch 1-8
// rows were priced right that way). A tiled step is skinny (N = 16-128),
// so its few output tiles leave most SMs idle, and split-K is what would
// fill them. DeepBench's cuDNN RNN rows say the library does not: the GRU
// layers of hidden 1536-2816 at batch 32 reach the same share of FP32 peak
// on the P100 (56 SMs: 21-35%) as on the GTX 1080 Ti (28 SMs, no room to
// split: 20-34%), while split-K priced the P100's step GEMM at 70% and its
// rows 1.5-1.9× too fast (the GP102 cards' within ±25%). Without it the
// held-out RNN rows (go run ./scripts/calibrate -joint) move P100 fp32
// 34.8% → 25.0% (signed −34.8 → −25.0%), M40 signed −20.9 → −9.9%, Titan
// X Maxwell −19.1 → −5.2%, the rest within a point, with the parameters
// unchanged.
func rnnStepSplitsK(m, n int64) bool { return min(m, n) <= gemvMaxCols }

// rnnTime prices a recurrent layer: one GEMM for the input projection of
// all steps, then per step the recurrent GEMM (weights re-read from L2 or
// DRAM) and the gate kernel, in sequence. It returns compute time (which
// includes the per-step latencies, because they serialise with the GEMMs)
// and memory time.
func rnnTime(g *hwdb.GPU, k Kernel, p Params, launch float64) (compute, memory float64) {
	steps := max(k.Steps, 1)
	batch := max(k.Batch, 1) // independent directions/layers run as a batch
	inK := k.InputK
	eb := k.ElemBytes
	if eb <= 0 {
		eb = 4
	}
	// Input projection, one GEMM for all steps: [M × inK] · [inK × N·steps].
	bw, _ := bandwidthFor(g, 0, p)
	var in float64
	if inK > 0 {
		cols, exact := mulSat(k.N, steps)
		in = gemmCompute(g, k.Precision, k.M, cols, inK, batch, 1, p)
		if !exact {
			// N·steps saturated: the GEMM's time grows with its columns
			// at least linearly, so scale the saturated one up.
			in *= sizeProd(k.N, steps) / float64(cols)
		}
		inBytes := eb * float64(batch) * sizeSum(sizeProd(k.M, inK), sizeProd(inK, k.N, steps), sizeProd(k.M, k.N, steps))
		in = max(in, inBytes/(bw*p.MemEff))
	}

	step := rnnStep(g, k, batch, eb, p, launch)
	compute = in + float64(steps)*step
	memory = 0
	if k.Bytes > 0 {
		memory = k.Bytes / (bw * p.MemEff)
	}
	return compute, memory
}

// rnnStep is the price of one recurrent step: rnnStepS, and for a batch
// over gemvMaxCols at most N/gemvMaxCols GEMV-like steps of gemvMaxCols
// sequences. A GEMV-like kernel streams the weights once for all its
// columns and does each column's FMAs, so its time, latency + max(weight
// stream, N × a column's work), grows at most in proportion to N; a
// library runs whichever kernel is cheaper. So a sequence never costs
// more at any batch past gemvMaxCols than at gemvMaxCols, and because the
// tiled price's per-sequence cost falls with N too, a step's throughput
// never falls as the batch grows (TestRNNStepThroughputNeverFalls).
// DeepBench measures no such fall: in each of its 15 pairs a sequence
// costs 0.25-0.87 as much at batch 16 as at 4. An earlier cap of
// ceil(N/gemvMaxCols) whole steps of gemvMaxCols (passes of 8 sequences)
// made zoo:lstm-ptb's throughput on an A100 fall from 2,203/s at batch 8
// to 1,792/s at 12 and rise again at 16; at multiples of gemvMaxCols, the
// only batches DeepBench has past 8, the two caps are the same.
func rnnStep(g *hwdb.GPU, k Kernel, batch int64, eb float64, p Params, launch float64) float64 {
	step := rnnStepS(g, k, batch, eb, p, launch)
	if RNNStepIsGEMV(k) || p.RNNGemvStepLaunches <= 0 {
		return step
	}
	narrow := k
	narrow.N = gemvMaxCols
	return min(step, float64(k.N)/gemvMaxCols*rnnStepS(g, narrow, batch, eb, p, launch))
}

// rnnStepS is one recurrent step: the recurrent GEMM [M × K] · [K × N]
// (weights re-read; a tiled one's K loop is not split over CTAs,
// rnnStepSplitsK), at least its weight stream, and the step's latency.
func rnnStepS(g *hwdb.GPU, k Kernel, batch int64, eb float64, p Params, launch float64) float64 {
	step := rnnTiledStep(g, k, batch, p)
	if step <= 0 {
		step = gemmComputeLib(g, k.Precision, k.M, k.N, k.K, batch, 1, p, gemmLib{splitK: rnnStepSplitsK(k.M, k.N)})
	}
	wBytes := eb * sizeProd(batch, k.M, k.K)
	wbw, _ := bandwidthFor(g, wBytes, p)
	return max(step, wBytes/(wbw*p.MemEff)) + rnnStepLatency(k, p)*launch
}

// rnnTiledStep is the compute time of one tiled recurrent step's GEMM
// (batch over gemvMaxCols), or 0 where the GEMM tile model prices it (a
// GEMV-like step, or no RNNTiledBatchHalf). DeepBench's cuDNN steps at
// batch 16-128 reach about the same share of FP32 peak on GPUs of 24 to
// 64 SMs (GRU hidden 2048 at batch 32: 24-28% on the GP102 cards and the
// P100), where the tile model, whose CTAs fill a 56-SM P100 in one wave
// and a 28-SM GTX 1080 Ti in two, priced the P100's at 72% and the GP102
// cards' at 36%, and the HBM GPUs' rows 25-45% too fast. The share grows
// with the batch as N/(N+RNNTiledBatchHalf): each weight word a step
// brings to the SM feeds N FMAs, and bringing it costs about as much as
// RNNTiledBatchHalf of them (CALIBRATION.md, "RNN steps: two latencies").
func rnnTiledStep(g *hwdb.GPU, k Kernel, batch int64, p Params) float64 {
	if RNNStepIsGEMV(k) || p.RNNTiledBatchHalf <= 0 {
		return 0
	}
	peak, _ := peakFor(g, k.Precision)
	rate := peak * clockFraction(g, p) * pathEff(k.Precision, p)
	if rate <= 0 {
		return 0
	}
	n := float64(k.N)
	return FMAFLOPs * float64(k.M) * n * float64(k.K) * float64(batch) / (rate * n / (n + p.RNNTiledBatchHalf))
}

// RNNStepIsGEMV reports whether a recurrent kernel's step runs a
// GEMV-like kernel (its batch is at most gemvMaxCols columns wide), the
// split FitRNN fits the two per-step latencies on.
func RNNStepIsGEMV(k Kernel) bool { return rnnStepSplitsK(k.M, k.N) }

// rnnStepLatency is a recurrent step's latency beyond its GEMM, in launch
// overheads. The two kinds of step differ in DeepBench: at batch 1-4 a
// step costs its weight stream and about 12 launches, at batch 16-128 its
// GEMM and about 40 (CALIBRATION.md, "RNN steps: two latencies"). No row
// lies between 8 and 16; a tiled step there pays the tiled latency, and
// rnnStep's cap (GEMV-like steps, which grow in proportion to the batch at
// most) prices it where that is cheaper. An earlier linear ramp of the
// latency from 8 to 16 made the tiled price per sequence rise with the
// batch there, on small layers.
func rnnStepLatency(k Kernel, p Params) float64 {
	gemv, tiled := p.RNNGemvStepLaunches, p.RNNStepLaunches
	if gemv > 0 && RNNStepIsGEMV(k) {
		return gemv
	}
	return tiled
}

// skinnyPeakShare is the most of an SM's fp32 FMA rate a matrix product
// of 2-8 rows (or columns) reaches on CUDA cores in its skinny tiles,
// counted on its own rows. cuBLAS runs such products as split-K kernels
// of 8-row tiles or gemmSN_NN_kernel, each thread loading its weights
// and doing a handful of FMAs on each: far below the tile-reuse rate of
// an 8×128 tile (vectorTileEff: about 55 FLOPs per SM-cycle on a 128-lane
// SM). DeepBench's 8-row fp32 GEMMs run at 12-32 FLOPs per SM-cycle on
// the 128-lane GP102 boards and 5-15 on the 64-lane P100 and T4 (so a
// share of the lanes' rate, not a rate per SM), the larger of our
// H200's (128 lanes) at 21-30 (testdata/measured/
// h200_sxm_gemm_choices.csv: 8×4096×4096 43.5 µs, priced 28.3 without
// this limit). 0.15 is the share whose
// pricing fits DeepBench's 168 fit rows of 2-16 rows best (median
// |log(predicted/measured)| at 0.125, 0.14, 0.15, 0.16, 0.17: 0.488,
// 0.488, 0.482, 0.489, 0.493; 0.533 without; a flat 32 FLOPs per
// SM-cycle, 0.493): the 74 held-out rows go 0.473 → 0.400, those of 2-8
// rows 0.639 → 0.322. A convolution's or a recurrent step's GEMM is not
// held to it (the RNN steps' fitted latencies price theirs). Products of
// 9-31 rows keep the cheaper of the 32-wide tiles and passes of 8 rows
// (fastestPlan): cuBLAS runs 16 rows slower than 32 (gemmSN: 78 µs
// against 41 for ×4096×4096 on our H200), which a time that never falls
// as the batch grows cannot price.
const skinnyPeakShare = 0.15

// waveTailShare is the least share of a full CTA round that a tensor-core
// matrix product's partial last wave costs: f of the SMs busy in it
// costs waveTailShare + (1 − waveTailShare)·f of a round, where a fixed
// tile set waiting for its slowest SM charges the whole round. Vidur's
// fp16 GEMMs (A100, H100, A40; compute-bound rows, by the model's own
// plan's waves) show the step at a wave's edge far smaller than a whole
// round: just past one wave (up to 1.25 rounds) they were priced a median
// 1.31 times their time, at 1.25-1.5 rounds 1.17, 1.5-1.75 1.09,
// 1.75-2 1.05, while one wave or less was priced 0.99-1.04; past three
// waves the step fades (0.94-1.05). cuBLAS's kernels for these shapes
// come in many tile shapes and cooperative and split-K variants (our
// H200's nvjet kernels: 64×8 to 256×128, 192×128 and 96×128 among them;
// testdata/measured/h200_sxm_gemm_choices.csv), so its heuristic can
// spread a few tiles more than the SMs hold over the SMs more evenly
// than one tile shape can, and a few CTAs alone in the last wave do not
// compete for L2 bandwidth. Fitted on Vidur's fit rows (median
// |log(predicted/measured)| over the 48,323 GEMM rows at 1, 0.8, 0.7,
// 0.6, 0.5, 0.4: 0.0673, 0.0627, 0.0616, 0.0617, 0.0619, 0.0628).
// CUDA-core products (DeepBench's fp32 GEMMs show no such step, and
// BERT's fp32 Linears on our H100 went 2-5% further below their
// measured replays) and library convolutions (with a share of 0.5 on
// them too, DeepBench's held-out M40 and Titan X Maxwell convolutions
// went 18% → 23% and 13% → 16% off) keep the whole round. After it, the
// same rows by rounds: 1-1.25 1.17, 1.25-1.5 1.08, 1.5-1.75 1.03,
// 1.75-2 1.01; past 2.5 rounds 0.92-1.00 (0.94-1.05 before).
const waveTailShare = 0.7

// gemvMaxCols is the widest output a GEMV-like kernel (the skinny 8- and
// 16-wide tiles) serves. Such kernels give each thread a row of the
// weights and stream them once for a few columns of the other operand;
// they are what cuBLAS/cuDNN run for a batch of a handful of vectors. A
// GEMM whose narrow side is wider than that runs the regular tiled
// kernels, whose narrowest tile is 32: DeepBench's recurrent GEMMs at batch
// 16-32 (N = 16-32) were predicted 2-5× too fast with 16-wide tiles at full
// rate, while batch 1-4 (N ≤ 8) were right. Without the skinny tiles
// there, the held-out RNN error drops from 23.1% to 22.1% (P90 68% → 59%)
// and conv and GEMM P90 improve, with the parameters unchanged.
const gemvMaxCols = 8

// tileServes reports whether a library would run an m×n output with tile
// tl: skinny tiles (a side under 32) only for GEMV-like shapes.
func tileServes(tl ctaTile, m, n int64) bool {
	return min(tl.m, tl.n) >= 32 || min(m, n) <= gemvMaxCols
}
