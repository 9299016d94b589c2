package perf

import (
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
)

// KernelClass groups kernels whose achievable efficiency behaves alike.
type KernelClass string

const (
	ClassGEMM        KernelClass = "gemm"        // Gemm, MatMul, fused GEMM
	ClassConv        KernelClass = "conv"        // direct/implicit-GEMM convolution
	ClassWinograd    KernelClass = "winograd"    // Winograd convolution
	ClassRNN         KernelClass = "rnn"         // LSTM/GRU/RNN (per-step GEMMs + gates)
	ClassAttention   KernelClass = "attention"   // fused attention
	ClassElementwise KernelClass = "elementwise" // pointwise and broadcast
	ClassReduction   KernelClass = "reduction"   // reductions, softmax, norms, pooling
	ClassData        KernelClass = "data"        // copies, gathers, concat, transpose
)

// Kernel is what the time model needs to know about one kernel launch
// (or a group of identical launches).
type Kernel struct {
	Class KernelClass
	FLOPs float64
	Bytes float64 // bytes read + written at the kernel boundary
	// Precision is the compute path (tensor cores or vector units); the
	// rules pick it from the dtype and whether the op can use tensor cores.
	Precision hwdb.Precision
	// GEMM view for efficiency modelling (conv as implicit GEMM:
	// M = N·P·Q, N = K, K = C/group·R·S), with Batch independent GEMMs.
	// Zero when not a GEMM-like kernel.
	M, N, K, Batch int64
	// Steps is the number of dependent sequential steps (RNN time steps ×
	// layers); each step pays its own launch/sync latency.
	Steps int64
	// WorkingSet is the bytes that must stay resident for the kernel; when
	// residency is not known (Resident false: a kernel timed alone in a
	// benchmark loop, whose previous iteration left its operands in L2)
	// and it fits in L2, the L2 bandwidth bounds memory time.
	WorkingSet float64
	// Resident says DRAMBytes was set by a residency model that followed
	// the data through a plan (cost's l2Residency): then the memory time
	// is bounded by DRAMBytes over DRAM bandwidth and by Bytes over L2
	// bandwidth, whatever the working set.
	Resident bool
	// DRAMBytes is, when Resident, the traffic the kernel puts on the
	// DRAM interface: reads of tensors no recent kernel left in L2
	// (weights, graph inputs such as KV caches, evicted activations)
	// and its writes, each written back to DRAM once and charged to the
	// kernel that wrote it (cost/residency.go).
	DRAMBytes float64
	// OperandsWarm is, when Resident, the share of the kernel's coldest
	// input that L2 holds when it starts: 1 when every operand is what
	// earlier kernels just wrote (attention's Q·Kᵀ and P·V), 0 when one
	// is read first from DRAM (a weight). It sets a GEMM's fill
	// (gpuFillScale).
	OperandsWarm float64
	// Launches is the number of kernel launches (usually 1).
	Launches float64
	// InputK is, for ClassRNN, the input feature size (the K of the input
	// projection GEMM, run once for all steps); K is the hidden size (the
	// recurrent GEMM's K). Zero means no input projection (cuDNN's
	// skip-input mode, as DeepBench measures); ONNX LSTM/GRU/RNN always
	// have one, so rules set it to the input size.
	InputK int64
	// ElemBytes is the operand element size in bytes (4 fp32, 2 fp16, 1
	// int8); ClassRNN uses it for the weights re-read every step. Zero
	// means 4.
	ElemBytes float64
	// Row view of a row-wise reduction (softmax, normalisations, a
	// reduction over the trailing axes): Rows independent rows of RowLen
	// elements, each read RowPasses times by a kernel that cannot keep its
	// row on chip (see rowMemoryTime). Zero when not row-wise.
	Rows, RowLen int64
	RowPasses    float64
	// RowShared is the bytes of Bytes that every row reads in common (a
	// norm's scale and bias): fetched from DRAM once and from L2 by the
	// other rows' CTAs alongside their own row, they add no round trip to
	// a row's stream (see rowMemoryTime).
	RowShared float64
	// WinogradFused marks a ClassWinograd kernel run by the fused
	// F(2×2,3×3) kernel (cuDNN's WINOGRAD): transforms in registers and
	// shared memory, counted in FLOPs by the rule, and no workspace. Its
	// batched GEMM runs at the implicit-GEMM rate (EffConv), not at
	// EffWinograd, which was fitted on the non-fused algorithm and
	// absorbs its separate transform kernels (see kernelEff).
	WinogradFused bool
	// DequantFLOPs is the part of FLOPs a weight-only quantized GEMM
	// spends dequantizing its packed weights as they load: once per
	// weight element whatever M is, on the CUDA cores beside the main
	// loop. It adds to the main loop's time instead of scaling it; scaled,
	// its 1/M share made a 2-row GEMM slower than a 4-row one.
	DequantFLOPs float64
	// Grad is, for a backward GEMM-like kernel, which gradient it
	// computes (GradData, GradWeight); empty for forward kernels.
	Grad Grad
	// Complex marks a GEMM over complex operands (cuDNN FFT's product of
	// spectra: its M, N, K count complex elements, its FLOPs the 4 real
	// multiply-adds of each complex one): a CTA tile's threads do 4 FMAs
	// per pair of operands loaded (tileEffFor).
	Complex bool
	// ZeroRows is how many of M's rows the library computes on zeros:
	// cuDNN FFT's complex GEMM runs tiles 32 images tall whatever the
	// batch (FFTConv). They are timed like the rest of the tile, but their
	// operands do not switch, so they draw no compute power (gemmActivity).
	ZeroRows int64
	// Indexed is, for a ClassData kernel that copies slices through an
	// index tensor (Gather, an embedding lookup), how many and how wide
	// (see indexSelectTime); zero otherwise.
	Indexed IndexedCopy
	// Direct is, for a convolution a framework runs with its own direct
	// kernel (PyTorch's depthwise kernel), its outputs and taps; its GEMM
	// view (M, N, K) is then zero: no tiles, no fill (directConvTime).
	Direct DirectConv
	// Decode is, for an attention kernel of one query token per sequence
	// over a KV cache, its split-KV view (decodeStreamS); zero otherwise.
	Decode AttnDecode
	// Vectorized marks a pointwise or row-wise kernel every runtime runs
	// as a vectorized library kernel (PyTorch's layer norm and GELU, and
	// their counterparts elsewhere): its SM-side limit counts elements
	// moved, not FLOPs (vectorsPerSMCycle).
	Vectorized bool
	// Stream marks a plain elementwise kernel of a runtime's own library
	// over contiguous operands (PyTorch's vectorized TensorIterator loop,
	// onnxruntime's elementwise kernels): its SM side keeps up with DRAM,
	// so pointwiseS charges it nothing.
	Stream bool
	// WriteShare is the share of Bytes the kernel writes (1/3 for an Add
	// of two equal tensors, 1/2 for a unary op); 0 when not known. It
	// sets the read-write mix an elementwise stream runs at (dramEff).
	WriteShare float64
	// TensorIterator marks a pointwise kernel PyTorch runs through its
	// TensorIterator loops, vectorized or strided, or a copy it runs
	// through them or its cat kernel: its threads' first loads' round
	// trip runs in series with the rest (aten.go).
	TensorIterator bool
	// Transcendental marks a pointwise kernel PyTorch runs through its
	// vectorized loop whose every element passes through a transcendental
	// function (tanh, sigmoid, exp, sin, erf, ...): each thread's
	// dependent instruction chain over its elements bounds a small
	// kernel (aten.go, transcendentalChainCycles). Cost's analyzer sets it
	// under the eager plan only.
	Transcendental bool
	// FollowsItself marks a kernel priced as one call of a loop of
	// itself, alone or with a small pointwise kernel (a convolution and
	// its bias timed in a loop), which starts where its previous call
	// left its code, its arguments and its operands: a convolution's fill
	// then shortens with its operands' warmth (gpuFillScale).
	FollowsItself bool
	// MaxPoolOutputs is, for a max pool PyTorch runs in its own kernels
	// (max_pool_forward_nchw, max_pool_forward_nhwc), its output
	// elements, one thread's integer work each (pool.go); 0 otherwise.
	MaxPoolOutputs float64
	// ChannelsLastCatElements is, for a concatenation PyTorch runs over
	// channels_last tensors, the elements it writes, each at an offset
	// its thread works out in integer arithmetic (cat.go); 0 otherwise.
	ChannelsLastCatElements float64
	// TransposeElements is, for cuDNN's NCHW↔NHWC layout transposes,
	// their tile-weighted element count (TransposeElements), each an SM's
	// shared-memory round trip (transpose.go); 0 otherwise.
	TransposeElements float64
	// SmallCTAs is the CTAs of a library kernel that runs one small CTA
	// per tiny piece of work, which the SMs retire at a fixed rate
	// (smallctas.go): cuDNN's NCHW batch norm at inference (one per (n, c)
	// plane), cuDNN FFT's flip_filter (one per (k, c) filter plane); 0
	// otherwise.
	SmallCTAs int64
	// SmallCTAThreads is the threads of each of those CTAs, which set how
	// many reside on an SM at once (smallctas.go); 0 for 64.
	SmallCTAThreads int64
	// TransformCycles is, for a kernel of cuDNN's FFT convolution that
	// transforms planes (fft2d_r2c, fft2d_c2r), the SM cycles its
	// butterflies take (fftconv.go), a compute term its bytes' stream
	// overlaps.
	TransformCycles float64
	// PointwiseComplexMACs is, for cuDNN's 64-point FFT product
	// (pointwise_mult_and_sum_complex), its complex multiply-adds, each
	// priced at complexPointwiseCycles SM cycles (fftconv.go) in place of
	// a tiled GEMM's rate.
	PointwiseComplexMACs float64
	// Strided marks a pointwise kernel PyTorch runs in its non-vectorized
	// loop, an operand being broadcast or read through a strided view: its
	// index arithmetic adds a fixed latency (aten.go).
	Strided bool
	// TransposedB marks a product the runtime runs as A·Bᵀ over B stored
	// row-major [N, K], both operands contiguous along K (cuBLAS "TN"):
	// how PyTorch's F.linear reads a module's weight, and onnxruntime a
	// Gemm's with transB. cuBLAS's CUDA-core kernels run that layout
	// slower than A·B (TransposedBCost); its tensor-core ones do not.
	TransposedB bool
	// BiasPassBytes are the bytes a call of the runtime's own moves to add
	// the kernel's bias (biasPassS), 0 where the kernel adds it itself:
	// onnxruntime's CUDA Gemm writes C into the output first (the
	// output's bytes) and runs the product onto it with beta = 1, a plain
	// cuBLAS product with no cuBLASLt epilogue (gemmLib.epilogue false);
	// its Conv adds the bias to the output after the convolution
	// (cudnnAddTensor: twice the output's bytes). One more kernel, in
	// series.
	BiasPassBytes float64
	// ReduceTree marks a reduction PyTorch runs in its reduce_kernel,
	// whose block and cross-block combining add a fixed latency (aten.go).
	ReduceTree bool
	// WarpRows marks a ReduceTree softmax ATen runs in
	// softmax_warp_forward, a warp a row combined by shuffles, whose
	// fixed latency is warpRowCycles, not the block tree's (aten.go).
	WarpRows bool
	// ConvChannels is a forward convolution's input channels per group
	// (ConvKernel); 0 elsewhere.
	ConvChannels int64
}

// KernelTime is the time model's estimate for a Kernel.
type KernelTime struct {
	ComputeS float64 // FLOPs / attainable compute rate
	// LatencyS is the fixed latency of a GEMM-like kernel beyond its
	// launch (pipeline fill and drain, the last wave's tail: fillS), or
	// the first dependent index → element chain of an indexed copy
	// (indexSelectTime); it runs in series with the main loop and with
	// the operand stream (BodyS).
	LatencyS float64
	MemoryS  float64 // bytes / attainable bandwidth
	// RampS is a plan's kernels' device-side minimum duration (KernelRamp,
	// all launches): part of the kernel's body as a profiler times it,
	// paid in series with the larger of its terms. 0 for an Isolated
	// kernel, whose LaunchS holds its whole per-call cost.
	RampS   float64
	LaunchS float64 // launch overhead, or a plan's gap between kernels, all launches
	// TimeS is BodyS(ComputeS, LatencyS, MemoryS) + RampS + LaunchS; an Isolated
	// GEMM-like kernel's time is at least the host-side fill plus
	// LaunchS (the small-kernel floor, see Isolated).
	TimeS float64
	// Bound is "compute", "memory", "latency" (the fixed latency exceeds
	// both the main loop and the memory time: a small kernel whose time
	// no amount of compute or bandwidth would shorten) or "launch".
	Bound string
	// AttainableFLOPS is the compute rate used (peak × efficiency).
	AttainableFLOPS float64
	// Bandwidth is the bandwidth used (HBM or L2).
	Bandwidth float64
	Level     string // "hbm" or "l2"
	// AlignmentFallback marks a cuBLAS GEMM whose compute time is the
	// alignment-1 fallback's (misalignedGEMMS): its output rows are not a
	// whole number of 16-byte vectors on a GPU whose kernels load tiles by
	// TMA. AlignmentGranule says what N must be a multiple of.
	AlignmentFallback bool
	// Streams marks a kernel whose ComputeS is a stream run in series
	// with its fill (a decode step's attention, decodeStreamS): bound by
	// memory where its main loop would say compute.
	Streams bool
}

// The builders below give every caller (the per-op rules, the Winograd
// pass, the DeepBench calibration) one definition of a GEMM-like kernel's
// view, FLOPs and bytes, so that what is calibrated is what is estimated.

// GEMMKernel is batch independent GEMMs C[M×N] = A[M×K]·B[K×N], operands
// of inBytes per element and an output of outBytes per element. The working
// set is the whole footprint (it decides L2 versus DRAM bandwidth).
func GEMMKernel(m, n, k, batch int64, pr hwdb.Precision, inBytes, outBytes float64) Kernel {
	batch = max(batch, 1)
	b := float64(batch)
	bytes := b * (inBytes*sizeSum(sizeProd(m, k), sizeProd(k, n)) + outBytes*sizeProd(m, n))
	return Kernel{
		Class: ClassGEMM, Precision: pr,
		FLOPs: b * FMAFLOPs * float64(m) * float64(n) * float64(k),
		Bytes: bytes, WorkingSet: bytes,
		M: m, N: n, K: k, Batch: batch,
		Launches: 1, ElemBytes: inBytes,
	}
}

// ConvGeom is a 2-D convolution in NCHW: batch N, C input channels of
// H×W, K output channels, R×S filters (height×width), Group groups.
type ConvGeom struct {
	N, C, H, W, K, R, S int64
	PadH, PadW          int64 // padding per side
	StrideH, StrideW    int64
	Group               int64 // 0 means 1
}

// P is the output height.
func (c ConvGeom) P() int64 { return convOut(c.H, c.R, c.PadH, c.StrideH) }

// Q is the output width.
func (c ConvGeom) Q() int64 { return convOut(c.W, c.S, c.PadW, c.StrideW) }

// convOut is the output size of a convolution along one axis (no
// dilation, pad on both sides); 0 for a non-positive stride.
func convOut(in, filt, pad, stride int64) int64 {
	out, _ := ir.ConvOutDim(in, filt, stride, 1, pad, pad, "NOTSET")
	return out
}

func (c ConvGeom) groups() int64 { return max(c.Group, 1) }

// GroupChannels is the input channels each filter reads: C/group.
func (c ConvGeom) GroupChannels() int64 { return c.C / c.groups() }

// Depthwise reports one input channel per group (group = C > 1).
func (c ConvGeom) Depthwise() bool { return c.Group > 1 && c.Group == c.C }

// DirectFLOPs is 2·N·K·P·Q·(C/group)·R·S, the convention every
// convolution's FLOPs are quoted in.
func (c ConvGeom) DirectFLOPs() float64 {
	return FMAFLOPs * float64(c.N) * float64(c.K) * float64(c.P()) * float64(c.Q()) *
		float64(c.GroupChannels()) * float64(c.R) * float64(c.S)
}

// ioBytes is input + weights + output, read or written once.
func (c ConvGeom) ioBytes(inBytes, outBytes float64) float64 {
	in := sizeProd(c.N, c.C, c.H, c.W)
	w := sizeProd(c.K, c.GroupChannels(), c.R, c.S)
	out := sizeProd(c.N, c.K, c.P(), c.Q())
	return inBytes*(in+w) + outBytes*out
}

// ConvKernel is the convolution as an implicit GEMM per group:
// M = N·P·Q, N = K/group, K = C/group·R·S, Batch = group.
func ConvKernel(c ConvGeom, pr hwdb.Precision, inBytes, outBytes float64) Kernel {
	g := c.groups()
	bytes := c.ioBytes(inBytes, outBytes)
	return Kernel{
		Class: ClassConv, Precision: pr,
		FLOPs: c.DirectFLOPs(), Bytes: bytes, WorkingSet: bytes,
		M: satProd(c.N, c.P(), c.Q()), N: c.K / g, K: satProd(c.C/g, c.R, c.S), Batch: g,
		Launches: 1, ElemBytes: inBytes, ConvChannels: c.C / g,
	}
}

// WinogradApplies reports whether the Winograd kernel models this
// convolution: 3×3 filters, stride 1, one group.
func WinogradApplies(c ConvGeom) bool {
	return c.R == 3 && c.S == 3 && c.StrideH == 1 && c.StrideW == 1 && c.groups() == 1
}

// WinogradTile is the output tile m of the modelled F(m×m, 3×3) Winograd
// convolution; (m+2)² element-wise GEMMs replace the 3×3 filter.
const WinogradTile = 4

// WinogradKernel is F(m×m,3×3) Winograd convolution as (m+2)² batched
// GEMMs [T × C]·[C × K], T = N·⌈P/m⌉·⌈Q/m⌉ tiles. FLOPs are those of the
// batched GEMMs (the transforms are priced through the class efficiency).
// Winograd runs on the vector units of the dtype (libraries do not run it
// on tensor cores), so a tensor-core precision is mapped to its vector
// path. ok is false where Winograd does not apply.
func WinogradKernel(c ConvGeom, m int64, pr hwdb.Precision, inBytes, outBytes float64) (k Kernel, ok bool) {
	if !WinogradApplies(c) || m <= 0 {
		return Kernel{}, false
	}
	alpha := m + c.R - 1
	tiles := WinogradTiles(c.N, c.P(), c.Q(), m)
	bytes := c.ioBytes(inBytes, outBytes)
	batch := alpha * alpha
	return Kernel{
		Class: ClassWinograd, Precision: vectorPath(pr),
		FLOPs: FMAFLOPs * float64(batch) * WinogradTileCount(float64(c.N), float64(c.P()), float64(c.Q()), m) * float64(c.C) * float64(c.K),
		Bytes: bytes, WorkingSet: bytes,
		M: tiles, N: c.K, K: c.C, Batch: batch,
		Launches: 1, ElemBytes: inBytes,
	}, true
}

// vectorPath is the non-tensor-core path of a precision.
func vectorPath(pr hwdb.Precision) hwdb.Precision {
	switch pr {
	case hwdb.FP16Tensor:
		return hwdb.FP16
	case hwdb.BF16Tensor:
		return hwdb.BF16
	case hwdb.TF32Tensor:
		return hwdb.FP32
	case hwdb.INT8Tensor:
		return hwdb.INT8
	case hwdb.FP64Tensor:
		return hwdb.FP64
	case hwdb.FP8Tensor:
		return hwdb.FP16
	}
	return pr
}

// rnnGateFLOPsPerElem approximates the pointwise work per gate element
// (bias adds, sigmoid/tanh, the cell update).
const rnnGateFLOPsPerElem = 5

// RNNKernel is a recurrent layer (ONNX op "RNN", "GRU" or "LSTM") of hidden
// units over steps time steps with batch sequences of input features;
// dirs independent directions (or stacked layers priced alike) run as a
// batch. M = gates·hidden, N = batch, K = hidden, InputK = input; input 0
// means no input projection (skip-input mode).
func RNNKernel(op string, hidden, input, batch, steps, dirs int64, pr hwdb.Precision, elemBytes float64) Kernel {
	gates := max(ir.RNNGates(op), 1)
	dirs = max(dirs, 1)
	m := satProd(gates, hidden)
	width := addSat(input, hidden)
	perStep := FMAFLOPs*sizeProd(gates, hidden)*float64(batch)*float64(width) +
		rnnGateFLOPsPerElem*sizeProd(gates, hidden, batch)
	weights := elemBytes * sizeProd(dirs, gates, hidden, width)
	io := elemBytes * sizeProd(dirs, batch, steps, width)
	return Kernel{
		Class: ClassRNN, Precision: pr,
		FLOPs: sizeProd(dirs, steps) * perStep,
		Bytes: weights + io, WorkingSet: weights,
		M: m, N: batch, K: hidden, InputK: input, Batch: dirs, Steps: steps,
		Launches: 1, ElemBytes: elemBytes,
	}
}

// EstimateConv prices a convolution with the faster of implicit GEMM and
// (where it applies) Winograd, as cuDNN's algorithm search does; it
// returns the chosen kernel with its time.
func EstimateConv(g *hwdb.GPU, c ConvGeom, pr hwdb.Precision, inBytes, outBytes float64, o Options) (Kernel, KernelTime) {
	pr = convPath(c, pr)
	k := ConvKernel(c, pr, inBytes, outBytes)
	t := EstimateKernel(g, k, o)
	if w, ok := WinogradKernel(c, WinogradTile, pr, inBytes, outBytes); ok && !isInt8(pr) && LibraryWinograd(g) {
		if wt := EstimateKernel(g, w, o); wt.TimeS < t.TimeS {
			return w, wt
		}
	}
	return k, t
}

// convPath is the compute path a convolution really runs on. Packed paths
// reduce over input channels in groups: dp4a packs 4 int8 channels into one
// 32-bit lane, tensor cores take 8 16-bit (16 8-bit) channels per step.
// A convolution whose channels per group do not fill the pack (a first
// layer with 1 or 3 channels) cannot use the packed kernels; libraries run
// a generic kernel instead, modelled as the fp32 vector path. DeepBench
// shows such layers in int8 and fp16 running below even the fp32 rate.
func convPath(c ConvGeom, pr hwdb.Precision) hwdb.Precision {
	var pack int64
	switch {
	case isInt8(pr):
		pack = 4
	case isTensor(pr):
		pack = tensorGranule(pr)
	default:
		return pr
	}
	if c.GroupChannels()%pack != 0 {
		return hwdb.FP32
	}
	return pr
}

func isInt8(pr hwdb.Precision) bool { return pr == hwdb.INT8 || pr == hwdb.INT8Tensor }

// IsInt8 reports whether pr is an 8-bit integer path (no Winograd kernel
// runs on one).
func IsInt8(pr hwdb.Precision) bool { return isInt8(pr) }

// LibraryWinograd reports whether the convolution library a framework
// calls on g (cuDNN, MIOpen) has Winograd kernels its algorithm choice
// can pick for a 3×3 stride-1 convolution on the vector path. The
// evidence is per architecture family:
//
//   - Maxwell, Pascal, Turing and Vega: DeepBench's cuDNN/MIOpen forward
//     convolutions on these parts (the fit half of
//     ../shared/data/deepbench) run 3×3 layers faster than the direct
//     arithmetic allows at the fp32 peak, which only a Winograd-class
//     algorithm does; the calibration prices them as the faster of
//     implicit GEMM and Winograd (EstimateConv).
//   - Volta: PyTorch's default algorithm on a V100 is
//     cudnn::winograd::winograd3x3Kernel (pytorch/pytorch issue #13412,
//     nvprof), and volta_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t
//     leads a V100 PyTorch profile (ryujaehun/pytorch-gpu-benchmark
//     issue #6).
//   - Ampere, Ada: PyTorch profiles on A100 show
//     ampere_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148 beside the
//     TF32 implicit GEMM (reported in pytorch/pytorch issue #81940, and
//     in profiler tables found by string search), preceded by cuDNN's
//     generateWinogradTilesKernel (the filter transform); those sm_80
//     kernels run on every compute capability 8.x part, Ada's sm_89
//     included (CUDA C++ Programming Guide, binary compatibility: a
//     cubin runs on later minor revisions of its major version).
//   - Hopper, Blackwell: not across a major version, and our H100 runs
//     do not behave like Winograd: VGG-16 fp32 (TF32 off) at batch 128
//     took 80.3 ms in a CUDA-graph replay (testdata/measured), 74% of
//     the fp32 FMA peak on the direct arithmetic, where Winograd's
//     2.25× fewer products would have left it well under 60 ms.
//
// Other families (CDNA, unknown entries) keep implicit GEMM: no evidence
// either way was found.
func LibraryWinograd(g *hwdb.GPU) bool {
	if g == nil {
		return false
	}
	switch g.Family() {
	case "Maxwell", "Pascal", "Volta", "Turing", "Ampere", "Ada Lovelace", "Vega 10":
		return true
	}
	return false
}

// GEMMLike reports whether a class counts as GEMM/conv time (a report's
// gemm_conv_time_share) and may use tensor cores: the GEMM classes the time
// model tiles (isGEMMClass) plus recurrent kernels.
func (c KernelClass) GEMMLike() bool {
	switch c {
	case ClassGEMM, ClassConv, ClassWinograd, ClassRNN, ClassAttention:
		return true
	}
	return false
}

// WinogradTiles is the number of m×m output tiles Winograd F(m×m, 3×3)
// computes for n images of p×q outputs (partial tiles round up).
func WinogradTiles(n, p, q, m int64) int64 {
	return satProd(n, ceilDiv(p, m), ceilDiv(q, m))
}

// WinogradTileCount is WinogradTiles for float64 dims, which may be past
// int64: a count that feeds FLOPs keeps growing where an int saturates.
func WinogradTileCount(n, p, q float64, m int64) float64 {
	if m <= 0 || !(n > 0) || !(p > 0) || !(q > 0) {
		return 0
	}
	return n * ceilDivF(p, m) * ceilDivF(q, m)
}

// OnTensorCores reports whether the kernel's compute path is a tensor-core one.
func (k Kernel) OnTensorCores() bool { return isTensor(k.Precision) }

// BodyS is a kernel's time on the GPU from its terms: the main loop and
// the operand stream overlap, so the longer sets the pace, and the fixed
// latency runs in series with both. A GEMM's fill is its first tiles'
// loads, a DRAM round trip before any math, and its drain the last
// tiles' math, epilogue and stores after the last load (and a split-K
// reduction); a memory-bound GEMM streams no weights through either.
// Vidur's fp16 GEMMs of 1-16 tokens, whose weights are read cold (each op
// runs once per block, between the block's other weights), show it: over
// 8-940 MB of weights their time is the fill (about 4-5 µs) plus the
// stream, and with the fill hidden under the stream those of 16-64 MB
// were priced 16% too fast on the A100 and 6.5% on the A40 (+3.1% and
// +0.5% now; internal/kernelrows TestFillInSeriesWithStream). Our H100
// and H200 LLaMA-7B decode steps (graph replay, 13.5 GB of weights in
// 224 such products) went from −17%/−11% to −3%/+1% at batch 1
// (cmd/onnxcost TestMeasuredEndToEndH100/H200). The Hopper GEMM stream
// floor this replaces (13 bytes per SM cycle) had been fitted on our
// single-kernel GEMV rows, which re-read one weight that stays in L2
// between calls; cold, as in a decode step, the fill explains the time.
//
// A GEMM's main loop and stream do not overlap perfectly where they are
// close (gemmOverlapExp); every other class keeps the hard maximum.
func BodyS(class KernelClass, compute, latency, memory float64) float64 {
	if class == ClassGEMM {
		return normSum(compute, memory, gemmOverlapExp) + latency
	}
	return max(compute, memory) + latency
}

// gemmOverlapExp is the exponent of the norm (normSum) a GEMM's compute
// and memory times combine with, a power of two. Near the crossover a tiled GEMM can hold
// neither limit: the loads a tile waits on queue behind the interface, and
// the few CTAs of a skinny product issue the next loads only after their
// math. Vidur's fp16 GEMMs show it alike on all three GPUs: priced with
// the hard maximum, those whose two terms were within 0.8 of each other
// ran longer than priced, on the memory side by 18% (A100), 10% (H100)
// and 13% (A40) (priced/measured medians of 395, 879 and 222 rows: 0.82,
// 0.90, 0.87) and on the compute side by 4%, 8% and 13%, where the rows
// with one term under a fifth of the other were within 3% on the memory
// side (A100, A40; the H100's ran 14% faster than priced, its GEMM
// stream, since priced at the board's stream_eff: tmaStreamsGEMM). With the 4-norm those groups are 0.92, 1.00, 0.99 and
// 1.05, 0.99, 0.97, and every group of balance 0.4 or more lies within
// 0.92-1.08 (internal/kernelrows TestGEMMOverlapBalance; the exponent
// checked, not fitted: 3 over-corrects the compute side of the A100 and
// A40 by 6-10%, 2 by more). Held out, Vidur's H100 rows went 9.3% →
// 9.0%, A40 7.5% → 7.4%, DeepBench 16.8% → 16.7%; a joint refit under
// the norm lowers the training loss only 1.3% and is not taken. Not
// applied to convolutions: DeepBench's have few rows near their
// crossover (35) and its held-out convolutions got no better.
const gemmOverlapExp = 4

// BodySlopes are the derivatives of BodyS(class, c, ·, m) with respect to
// c and m (the latency's is 1): under the hard maximum 1 for the larger
// (compute on a tie) and 0 for the other, under GEMMs' norm (x/S)^(q−1)
// for each, S the combined time. A fit that moves each term's factor
// (calib) follows them.
func BodySlopes(class KernelClass, c, m float64) (dc, dm float64) {
	if class != ClassGEMM || !(min(c, m) > 0) {
		if m > c {
			return 0, 1
		}
		return 1, 0
	}
	s := normSum(c, m, gemmOverlapExp)
	dc, dm = 1, 1
	for range gemmOverlapExp - 1 {
		dc, dm = dc*(c/s), dm*(m/s)
	}
	return dc, dm
}
