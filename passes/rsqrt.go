package passes

import "github.com/onnxcost/onnxcost/ir"

// fuseRsqrt recomposes torch.rsqrt for the eager plan: PyTorch runs it as
// one kernel, and exporters write it as two, Div(1, Sqrt(v)) (torch.onnx)
// or Reciprocal(Sqrt(v)) (the dynamo exporter). A Hugging Face LLaMA's
// RMSNorm calls it in every norm (hidden_states * torch.rsqrt(variance +
// eps)), so its eager plan ran a kernel too many per norm. The pair
// becomes one FusedElementwise kernel.
func fuseRsqrt(g *ir.Graph) (bool, error) {
	return runMatcher(g, []string{"Sqrt"}, func(n *ir.Node) bool { return isOp(n, "Sqrt") }, matchRsqrt)
}

// matchRsqrt matches Div(1, Sqrt(v)) or Reciprocal(Sqrt(v)) from the Sqrt,
// whose output nothing else reads.
func matchRsqrt(g *ir.Graph, s *ir.Node) (Fusion, bool) {
	if !floatTensor(s.Out(0)) {
		return Fusion{}, false
	}
	r := onlyUse(g, s.Out(0))
	switch {
	case isOp(r, "Reciprocal"):
	case isOp(r, "Div") && r.In(1) == s.Out(0) && isConstNear(r.In(0), 1):
	default:
		return Fusion{}, false
	}
	return elementwiseFusion([]*ir.Node{s, r}), true
}
