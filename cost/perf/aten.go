package perf

import "github.com/onnxcost/onnxcost/hwdb"

// Two fixed latencies of PyTorch's own (ATen) kernels that a small tensor
// exposes. They run in series with the kernel's loads and stores (the
// index arithmetic before a thread's first load, the combining after its
// last), so EstimateKernel adds them to the kernel's ramp, its fixed
// duration, which a profiler counts in the kernel and no efficiency
// changes; on a large kernel they are a few percent. TensorRT,
// onnxruntime and Inductor generate or pick their own kernels: only the
// eager plan's kernels are marked (cost's analyzer sets Kernel.Strided
// and Kernel.ReduceTree).

// A pointwise kernel's thread loads its elements, computes and stores:
// on a tensor of a few kilobytes that one dependent round trip to DRAM
// (and the store's drain before the kernel ends) is the kernel, where the
// ramp (KernelRamp) is measured with a kernel that touches no memory. In
// our H200's CUDA-graph replays of a LLaMA-7B decode step (fp16, past
// 1,024; testdata/measured/h200_sxm_llama7b_decode_replay_kernels, 2026-12-04)
// ATen's vectorized pointwise kernels over [1..8, 4096] and smaller lasted
// a median 1.18 µs at batch 1 (n=484) and at batch 8 (n=419), as long as
// the same step's eager kernels (1.09 and 1.18 µs) and the eager Kineto
// traces' (1.09-1.22 µs, calib/profile/testdata/kineto_h200), against
// the 0.64 µs in-graph ramp: 0.54 µs more, about 1,070 cycles at the
// H200's 1.98 GHz boost. Vidur's profiler-timed residual adds of one to
// four tokens, timed to whole microseconds, lasted 1.0 µs on the H100
// and A40 and 2.0 µs on the A100 (each priced a 0.64 µs ramp): the same
// order. A loop of one kernel repeated does not pay it: our H100's and
// H200's single adds of 64K-1M elements, each timed as one of 20 in a
// CUDA graph (testdata/measured/*_kernels.csv), take 1.4-2.2 µs a call
// with the gap, a ramp's worth of duration (priced with it 10-105% slow:
// their medians over 8 sizes 2.0% → 11.7% and 1.6% → 18.1%). So it may
// as well be the fetch of a kernel's code and arguments after a
// different kernel as the data's round trip: a whole model's kernels
// follow different kernels, and cost's analyzer marks none in a one-node
// graph (a kernel priced as a call repeated back to back). ESTIMATE from
// those measurements, not fitted; kept in SM cycles like its neighbours.
// The strided loop's latency below was measured against these vectorized
// kernels, so it adds to this one. A kernel the host launches onto an
// idle stream (the eager runtimes) is priced half a launch of ramp
// (kernelRampShare), which those eager durations set and so already holds
// the load: EstimateKernel prices a pointwise kernel's ramp as at least
// the in-graph ramp plus this latency, not both.
const pointwiseLoadCycles = 1070

// A thread of ATen's vectorized pointwise loop takes eight elements (two
// 16-byte vectors in fp32, one in fp16) and runs its op on them after
// their loads land. For a transcendental function (tanhf, expf and a
// division for a sigmoid, sinf, cosf, erff) each element is a dependent
// chain of a few dozen instructions around the special-function unit's
// long-latency ex2, rcp, sin or cos, and the loop's eight chains leave
// the kernel's last thread busy for about a microsecond's share more than
// an add's, which no stream or FLOP rate sees on a small tensor. In our
// H200's eager Kineto traces (calib/profile/testdata/kineto_h200,
// 2026-12-04) such kernels outlasted the plain kernels of the same
// traces, priced alike, by 0.30-0.65 µs: BERT-base's pooler tanh over 768
// fp32 elements 1.60 µs (a Mul and a Sub of its size 0.93-0.96), the
// small LLaMA's rotary cos and sin over 1,024 fp32 elements 1.60 and
// 1.50 (rsqrt and an in-place add of one CTA 1.12-1.15), its SiLU over
// 352K fp16 elements 1.73-1.85 (the Mul of the same grid 1.31); priced
// without the chain they were 20-25% (tanh, cos, sin) and 10-16% (SiLU)
// short. The body each needed (its duration less the priced ramp),
// 0.30-0.65 µs, has a median of 0.40 µs: 800 SM cycles at the H200's
// 1.98 GHz boost (eight elements of about 100 cycles), FITTED on those
// five kernels (calib/loop TestTranscendentalKernelsAreTheTraces).
// Held out: the LLaMA-7B decode step's 128 SiLU kernels at batch 1 and 8,
// CUDA-graph replays and eager (testdata/measured/
// h200_sxm_llama7b_decode_*_kernels): medians 1.60-1.79 µs, priced 1.19
// and 1.29 without the chain, 1.58 with it (−12% to +0%;
// TestTranscendentalChainIsTheReplays). The
// chain overlaps the kernel's stream (other warps' loads proceed while a
// warp computes), so it is a floor on the kernel's body, not an addition:
// BERT's GELU over 393K fp32 elements (erf), 1.74 µs in the trace, is held
// by its bytes and unchanged, as is a large tensor's kernel (GPT-2's tanh
// over 2M fp16 elements; the rows' 2.82 µs against 2.50-2.77 for its
// neighbours is an issue-rate share the floor does not model). The
// non-vectorized loop's threads take two to four elements and carry their
// own index latency (stridedLoopCycles): not marked. TensorRT, onnxruntime
// and Inductor run their own kernels (fewer elements a thread, fast-math
// approximations): not marked either. A square root or reciprocal is one
// special-function instruction (the LLaMA's rsqrt ran as an add), and
// ATen computes an integer power by multiplication: neither is marked.
const transcendentalChainCycles = 800

// transcendentalChainS is the time the last thread of ATen's vectorized
// loop spends on its elements' transcendental chains (k.Transcendental) on
// g, a floor on the kernel's body; 0 for any other kernel, a strided
// loop's included.
func transcendentalChainS(g *hwdb.GPU, k Kernel) float64 {
	if !k.Transcendental || k.Strided || !atenLoop(k) || !(g.BoostClockMHz > 0) {
		return 0
	}
	return transcendentalChainCycles / (g.BoostClockMHz * 1e6)
}

// pointwiseLoadLatencyS is the first-load round trip a TensorIterator
// pointwise or copy kernel k pays on g (0 for any other kernel).
func pointwiseLoadLatencyS(g *hwdb.GPU, k Kernel) float64 {
	if !k.TensorIterator || !atenLoop(k) {
		return 0
	}
	return PointwiseLoadS(g)
}

// PointwiseLoadS is the first-load round trip of ATen's pointwise kernels
// on g (pointwiseLoadCycles at its boost clock; 0 without one).
func PointwiseLoadS(g *hwdb.GPU) float64 {
	if !(g.BoostClockMHz > 0) {
		return 0
	}
	return pointwiseLoadCycles / (g.BoostClockMHz * 1e6)
}

// PyTorch's TensorIterator runs a pointwise op in one of two loops. When
// every operand is contiguous and of the output's shape it runs
// vectorized_elementwise_kernel (16-byte loads, a few elements per
// thread); when an operand is broadcast (a norm's [d] weight over
// [b, s, d], rotary's cos over the heads, a mask over the scores) or read
// through a strided view (rotate_half's slices), it runs
// elementwise_kernel<128, 4>, whose threads compute each element's
// offsets through an OffsetCalculator (an integer division and multiply
// per dimension and operand) before their loads can issue. On a small
// tensor that index arithmetic is the kernel's critical path: in our
// H200's PyTorch 2.11 Kineto traces (calib/profile/testdata/kineto_h200)
// the non-vectorized kernels lasted a median 2.11 µs (BERT-base fp32
// batch 1, n=24) and 2.50 µs (a small LLaMA fp16 batch 8, n=31) where the
// vectorized kernels of the same traces, on tensors of the same sizes,
// lasted 1.15 µs; 2.24-3.68 µs against 0.96-1.66 µs in a LLaMA-7B decode
// step at batch 8 (testdata/measured/h200_sxm_llama7b_decode_b8_kernels).
// The difference, about 1.15 µs at the H200's 1.98 GHz boost, is kept in
// SM cycles (the arithmetic is the SM's, and such a kernel is far too
// small to pull the clock under its boost): stridedLoopCycles.
//
// Those kernels were half-precision, whose elementwise_kernel<128, 4>
// gives each thread four elements; for a result of 4 bytes or more
// PyTorch launches elementwise_kernel<128, 2> (gpu_kernel_impl_nocast,
// aten/src/ATen/native/cuda/CUDALoops.cuh: unroll_factor = sizeof(arg0_t)
// >= 4 ? 2 : 4). A thread runs its elements one after another: without
// __restrict__ an element's loads may not pass the previous element's
// store, so each element after the first waits out its own offsets and
// round trip, the first one's being the pointwise first load above. So
// the latency is stridedLoopCycles/3 an element after the first: 2,300
// cycles for four, 767 for two. BERT-base fp32's strided kernels in the
// same H200 trace, elementwise_kernel<128, 2>, lasted 2.11-2.27 µs (its
// mask adds, priced 2.91 with four elements' latency, 2.14 with two) and
// 1.76-1.92 µs (its context copies: 2.44, now 1.67): not fitted, the
// element count is the source's.
const stridedLoopCycles = 2300

// stridedUnroll is the elements a thread of ATen's non-vectorized loop
// takes for a result of elemBytes bytes (CUDALoops.cuh's unroll_factor).
func stridedUnroll(elemBytes float64) int {
	if elemBytes >= 4 {
		return 2
	}
	return 4
}

// stridedElemInstr is the integer instructions elementwise_kernel<128, 4>
// spends on each element besides its loads, op and store: for a binary
// op over three dimensions (a bias over [n, c, h·w] once TensorIterator
// has coalesced what it can, a norm's weight over [rows, d]) the
// OffsetCalculator divides the linear index by each dimension's size
// (IntDivider: a multiply-high, an add and a shift, and a
// multiply-subtract for the remainder) and adds remainder × stride for
// each of the three operands, about 7 a dimension, 21-25 with the
// unrolled loop's tests; then the 64-bit addresses of two loads and a
// store and the element's index, about 8. ESTIMATE from the source
// (aten/src/ATen/cuda/detail/OffsetCalculator.cuh, IntegerDivider.cuh);
// no SASS count or profile of a large such kernel was at hand. Priced at
// the SM's 64 INT32 lanes (intLanesPerSM) 32 would be 2 elements per
// SM-cycle (46, below: 1.4), against the 1.0 (fp32) and 1.9 (fp16)
// elements of a binary op an H100's DRAM delivers and 1.4 and 2.8 on an
// H200: a large broadcast op in half precision is held by its index
// arithmetic. Where
// the multiply-adds co-issue on the FP32 pipe it is up to twice as fast;
// the issue rate (128 thread-instructions per SM-cycle) bounds it at
// about 4. Checked, not fitted, on our whole-model rows, whose bias adds,
// norm weights and attention masks run this loop (cmd/onnxcost
// TestMeasuredEndToEnd): H100 graph replays 5.9% → 5.1%, H200 8.2% →
// 7.8%, the kernel sums 6.3% → 5.2% and 8.6% → 7.9% (at 20: 5.3% and
// 8.0%; at 48: 5.1% and 6.8%: the rows would take more than the source
// gives). A trace then said how much more: our H200's Kineto trace of
// VGG-16 fp16 channels_last at batch 128 (2026-12-04) times its 13 bias
// adds (elementwise_kernel<128, 4> over 12.8-411 M outputs, 1.45 TB/s at
// most, far from DRAM's) at 0.63-0.74 SM cycles an output, a median
// 0.728: 46.6 instructions at 64 lanes. So it is 46, FITTED on those 13
// (priced at 32 they were 22-24% short); 32 was the source's count
// without the loop's bounds tests and the unrolled loop's bookkeeping.
const stridedElemInstr = 46

// ATen runs a reduction (torch.mean, sum, amax, argmax: an ONNX Reduce*
// or ArgMax node) in reduce_kernel, and a layer norm and a softmax in row
// kernels of the same shape: each thread accumulates its loads, then the
// block (or warp) combines its threads' partials in a shared-memory tree
// with a barrier per level, and a reduction split over several blocks
// combines theirs through global memory behind a semaphore. On a small
// tensor those steps are most of the kernel: in the same H200 traces a
// RMSNorm's mean over [8, 4096] (LLaMA-7B decode, batch 8, n=64) lasted
// 3.84-4.35 µs against 2.24 priced, over a small LLaMA's [512, 256] (n=5)
// a median 2.69 µs against 0.77: 1.6 and 1.9 µs more, kept as
// reduceTreeCycles (1.7 µs at the H200's boost). The traces' layer norms
// and softmaxes ran short of their prices by as much (BERT-base fp32
// batch 1: 37 of them, 61 µs priced for 108 measured; GPT-2 fp16 batch
// 32: 7, 12 for 27), but for the decode step's softmax over 1,025 keys
// (5.9 µs against 1.7 priced before: its warp walks the whole row, and
// with the latency it is still 2.5 µs short), so they take the same
// latency. The traces' layer norms are BERT's nn.LayerNorm exported below
// opset 17 as nine ops, which the eager plan recomposes into one node:
// marked too (cost's eagerReduction), BERT's 37 row kernels price 124 µs
// for the 117 measured.
const reduceTreeCycles = 3400

// warpRowCycles is the fixed latency of ATen's softmax_warp_forward, which
// host_softmax (aten/src/ATen/native/cuda/SoftMax.cu) runs for a softmax
// over the last axis of rows of at most 1,024 elements and 4 KB: each
// warp holds a row (or two) in registers and takes its max and its sum by
// five shuffles each, with no shared-memory tree, barrier or cross-block
// step. Our three H200 Kineto traces time it short of the block tree's
// price by the same amount: BERT-base fp32 batch 1 (12 softmaxes over
// [1536, 128], 1.98-2.21 µs, priced 2.94 with the tree), GPT-2-small fp16
// batch 32 (2 over [8192, 64], 3.04, priced 3.85) and the small LLaMA
// fp16 batch 8 (2 over [2048, 64], 2.27-2.30, priced 3.10): 0.92, 0.81
// and 0.80 µs, 1,580-1,820 SM cycles at its 1.98 GHz boost. So it is
// half the tree, 1,700, FITTED on those 16 kernels (each trace's
// difference predicts the other two's within 0.12 µs, 3-6% of their
// durations). A row of more than 1,024 (the LLaMA-7B decode step's
// 1,025 keys) runs the block softmax and keeps reduceTreeCycles.
const warpRowCycles = 1700

// reduceTreeLatencyS is the latency ATen's reduction tree adds to a
// reduction or row kernel k on g (0 for any other kernel).
func reduceTreeLatencyS(g *hwdb.GPU, k Kernel) float64 {
	if !k.ReduceTree || k.Class != ClassReduction || !(g.BoostClockMHz > 0) {
		return 0
	}
	if k.WarpRows {
		return warpRowCycles / (g.BoostClockMHz * 1e6)
	}
	return reduceTreeCycles / (g.BoostClockMHz * 1e6)
}

// atenLoop reports whether k's class is one ATen runs through its
// element loops: a pointwise kernel, or a copy (a materialized transpose
// or broadcast, a concatenation; cost's analyzer marks which).
func atenLoop(k Kernel) bool { return k.Class == ClassElementwise || k.Class == ClassData }

// StridedLoopS is the latency ATen's non-vectorized loop adds on g when
// each thread takes unroll elements (stridedLoopCycles for four, at its
// boost clock; 0 without one).
func StridedLoopS(g *hwdb.GPU, unroll int) float64 {
	if !(g.BoostClockMHz > 0) || unroll < 2 {
		return 0
	}
	return float64(unroll-1) * stridedLoopCycles / 3 / (g.BoostClockMHz * 1e6)
}

// stridedLatencyS is the latency the non-vectorized loop adds to a
// strided pointwise or copy kernel k on g (0 for any other kernel).
func stridedLatencyS(g *hwdb.GPU, k Kernel) float64 {
	if !k.Strided || !atenLoop(k) {
		return 0
	}
	return StridedLoopS(g, stridedUnroll(elemBytesOr4(k.ElemBytes)))
}

// stridedIndexS is the time a strided pointwise kernel k's index
// arithmetic takes on g's SMs (smCycles SM-cycles a second):
// stridedElemInstr an output element (its written bytes over the element
// size) at the SM's integer lanes; 0 for any other kernel, a strided copy
// included: it works out one operand's offsets where stridedElemInstr
// counts a binary op's three, and priced at that count BERT's head
// transposes at batch 8 and 32 put its whole-model rows 1-8 points over
// their replays (cmd/onnxcost TestMeasuredEndToEnd, fp16-amp and TF32:
// BERT-base fp16-amp batch 8 +6.1% → +12.9% on the H100), with the
// copy's latency alone +8.9%.
func stridedIndexS(g *hwdb.GPU, k Kernel, smCycles float64) float64 {
	lanes := intLanesPerSM(g)
	if !k.Strided || k.Class != ClassElementwise || lanes <= 0 || !(smCycles > 0) {
		return 0
	}
	outputs := k.WriteShare * k.Bytes / elemBytesOr4(k.ElemBytes)
	return outputs * stridedElemInstr / (lanes * smCycles)
}
