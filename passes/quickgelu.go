package passes

import (
	"github.com/onnxcost/onnxcost/ir"
)

// x·sigmoid(α·x) in one kernel: onnxruntime's QuickGeluFusion, in the
// level-2 list its CPU, CUDA, DirectML and ROCm providers run at the
// default optimisation level (onnxruntime/core/optimizer/
// quick_gelu_fusion.cc, registered in graph_transformer_utils.cc after
// FastGeluFusion). With α = 1 it is SiLU, which torch.onnx writes as
// Sigmoid and Mul (LLaMA's and Mistral's MLP gate), so under onnxruntime
// those two kernels are one.
//
//	Mul(x, Sigmoid(x))               -> onnxcost::QuickGelu(x){alpha=1}
//	Mul(x, Sigmoid(Mul(x, α)))       -> onnxcost::QuickGelu(x){alpha=α}
//
// The conditions are the source's: the Sigmoid's only reader is the
// final Mul, whose other operand is the Sigmoid's input (or the α-Mul's
// variable operand); the α-Mul's only reader is the Sigmoid and α is a
// scalar constant (of the tensor's float type, as Mul's operands are). The source takes any tensor type its providers
// register QuickGelu for; a float tensor of known rank here.
func fuseQuickGelu(g *ir.Graph) (bool, error) {
	return runMatcher(g, []string{"Mul"}, func(n *ir.Node) bool { return isOp(n, "Mul") }, matchQuickGelu)
}

// matchQuickGelu matches the gating Mul m.
func matchQuickGelu(g *ir.Graph, m *ir.Node) (Fusion, bool) {
	if len(m.Inputs) != 2 || len(m.Outputs) != 1 || !floatTensor(m.Out(0)) {
		return Fusion{}, false
	}
	for i := range 2 {
		sig := producerOf(m.In(i))
		if !isOp(sig, "Sigmoid") || len(sig.Inputs) != 1 || !soleConsumer(g, m.In(i), m) {
			continue
		}
		x, alpha, nodes := sig.In(0), 1.0, []*ir.Node{sig, m}
		if scale := producerOf(x); isOp(scale, "Mul") && soleConsumer(g, x, sig) {
			if v, k, ok := constOperand(scale); ok && v == m.In(1-i) {
				x, alpha, nodes = v, k, []*ir.Node{scale, sig, m}
			}
		}
		if x != m.In(1-i) || !floatTensor(x) {
			continue
		}
		return Fusion{Nodes: nodes, OpType: ir.OpFusedQuickGelu, Inputs: []*ir.Value{x}, Outputs: m.Outputs,
			Attrs: []*ir.Attribute{ir.FloatAttr("alpha", alpha)}}, true
	}
	return Fusion{}, false
}

// fuseSilu recomposes SiLU for the eager plan: PyTorch runs F.silu
// (nn.SiLU: EfficientNet's activation, LLaMA's MLP gate) as one kernel,
// and torch.onnx writes it as Sigmoid and Mul. Only x·sigmoid(x): an
// x·sigmoid(α·x) written out in Python runs its three ops eagerly. The
// result is onnxruntime's QuickGelu op at α = 1, which is SiLU.
func fuseSilu(g *ir.Graph) (bool, error) {
	return runMatcher(g, []string{"Mul"}, func(n *ir.Node) bool { return isOp(n, "Mul") }, func(g *ir.Graph, m *ir.Node) (Fusion, bool) {
		f, ok := matchQuickGelu(g, m)
		if !ok || len(f.Nodes) != 2 {
			return Fusion{}, false
		}
		return f, true
	})
}
