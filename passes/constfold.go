package passes

import (
	"github.com/onnxcost/onnxcost/ir"
)

// foldConstants marks, to be computed once when the engine is built,
// every node whose inputs are all constants: onnxruntime's
// ConstantFolding (level 1, on every provider) and TensorRT's build-time
// folding compute such a node ahead of time and keep its result as an
// initializer, so a causal mask built from Trilu of a constant, the rotary
// tables' Cos and Sin of constant positions, or a Transpose of a weight
// never run as kernels. cleanup already folds the small values inference
// computes; this pass takes the rest, whose values onnxcost does not
// compute. The nodes stay in the graph, marked (ir.Node.BuildTime): the
// cost model keeps their arithmetic in the model's FLOPs and their
// weights in its parameters, which are the same under every plan, and
// prices no kernel, no time and no traffic for them; their readers read
// the result from memory as they would a weight.
//
// Constants are initializers, Constant nodes' outputs and the outputs of
// nodes marked before (one sweep in graph order reaches a whole constant
// subgraph). Not marked: random ops (their value must change per run),
// QuantizeLinear and DequantizeLinear (onnxruntime keeps a weight's
// DequantizeLinear for the QDQ node units its quantized kernels are made
// of, and fuse-qdq reads them), nodes with subgraphs, nodes of other
// domains, graph outputs (the engine returns them) and outputs without a
// static shape. Inference only: under training a weight changes every
// step, and so does anything computed from it. The fusions leave marked
// nodes alone (TestFoldConstantsSurvivePlans).
func foldConstants(g *ir.Graph) (bool, error) {
	changed := false
	for n := range nodesAtStart(g) {
		if n.BuildTime() || !constantInputs(g, n) || !foldableOutputs(g, n) {
			continue
		}
		n.SetBuildTime()
		changed = true
	}
	return changed, nil
}

// noFold lists the default-domain ops foldConstants leaves in place
// whatever their inputs (see foldConstants).
var noFold = map[string]bool{
	"RandomNormal": true, "RandomNormalLike": true, "RandomUniform": true, "RandomUniformLike": true,
	"Multinomial": true, "Bernoulli": true,
	"QuantizeLinear": true, "DequantizeLinear": true, "DynamicQuantizeLinear": true,
	"Constant": true,
}

// constantInputs reports whether n is a foldable op whose every present
// input is an initializer, a Constant node's output or the output of a
// node computed at build time, and one the runtime could compute ahead
// (ir.Graph.Session: onnxruntime cannot fold what comes of a dim symbolic
// in the file, such as position ids sliced to the sequence length of an
// input with a symbolic batch).
func constantInputs(g *ir.Graph, n *ir.Node) bool {
	if n.Domain != "" || noFold[n.OpType] || len(n.Subgraphs()) > 0 {
		return false
	}
	present := 0
	for _, in := range n.Inputs {
		if in == nil {
			continue
		}
		present++
		if !sessionKnown(g, in) {
			return false
		}
		if in.IsInitializer {
			continue
		}
		if p := in.Producer; p == nil || !(isOp(p, "Constant") || p.BuildTime()) {
			return false
		}
	}
	return present > 0
}

// foldableOutputs reports whether every output of n is a tensor of static
// shape that is not a graph output, and n has at least one.
func foldableOutputs(g *ir.Graph, n *ir.Node) bool {
	any := false
	for _, o := range n.Outputs {
		if o == nil {
			continue
		}
		if o.Kind != ir.TensorValue || g.IsGraphOutput(o) {
			return false
		}
		if _, ok := o.Shape.Ints(); !ok {
			return false
		}
		any = true
	}
	return any
}
