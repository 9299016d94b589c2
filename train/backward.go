package train

import (
	"maps"
	"slices"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
)

// Backward rules. Each op with a cost rule (cost.RuleKeys) has, keyed by
// the same ir.QualifiedOp name, either a backward rule here or an entry
// in NoBackward saying why it has none; internal/registrytest checks that
// the three tables agree. A backward rule turns the node's forward
// estimate into the kernels its backward pass launches (each priced by
// the same kernel model as the forward) and names the forward tensors its
// backward reads, which training memory keeps alive from the forward pass
// until that backward has run (memory.go). The rules themselves are in
// backward_rules.go and backward_conv.go.

// bwKernel is one backward (or training-only forward) kernel.
type bwKernel struct {
	Name  string // "dgrad", "wgrad", ... shown in notes
	Class perf.KernelClass
	FLOPs float64
	// BytesRead and BytesWritten at the kernel boundary.
	BytesRead, BytesWritten float64
	// GEMM view for the time model, as in cost.NodeEstimate.
	M, N, K, Batch, Steps, InputK int64
	Launches                      float64
	// Grad is which gradient a convolution's backward kernel computes;
	// with Conv set it is priced as cuDNN's backward algorithm search
	// would run it (perf.EstimateConvGrad), not from the GEMM view.
	Grad perf.Grad
	Conv *perf.ConvGeom
	// Library: launched inside a library call (cuDNN's transposes), so a
	// driver launch on the host, not an op dispatch (Backward.LibraryLaunches).
	Library bool
	// Vectorized: a library kernel whose speed does not follow its
	// arithmetic (perf.Kernel.Vectorized), as the node's forward is.
	Vectorized bool
	// TransposeElements: cuDNN's layout transposes, their tile-weighted
	// elements (perf.Kernel.TransposeElements).
	TransposeElements float64
}

// backwardPlan is what a backward rule returns for one node.
type backwardPlan struct {
	Kernels []bwKernel
	// Forward lists kernels that run only in training mode in the forward
	// pass (Dropout's mask, BatchNormalization's batch statistics); they
	// add to forward time.
	Forward []bwKernel
	// Saved are the forward values the backward reads (kept alive until
	// this node's backward runs); SavedExtra are bytes of tensors the
	// forward writes only for backward (masks, indices, statistics).
	Saved      []*ir.Value
	SavedExtra float64
	Note       string
	// Views: the backward hands its inputs their gradients as views of
	// dY, with no kernel (Concat's); they still count where an input's
	// gradients from several readers are summed.
	Views bool
	// LayoutCopyBytes is the workspace each of the node's cuDNN calls
	// holds for the NHWC copies of its NCHW operands (convRule.backward):
	// the forward's input, filter and output, a data gradient's dY, W and
	// dX, a weight gradient's X, dY and dW, the same bytes each time. 0
	// where the runtime hands cuDNN no NCHW tensors.
	LayoutCopyBytes float64
}

// bwCtx is what a backward rule sees.
type bwCtx struct {
	n   *ir.Node
	fwd cost.NodeEstimate
	c   *cost.RuleCtx
	// needGrad reports whether the gradient of a value must be computed
	// (it is a trainable parameter or depends on one).
	needGrad func(v *ir.Value) bool
	// layout: the runtime hands this node's NCHW tensors to cuDNN's NHWC
	// tensor-core kernels, so each gradient convolution runs between
	// layout transposes (hwdb.Runtime.ConvLayoutTransposes).
	layout bool
	// eager: the runtime records autograd op by op (the eager plan:
	// PyTorch and a CUDA graph of it), so an in-place op whose gradient
	// reads its input clones that input first (clonesInput).
	eager bool
}

// needIn reports whether input i needs a gradient.
func (b *bwCtx) needIn(i int) bool { return b.needGrad(b.n.In(i)) }

// bytes of value v at the costed dtype.
func (b *bwCtx) bytes(v *ir.Value) float64 {
	if v == nil {
		return 0
	}
	return b.c.Bytes(v)
}

func (b *bwCtx) numel(v *ir.Value) float64 {
	if v == nil {
		return 0
	}
	return b.c.Numel(v)
}

// outBytes is the bytes of all outputs (the incoming gradients dY).
func (b *bwCtx) outBytes() float64 {
	var s float64
	for _, o := range b.n.Outputs {
		s += b.bytes(o)
	}
	return s
}

// otherBytes is the bytes of every input but i (what a gradient w.r.t.
// input i reads besides dY).
func (b *bwCtx) otherBytes(i int) float64 {
	var s float64
	for j, in := range b.n.Inputs {
		if j != i {
			s += b.bytes(in)
		}
	}
	return s
}

// BackwardRule computes one node's backward plan.
type BackwardRule func(b *bwCtx) backwardPlan

// backwardRules is the backward rule of every op that has one, one entry
// per op; the pointwise ops' rules come from their entries in pointwise
// (backward_rules.go), which the fused epilogues read too.
var backwardRules = map[string]BackwardRule{
	"Conv":                  convRule{geometry: true}.backward,
	"ConvTranspose":         convRule{}.backward,
	"DeformConv":            convRule{}.backward,
	"onnxcost.FusedConv":    convRule{geometry: true, fused: true}.backward,
	"onnxcost.WinogradConv": convRule{geometry: true, fused: true, winograd: true}.backward,

	"Gemm":                 gemmRule{bias: true}.backward,
	"MatMul":               gemmRule{}.backward,
	"onnxcost.FusedGemm":   gemmRule{bias: true, fused: true}.backward,
	"onnxcost.GroupedGemm": groupedGemmBackward,
	"Einsum":               einsumBackward,

	// onnxruntime's FusedMatMul: the same GEMMs, its transposes and alpha
	// taken by cuBLAS.
	"com.microsoft.FusedMatMul": gemmRule{}.backward, "com.microsoft.TransposeMatMul": gemmRule{}.backward,
	"onnxcost.FusedMatMul": gemmRule{}.backward,

	"Attention":               attentionBackward,
	"onnxcost.FusedAttention": attentionBackward,
	"LSTM":                    rnnBackward,
	"GRU":                     rnnBackward,
	"RNN":                     rnnBackward,

	"BatchNormalization":                             batchNormBackward,
	"GroupNormalization":                             normBackward,
	"InstanceNormalization":                          normBackward,
	"LayerNormalization":                             normBackward,
	"RMSNormalization":                               normBackward,
	"SimplifiedLayerNormalization":                   normBackward,
	"onnxcost.LayerNormalization":                    normBackward,
	"onnxcost.RMSNormalization":                      normBackward,
	"onnxcost.SkipLayerNormalization":                normBackward,
	"com.microsoft.SimplifiedLayerNormalization":     normBackward,
	"com.microsoft.SkipLayerNormalization":           normBackward,
	"com.microsoft.SkipSimplifiedLayerNormalization": normBackward,
	"LRN":                       normBackward,
	"MeanVarianceNormalization": normBackward,
	"LpNormalization":           normBackward,

	"Softmax":                   softmaxBackward,
	"LogSoftmax":                softmaxBackward,
	"onnxcost.Softmax":          softmaxBackward,
	"com.microsoft.BiasSoftmax": softmaxBackward,
	"SoftmaxCrossEntropyLoss":   lossBackward,
	"NegativeLogLikelihoodLoss": lossBackward,

	"MaxPool":           maxPoolBackward,
	"GlobalMaxPool":     maxPoolBackward,
	"MaxRoiPool":        maxPoolBackward,
	"AveragePool":       avgPoolBackward(savesInput),
	"GlobalAveragePool": avgPoolBackward(savesShape),
	"LpPool":            avgPoolBackward(savesInputOutput),
	"GlobalLpPool":      avgPoolBackward(savesInputOutput),

	"Dropout":        dropoutBackward,
	"Gather":         gatherBackward,
	"GatherElements": gatherBackward,
	"GatherND":       gatherBackward,

	"onnxcost.FusedElementwise": fusedElementwiseBackward,
	"Add":                       addBackward(onlyBroadcast),
	"Sum":                       addBackward(onlyBroadcast),
	"Sub":                       addBackward(func(i int) bool { return i == 1 }), // -dY for the subtrahend
	"Mean":                      addBackward(func(int) bool { return true }),     // dY/n for every input
	"Mul":                       mulBackward,
	"Div":                       mulBackward,
	"Max":                       mulBackward,
	"Min":                       mulBackward,
	"Where":                     mulBackward,

	// Pure data movement: the backward is the inverse movement of dY;
	// the ops that place by an index input keep it for the backward.
	"Transpose":       movementBackward(false),
	"Concat":          concatBackward,
	"Split":           movementBackward(false),
	"Slice":           movementBackward(false),
	"Pad":             movementBackward(false),
	"DepthToSpace":    movementBackward(false),
	"SpaceToDepth":    movementBackward(false),
	"Trilu":           movementBackward(false),
	"CenterCropPad":   movementBackward(false),
	"ReverseSequence": movementBackward(false),
	"Compress":        movementBackward(true),
	"TopK":            movementBackward(true),
	"ScatterElements": movementBackward(true),
	"ScatterND":       movementBackward(true),
	"Scatter":         movementBackward(true),

	// Broadcasting forwards and reductions: dY broadcast or summed back;
	// the reductions whose gradient depends on the values (max, min,
	// product, norms) read the saved input and output.
	"Expand":          broadcastBackward(false),
	"Tile":            broadcastBackward(false),
	"Resize":          broadcastBackward(false),
	"Upsample":        broadcastBackward(false),
	"ReduceSum":       broadcastBackward(false),
	"ReduceMean":      broadcastBackward(false),
	"CumSum":          broadcastBackward(false),
	"ImageScaler":     broadcastBackward(false),
	"ReduceMax":       broadcastBackward(true),
	"ReduceMin":       broadcastBackward(true),
	"ReduceL1":        broadcastBackward(true),
	"ReduceL2":        broadcastBackward(true),
	"ReduceLogSum":    broadcastBackward(true),
	"ReduceLogSumExp": broadcastBackward(true),
	"ReduceProd":      broadcastBackward(true),
	"ReduceSumSquare": broadcastBackward(true),

	"Reshape":   viewBackward,
	"Flatten":   viewBackward,
	"Squeeze":   viewBackward,
	"Unsqueeze": viewBackward,
	"Identity":  viewBackward,
}

func init() {
	for op, p := range pointwise {
		if _, dup := backwardRules[op]; dup {
			panic("train: two backward rules for " + op)
		}
		backwardRules[op] = p.backward
	}
	// onnxruntime's com.microsoft twins of standard data-movement ops
	// (ir/ops_contrib_standard.go) have the standard op's backward.
	for _, op := range []string{"Trilu", "GatherND", "Pad"} {
		backwardRules["com.microsoft."+op] = backwardRules[op]
	}
	backwardRules["com.microsoft.ExpandDims"] = backwardRules["Unsqueeze"]
	// PyTorch's embedding as onnxruntime exports it: weight and indices
	// in Gather's slots, its gradient the same scatter-add.
	backwardRules["com.microsoft.TorchEmbedding"] = backwardRules["Gather"]
}

// BackwardKeys lists the ops that have a backward rule, sorted.
func BackwardKeys() []string {
	return slices.Sorted(maps.Keys(backwardRules))
}

// Reasons an op has no backward rule. nonDiff ops pass no gradient (their
// output is integer, boolean, piecewise constant or random), so skipping
// them is exact; the others are differentiable but not modelled, and
// training reports their nodes in a warning.
const (
	nonDiff        = "not differentiable: no gradient flows through it, no backward kernel"
	inferenceOnly  = "quantised/integer inference op: not trained through"
	optimizerOp    = "an optimizer op itself: it is the update, not part of the backward pass"
	controlFlowBwd = "control flow: the backward of a body is not modelled; reported as missing"
	notModelled    = "differentiable, but no backward model yet; reported as missing"
)

// inferenceKernel: onnxruntime's fused attention kernels are
// differentiable maths with no gradient kernel, so training through one
// is missing its backward.
const inferenceKernel = "inference-only contrib kernel (onnxruntime registers no gradient for it); reported as missing"

// NoBackward lists ops with a cost rule but no backward rule, with the
// reason (one of the constants above), one entry per op.
var NoBackward = map[string]string{
	"ArgMax": nonDiff, "ArgMin": nonDiff, "And": nonDiff, "Or": nonDiff, "Xor": nonDiff, "Not": nonDiff,
	"Equal": nonDiff, "Greater": nonDiff, "GreaterOrEqual": nonDiff, "Less": nonDiff, "LessOrEqual": nonDiff,
	"IsInf": nonDiff, "IsNaN": nonDiff, "BitShift": nonDiff, "BitwiseAnd": nonDiff, "BitwiseNot": nonDiff,
	"BitwiseOr": nonDiff, "BitwiseXor": nonDiff, "Ceil": nonDiff, "Floor": nonDiff, "Round": nonDiff,
	"Sign": nonDiff, "Mod": nonDiff, "Hardmax": nonDiff, "NonZero": nonDiff, "Shape": nonDiff, "Size": nonDiff,
	"Range": nonDiff, "ConstantOfShape": nonDiff, "EyeLike": nonDiff, "OneHot": nonDiff,
	"RandomNormal": nonDiff, "RandomNormalLike": nonDiff, "RandomUniform": nonDiff, "RandomUniformLike": nonDiff,
	"Bernoulli": nonDiff, "NonMaxSuppression": nonDiff, "BlackmanWindow": nonDiff, "HammingWindow": nonDiff,
	"HannWindow": nonDiff, "MelWeightMatrix": nonDiff, "Optional": nonDiff, "OptionalGetElement": nonDiff,
	"OptionalHasElement": nonDiff, "SequenceAt": nonDiff, "SequenceConstruct": nonDiff, "SequenceEmpty": nonDiff,
	"SequenceErase": nonDiff, "SequenceInsert": nonDiff, "SequenceLength": nonDiff, "SplitToSequence": nonDiff,

	"ConvInteger": inferenceOnly, "QLinearConv": inferenceOnly, "MatMulInteger": inferenceOnly,
	"QLinearMatMul": inferenceOnly, "com.microsoft.QLinearAdd": inferenceOnly, "QuantizeLinear": inferenceOnly,
	"DequantizeLinear": inferenceOnly, "DynamicQuantizeLinear": inferenceOnly,
	// onnxruntime's QOperator ops (cost/rules_qlinear.go).
	"com.microsoft.QLinearMul": inferenceOnly, "com.microsoft.QLinearSigmoid": inferenceOnly,
	"com.microsoft.QLinearLeakyRelu": inferenceOnly, "com.microsoft.QLinearWhere": inferenceOnly,
	"com.microsoft.QLinearSoftmax": inferenceOnly, "com.microsoft.QLinearAveragePool": inferenceOnly,
	"com.microsoft.QLinearGlobalAveragePool": inferenceOnly, "com.microsoft.QLinearConcat": inferenceOnly,
	"com.microsoft.QGemm": inferenceOnly, "com.microsoft.QLinearConv": inferenceOnly, "com.microsoft.NhwcMaxPool": inferenceOnly,
	"com.microsoft.MatMulIntegerToFloat": inferenceOnly, "com.microsoft.DynamicQuantizeMatMul": inferenceOnly,
	"com.microsoft.QAttention": inferenceOnly, "com.microsoft.QEmbedLayerNormalization": inferenceOnly,
	"com.microsoft.QMoE": inferenceOnly, "com.microsoft.DynamicQuantizeLSTM": inferenceOnly,
	// onnxruntime's CPU fusions of an inference graph it saved.
	"com.microsoft.FusedConv": inferenceKernel, "com.microsoft.FusedGemm": inferenceKernel,
	"com.microsoft.GemmFastGelu": inferenceKernel, "com.microsoft.MoE": inferenceKernel,
	"com.microsoft.SparseAttention": inferenceKernel, "com.microsoft.DecoderMaskedMultiHeadAttention": inferenceKernel,
	"com.microsoft.DecoderMaskedSelfAttention": inferenceKernel, "com.microsoft.RelativePositionBias": inferenceKernel,
	"com.microsoft.GatedRelativePositionBias": inferenceKernel,
	// onnxruntime's integer and tensor contrib ops.
	"com.microsoft.MatMulInteger16": inferenceOnly, "com.microsoft.MulInteger": inferenceOnly,
	"com.microsoft.ReduceSumInteger": inferenceOnly, "com.microsoft.QLinearReduceMean": inferenceOnly,
	"com.microsoft.Range": nonDiff, "com.microsoft.UnfoldTensor": notModelled,
	"com.microsoft.NGramHashMapping": nonDiff, "com.microsoft.VarlenNGramHashMapping": nonDiff,
	"com.microsoft.NGramRepeatBlock": nonDiff, "com.microsoft.VarlenCausalConvWithState": inferenceKernel,
	"com.microsoft.MaxpoolWithMask": notModelled, "com.microsoft.ConvTransposeWithDynamicPads": notModelled,
	"com.microsoft.CropAndResize": notModelled, "com.microsoft.CDist": notModelled,
	"com.microsoft.QuantizeWithOrder": inferenceOnly, "com.microsoft.DequantizeWithOrder": inferenceOnly,
	"com.microsoft.QOrderedMatMul": inferenceOnly, "com.microsoft.QOrderedGelu": inferenceOnly,
	"com.microsoft.QOrderedLayerNormalization": inferenceOnly, "com.microsoft.QOrderedLongformerAttention": inferenceOnly,
	"com.microsoft.QOrderedAttention": inferenceOnly,
	// onnxruntime's older attention ops, unfused on CUDA.
	"com.microsoft.DecoderAttention": inferenceKernel, "com.microsoft.LongformerAttention": inferenceKernel,
	// onnxruntime's linear-attention hybrid ops (Qwen3.5's Gated DeltaNet layers).
	"com.microsoft.GatedDeltaNet": inferenceKernel, "com.microsoft.CausalConvWithState": inferenceKernel,
	"com.microsoft.GatedRMSNorm": inferenceKernel, "com.microsoft.GatedAdd": inferenceKernel,
	"com.microsoft.PagedAttention": inferenceKernel, "com.microsoft.GemmFloat8": inferenceKernel,
	// onnxruntime's packing mode for BERT serving (padding removed between the embedding and the output).
	"com.microsoft.RemovePadding": inferenceKernel, "com.microsoft.RestorePadding": inferenceKernel,
	"com.microsoft.PackedAttention": inferenceKernel, "com.microsoft.PackedMultiHeadAttention": inferenceKernel,
	// onnxruntime-genai's fused int4 projections, block-scaled FP4/FP8 weights, M-RoPE, LinearAttention.
	"com.microsoft.MatMulNBitsQkv": inferenceOnly, "com.microsoft.MatMulNBitsMlp": inferenceOnly,
	"com.microsoft.MatMulBlockQuantizedFp4Weight": inferenceOnly, "com.microsoft.MatMulBlockQuantizedFp8Weight": inferenceOnly,
	"com.microsoft.MRotaryEmbedding": inferenceKernel, "com.microsoft.LinearAttention": inferenceKernel,
	"com.microsoft.LinearAttentionGate":   inferenceKernel,
	"com.microsoft.FusedMatMulActivation": inferenceKernel, "com.microsoft.NhwcFusedConv": inferenceKernel,
	"com.microsoft.Rfft": notModelled, "com.microsoft.Irfft": notModelled,
	"com.microsoft.ComplexMul": notModelled, "com.microsoft.ComplexMulConj": notModelled,
	// onnxruntime's fused training dropouts (their gradients are onnxruntime training's, not modelled here).
	"com.microsoft.BiasDropout": notModelled, "com.microsoft.BitmaskBiasDropout": notModelled,
	"com.microsoft.BitmaskDropout": notModelled, "com.microsoft.GemmaRotaryEmbedding": inferenceKernel,
	"com.microsoft.EngramGate": inferenceKernel, "com.microsoft.Inverse": notModelled, "com.microsoft.IsAllFinite": nonDiff,
	// onnxruntime's Stable Diffusion fusions (an inference graph for CUDA).
	"com.microsoft.GroupNorm": inferenceKernel, "com.microsoft.SkipGroupNorm": inferenceKernel, "com.microsoft.NhwcConv": inferenceKernel,
	"com.microsoft.BiasSplitGelu": inferenceKernel, "com.microsoft.BiasAdd": inferenceKernel,
	// Weight-only int4/int8 kernels: the packed weights are constants.
	"com.microsoft.MatMulNBits": inferenceOnly, "com.microsoft.GatherBlockQuantized": inferenceOnly, "com.microsoft.MatMulBnb4": inferenceOnly,

	"ai.onnx.preview.training.Adagrad": optimizerOp, "ai.onnx.preview.training.Adam": optimizerOp,
	"ai.onnx.preview.training.Momentum": optimizerOp,

	"If": controlFlowBwd, "Loop": controlFlowBwd, "Scan": controlFlowBwd,
	// Twins of standard ops in onnxruntime's domain (ir/ops_contrib_standard.go).
	"com.microsoft.QuantizeLinear": inferenceOnly, "com.microsoft.DequantizeLinear": inferenceOnly,
	"com.microsoft.GridSample": notModelled,
	// onnxruntime's generation loops: token ids out, picked by top-k or a
	// draw, so no gradient reaches the decoder through them.
	"com.microsoft.BeamSearch": nonDiff, "com.microsoft.WhisperBeamSearch": nonDiff,
	"com.microsoft.GreedySearch": nonDiff, "com.microsoft.Sampling": nonDiff,

	"com.microsoft.GroupQueryAttention": inferenceKernel, "com.microsoft.MultiHeadAttention": inferenceKernel,
	"com.microsoft.Attention": inferenceKernel, "com.microsoft.RotaryEmbedding": inferenceKernel,
	"com.microsoft.EmbedLayerNormalization": inferenceKernel,

	"AffineGrid": notModelled, "Col2Im": notModelled, "DFT": notModelled, "STFT": notModelled, "Det": notModelled,
	"GridSample": notModelled, "RoiAlign": notModelled, "MaxUnpool": notModelled,
}

// missingBackward reports whether reason means a differentiable op whose
// backward is not costed (reported), as opposed to one with no gradient
// at all.
func missingBackward(reason string) bool {
	return reason == controlFlowBwd || reason == notModelled || reason == inferenceKernel
}

// gemmKernel is a GEMM-class backward kernel of M×N×K (batch b) reading r
// and writing w bytes.
func gemmKernel(name string, cl perf.KernelClass, m, n, k, batch int64, r, w float64) bwKernel {
	if batch < 1 {
		batch = 1
	}
	return bwKernel{Name: name, Class: cl, FLOPs: 2 * float64(m) * float64(n) * float64(k) * float64(batch),
		BytesRead: r, BytesWritten: w, M: m, N: n, K: k, Batch: batch, Launches: 1}
}

// weightGrad marks k a weight gradient (perf.GradWeight): its K is the
// reduction over the forward's rows, the batch's tokens, which the time
// model must know so that a bigger batch never splits it deeper.
func (k bwKernel) weightGrad() bwKernel {
	k.Grad = perf.GradWeight
	return k
}
