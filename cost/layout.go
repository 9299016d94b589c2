package cost

import (
	"slices"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
)

// transposedB reports whether the runtime priced runs product n as A·Bᵀ
// over B stored [N, K] (cuBLAS "TN": perf.Kernel.TransposedB), which
// cuBLAS's CUDA-core kernels run slower than A·B.
//
// PyTorch (its eager kernels and Inductor's, which call the same cuBLAS
// entry points) runs a product whose B is one of the module's weights as
// F.linear, which keeps the weight as nn.Linear stores it, [N, K],
// whatever layout the export wrote: the exporter folds the transpose into
// a MatMul's initializer or writes a Gemm with transB, and our traces of
// PyTorch's BERT and VGG-16 run their Linears as TN kernels. onnxruntime
// hands cuBLAS a Gemm's (or its fused Gemm's and FusedMatMul's) B as
// stored, transposed when transB says so, and a MatMul's as A·B. TensorRT
// lays its weights out for the tactic it picks; so does a runtime with no
// profile (nothing is said of its library).
func (a *analyzer) transposedB(n *ir.Node) bool {
	if a.runtime == nil {
		return false
	}
	switch a.runtime.Plan {
	case "eager":
		// A fused plan named under PyTorch's runtime prices TensorRT's
		// kernels (eagerPlan).
		return a.eagerPlan() && productWithB(n) && a.moduleWeight(n.In(1))
	case "inductor":
		return productWithB(n) && a.moduleWeight(n.In(1))
	case "onnxruntime":
		return productWithB(n) && n.AttrInt("transB", 0) != 0
	}
	return false
}

// productWithB reports whether n is a floating-point product whose second
// input is its B operand: MatMul, Gemm, onnxruntime's FusedGemm and
// FusedMatMul, and the plan's fused Gemm and FusedMatMul.
func productWithB(n *ir.Node) bool {
	switch {
	case n.Domain == "" && (n.OpType == "MatMul" || n.OpType == "Gemm"):
		return true
	case n.Domain == msDomain && (n.OpType == "FusedGemm" || n.OpType == "FusedMatMul"):
		return true
	case ir.IsFused(n, ir.OpFusedGemm), ir.IsFused(n, ir.OpFusedMatMul):
		return true
	}
	return false
}

// moduleWeight reports whether v is a weight the model file stores (an
// initializer, directly or through the Transpose an export without
// constant folding keeps: WeightTranspose), not a tensor the caller
// passes: a graph input promoted to a weight for the memory count (ir's
// export_params=False rule) is an argument, as a single-op model of
// torch.matmul(a, b) has.
func (a *analyzer) moduleWeight(v *ir.Value) bool {
	if v != nil && v.Producer != nil && WeightTranspose(v.Producer) {
		v = v.Producer.In(0)
	}
	return v != nil && v.IsInitializer && (a.model == nil || a.model.Graph == nil || !slices.Contains(a.model.Graph.Inputs, v))
}

// ortBiasPassBytes are the bytes onnxruntime's CUDA provider moves
// adding node n's bias with a call of its own (perf.Kernel.BiasPassBytes):
// a Gemm's C written into the output before the product, a
// convolution's bias added to its output after it (whichever algorithm
// cuDNN runs it with); 0 for any other node, and under any other runtime.
// A tensor-parallel shard's pass is priced whole.
func (a *analyzer) ortBiasPassBytes(n *ir.Node, cl perf.KernelClass) float64 {
	switch {
	case !a.ortRuns():
		return 0
	case cl == perf.ClassGEMM && gemmWithC(n):
		return a.outBytes(n)
	case convWithBias(n):
		return 2 * a.outBytes(n)
	}
	return 0
}

// gemmWithC reports whether n is a Gemm that adds its C input: ONNX's
// Gemm, or the plan's fused Gemm with a bias.
func gemmWithC(n *ir.Node) bool {
	gemm := n.Domain == "" && n.OpType == "Gemm" || ir.IsFused(n, ir.OpFusedGemm)
	return gemm && n.In(2) != nil && n.AttrFloat("beta", 1) != 0
}

// convWithBias reports whether n is a convolution with a bias input.
func convWithBias(n *ir.Node) bool {
	conv := n.Domain == "" && (n.OpType == "Conv" || n.OpType == "ConvTranspose") || ir.IsFused(n, ir.OpFusedConv)
	return conv && n.In(2) != nil
}
