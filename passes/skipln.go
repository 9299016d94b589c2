package passes

import (
	"slices"

	"github.com/onnxcost/onnxcost/ir"
)

// Residual add + LayerNorm in one kernel (TensorRT's skip-layer-norm
// plugin, ONNX Runtime's SkipLayerNormalization): the sum is normalised
// while it is still on chip, and written out only when something else
// reads it (the next residual, in a pre-LN transformer).
//
//	LayerNormalization(Add(x, skip), gamma, beta)
//	  -> SkipLayerNormalization(x, skip, gamma, beta) -> (y[, sum])
//
// onnxcost::SkipLayerNormalization(X, Skip, Gamma, Beta?) -> Y, Sum?
//
//	X, Skip: the two addends, of the same shape (no broadcast); Gamma,
//	Beta: as LayerNormalization. Y: the normalised sum; Sum: X+Skip, present
//	when the sum is read outside the pair or is a graph output.
//	Attributes: axis, epsilon (the LayerNorm's), the part attributes
//	(part_ops, ...) of the Add and, when the LayerNorm was a recognised
//	decomposition, of its parts (then layernorm_in_parts = 1; otherwise
//	cost/rules_fused_attn.go costs the LayerNorm from the shapes).
//
// A residual add already taken by a GEMM epilogue (FusedGemm with
// residual=1) leaves nothing for this pass: that kernel writes the sum and
// the LayerNorm reads it, one launch each either way.
func fuseSkipLayerNorm(g *ir.Graph) (bool, error) { return fuseSkipLayerNormWith(g, false) }

// fuseSkipLayerNormORT is fuse-skip-layernorm as onnxruntime's
// SkipLayerNormFusion applies it (onnxruntime/core/optimizer/
// skip_layer_norm_fusion.cc, level 2 on the CPU, CUDA, DML and ROCm
// providers): the Add's one reader is the LayerNormalization (so a pre-LN
// block, whose residual sum the next residual reads too, keeps its Add and
// LayerNorm apart: the fused op writes no sum there), both addends are
// rank 3 with the same dims, known except a shared leading one (a
// symbolic sequence length stops it), in float, float16 or bfloat16. The
// python transformers optimizer, not this, writes sums and
// SkipSimplifiedLayerNormalization.
func fuseSkipLayerNormORT(g *ir.Graph) (bool, error) { return fuseSkipLayerNormWith(g, true) }

func fuseSkipLayerNormWith(g *ir.Graph, ort bool) (bool, error) {
	if !slices.ContainsFunc(appendOfType(nil, g, layerNormOps...), isLayerNormNode) {
		// Nothing to match: spare the position map (3 MB over the fused
		// plan of a 112k-node LLaMA-shaped graph, whose norms are
		// RMSNorms).
		return false, nil
	}
	pos := make(map[*ir.Node]int, len(g.Nodes))
	for i, n := range g.Nodes {
		pos[n] = i
	}
	return runMatcher(g, layerNormOps, isLayerNormNode, func(g *ir.Graph, ln *ir.Node) (Fusion, bool) {
		return matchSkipLayerNorm(g, ln, pos, ort)
	})
}

// layerNormOps are the op types isLayerNormNode accepts.
var layerNormOps = []string{"LayerNormalization", ir.OpFusedLayerNorm}

// isLayerNormNode: a default-domain LayerNormalization or a recognised
// onnxcost one.
func isLayerNormNode(n *ir.Node) bool {
	return isOp(n, "LayerNormalization") || ir.IsFused(n, ir.OpFusedLayerNorm)
}

// matchSkipLayerNorm matches the Add feeding LayerNorm ln. pos orders the
// nodes as they stood when the pass began (relative order survives the
// rewrites), so the fused node, which takes ln's place, still precedes
// every other reader of the sum. ort applies onnxruntime's conditions
// (fuseSkipLayerNormORT).
func matchSkipLayerNorm(g *ir.Graph, ln *ir.Node, pos map[*ir.Node]int, ort bool) (Fusion, bool) {
	s := ln.In(0)
	add := producerOf(s)
	if !isOp(add, "Add") || len(add.Inputs) != 2 || len(add.Outputs) != 1 || !floatTensor(s) {
		return Fusion{}, false
	}
	// Default-domain LayerNorm: its Mean and InvStdDev must be unused.
	for _, o := range ln.Outputs[1:] {
		if o != nil && (len(o.Consumers) > 0 || g.IsGraphOutput(o)) {
			return Fusion{}, false
		}
	}
	x, skip := add.In(0), add.In(1)
	for _, v := range []*ir.Value{x, skip} {
		// Both addends are activations of the sum's own shape: a constant
		// or broadcast addend is a bias, not a skip connection.
		if !floatTensor(v) || v.DType != s.DType || !sameShape(v, s) || constant(v) != nil {
			return Fusion{}, false
		}
	}
	if x == skip || !floatTensor(ln.Out(0)) {
		return Fusion{}, false
	}
	nodes := []*ir.Node{add, ln}
	var bias *ir.Value
	if ort {
		if !soleConsumer(g, s, ln) || !ortSkipAddends(g, x, skip) {
			return Fusion{}, false
		}
		// An addend that is a MatMul's output plus its bias (the Add
		// MatMulAddFusion left) brings the bias in.
		if ba, y, b := ortSkipBias(g, add, x, skip, ln); ba != nil {
			nodes, bias = []*ir.Node{ba, add, ln}, b
			if ba.Out(0) == x {
				x = y
			} else {
				skip = y
			}
		}
	}
	outs := []*ir.Value{ln.Out(0)}
	if !soleConsumer(g, s, ln) {
		for _, c := range s.Consumers {
			if c == ln {
				continue
			}
			if p, ok := pos[c]; !ok || p <= pos[ln] {
				return Fusion{}, false // a reader before the LayerNorm, or one this sweep created
			}
		}
		outs = append(outs, s)
	}
	attrs := []*ir.Attribute{
		ir.IntAttr("axis", ln.AttrInt("axis", -1)),
		ir.FloatAttr("epsilon", ln.AttrFloat("epsilon", 1e-5)),
	}
	// A recognised LayerNorm brings its own parts; a default-domain one is
	// costed from the real shapes by the rule (layernorm_in_parts = 0),
	// since a part knows only element counts, not rows.
	ins := trimNil([]*ir.Value{x, skip, ln.In(1), ln.In(2)})
	if bias != nil {
		ins = append(ins, bias)
	}
	p := newParts(ins, outs, nodes[:len(nodes)-1]...)
	if ln.Domain == ir.FusedDomain && ln.Attr(ir.KeyPartOps) != nil {
		p.add(ln)
		attrs = append(attrs, ir.IntAttr("layernorm_in_parts", 1))
	}
	attrs = append(attrs, p.attrs()...)
	return Fusion{
		Nodes: nodes, OpType: ir.OpSkipLayerNorm,
		Inputs:  ins,
		Outputs: outs,
		Attrs:   attrs,
	}, true
}

// ortSkipAddends reports whether x and skip (of the sum's shape) are
// addends onnxruntime's SkipLayerNormFusion takes: float, float16 or
// bfloat16, rank 3, with the same dims as onnxruntime knew them when it
// built the graph (numbers or the same named symbols: ir.Graph.
// Session), the last one a number.
func ortSkipAddends(g *ir.Graph, x, skip *ir.Value) bool {
	for _, v := range []*ir.Value{x, skip} {
		switch v.DType {
		case ir.Float32, ir.Float16, ir.BFloat16:
		default:
			return false
		}
		if v.Shape.Rank() != 3 {
			return false
		}
	}
	s := sessionShape(g, x)
	return sessionSameDims(g, x, skip) && s.Dims[2].IsKnown()
}

// ortSkipBias finds, for onnxruntime's SkipLayerNormFusion, an addend of
// add produced by an Add of a 1-D constant bias of the hidden size read
// only by add: the fusion takes that Add too, and the bias becomes the
// SkipLayerNormalization's fifth input. It returns the bias Add, its other
// operand and the bias, or a nil Add (also when ln has no beta, which the
// input order needs before the bias).
func ortSkipBias(g *ir.Graph, add *ir.Node, x, skip *ir.Value, ln *ir.Node) (*ir.Node, *ir.Value, *ir.Value) {
	if ln.In(2) == nil {
		return nil, nil, nil
	}
	hidden := x.Shape.Dims[len(x.Shape.Dims)-1]
	for _, v := range []*ir.Value{x, skip} {
		ba := producerOf(v)
		if !isOp(ba, "Add") || len(ba.Inputs) != 2 || !soleConsumer(g, v, add) {
			continue
		}
		for i, b := range ba.Inputs {
			y := ba.Inputs[1-i]
			if b != nil && y != nil && constant(b) != nil && b.Shape.Rank() == 1 && b.Shape.Dims[0] == hidden &&
				b.DType == v.DType && sameShape(y, v) && constant(y) == nil {
				return ba, y, b
			}
		}
	}
	return nil, nil, nil
}
