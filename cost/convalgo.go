package cost

import (
	"fmt"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
)

// ConvGeomOf is the 2-D convolution geometry of a convolution node n, with
// shapes from c: what the gradient kernels of a training step
// (perf.EstimateConvGrad) and a library's forward algorithm choice
// (libraryWinograd) are priced from. ok is false where the geometry is not
// a plain 2-D convolution with known shapes (dilation, an auto_pad whose
// padding is not written, an unknown dim).
func ConvGeomOf(n *ir.Node, c *RuleCtx) (perf.ConvGeom, bool) {
	xd, okx := c.Dims(n.In(0))
	wd, okw := c.Dims(n.In(1))
	if !okx || !okw || len(xd) != 4 || len(wd) != 4 {
		return perf.ConvGeom{}, false
	}
	if ap := n.AttrString("auto_pad", "NOTSET"); ap != "NOTSET" && ap != "" && ap != "VALID" {
		return perf.ConvGeom{}, false
	}
	if d, ok := n.AttrInts("dilations"); ok {
		for _, v := range d {
			if v != 1 {
				return perf.ConvGeom{}, false
			}
		}
	}
	stride := [2]int64{1, 1}
	if s, ok := n.AttrInts("strides"); ok && len(s) == 2 {
		stride = [2]int64{s[0], s[1]}
	}
	// ONNX pads are [top, left, bottom, right]; ConvGeom pads each side
	// alike, so an odd total rounds up (one row more, at most).
	var pad [2]int64
	if p, ok := n.AttrInts("pads"); ok && len(p) == 4 {
		pad = [2]int64{(p[0] + p[2] + 1) / 2, (p[1] + p[3] + 1) / 2}
	}
	g := perf.ConvGeom{
		N: clampInt(xd[0]), C: clampInt(xd[1]), H: clampInt(xd[2]), W: clampInt(xd[3]),
		K: clampInt(wd[0]), R: clampInt(wd[2]), S: clampInt(wd[3]),
		PadH: pad[0], PadW: pad[1], StrideH: stride[0], StrideW: stride[1],
		Group: max(n.AttrInt("group", 1), 1),
	}
	if g.N <= 0 || g.C <= 0 || g.K <= 0 || g.R <= 0 || g.S <= 0 || g.StrideH <= 0 || g.StrideW <= 0 || g.P() <= 0 || g.Q() <= 0 {
		return perf.ConvGeom{}, false
	}
	return g, true
}

// libraryWinograd is the forward algorithm a convolution library picks for
// a plain Conv node under a runtime whose convolutions are the library's
// (hwdb.Runtime.ConvWinograd: PyTorch, Inductor, the ONNX Runtime CUDA
// EP): on a GPU whose library has Winograd kernels (perf.LibraryWinograd),
// a 3×3 stride-1 convolution on the vector path (fp32 with TF32 off, or a
// half type on a part without tensor cores) runs as Winograd where that is
// faster, as cuDNN's algorithm choice does; k, the implicit-GEMM kernel,
// otherwise. The Winograd kernel is the one the DeepBench calibration
// prices (perf.WinogradKernel, the faster of the two in perf.EstimateConv)
// with k's traffic and residency. It rewrites est's class, GEMM view and
// executed arithmetic to the kernel chosen. The choice is made on the
// uncalibrated times: a calibration scales the chosen kernel's terms.
func (a *analyzer) libraryWinograd(n *ir.Node, est *NodeEstimate, k perf.Kernel) perf.Kernel {
	rt := a.runtime
	if rt == nil || rt.ConvWinograd <= 0 || n.Domain != "" || n.OpType != "Conv" || est.Class != perf.ClassConv ||
		a.tp != nil || k.OnTensorCores() || perf.IsInt8(k.Precision) || !perf.LibraryWinograd(a.gpu) {
		return k
	}
	sizer := a.sizer(n)
	geom, ok := ConvGeomOf(n, &sizer)
	if !ok {
		return k
	}
	w, ok := perf.WinogradKernel(geom, perf.WinogradTile, k.Precision, k.ElemBytes, k.ElemBytes)
	if !ok {
		return k
	}
	w.Bytes, w.WorkingSet, w.Resident, w.DRAMBytes, w.Launches = k.Bytes, k.WorkingSet, k.Resident, k.DRAMBytes, k.Launches
	po := perf.ChoiceOptions(a.planOptions()) // a replay runs what its eager twin chose
	// The call's time is weighed, as the library's timing of each
	// algorithm sees it: the filter's transform (winogradFilter) with
	// the product.
	filter, _, _ := a.winogradFilterKernel(n)
	wt := perf.UnderControl(a.gpu, w, po, a.opt.Power).TimeS + perf.UnderControl(a.gpu, filter, po, a.opt.Power).TimeS
	if wt >= perf.UnderControl(a.gpu, k, po, a.opt.Power).TimeS {
		return k
	}
	est.Class = perf.ClassWinograd
	est.ExecutedMACs, est.ExecutedFLOPs = w.FLOPs/perf.FMAFLOPs, w.FLOPs
	est.M, est.N, est.K, est.Batch = w.M, w.N, w.K, w.Batch
	return w
}

// winogradFilter adds, to a convolution libraryWinograd ran as Winograd,
// the kernel that transforms its filter before it (cuDNN's
// generateWinogradTilesKernel, which PyTorch profiles show before each
// ampere_scudnn_winograd kernel: the framework keeps no transformed
// copy), reading the 3×3 weights from DRAM and writing (m+2)² values per
// filter. That write is not charged to DRAM, unlike the other writes of
// a plan (cost/residency.go): the transform rewrites the same workspace
// on every call, so its lines are overwritten in L2 before they are
// evicted, and charged, the same-GPU calibration of DeepBench's Winograd
// convolutions got worse (internal/kernelrows TestCalibrationEndToEnd:
// M40 10.8% → 11.9%, MI25 13.6% → 14.7%) with our H100 rows unchanged.
// It also restates the row's counts and note for the algorithm.
func (a *analyzer) winogradFilter(nc *report.NodeCost, n *ir.Node, est *NodeEstimate, agg *aggregate) {
	if est.Class != perf.ClassWinograd || n.Domain != "" || n.OpType != "Conv" {
		return
	}
	k, wt, out := a.winogradFilterKernel(n)
	// Priced as libraryWinograd weighed it (at the stream gap under a
	// replay, as cuDNN timed it): chosen at one gap and priced at
	// another, a replay's time fell where the choice switched.
	a.priceExtraWith(perf.ChoiceOptions(a.planOptions()), k, wt, out, est, agg)
	nc.Counts, nc.Launches = est.Counts, est.Launches
	// Within the cuDNN call, and no host launch of its own: the call is
	// priced by the convolution's dispatch whichever algorithm cuDNN
	// runs, or an eager call whose layer left Winograd for implicit GEMM
	// as the batch grew lost a launch's host time and ran faster
	// (ResNet-50 fp32 on an RTX 4090, batch 2 → 4: −0.12%), as a GEMM's
	// helpers are (report.NodeCost.HelperLaunches).
	nc.LibraryLaunches += k.Launches
	nc.HelperLaunches += k.Launches
	if bytes := est.Bytes(); bytes > 0 {
		nc.ArithmeticIntensity = est.ExecutedFLOPs / bytes
	}
	nc.Note = fmt.Sprintf("Winograd F(%dx%d,3x3): the library's pick over implicit GEMM on this GPU, with its filter-transform kernel", perf.WinogradTile, perf.WinogradTile)
}

// winogradFilterKernel is a Winograd convolution's filter transform
// (winogradFilter), with the bytes it reads and writes.
func (a *analyzer) winogradFilterKernel(n *ir.Node) (k perf.Kernel, read, written float64) {
	sizer := a.sizer(n)
	wt := sizer.Bytes(n.In(1))
	alpha := float64(perf.WinogradTile + 2)
	out := wt * alpha * alpha / 9
	return perf.Kernel{
		Class: perf.ClassElementwise, FLOPs: sizer.Numel(n.In(1)) / 9 * winogradFilterOps(perf.WinogradTile),
		Bytes: wt + out, WorkingSet: wt + out, DRAMBytes: wt,
		Precision: hwdb.FP32, ElemBytes: a.elemBytes(n), Launches: 1, Resident: true,
	}, wt, out
}

// nativeDepthwise is the kernel a runtime whose depthwise convolutions
// are the framework's own at NCHW (hwdb.Runtime.ConvDepthwiseNative:
// PyTorch and its CUDA-graph replay) runs for a plain 2-D depthwise Conv
// (group = input channels) in fp32, TF32 or bf16, or in fp16 where
// PyTorch does not send it to cuDNN (cudnnTakesHalfDepthwise): PyTorch's
// direct kernel, priced by its instruction issue and its bytes
// (perf.DirectConv), not as the library's implicit GEMM. int8,
// tensor-parallel runs and geometries ConvGeomOf does not describe keep
// the library kernel.
func (a *analyzer) nativeDepthwise(nc *report.NodeCost, n *ir.Node, est *NodeEstimate, k perf.Kernel) perf.Kernel {
	rt := a.runtime
	if rt == nil || rt.ConvDepthwiseNative <= 0 || n.Domain != "" || n.OpType != "Conv" || est.Class != perf.ClassConv || a.tp != nil {
		return k
	}
	half := false
	switch k.Precision {
	case hwdb.FP32, hwdb.TF32Tensor, hwdb.BF16, hwdb.BF16Tensor:
	case hwdb.FP16, hwdb.FP16Tensor:
		half = true
	default:
		return k
	}
	sizer := a.sizer(n)
	geom, ok := ConvGeomOf(n, &sizer)
	if !ok || !geom.Depthwise() || geom.K%geom.C != 0 || (half && cudnnTakesHalfDepthwise(geom)) {
		return k
	}
	k.Direct = perf.DirectConv{
		Outputs: float64(geom.N) * float64(geom.K) * float64(geom.P()) * float64(geom.Q()),
		Taps:    geom.R * geom.S,
	}
	k.M, k.N, k.K, k.Batch = 0, 0, 0, 0
	nc.Note = "PyTorch's own depthwise kernel (conv_depthwise2d, not cuDNN): bound by its index arithmetic"
	return k
}

// cudnnTakesHalfDepthwise is PyTorch's test for sending an fp16 NCHW
// depthwise convolution to cuDNN (ConvParams::use_cudnn_depthwise with
// check_cudnn_depthwise_workload_with_filter, cuDNN 8.2 and later): at
// least 32 channels, a square 1×1, 3×3 or 5×5 filter, width at least 7,
// stride 1 or 2. Every stride-1 case passes; stride 2 passes for batch 1
// with a 3×3 or 5×5 filter and otherwise by a table of batch, channels
// and width that PyTorch versions revise (newer ones generate it per GPU
// generation), so stride 2 is taken as cuDNN's. The rest (7×7 filters, as
// ConvNeXt's; fewer than 32 channels; narrow maps) run PyTorch's kernel.
func cudnnTakesHalfDepthwise(g perf.ConvGeom) bool {
	square := g.R == g.S && (g.R == 1 || g.R == 3 || g.R == 5)
	return g.C >= 32 && square && g.W >= 7 && g.StrideH == g.StrideW && (g.StrideW == 1 || g.StrideW == 2)
}

// layoutTransposes adds, to a tensor-core convolution under a runtime
// that hands NCHW tensors to cuDNN (hwdb.Runtime.ConvLayoutTransposes:
// PyTorch and its CUDA-graph replay at PyTorch's default memory format,
// the ONNX Runtime CUDA EP), the three transposes cuDNN runs around its
// NHWC tensor-core kernel: input and filter to NHWC before it, the output
// back to NCHW after (nchwToNhwcKernel, nhwcToNchwKernel). Each reads and
// writes its tensor once; what exceeds L2 goes over DRAM both ways (the
// previous kernel left the input in L2 as far as it fits, and the copy
// stays there for the convolution). A convolution on the vector path
// (fp32 with TF32 off) keeps cuDNN's NCHW kernels, as does a depthwise
// convolution (no tensor-core kernel: a public MobileNetV3 TF32 profile
// spends no tensor-core time in its depthwise layers). A training step's
// gradient convolutions get theirs in train (convRule.backward). It
// returns the bytes of the three copies, which the call's workspace holds
// while it runs (0 when it adds none).
func (a *analyzer) layoutTransposes(nc *report.NodeCost, n *ir.Node, k perf.Kernel, est *NodeEstimate, agg *aggregate) (copies float64) {
	rt := a.runtime
	if rt == nil || rt.ConvLayoutTransposes <= 0 || est.Class != perf.ClassConv || !k.OnTensorCores() || a.tp != nil || k.Direct.Outputs > 0 {
		return 0 // a direct (framework) kernel reads NCHW itself
	}
	if !(n.Domain == "" && n.OpType == "Conv") && !(n.Domain == ir.FusedDomain && n.OpType == ir.OpFusedConv) {
		return 0
	}
	x, w := n.In(0), n.In(1)
	if x == nil || w == nil || x.Shape.Rank() != 4 || len(n.Outputs) == 0 || n.Outputs[0] == nil {
		return 0
	}
	sizer := a.sizer(n)
	if c, ok := sizer.Dim(x, 1); ok && c > 1 && float64(n.AttrInt("group", 1)) == c {
		return 0 // depthwise: one channel per group, no tensor-core NHWC kernel to feed
	}
	if pointwiseNCHWGEMM(&sizer, n, w) {
		return 0
	}
	which := "input, filter and output"
	for _, v := range []*ir.Value{x, w, n.Outputs[0]} {
		b := sizer.Bytes(v)
		if !(b > 0) {
			continue
		}
		rows, cols, ok := transposeMatrix(&sizer, v)
		if v == w && ok && cols == 1 {
			which = "input and output" // a 1×1 filter's KCRS is its KRSC: no transpose runs
			continue
		}
		if v == w && perf.ReformatsFilter(a.gpu, k, a.planOptions()) {
			which = "input and output" // the plan's own reformat orders the filter
			continue
		}
		copies += b
		// The tensor, just written, is read from L2 when it fits, from DRAM
		// whole when not (perf.WarmBytes); the copy's write reaches DRAM
		// once, charged here as the residency model charges every write
		// to its writer (cost/residency.go).
		read := b - perf.WarmBytes(a.gpu, b)
		t := perf.Kernel{
			Class: perf.ClassData, Bytes: 2 * b, WorkingSet: 2 * b, DRAMBytes: read + b,
			Precision: k.Precision, ElemBytes: a.elemBytes(n), Launches: 1, Resident: true,
		}
		if ok {
			t.TransposeElements = perf.TransposeElements(sizer.Numel(v), rows, cols)
		}
		a.priceExtra(t, b, b, est, agg)
		nc.LibraryLaunches++ // within the cuDNN call
	}
	nc.Counts, nc.Launches = est.Counts, est.Launches
	if bytes := est.Bytes(); bytes > 0 {
		nc.ArithmeticIntensity = est.ExecutedFLOPs / bytes
	}
	if nc.Note == "" {
		nc.Note = "with cuDNN's NCHW↔NHWC transposes of " + which + " around its tensor-core kernel (the model's NCHW layout; a channels_last run has none: --runtime pytorch-nhwc)"
	}
	return copies
}

// pointwiseNCHWGEMM reports whether convolution n over filter w is a 1×1,
// stride-1, unpadded, ungrouped one, which cuDNN runs over NCHW tensors
// as a plain GEMM (each image's K×C filter times its C×H·W pixels), with
// no layout transpose: our H200's conv-choice sweep (testdata/measured/
// h200_sxm_conv_choices.csv) runs 9 of its 10 such fp16 NCHW layers of
// ResNet-50 as cuBLAS kernels (nvjet_sm90, a cutlass wmma) alone; the
// tenth (1024→512 at 14², batch 32) ran between transposes.
func pointwiseNCHWGEMM(sizer *RuleCtx, n *ir.Node, w *ir.Value) bool {
	r, ok1 := sizer.Dim(w, 2)
	s, ok2 := sizer.Dim(w, 3)
	if !ok1 || !ok2 || r != 1 || s != 1 || n.AttrInt("group", 1) != 1 {
		return false
	}
	strides, _ := n.AttrInts("strides")
	pads, _ := n.AttrInts("pads")
	for _, v := range strides {
		if v != 1 {
			return false
		}
	}
	for _, v := range pads {
		if v != 0 {
			return false
		}
	}
	return true
}

// transposeMatrix is the matrix cuDNN's layout transpose of 4-D tensor
// v moves per leading index: dim 1 (channels) by the product of dims 2
// and 3 (an image's pixels, a filter's taps); ok is false where a dim is
// unknown.
func transposeMatrix(sizer *RuleCtx, v *ir.Value) (rows, cols float64, ok bool) {
	c, ok1 := sizer.Dim(v, 1)
	h, ok2 := sizer.Dim(v, 2)
	w, ok3 := sizer.Dim(v, 3)
	if !ok1 || !ok2 || !ok3 {
		return 0, 0, false
	}
	return c, h * w, true
}

// libraryFFT is cuDNN's FFT forward algorithm where its algorithm search
// (cudnn.benchmark, onnxruntime's exhaustive search) finds it faster than
// implicit GEMM on Hopper, for a plain 3×3 stride-1 Conv node on the fp32
// vector path (TF32 off) whose plane pads to a 16-, 32- or 64-point
// transform (perf.FFTConv). Our H200's picks run it for VGG-16's and
// ResNet-50's fp32 layers of 256-512 channels at 28×28 and 14×14 and
// price them 4-19% off, where implicit GEMM priced them 22-68% long; at
// 56×56 (64 points) cuDNN multiplies the spectra with
// pointwise_mult_and_sum_complex, not a complex GEMM, priced at its own
// rate for 256 output channels or more (VGG-16's: batch 32 and 128 within
// 2%, where implicit GEMM priced the batch-128 one 22% long); at 7×7
// implicit GEMM wins. Other GPUs keep their algorithms (Winograd before
// Hopper: libraryWinograd): no FFT pick was measured on them. It returns
// the product, rewriting est's class and GEMM view to it; fftTransforms
// adds the transforms after pricing.
func (a *analyzer) libraryFFT(n *ir.Node, est *NodeEstimate, k perf.Kernel) perf.Kernel {
	rt := a.runtime
	if rt == nil || rt.ConvWinograd <= 0 || n.Domain != "" || n.OpType != "Conv" || est.Class != perf.ClassConv ||
		a.tp != nil || k.Precision != hwdb.FP32 || a.gpu == nil || a.gpu.Family() != "Hopper" {
		return k
	}
	sizer := a.sizer(n)
	geom, ok := ConvGeomOf(n, &sizer)
	if !ok {
		return k
	}
	gemm, transforms, ok := perf.FFTConv(geom)
	if !ok {
		return k
	}
	po := perf.ChoiceOptions(a.planOptions()) // a replay runs what its eager twin chose (fftTransforms)
	fft := perf.UnderControl(a.gpu, gemm, po, a.opt.Power).TimeS
	for _, t := range transforms {
		fft += perf.UnderControl(a.gpu, t, po, a.opt.Power).TimeS
	}
	if fft >= perf.UnderControl(a.gpu, k, po, a.opt.Power).TimeS {
		return k
	}
	est.Class = perf.ClassGEMM
	est.ExecutedMACs, est.ExecutedFLOPs = gemm.FLOPs/perf.FMAFLOPs, gemm.FLOPs
	est.M, est.N, est.K, est.Batch = gemm.M, gemm.N, gemm.K, gemm.Batch
	est.fft = &fftPlan{transforms: transforms, workspace: perf.FFTWorkspace(gemm), pointwise: gemm.PointwiseComplexMACs > 0}
	return gemm
}

// fftPlan is what libraryFFT leaves fftTransforms: the transform kernels
// and the spectra (the complex GEMM's operands and result) the call's
// workspace holds.
type fftPlan struct {
	transforms []perf.Kernel
	workspace  float64
	// pointwise: the spectra are multiplied by
	// pointwise_mult_and_sum_complex (64 points), not a complex GEMM.
	pointwise bool
}

// fftTransforms adds, to a convolution libraryFFT ran as FFT, its three
// transforms (the filter's, the input's and the inverse; perf.FFTConv),
// and returns the spectra the call's workspace holds while it runs.
//
// The transforms keep the stream gap (perf.ChoiceOptions) under a CUDA
// graph's replay too, as the choice weighed them: FFT wins over implicit
// GEMM as a layer grows (more images, more channels), so with the
// replay's shorter gap on its four extra kernels a replay's time fell
// where the choice switched (H200, 256→256 at 14×14: batch 22 priced
// 0.14 µs below batch 19; TestLibraryFFT), and physics forbids that. A
// replayed FFT convolution is priced up to four gaps long (about 1.2 µs
// each on Hopper) against a convolution of hundreds of µs.
func (a *analyzer) fftTransforms(nc *report.NodeCost, est *NodeEstimate, agg *aggregate) float64 {
	if est.fft == nil {
		return 0
	}
	choice := perf.ChoiceOptions(a.planOptions())
	for _, t := range est.fft.transforms {
		written := t.Bytes * t.WriteShare
		a.priceExtraWith(choice, t, t.Bytes-written, written, est, agg)
	}
	nc.Counts, nc.Launches = est.Counts, est.Launches
	nc.LibraryLaunches += 4 // within the cuDNN call
	if bytes := est.Bytes(); bytes > 0 {
		nc.ArithmeticIntensity = est.ExecutedFLOPs / bytes
	}
	nc.Note = "FFT (cuDNN's fft2d_r2c, a complex GEMM per frequency, fft2d_c2r): the library's pick over implicit GEMM on this GPU"
	if est.fft.pointwise {
		nc.Note = "FFT (cuDNN's fft2d_r2c_64x64, pointwise_mult_and_sum_complex, fft2d_c2r_64x64): the library's pick over implicit GEMM on this GPU"
	}
	return est.fft.workspace
}
