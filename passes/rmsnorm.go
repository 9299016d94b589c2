package passes

import (
	"slices"

	"github.com/onnxcost/onnxcost/ir"
)

// fuseRMSNorm rewrites RMSNorm decompositions (LLaMA-style decoders as
// PyTorch exports them) into one RMSNormalization kernel.
func fuseRMSNorm(g *ir.Graph) (bool, error) { return runRMSNorm(g, nil) }

// runRMSNorm runs matchRMSNorm; keep, when set, must accept each fusion.
func runRMSNorm(g *ir.Graph, keep func(Fusion) bool) (bool, error) {
	return runMatcher(g, []string{"Pow", "Mul"}, func(n *ir.Node) bool { return isOp(n, "Pow") || isOp(n, "Mul") }, kept(matchRMSNorm, keep))
}

// matchRMSNorm, from the squaring node:
//
//	v = Add(ReduceMean(Pow(x, 2)), eps)            Pow(x, 2) may be Mul(x, x)
//	y = x / sqrt(v)                                 spelled as rsqrtTimes lists
//	Mul(y, gamma)                                   optional, either operand order
//	  -> RMSNormalization(x, gamma){axis = -k, epsilon = eps}
//
// The ReduceMean covers k trailing axes with keepdims; gamma broadcasts
// along the normalised axes only. Every intermediate is read only inside
// the pattern; x may be read elsewhere (it is the residual stream).
//
// HF's LlamaRMSNorm computes in float32 whatever the model's dtype
// (hidden_states.to(torch.float32) … weight * hidden_states.to(input_dtype)),
// so its export wraps the norm in Cast(x, float) and a Cast back before the
// weight Mul; in a float32 export both Casts are no-ops. The pair is taken
// into the kernel (a fused RMSNorm reads and writes the model's dtype and
// keeps float32 internally, as ONNX's stash_type does) when the float copy
// of x is read only by the norm.
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
	addEps, eps, ok := plusEps(g, mean.Out(0))
	if !ok {
		return Fusion{}, false
	}
	div, ok := rsqrtTimes(g, addEps.Out(0), x)
	if !ok {
		return Fusion{}, false
	}
	nodes := append([]*ir.Node{sq, mean, addEps}, div...)
	y := div[len(div)-1].Out(0)
	if !sameShape(y, x) {
		return Fusion{}, false
	}
	if lead, back := castPair(g, x, y, nodes); lead != nil {
		nodes = append(append([]*ir.Node{lead}, nodes...), back)
		x, y = lead.In(0), back.Out(0)
	}
	var gamma *ir.Value
	if m := onlyUse(g, y); isOp(m, "Mul") {
		if o := ir.OtherOperand(m, y); affineParam(o, k, nodes) {
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

// rsqrtTimes matches x / sqrt(v) from v's only reader, in each spelling
// exporters use, and returns its nodes in order:
//
//	Div(x, Sqrt(v))                  x / sqrt(v), the zoo's and hand-written form
//	Mul(x, Reciprocal(Sqrt(v)))      torch.rsqrt under the dynamo exporter (onnxscript's aten_rsqrt)
//	Mul(x, Div(1, Sqrt(v)))          torch.rsqrt under torch.onnx's TorchScript exporter: Div(ones(1), Sqrt)
//	Mul(x, Pow(v, -0.5))             x * v ** -0.5
//
// The Mul may take its operands in either order; each step is the only
// reader of the one before.
func rsqrtTimes(g *ir.Graph, v, x *ir.Value) ([]*ir.Node, bool) {
	r := onlyUse(g, v)
	var nodes []*ir.Node
	switch {
	case isOp(r, "Pow") && r.In(0) == v && isConstNear(r.In(1), -0.5):
		nodes = []*ir.Node{r}
	case isOp(r, "Sqrt"):
		s := r.Out(0)
		next := onlyUse(g, s)
		switch {
		case isOp(next, "Div") && next.In(0) == x && next.In(1) == s:
			return []*ir.Node{r, next}, true
		case isOp(next, "Reciprocal"):
		case isOp(next, "Div") && next.In(1) == s && isConstNear(next.In(0), 1):
		default:
			return nil, false
		}
		nodes = []*ir.Node{r, next}
	default:
		return nil, false
	}
	inv := nodes[len(nodes)-1].Out(0)
	mul := onlyUse(g, inv)
	if !isOp(mul, "Mul") || ir.OtherOperand(mul, inv) != x {
		return nil, false
	}
	return append(nodes, mul), true
}

// castPair returns the Cast that made x from a float tensor and the Cast
// that takes the norm's result y back to that tensor's dtype, when both
// are there and the float copy x is read by the norm's nodes alone (else
// it must be written anyway, and the norm fuses from it); nil, nil
// otherwise.
func castPair(g *ir.Graph, x, y *ir.Value, nodes []*ir.Node) (lead, back *ir.Node) {
	lead = producerOf(x)
	if !isOp(lead, "Cast") || !floatTensor(lead.In(0)) || g.IsGraphOutput(x) {
		return nil, nil
	}
	for _, r := range readers(x) {
		if !slices.Contains(nodes, r) {
			return nil, nil
		}
	}
	back = onlyUse(g, y)
	if !isOp(back, "Cast") || !floatTensor(back.Out(0)) || back.Out(0).DType != lead.In(0).DType {
		return nil, nil
	}
	return lead, back
}
