package passes

// The pass table, in run order. One line per pass; adding a pass is adding
// its line here (and its file). After names the passes that must precede
// it and Before those that must follow it, when both are enabled, so a new
// pass states its own constraints both ways; CheckOrder (run at init, so a
// misplaced line fails every test) holds the table to them. InferenceOnly
// marks rewrites a training cost must not see.
//
// Order, and why:
//   - cleanup first: removing Identity/Dropout and folding shape
//     arithmetic exposes the producer→consumer chains the fusions match.
//   - fold-bn before the epilogue fusions: a BatchNormalization between a
//     Conv and its Relu would otherwise stop the Conv+Relu match.
//   - pattern recognisers (LayerNorm/GELU/softmax decompositions and
//     attention, passes part 2) go before fuse-conv/fuse-gemm, so that a
//     GEMM epilogue can absorb a recognised Gelu and fuse-gemm never eats
//     the MatMul that starts an attention block.
//   - elementwise-chain fusion (part 2) after the epilogue fusions: what is
//     left of the pointwise ops after the GEMM/conv epilogues took theirs.
//   - winograd last: it rewrites the convolution kernels the epilogue
//     fusion has already settled (a FusedConv keeps its epilogue).
func init() {
	table = []Pass{
		{Name: "cleanup", Doc: "remove Identity and inference Dropout, fold constant shape arithmetic into initializers, drop dead nodes", Run: cleanup},
		{Name: "fold-constants", Doc: "a node whose inputs are all constants (initializers, Constants) -> a Constant computed when the engine is built (a causal mask's Trilu, rotary Cos/Sin tables, a weight's Transpose): onnxruntime's ConstantFolding and TensorRT's build-time folding; not QuantizeLinear/DequantizeLinear or random ops", Run: foldConstants, After: []string{"cleanup"}, InferenceOnly: true},
		{Name: "split-conv-bias", Doc: "Conv(x, W, b) -> Add(Conv(x, W), b): the bias as its own broadcast kernel, as PyTorch eager runs it (eager and inductor plans only)", Run: splitConvBias, After: []string{"cleanup"}, Variant: true},
		{Name: "fold-bn", Doc: "fold an inference BatchNormalization into the Conv or Gemm before it", Run: foldBN, After: []string{"cleanup"}, InferenceOnly: true},
		{Name: "bn-pointwise", Doc: "inference BatchNormalization -> Mul(x, scale) then Add(shift), per channel: torch.compile's decomposition, which fuse-elementwise joins to the ReLU and residual add after it (inductor plan only)", Run: bnPointwise, After: []string{"cleanup", "split-conv-bias"}, Before: []string{"fuse-elementwise"}, InferenceOnly: true, Variant: true},
		{Name: "fuse-layernorm", Doc: "LayerNorm decomposition (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add) -> one LayerNormalization", Run: fuseLayerNorm, After: []string{"cleanup"}},
		{Name: "fuse-rmsnorm", Doc: "RMSNorm decomposition (Pow, ReduceMean, Add, Sqrt, Div or rsqrt (Reciprocal, Div(1, ·), Pow(·, -0.5)) + Mul, Mul; HF's float32 Cast pair) -> one RMSNormalization", Run: fuseRMSNorm, After: []string{"cleanup"}},
		{Name: "fuse-layernorm-ort", Doc: "fuse-layernorm for the form onnxruntime's LayerNormFusion takes: the square as Pow(d, 2) and the affine Mul and Add present (onnxruntime plan only)", Run: fuseLayerNormORT, After: []string{"cleanup"}, Variant: true},
		{Name: "fuse-rmsnorm-ort", Doc: "fuse-rmsnorm for the form onnxruntime's SimplifiedLayerNormFusion takes: Pow(x, 2), ReduceMean, Add, Sqrt, Div(x, ·) and the scale Mul; not torch.rsqrt's Reciprocal (onnxruntime plan only)", Run: fuseRMSNormORT, After: []string{"cleanup"}, Variant: true},
		{Name: "fuse-rotary", Doc: "rotary embedding as rotate_half (Slice, Slice, Neg, Concat, Mul, Mul, Add) -> one Rotary kernel", Run: fuseRotary, After: []string{"cleanup"}},
		{Name: "fuse-gelu", Doc: "GELU decomposition, erf or tanh form -> one Gelu", Run: fuseGelu, After: []string{"cleanup"}, Before: []string{"fuse-gemm"}},
		{Name: "fuse-gelu-ort", Doc: "fuse-gelu for the forms onnxruntime's GeluFusion and FastGeluFusion take: Div(x, sqrt 2) erf GELUs, and tanh GELUs with x^3 as Pow(x, 3) and the 0.5 applied to x first (Hugging Face's NewGELU); torch.onnx's F.gelu(approximate='tanh'), x*x*x, stays apart (onnxruntime plan only)", Run: fuseGeluORT, After: []string{"cleanup"}, Before: []string{"fuse-gemm"}, Variant: true},
		{Name: "fuse-softmax", Doc: "softmax written as Exp / ReduceSum (after an optional max subtraction) -> one Softmax", Run: fuseSoftmax, After: []string{"cleanup"}},
		{Name: "fuse-attention", Doc: "MatMul(Q,Kt) -> scale -> mask -> Softmax -> MatMul(.,V) -> one FusedAttention that keeps the scores on chip", Run: fuseAttention, After: []string{"cleanup", "fuse-softmax"}, Before: []string{"fuse-gemm"}},
		{Name: "fuse-attention-ort", Doc: "fuse-attention for onnxruntime's online AttentionFusion: only blocks whose Q, K, V are projections of a LayerNormalization read by one Add and three MatMuls (post-LN, BERT-like) (onnxruntime plan only)", Run: fuseAttentionORT, After: []string{"fuse-softmax", "fuse-layernorm", "fuse-layernorm-ort"}, Before: []string{"fuse-attention-heads", "fuse-elementwise"}, Variant: true},
		{Name: "fuse-attention-sdpa", Doc: "an export of F.scaled_dot_product_attention (√scale on Q and on Kᵀ, MatMul, [mask Add], Softmax, MatMul) -> one FusedAttention: the one kernel eager PyTorch runs for the call (eager plan only)", Run: fuseAttentionSDPA, After: []string{"fuse-softmax"}, Before: []string{"fuse-attention-heads", "fuse-elementwise"}, Variant: true},
		{Name: "fuse-attention-heads", Doc: "head-split Reshape/Transpose of Q, K, V and the head-merge Transpose/Reshape -> absorbed into FusedAttention (packed [B, L, H*d] layout, num_heads)", Run: fuseAttentionHeads, After: []string{"fuse-attention"}},
		{Name: "fuse-attention-seqfirst", Doc: "sequence-first head split of torch.nn.MultiheadAttention (Reshape [L, N·H, d], Transpose) and its merge Transpose -> absorbed into FusedAttention (packed [L, N, H*d] layout, num_heads)", Run: fuseAttentionSeqFirst, After: []string{"fuse-attention"}},
		{Name: "fuse-attention-packed", Doc: "Split or three Slices of a packed Q|K|V projection (GPT-2's c_attn, MultiheadAttention's in_proj) -> absorbed into the FusedAttention it feeds (qkv_packed)", Run: fuseAttentionPacked, After: []string{"fuse-attention-heads", "fuse-attention-seqfirst"}},
		{Name: "fuse-attention-sink", Doc: "batch_first MultiheadAttention: the Transpose before the packed in_proj moved through the position-wise projection into the FusedAttention's perms (ViT)", Run: fuseAttentionSink, After: []string{"fuse-attention-packed"}},
		{Name: "fuse-attention-layout", Doc: "Transposes (and GQA's Unsqueezes) between head-split inputs and attention, and the output Transpose -> absorbed into FusedAttention as q/k/v/o_perm (LLaMA: the rotary output read in [B, L, H, d])", Run: fuseAttentionLayout, After: []string{"fuse-attention-heads", "fuse-attention-seqfirst", "fuse-attention-packed"}},
		{Name: "fuse-bias-softmax", Doc: "additive mask Add -> Softmax over the last axis -> one Softmax(x, mask): onnxruntime's BiasSoftmaxFusion on CUDA, for the attention its AttentionFusion leaves (onnxruntime plan only)", Run: fuseBiasSoftmax, After: []string{"fuse-softmax", "fuse-attention", "fuse-attention-ort", "fuse-attention-sdpa"}, Before: []string{"fuse-elementwise"}, Variant: true},
		{Name: "fuse-silu", Doc: "Mul(x, Sigmoid(x)) -> one SiLU kernel (QuickGelu at alpha 1): PyTorch's F.silu, which torch.onnx writes as Sigmoid and Mul (eager plan only)", Run: fuseSilu, After: []string{"cleanup", "fuse-gelu"}, Before: []string{"fuse-conv", "fuse-gemm", "fuse-gemm-bias", "fuse-elementwise"}, Variant: true},
		{Name: "fuse-quickgelu-ort", Doc: "Mul(x, Sigmoid(x)) or Mul(x, Sigmoid(Mul(x, alpha))) -> one QuickGelu kernel: onnxruntime's QuickGeluFusion (alpha 1: SiLU, LLaMA's MLP gate) (onnxruntime plan only)", Run: fuseQuickGelu, After: []string{"cleanup", "fuse-gelu", "fuse-gelu-ort"}, Before: []string{"fuse-conv", "fuse-gemm", "fuse-elementwise"}, Variant: true},
		{Name: "fuse-slice-split-ort", Doc: "Slices and one-index Gathers that cut one tensor along an axis into parts covering it -> one Split (a scalar index's part squeezed by a view): onnxruntime's GatherSliceToSplitFusion (rotate_half's two halves in every rotary embedding, qkv.unbind(0)) (onnxruntime plan only)", Run: fuseSliceSplit, After: []string{"cleanup", "fuse-rotary"}, Before: []string{"fuse-elementwise"}, Variant: true},
		{Name: "fuse-qdq", Doc: "DequantizeLinear inputs -> Conv/MatMul (-> Relu) -> QuantizeLinear -> one QLinearConv/QLinearMatMul, the int8 kernel (no Q/DQ kernels left around it)", Run: fuseQDQ, After: []string{"cleanup"}},
		{Name: "fuse-qdq-add", Doc: "DequantizeLinear, DequantizeLinear -> Add (-> Relu) -> QuantizeLinear -> one com.microsoft.QLinearAdd, the int8 residual add", Run: fuseQDQAdd, After: []string{"cleanup", "fuse-qdq"}},
		{Name: "fold-conv-add", Doc: "Conv -> Add of a per-channel constant -> the convolution's bias (one FusedConv with no epilogue): onnxruntime's ConvAddFusion, which every provider runs (onnxruntime plan only)", Run: foldConvAdd, After: []string{"fold-bn", "fuse-qdq", "fuse-qdq-add"}, Before: []string{"winograd"}, Variant: true},
		{Name: "fuse-conv-act", Doc: "fp32 Conv (+bias) -> Relu, or (+residual Add) -> Relu -> one FusedConv kernel: the CUDA ConvActivationFusion of onnxruntime before its cuDNN-frontend convolutions (PR #19470, 2024), which no longer fuse; in no plan (--passes; not at a half dtype)", Run: fuseConvAct, After: []string{"fold-bn", "fuse-qdq", "fuse-qdq-add"}, Before: []string{"winograd"}, Variant: true, Float32Only: true},
		{Name: "fuse-conv", Doc: "Conv (+bias) (+residual Add) (+activation) (+MaxPool/AveragePool) -> one FusedConv kernel", Run: fuseConv, After: []string{"fold-bn", "fuse-qdq", "fuse-qdq-add"}},
		{Name: "fuse-gemm-bias", Doc: "Gemm/MatMul (+bias) -> one FusedGemm kernel, no activation or residual: PyTorch's addmm, onnxruntime's MatMulAddFusion (eager, inductor and onnxruntime plans only)", Run: fuseGemmBias, After: []string{"fold-bn", "fuse-qdq", "fuse-gelu", "fuse-gelu-ort", "fuse-attention"}, Before: []string{"fuse-qkv", "fuse-skip-layernorm", "fuse-elementwise"}, Variant: true},
		{Name: "fuse-gemm-bias-ort", Doc: "fuse-gemm-bias under onnxruntime's MatMulAddFusion conditions: a MatMul with a 2-D weight, and, for an input of rank 3 or more, only when onnxruntime knew every dim of that input as a number when it built the graph (a dynamic-axis export keeps its bias Adds) (onnxruntime plan only)", Run: fuseGemmBiasORT, After: []string{"fold-bn", "fuse-qdq", "fuse-gelu", "fuse-gelu-ort", "fuse-attention"}, Before: []string{"fuse-qkv", "fuse-skip-layernorm", "fuse-elementwise"}, Variant: true},
		{Name: "fuse-bias-gelu-ort", Doc: "Add of a 1-D bias read only by a GELU -> one Gelu kernel with the bias: onnxruntime's BiasGeluFusion, for the bias Adds MatMulAddFusion left (onnxruntime plan only)", Run: fuseBiasGeluORT, After: []string{"fuse-gelu", "fuse-gelu-ort", "fuse-gemm-bias", "fuse-gemm-bias-ort"}, Before: []string{"fuse-elementwise"}, Variant: true},
		{Name: "fuse-matmul-scale", Doc: "Transpose of the last two axes / Mul or Div by a scalar constant -> MatMul -> Mul or Div by a scalar constant -> one FusedMatMul(alpha, transA, transB): onnxruntime's MatmulTransposeFusion and MatMulScaleFusion, one cuBLAS call (onnxruntime plan only)", Run: fuseMatMulScale, After: []string{"fuse-softmax", "fuse-attention", "fuse-attention-ort", "fuse-attention-sdpa", "fuse-bias-softmax", "fuse-gemm-bias", "fuse-gemm-bias-ort"}, Before: []string{"fuse-elementwise"}, Variant: true},
		{Name: "fuse-gemm", Doc: "Gemm/MatMul (+bias) (+residual Add) (+activation) -> one FusedGemm kernel", Run: fuseGemm, After: []string{"fold-bn", "fuse-qdq"}},
		{Name: "fuse-qkv", Doc: "GEMMs reading the same activation with constant weights (the Q, K, V projections) -> one GroupedGemm over the packed weights", Run: fuseQKV, After: []string{"fuse-gemm"}},
		{Name: "fuse-qkv-ort", Doc: "fuse-qkv for onnxruntime's Attention op: only the Q, K, V projections of a post-LN LayerNormalization (onnxruntime plan only)", Run: fuseQKVORT, After: []string{"fuse-gemm-bias", "fuse-gemm"}, Before: []string{"fuse-skip-layernorm"}, Variant: true},
		{Name: "fuse-skip-layernorm", Doc: "residual Add(x, skip) -> LayerNormalization -> one SkipLayerNormalization that also writes the sum when it is read elsewhere", Run: fuseSkipLayerNorm, After: []string{"fuse-layernorm", "fuse-gemm"}},
		{Name: "fuse-skip-layernorm-ort", Doc: "fuse-skip-layernorm under onnxruntime's SkipLayerNormFusion conditions: the Add read only by the LayerNormalization (post-LN blocks; a pre-LN block keeps its Add), rank-3 addends with the same dims as onnxruntime knew them when it built the graph, no sum output; a bias Add left before an addend joins as the fifth input (onnxruntime plan only)", Run: fuseSkipLayerNormORT, After: []string{"fuse-layernorm", "fuse-layernorm-ort", "fuse-gemm", "fuse-gemm-bias", "fuse-gemm-bias-ort", "fuse-qkv-ort"}, Variant: true},
		{Name: "fuse-elementwise", Doc: "maximal chains of elementwise/broadcast ops, each intermediate read once -> one FusedElementwise kernel", Run: fuseElementwise, After: []string{"fuse-layernorm", "fuse-layernorm-ort", "fuse-rmsnorm", "fuse-rmsnorm-ort", "fuse-rotary", "fuse-gelu", "fuse-gelu-ort", "fuse-softmax", "fuse-attention", "fuse-conv", "fuse-gemm", "fuse-skip-layernorm"}},
		{Name: "winograd", Doc: "3x3 stride-1 dilation-1 group-1 convolutions with enough channels -> WinogradConv F(2x2,3x3) or F(4x4,3x3)", Run: winograd, After: []string{"fuse-conv"}},
	}
	if err := CheckOrder(table); err != nil {
		panic("passes: " + err.Error())
	}
}
