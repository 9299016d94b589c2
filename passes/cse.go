package passes

import (
	"fmt"
	"math"
	"strconv"

	"github.com/onnxcost/onnxcost/ir"
)

// eliminateCommonORT merges nodes that compute the same value, as
// onnxruntime's CommonSubexpressionElimination does at its basic level
// (onnxruntime/core/optimizer/common_subexpression_elimination.cc): value
// numbering over the graph in order, two nodes equal when they have the
// same op, domain and attributes and equal inputs, constants equal by
// value (its equivalence classes compare initializers by their bytes, and
// its ConstantSharing gives equal scalars one initializer first): Swin-T's
// 45 pairs of Equal and Where over Shape(x) and Mul(ConstantOfShape(s),
// -1), whose two products it folds to equal [2]-element initializers, are
// 45 of each in onnxruntime 1.23.2's graph, as here; counted for one
// element only, the plan had kept 90 of each. Nodes with subgraphs or a random output keep
// their own values, and so does a node whose output the graph returns.
// torchvision's RAFT computes each update's flow (coords1 − coords0)
// twice: onnxruntime 1.23.2 saved the model with one Sub where the
// export has two, 11 Subs fewer in all. PyTorch runs what the module
// calls, so only the onnxruntime plan.
func eliminateCommonORT(g *ir.Graph) (bool, error) {
	// Value numbers are small integers: a node's key holds its inputs'
	// numbers, never their keys, so keys stay short however deep the
	// graph. The maps are sized for the graph: grown from empty, their
	// rehashing was half the pass's time on a 100k-node graph.
	nn := g.NodeCount()
	ids := make(map[*ir.Value]int, 2*nn)
	classes := make(map[string]int, nn) // constant or node-output key -> number (> 0)
	number := func(key string) int {
		if _, ok := classes[key]; !ok {
			classes[key] = len(classes) + 1
		}
		return classes[key]
	}
	next := 0 // values equal to no other: numbers < 0
	fresh := func() int { next--; return next }
	id := func(v *ir.Value) int {
		if v == nil {
			return 0
		}
		if n, ok := ids[v]; ok {
			return n
		}
		n := fresh()
		if c := smallConst(g, v); c != nil {
			n = number(constKey(c))
		}
		ids[v] = n
		return n
	}
	seen := make(map[string]*ir.Node, nn)
	changed := false
	for n := range nodesAtStart(g) {
		if n.Graph() != g {
			continue
		}
		key, ok := nodeKey(n, id)
		rep := seen[key]
		switch {
		case !ok:
		case rep == nil:
			seen[key] = n
		case mergeInto(g, n, rep):
			changed = true
			continue
		}
		for i, o := range n.Outputs {
			switch c := smallConst(g, o); {
			case o == nil:
			case c != nil:
				ids[o] = number(constKey(c))
			case ok && rep == nil:
				ids[o] = number(key + "/" + strconv.Itoa(i))
			default:
				ids[o] = fresh()
			}
		}
	}
	return changed, nil
}

// mergeInto replaces n's outputs by rep's, which computes the same
// values, and removes n; false, leaving n, when the graph returns one of
// n's outputs or the two differ in outputs.
func mergeInto(g *ir.Graph, n, rep *ir.Node) bool {
	if len(n.Outputs) != len(rep.Outputs) {
		return false
	}
	for i, o := range n.Outputs {
		if o != nil && (g.IsGraphOutput(o) || rep.Outputs[i] == nil || o.DType != rep.Outputs[i].DType) {
			return false
		}
	}
	for i, o := range n.Outputs {
		if o != nil {
			g.ReplaceAllUses(o, rep.Outputs[i])
		}
	}
	g.RemoveNode(n)
	for _, o := range n.Outputs {
		if o != nil {
			g.RemoveValue(o)
		}
	}
	return true
}

// randomOps are the ops whose every run gives other values.
var randomOps = map[string]bool{"RandomNormal": true, "RandomUniform": true, "RandomNormalLike": true,
	"RandomUniformLike": true, "Multinomial": true, "Bernoulli": true, "Dropout": true}

// nodeKey is n's value number: op, domain, attributes and its inputs'
// numbers (id); ok is false for a node that has a subgraph, a random
// result, or an attribute not compared by value. Built with appends, not
// fmt: the pass keys every node of the graph (a 100k-node graph's
// onnxruntime plan took 0.6 s longer with fmt).
func nodeKey(n *ir.Node, id func(*ir.Value) int) (string, bool) {
	if randomOps[n.OpType] && n.Domain == "" {
		return "", false
	}
	b := make([]byte, 0, 64)
	b = append(append(append(b, n.Domain...), ':'), n.OpType...)
	b = append(b, '(')
	for _, in := range n.Inputs {
		b = append(strconv.AppendInt(b, int64(id(in)), 10), ',')
	}
	b = append(b, ')')
	for _, a := range n.Attrs {
		b = append(append(b, a.Name...), '=')
		switch a.Type {
		case ir.AttrFloat:
			b = strconv.AppendUint(append(b, 'f'), math.Float64bits(a.F), 16)
		case ir.AttrInt:
			b = strconv.AppendInt(append(b, 'i'), a.I, 10)
		case ir.AttrString:
			b = strconv.AppendQuote(append(b, 's'), a.S)
		case ir.AttrFloats:
			b = append(b, 'F')
			for _, f := range a.Floats {
				b = append(strconv.AppendUint(b, math.Float64bits(f), 16), ',')
			}
		case ir.AttrInts:
			b = append(b, 'I')
			for _, v := range a.Ints {
				b = append(strconv.AppendInt(b, v, 10), ',')
			}
		case ir.AttrStrings:
			b = append(b, 'S')
			for _, v := range a.Strings {
				b = append(strconv.AppendQuote(b, v), ',')
			}
		default: // tensors, graphs: onnxruntime counts such nodes distinct
			return "", false
		}
		b = append(b, ';')
	}
	return string(b), true
}

// smallConst is v's contents when v is a constant of at most
// ir.DefaultLimits.SmallTensorElems elements (what inference computes the
// contents of; a larger one, a weight, is its own value, where onnxruntime
// would merge two equal weights too, which an export rarely has)
// that onnxruntime knew when it built the graph (sessionKnown: a
// dynamic-axis export's shape arithmetic is computed at run time there,
// and two layers' slices of one mask buffer at computed bounds stay two
// kernels), else nil.
func smallConst(g *ir.Graph, v *ir.Value) *ir.Tensor {
	if c := ir.Known(v); c != nil && c.NumElements() <= ir.DefaultLimits.SmallTensorElems && sessionKnown(g, v) {
		return c
	}
	return nil
}

// constKey is a small constant's value number: dtype, dims and values.
func constKey(c *ir.Tensor) string {
	return fmt.Sprintf("c%d%v%v%v", c.DType, c.Dims, c.Ints, c.Floats)
}
