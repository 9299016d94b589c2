package passes

import (
	"github.com/onnxcost/onnxcost/ir"
)

// fuseRMSNorm rewrites RMSNorm decompositions (LLaMA-style decoders as
// PyTorch exports them) into one RMSNormalization kernel.
func fuseRMSNorm(g *ir.Graph) (bool, error) {
	return runMatcher(g, []string{"Pow", "Mul"}, func(n *ir.Node) bool { return isOp(n, "Pow") || isOp(n, "Mul") }, matchRMSNorm)
}

// matchRMSNorm, from the squaring node:
//
//	r = Sqrt(Add(ReduceMean(Pow(x, 2)), eps))      Pow(x, 2) may be Mul(x, x)
//	y = Div(x, r)  or  Mul(x, Reciprocal(r))
//	Mul(y, gamma)                                   optional, either operand order
//	  -> RMSNormalization(x, gamma){axis = -k, epsilon = eps}
//
// The ReduceMean covers k trailing axes with keepdims; gamma broadcasts
// along the normalised axes only. Every intermediate is read only inside
// the pattern; x may be read elsewhere (it is the residual stream).
func matchRMSNorm(g *ir.Graph, sq *ir.Node) (Fusion, bool) {
	x := sq.In(0)
	if !floatTensor(x) {
		return Fusion{}, false
	}
	switch {
	case isOp(sq, "Pow") && isConstNear(sq.In(1), 2):
	case isOp(sq, "Mul") && sq.In(1) == x:
	default:
		return Fusion{}, false
	}
	mean := onlyUse(g, sq.Out(0))
	if !isOp(mean, "ReduceMean") || mean.In(0) != sq.Out(0) || mean.AttrInt("keepdims", 1) != 1 {
		return Fusion{}, false
	}
	axes, ok := reduceAxes(mean)
	if !ok {
		return Fusion{}, false
	}
	k, ok := trailingAxes(axes, x.Shape.Rank())
	if !ok {
		return Fusion{}, false
	}
	addEps, sqrt, eps, ok := sqrtPlusEps(g, mean.Out(0))
	if !ok {
		return Fusion{}, false
	}
	nodes := []*ir.Node{sq, mean, addEps, sqrt}
	next := onlyUse(g, sqrt.Out(0))
	switch {
	case isOp(next, "Div") && next.In(0) == x && next.In(1) == sqrt.Out(0):
		nodes = append(nodes, next)
	case isOp(next, "Reciprocal"):
		mul := onlyUse(g, next.Out(0))
		if !isOp(mul, "Mul") || otherOperand(mul, next.Out(0)) != x {
			return Fusion{}, false
		}
		nodes = append(nodes, next, mul)
		next = mul
	default:
		return Fusion{}, false
	}
	y := next.Out(0)
	if !sameShape(y, x) {
		return Fusion{}, false
	}
	var gamma *ir.Value
	if m := onlyUse(g, y); isOp(m, "Mul") {
		if o := otherOperand(m, y); affineParam(o, k, nodes) {
			gamma, nodes, y = o, append(nodes, m), m.Out(0)
		}
	}
	if !floatTensor(y) || y.DType != x.DType {
		return Fusion{}, false
	}
	ins := trimNil([]*ir.Value{x, gamma})
	attrs := append([]*ir.Attribute{ir.IntAttr("axis", int64(-k)), ir.FloatAttr("epsilon", eps)}, newParts(ins, []*ir.Value{y}, nodes...).attrs()...)
	return Fusion{Nodes: nodes, OpType: ir.OpFusedRMSNorm, Inputs: ins, Outputs: []*ir.Value{y}, Attrs: attrs}, true
}
