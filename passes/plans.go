package passes

import (
	"fmt"
	"slices"
	"strings"
)

// Plan is what one runtime does to a graph before it runs it, written as
// the passes that model its own fusions: each runtime is priced on the
// kernels it launches, not on one shared fused graph.
type Plan struct {
	Name string
	Doc  string
	// Passes run in table order. Nil is every default pass (the fused
	// plan); empty is none (the graph as read).
	Passes []string
}

// The plans, one per kind of runtime (hwdb/runtimes.yaml names each
// runtime's). What each leaves out is as important as what it takes:
//
//   - eager (PyTorch eager, and a CUDA graph of it): one kernel per
//     module op. The ONNX decompositions of ops PyTorch runs as one
//     kernel (LayerNorm, GELU, SiLU, softmax, torch.rsqrt) are
//     recomposed, but not a tanh GELU written in Python with torch.pow
//     (fuse-gelu-eager: Hugging Face's NewGELUActivation runs as its 8
//     ops); a linear layer's
//     bias joins its GEMM (addmm); a convolution's bias becomes its own
//     kernel (ATen adds it after cuDNN); avg_pool2d's padding, which
//     torch.onnx writes as a Pad, is the pool's own (fold-pad-pool);
//     BatchNormalization, activations, residual adds and pooling stay
//     separate; an explicit q·kᵀ,
//     softmax, ·v module runs its three kernels, while a call of
//     scaled_dot_product_attention, which torch.onnx exports with √scale
//     on both Q and Kᵀ, is one fused kernel (fuse-attention-sdpa); no
//     RMSNorm or rotary recomposition (HF's eager modules run their
//     parts).
//   - inductor (torch.compile): eager's kernels with pointwise chains
//     fused into Triton kernels, RMSNorm and rotary as one kernel each,
//     attention matched to SDPA (Inductor's fuse_attention patterns);
//     GEMMs and convolutions stay library calls with only the bias in
//     them. An inference BatchNormalization is decomposed into its
//     per-channel scale and shift and fused with the pointwise chain
//     after the convolution (bn-pointwise; freezing, which would fold it
//     into the weights, is off by default).
//   - onnxruntime (CUDA execution provider, default optimisation level):
//     no-op nodes removed as its basic level removes them, a Slice only
//     when its bounds are 0 and INT64_MAX (EliminateSlice: cleanup-ort),
//     nodes computed from constants alone computed when the session is
//     built (ConstantFolding: fold-constants), x+0, x·1 and x/1 removed
//     (NoopElimination: eliminate-noop-ort), nodes computing the same
//     value merged (CommonSubexpressionElimination: eliminate-common-ort),
//     BN folded, a zero Pad
//     folded into the Conv or pooling that reads it (PadFusion:
//     fold-pad-ort), LayerNorm, RMSNorm and GELU decompositions fused only in
//     the forms its LayerNormFusion, SimplifiedLayerNormFusion and
//     GeluFusion take (fuse-layernorm-ort, fuse-rmsnorm-ort, fuse-gelu-ort:
//     the dynamo exporter's Reciprocal RMSNorm and the tanh GELUs but
//     Hugging Face's NewGELU stay apart, and so does a softmax
//     written as Exp/ReduceSum; casts to their input's dtype removed
//     first, as CastElimination does: eliminate-cast-ort), SkipLayerNorm where the
//     residual sum has no other reader (post-LN; fuse-skip-layernorm-ort),
//     attention as separate kernels (its online AttentionFusion fused
//     none of our exports in onnxruntime 1.23.2, post-LN BERT included:
//     attention_ort.go), the mask Add and Softmax as one
//     (BiasSoftmaxFusion, fuse-bias-softmax), a MatMul with the transposes
//     of its operands' last two axes and the scalar scales around it as
//     one FusedMatMul (MatmulTransposeFusion, MatMulScaleFusion:
//     fuse-matmul-scale), x·sigmoid(α·x) and SiLU as one QuickGelu
//     (QuickGeluFusion: fuse-quickgelu-ort), Slices that together cut a
//     tensor into parts as one Split (GatherSliceToSplitFusion:
//     fuse-slice-split-ort),
//     no convolution epilogue: ConvActivationFusion returns nothing for a
//     node on the CUDA provider since the cuDNN-frontend convolutions
//     (microsoft/onnxruntime PR #19470, 2024; conv_activation_fusion.cc:
//     'if (node_ep == kCudaExecutionProvider) return std::nullopt'), so a
//     convolution's activation and residual add run as their own kernels
//     (the bias still folds in: ConvAddFusion, BN folding; the older
//     FusedConv is the fuse-conv-act pass, for --passes),
//     a MatMul with its bias (MatMulAddFusion; GemmActivationFusion is a
//     CPU-only rule; its CUDA Gemm writes the bias into the output with
//     a cuBLAS call of its own before the product: perf.Kernel.BiasPassBytes); no generic elementwise-chain fusion and no pooling
//     fusion. The shape-dependent ones (MatMul+bias, SkipLayerNorm) see
//     the shapes onnxruntime had when it built the graph, dims symbolic
//     in the file still symbolic (ORTSession, set by the pipeline):
//     a dynamic-axis export keeps the bias Adds MatMulAddFusion cannot
//     take, joined to a GELU (BiasGeluFusion: fuse-bias-gelu-ort) or to
//     a SkipLayerNormalization where they can be.
//   - fused (TensorRT): every onnxcost fusion, constant subgraphs
//     computed at build time (fold-constants) included. Eager PyTorch and
//     Inductor (no freezing) compute them on every call.
//
// Only the fused plan substitutes Winograd for 3×3 convolutions as a
// pass. Under the other plans a convolution stays Conv, and the cost
// model prices cuDNN's own algorithm choice where the runtime calls it
// (hwdb.Runtime.ConvWinograd, cost/convalgo.go): Winograd on GPUs whose
// library has the kernels, implicit GEMM on Hopper, whose runs did not
// behave like Winograd (VGG-16 fp32 batch 32 took 23.4 ms in a CUDA-graph
// replay, testdata/measured/h100_sxm5_pytorch.csv, where the implicit-GEMM
// convolutions price 22.4 ms and Winograd 14.1 ms).
var plans = []Plan{
	{Name: "fused", Doc: "every onnxcost fusion: what a TensorRT engine runs", Passes: nil},
	{Name: "unfused", Doc: "the graph as read: one kernel per node", Passes: []string{}},
	{Name: "eager", Doc: "PyTorch eager: one kernel per module op (LayerNorm, GELU, SiLU, softmax recomposed; a scaled_dot_product_attention call as one attention kernel; linear bias in the GEMM; convolution bias and BatchNorm as their own kernels)",
		Passes: []string{"cleanup", "split-conv-bias", "fold-pad-pool", "fuse-layernorm", "fuse-gelu-eager", "fuse-silu", "fuse-rsqrt", "fuse-softmax", "fuse-attention-sdpa", "fuse-gemm-bias"}},
	{Name: "inductor", Doc: "torch.compile (Inductor): eager's kernels with pointwise chains, RMSNorm and rotary fused into Triton kernels and attention matched to SDPA; GEMMs and convolutions stay library calls",
		Passes: []string{"cleanup", "split-conv-bias", "fold-pad-pool", "bn-pointwise", "fuse-layernorm", "fuse-rmsnorm", "fuse-rotary", "fuse-gelu", "fuse-softmax",
			"fuse-attention", "fuse-attention-heads", "fuse-attention-seqfirst", "fuse-attention-packed", "fuse-attention-sink", "fuse-attention-layout",
			"fuse-gemm-bias", "fuse-elementwise"}},
	{Name: "onnxruntime", Doc: "onnxruntime's CUDA execution provider at its default optimisation level: constant subgraphs computed when the session is built, no-op arithmetic removed and common subexpressions merged, BN and zero Pads folded, norm/GELU/QuickGelu (SiLU) fusions, SkipLayerNorm, attention as separate kernels with its mask Add + Softmax as one, MatMul+bias (with the shapes it knows when it builds the graph: a dynamic-axis export keeps its bias Adds, joined to a GELU or a SkipLayerNorm where it can), MatMul with its transposes and scalar scales; a convolution's activation and residual add as their own kernels; no elementwise-chain or pooling fusion",
		Passes: []string{"cleanup-ort", "eliminate-cast-ort", "eliminate-noop-ort", "eliminate-common-ort", "fold-constants", "fold-bn", "fold-pad-ort", "fuse-layernorm-ort", "fuse-rmsnorm-ort", "fuse-gelu-ort",
			"fuse-bias-softmax", "fuse-quickgelu-ort", "fuse-slice-split-ort", "fold-conv-add", "fuse-gemm-bias-ort", "fuse-bias-gelu-ort", "fuse-matmul-scale", "fuse-skip-layernorm-ort"}},
}

// Plans lists the plans, the fused one first.
func Plans() []Plan { return slices.Clone(plans) }

// PlanNames lists the plan names in the order Plans gives them.
func PlanNames() []string {
	out := make([]string, len(plans))
	for i, p := range plans {
		out[i] = p.Name
	}
	return out
}

// LookupPlan returns the named plan, or an error listing the plans.
func LookupPlan(name string) (Plan, error) {
	for _, p := range plans {
		if p.Name == name {
			return p, nil
		}
	}
	return Plan{}, fmt.Errorf("unknown plan %q (plans: %s)", name, strings.Join(PlanNames(), ", "))
}

// Options returns opt with the plan's pass selection: the plan's passes
// unless opt already names its own (--passes wins over the plan), minus
// opt's disabled ones. ok is false for a plan that runs no pass.
func (p Plan) Options(opt Options) (Options, bool) {
	if len(opt.Only) == 0 && p.Passes != nil {
		opt.Only = slices.Clone(p.Passes)
	}
	return opt, p.Passes == nil || len(p.Passes) > 0 || len(opt.Only) > 0
}
