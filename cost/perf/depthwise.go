package perf

import (
	"math"

	"github.com/onnxcost/onnxcost/hwdb"
)

// DirectConv describes a convolution run by a framework's own direct
// kernel, one thread per output, instead of a library's implicit GEMM:
// PyTorch's conv_depthwise2d_forward_kernel
// (aten/src/ATen/native/cuda/DepthwiseConv2d.cu), which PyTorch runs for
// an NCHW depthwise convolution unless it is fp16 of a shape its workload
// table approves for cuDNN (ConvParams::use_cudnn_depthwise in
// aten/src/ATen/native/Convolution.cpp; cost's cudnnTakesHalfDepthwise).
// Outputs is the output elements, Taps the filter taps each one reads
// (kH·kW).
type DirectConv struct {
	Outputs float64
	Taps    int64
}

// The kernel's instruction stream per output, read from its source (3×3
// and 1×1 are template instances with the tap loops unrolled): the
// linear index split into n, c, h, w by three 32-bit divisions by
// run-time divisors (about 20 integer instructions each on NVIDIA GPUs,
// which have no integer divider) and three multiply-subtracts, the weight
// and input base offsets, the grid-stride loop and the store; then per
// tap the input coordinates' bounds test and the two addresses. The
// loads and the FMA go to other pipes. Read from the source, that is
// about 70 integer instructions an output and depthwiseTapInstr a tap
// (1.7 SM cycles per 3×3 output at 64 integer lanes per SM); our H200's
// Kineto trace of MobileNet-V2 fp32 at batch 128 (2026-12-04,
// calib/profile/testdata/kineto_h200/mobilenet_v2_fp32_b128.json.gz)
// times its 17 3×3 depthwise kernels (3.6-57.8 M outputs) at 2.43-3.30 SM
// cycles an output, a median 2.53: 126 instructions' worth at 64 lanes
// less the taps' 36, stride 1 at 119-130 and stride 2 at 147-175 (the
// stride-2 loads' wider footprint). So depthwiseIndexInstr is FITTED: the
// median over those 17, the divisions' scheduling and the loads' issue
// slots the count from the source leaves out (with 70 the trace's
// depthwise nodes were priced 32-47% short). As a check, the same
// three-division scaffold in PyTorch's index_select kernel, fitted on
// Vidur's embedding rows, takes 1.9 SM cycles per element on an H100
// (indexSelectIterCycles).
const (
	depthwiseIndexInstr = 126
	depthwiseTapInstr   = 4
)

// intLanesPerSM is the 32-bit integer instructions one SM (or AMD CU)
// completes per clock: Maxwell and Pascal run them on their unified CUDA
// cores (128 per SM on GM200/GP102, 64 on GP100); from Volta on, NVIDIA
// SMs have 16 INT32 lanes per partition, 64 per SM, beside 64 or 128 FP32
// lanes (Volta, Ampere, Hopper architecture whitepapers); a GCN or CDNA
// CU issues one 64-wide wavefront instruction per SIMD every 4 clocks, 64
// per clock. 0 where the GPU's FP32 lanes are unknown.
func intLanesPerSM(g *hwdb.GPU) float64 {
	// The datasheet peak over SMs × boost clock gives the lanes to within
	// the rounding of the quoted figures: whole 16-lane groups.
	lanes := math.Round(vectorFMAsPerClock(g, hwdb.FP32)/16) * 16
	if lanes <= 0 {
		return 0
	}
	switch g.Family() {
	case "Maxwell", "Pascal":
		return lanes
	}
	return min(lanes, 64)
}

// directConvTime is the time of k's direct convolution (k.Direct) bound
// by its integer instruction issue: every output's index arithmetic and
// per-tap tests, over all SMs at the boost clock (a kernel this light on
// arithmetic draws little power, as pointwiseS assumes). The kernel's
// bytes bound it too (memoryTime). 0 when k has no direct convolution or
// g lacks the SM count, clock or lanes.
func directConvTime(g *hwdb.GPU, k Kernel) float64 {
	d := k.Direct
	lanes := intLanesPerSM(g)
	if !(d.Outputs > 0) || d.Taps <= 0 || g.SMs <= 0 || g.BoostClockMHz <= 0 || lanes <= 0 {
		return 0
	}
	instr := DirectConvInstr(d.Taps)
	// Blocks of depthwiseBlock threads, one output each, dealt to the
	// SMs: the busiest SM's share sets the time (a small layer's few
	// blocks leave most SMs idle).
	blocks := math.Ceil(d.Outputs / depthwiseBlock)
	perSM := min(math.Ceil(blocks/float64(g.SMs))*depthwiseBlock, d.Outputs)
	return perSM * instr / (lanes * g.BoostClockMHz * 1e6)
}

// DirectConvInstr is the integer instructions the direct kernel issues
// per output of a filter with taps taps.
func DirectConvInstr(taps int64) float64 {
	return depthwiseIndexInstr + depthwiseTapInstr*float64(taps)
}

// depthwiseBlock is the kernel's block size: CUDA_NUM_THREADS, 1024
// threads, one output each (conv_depthwise2d_forward_out).
const depthwiseBlock = 1024
