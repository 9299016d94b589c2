package passes

import (
	"math"

	"github.com/onnxcost/onnxcost/ir"
)

// Epilogue fusion: a convolution or GEMM followed by the pointwise work
// cuDNN/cuBLASLt/TensorRT run in the same kernel's epilogue, applied to
// the accumulator before it is stored:
//
//	anchor -> [+ bias] -> [+ residual] -> [activation] -> [pool (conv only)]
//	                                                  -> [* gate (GEMM only)]
//
// Each step is taken only when the running value has exactly one reader
// (that step) and is not a graph output, so nothing outside the group
// needs an intermediate the fused kernel no longer writes.
//
// onnxcost::FusedConv(X, W, B?, R?) -> Y
//
//	X, W, B: as Conv (B, the per-output-channel bias, may broadcast along
//	the channel axis only, e.g. [K,1,1] from an absorbed Add); R: the
//	residual, same shape as the conv output, added before the activation.
//	Attributes: the Conv's (kernel_shape, pads, strides, dilations, group,
//	auto_pad); activation (string: Relu, LeakyRelu, Clip, Sigmoid, Tanh,
//	HardSigmoid, HardSwish, Silu, Elu, Gelu; absent = none) with
//	activation_alpha / activation_beta (LeakyRelu, Elu, HardSigmoid) or
//	activation_min / activation_max (Clip, e.g. Relu6 = Clip 0..6);
//	residual (int 1 when R is present); pool (string MaxPool|AveragePool)
//	with the pool's attributes prefixed pool_ (pool_kernel_shape,
//	pool_strides, pool_pads, pool_dilations, pool_ceil_mode,
//	pool_count_include_pad, pool_auto_pad). Y is the pool output when
//	pooled, else the activation output.
//
// onnxcost::FusedGemm(A, B, C?, R?) -> Y
//
//	anchor (string Gemm|MatMul) says which product: Gemm keeps its
//	transA/transB/alpha/beta attributes and C is its C (beta applied);
//	MatMul takes C as a bias broadcast along the last axis. R, activation
//	and residual as for FusedConv. No pool. G (input 4, attribute gate=1):
//	a run-time tensor of Y's exact shape that multiplies the activated
//	output, SwiGLU's/GeGLU's Mul(act(x·W1), x·W3): the epilogue reads
//	the other branch's GEMM output as it stores its own (CUTLASS's
//	epilogue visitor, TensorRT-LLM's gated MLP) and the Mul kernel goes.
//	Taken only after an activation, so a plain product of two GEMMs is
//	not mistaken for a gate.
//
// Rules (one line each):
//
//	Relu(Add(Conv(x,w), b{per channel}))  -> FusedConv(x,w,b){activation=Relu}
//	Relu(Add(Conv(x,w,b), r))             -> FusedConv(x,w,b,r){residual=1, activation=Relu}
//	MaxPool(Relu(Conv(x,w,b)))            -> FusedConv(x,w,b){activation=Relu, pool=MaxPool}
//	Mul(y, Sigmoid(y)), y = Conv(x,w,b)   -> FusedConv(x,w,b){activation=Silu}
//	Gelu(Add(MatMul(a,w), b{per column})) -> FusedGemm(a,w,b){anchor=MatMul, activation=Gelu}
//	Add(Gemm(a,w,c), r)                   -> FusedGemm(a,w,c,r){anchor=Gemm, residual=1}
//	Mul(Silu(MatMul(a,w)), g)             -> FusedGemm(a,w,_,_,g){anchor=MatMul, activation=Silu, gate=1}

// scope is how much of the epilogue a runtime's kernels absorb. The
// fused plan takes it all (TensorRT, CUTLASS epilogue visitors); other
// runtimes take less: PyTorch's addmm only the bias (cuBLASLt's bias
// epilogue), an older onnxruntime's CUDA FusedConv a ReLU, after a
// residual or not (fuseConvAct; see plans.go).
type scope struct{ residual, activation, pool, gate bool }

// fullScope is the fused plan's: every step of the epilogue.
var fullScope = scope{residual: true, activation: true, pool: true, gate: true}

// fuseConv fuses every Conv with its epilogue.
func fuseConv(g *ir.Graph) (bool, error) { return fuseConvScope(g, fullScope) }

// foldConvAdd folds an Add of a per-channel constant after a Conv into its
// bias, as onnxruntime's ConvAddFusion does for every provider; the
// activation and residual after it stay their own kernels.
func foldConvAdd(g *ir.Graph) (bool, error) { return fuseConvScope(g, scope{}) }

// fuseConvAct is the CUDA ConvActivationFusion of onnxruntime before its
// cuDNN-frontend convolutions (PR #19470, 2024; the current selector
// returns nothing for a CUDA node, so the onnxruntime plan leaves it out):
// it fused a float Conv with a following Relu, or with an Add and then a
// Relu (the Add's one reader), into FusedConv, cuDNN's
// ConvolutionBiasActivationForward with its residual z input, whose only
// activation there is ReLU. Any other activation (HardSigmoid, Clip,
// SiLU), an Add not followed by a Relu and a Conv whose input is not fp32
// (a half or quantized model) stay their own kernels; a per-channel bias
// Add is folded into the Conv whatever follows (ConvAddFusion, which
// every provider runs).
func fuseConvAct(g *ir.Graph) (bool, error) {
	fp32Conv := func(n *ir.Node) bool { return isOp(n, "Conv") && n.In(0) != nil && n.In(0).DType == ir.Float32 }
	return fuseAnchorsWith(g, ir.OpFusedConv, []string{"Conv"}, fp32Conv, func(n *ir.Node) *epilogue {
		ep := matchEpilogue(g, n, true, scope{residual: true, activation: true})
		if ep != nil && ep.act != "Relu" {
			ep = matchEpilogue(g, n, true, scope{}) // the bias alone
		}
		return ep
	})
}

func fuseConvScope(g *ir.Graph, sc scope) (bool, error) {
	return fuseAnchors(g, ir.OpFusedConv, []string{"Conv"}, func(n *ir.Node) bool { return isOp(n, "Conv") }, sc)
}

// fuseGemm fuses every Gemm or MatMul with its epilogue.
func fuseGemm(g *ir.Graph) (bool, error) { return fuseGemmScope(g, fullScope) }

// fuseGemmBias fuses every MatMul with its bias Add only: what a linear
// layer runs as in PyTorch (addmm, the bias in cuBLASLt's epilogue; a 3-D
// input is flattened to 2-D first) and in onnxruntime (MatMulAddFusion to
// Gemm), with activation and residual left to their own kernels.
func fuseGemmBias(g *ir.Graph) (bool, error) { return fuseGemmScope(g, scope{}) }

func fuseGemmScope(g *ir.Graph, sc scope) (bool, error) {
	return fuseAnchors(g, ir.OpFusedGemm, []string{"Gemm", "MatMul"}, func(n *ir.Node) bool { return isOp(n, "Gemm") || isOp(n, "MatMul") }, sc)
}

// fuseAnchors fuses every anchor (a node of one of the op types ops that
// anchor accepts) with the part of its epilogue sc allows into a node of
// type op.
func fuseAnchors(g *ir.Graph, op string, ops []string, anchor func(*ir.Node) bool, sc scope) (bool, error) {
	return fuseAnchorsWith(g, op, ops, anchor, func(n *ir.Node) *epilogue { return matchEpilogue(g, n, op == ir.OpFusedConv, sc) })
}

// fuseAnchorsWith is fuseAnchors with the epilogue each anchor absorbs
// chosen by match (nil: none).
func fuseAnchorsWith(g *ir.Graph, op string, ops []string, anchor func(*ir.Node) bool, match func(*ir.Node) *epilogue) (bool, error) {
	changed := false
	err := g.Batch(func() error { // one compaction for the sweep
		for n := range nodesOfType(g, ops...) {
			if n.Graph() != g || !anchor(n) || !floatTensor(n.Out(0)) {
				continue
			}
			ep := match(n)
			if ep == nil {
				continue
			}
			fused, err := ep.fusion(op).Apply(g)
			if err != nil {
				return err
			}
			fused.Name = n.Name // the group is known by its anchor's name
			changed = true
		}
		return nil
	})
	return changed, err
}

// epilogue is what matchEpilogue found after an anchor.
type epilogue struct {
	anchor   *ir.Node
	nodes    []*ir.Node // anchor first, then absorbed nodes in graph order (while matching: the absorbed ones)
	bias     *ir.Value  // absorbed Add operand (anchor had no bias)
	residual *ir.Value
	gate     *ir.Value
	act      string
	actAttrs []*ir.Attribute
	pool     *ir.Node
	out      *ir.Value
}

// matchEpilogue is the selector. It returns nil when nothing beyond the
// anchor can be absorbed (a lone Conv or Gemm is already one kernel).
//
// The matching runs on a copy on the stack, moved to the heap only when
// something was absorbed: most anchors absorb nothing (every sweep after
// the first, on a LLaMA-shaped graph), and allocating first was 1.5 MB of
// the fused plan of a 112k-node one.
func matchEpilogue(g *ir.Graph, a *ir.Node, conv bool, sc scope) *epilogue {
	ep := epilogue{anchor: a, out: a.Out(0)} // nodes: the absorbed ones, until the end
	for _, o := range a.Outputs[1:] {
		if o != nil {
			return nil
		}
	}
	hasBias := a.In(2) != nil
	// Bias: Add(y, const) broadcasting along the output-channel axis.
	if next := onlyUse(g, ep.out); !hasBias && isOp(next, "Add") {
		if other := otherInput(next, ep.out); other != nil && perChannel(other, ep.out, conv) && sameType(next.Out(0), ep.out) {
			ep.take(next)
			ep.bias = other
		}
	}
	// Residual: Add(y, r) with r of y's exact shape.
	if next := onlyUse(g, ep.out); sc.residual && isOp(next, "Add") {
		if other := otherInput(next, ep.out); other != nil && constant(other) == nil &&
			sameShape(other, ep.out) && other.DType == ep.out.DType && sameType(next.Out(0), ep.out) {
			ep.take(next)
			ep.residual = other
		}
	}
	if sc.activation {
		ep.matchActivation(g)
	}
	if !conv && ep.act != "" && sc.gate {
		ep.matchGate(g)
	}
	if conv && sc.pool {
		if next := onlyUse(g, ep.out); (isOp(next, "MaxPool") || isOp(next, "AveragePool")) && poolFusable(g, next) {
			ep.take(next)
			ep.pool = next
		}
	}
	if len(ep.nodes) == 0 {
		return nil
	}
	found := ep
	found.nodes = append([]*ir.Node{a}, ep.nodes...)
	return &found
}

// matchGate absorbs Mul(act, G), G a run-time tensor of the activated
// output's exact shape and dtype (no broadcast: a broadcast operand would
// be a scale, not the other branch of a gated unit).
func (ep *epilogue) matchGate(g *ir.Graph) {
	next := onlyUse(g, ep.out)
	if !isOp(next, "Mul") || len(next.Inputs) != 2 {
		return
	}
	if other := otherInput(next, ep.out); other != nil && constant(other) == nil &&
		sameType(other, ep.out) && sameType(next.Out(0), ep.out) {
		ep.take(next)
		ep.gate = other
	}
}

// take absorbs n, whose first output becomes the running value.
func (ep *epilogue) take(n *ir.Node) {
	ep.nodes = append(ep.nodes, n)
	ep.out = n.Out(0)
}

// matchActivation absorbs one activation: a unary op with
// the ir.FusableActivation trait, Clip with constant bounds, or the SiLU pattern
// y*Sigmoid(y).
func (ep *epilogue) matchActivation(g *ir.Graph) {
	y := ep.out
	if ep.matchSilu(g) {
		return
	}
	next := onlyUse(g, y)
	if next == nil || next.In(0) != y || !sameType(next.Out(0), y) {
		return
	}
	if ir.IsFused(next, ir.OpFusedGelu) {
		ep.take(next)
		ep.act = "Gelu"
		// The tanh form has more arithmetic than the erf form; the cost
		// rule reads the form from the fused node.
		if a := next.Attr("approximate"); a != nil {
			c := *a
			c.Name = ir.KeyActivationPrefix + "approximate"
			ep.actAttrs = append(ep.actAttrs, &c)
		}
		return
	}
	if next.Domain != "" {
		return
	}
	if next.OpType == "Gelu" && next.AttrString("approximate", "none") != "none" {
		return // the tanh form is another function; not an epilogue we model
	}
	if s := ir.LookupOp("", next.OpType); s != nil && s.Traits.Has(ir.FusableActivation) {
		for _, o := range next.Outputs[1:] {
			if o != nil {
				return
			}
		}
		ep.take(next)
		ep.act = next.OpType
		for _, k := range s.EpilogueAttrs {
			if a := next.Attr(k); a != nil {
				c := *a
				c.Name = ir.KeyActivationPrefix + k
				ep.actAttrs = append(ep.actAttrs, &c)
			}
		}
		return
	}
	if next.OpType == "Clip" {
		lo, hi, ok := clipBounds(next)
		if !ok {
			return
		}
		ep.take(next)
		ep.act = "Clip"
		ep.actAttrs = append(ep.actAttrs,
			&ir.Attribute{Name: ir.KeyActivationPrefix + "min", Type: ir.AttrFloat, F: lo},
			&ir.Attribute{Name: ir.KeyActivationPrefix + "max", Type: ir.AttrFloat, F: hi})
	}
}

// matchSilu absorbs Mul(y, Sigmoid(y)) as Silu, and Mul(y,
// HardSigmoid(y)) with HardSwish's constants (alpha 1/6, beta 0.5: the
// form PyTorch exports HardSwish in below opset 14) as HardSwish, either
// operand order: y's only two readers are that gate and that Mul. The
// gated forms' arithmetic equals the named op's (Sigmoid + Mul is
// Silu's; HardSigmoid's 3 + Mul's 1 is HardSwish's 4, cost/rules_elementwise.go).
func (ep *epilogue) matchSilu(g *ir.Graph) bool {
	y := ep.out
	if len(y.Consumers) != 2 || g.IsGraphOutput(y) {
		return false
	}
	var sig, mul *ir.Node
	act := ""
	for _, c := range y.Consumers {
		switch {
		case isOp(c, "Sigmoid"):
			sig, act = c, "Silu"
		case isOp(c, "HardSigmoid") && isHardSwishGate(c):
			sig, act = c, "HardSwish"
		case isOp(c, "Mul"):
			mul = c
		}
	}
	if sig == nil || mul == nil || onlyUse(g, sig.Out(0)) != mul || !sameType(mul.Out(0), y) {
		return false
	}
	a, b := mul.In(0), mul.In(1)
	if !(a == y && b == sig.Out(0)) && !(b == y && a == sig.Out(0)) {
		return false
	}
	ep.nodes = append(ep.nodes, sig)
	ep.take(mul)
	ep.act = act
	return true
}

// isHardSwishGate reports whether HardSigmoid h computes HardSwish's gate
// max(0, min(1, x/6 + 1/2)): alpha 1/6 and beta 0.5 up to float32
// rounding.
func isHardSwishGate(h *ir.Node) bool {
	alpha, beta := h.AttrFloat("alpha", 0.2), h.AttrFloat("beta", 0.5)
	return math.Abs(alpha-1.0/6) < 1e-6 && math.Abs(beta-0.5) < 1e-6
}

// clipBounds reads Clip's bounds: attributes before opset 11, constant
// inputs after (absent = unbounded). ok is false when a bound is not a
// known constant.
func clipBounds(n *ir.Node) (lo, hi float64, ok bool) {
	lo, hi = n.AttrFloat("min", -3.4028234663852886e38), n.AttrFloat("max", 3.4028234663852886e38)
	for i, p := range []*float64{&lo, &hi} {
		v := n.In(i + 1)
		if v == nil {
			continue
		}
		f := floatsOf(v)
		if len(f) != 1 {
			return 0, 0, false
		}
		*p = f[0]
	}
	return lo, hi, true
}

// poolFusable: a MaxPool/AveragePool whose indices output is unused.
func poolFusable(g *ir.Graph, p *ir.Node) bool {
	if p.AttrString("auto_pad", "NOTSET") != "NOTSET" && p.AttrString("auto_pad", "NOTSET") != "VALID" {
		return false // SAME padding depends on the runtime shape; keep it simple
	}
	if _, ok := p.AttrInts("kernel_shape"); !ok {
		return false
	}
	for _, o := range p.Outputs[1:] {
		if o != nil && (len(o.Consumers) > 0 || g.IsGraphOutput(o)) {
			return false
		}
	}
	return true
}

// otherInput is ir.OtherOperand for an epilogue's residual: nil, not y,
// when n reads y twice (y+y doubles the accumulator; it adds no other
// tensor).
func otherInput(n *ir.Node, y *ir.Value) *ir.Value {
	if o := ir.OtherOperand(n, y); o != y {
		return o
	}
	return nil
}

// perChannel reports whether constant b broadcasts against y along y's
// output-channel axis only: axis 1 for a conv (NC...), the last axis for
// a GEMM. Any other broadcast is not a bias.
func perChannel(b, y *ir.Value, conv bool) bool {
	t := constant(b)
	if t == nil || !y.Shape.Ranked || b.DType != y.DType {
		return false
	}
	r := y.Shape.Rank()
	if len(t.Dims) > r || len(t.Dims) == 0 {
		return false
	}
	ch := r - 1
	if conv {
		ch = 1
	}
	off := r - len(t.Dims)
	found := false
	for i, d := range t.Dims {
		axis := off + i
		switch {
		case d == 1:
		case axis == ch && y.Shape.Dims[axis].Is(d):
			found = true
		default:
			return false
		}
	}
	return found || y.Shape.Dims[ch].Is(1)
}

// sameShape reports whether a and b have the same ranked shape (symbolic
// dims equal as symbols).
func sameShape(a, b *ir.Value) bool {
	return a.Shape.Ranked && b.Shape.Ranked && a.Shape.Equal(b.Shape)
}

// sameType: the step keeps the running value's dtype and shape, so the
// fused kernel writes what the last absorbed node wrote.
func sameType(o, y *ir.Value) bool {
	return o != nil && o.DType == y.DType && sameShape(o, y)
}

// fusion turns the match into the rewrite.
func (ep *epilogue) fusion(op string) Fusion {
	a := ep.anchor
	ins := []*ir.Value{a.In(0), a.In(1), a.In(2)}
	if ep.bias != nil {
		ins[2] = ep.bias
	}
	var attrs []*ir.Attribute
	if op == ir.OpFusedGemm {
		attrs = append(attrs, &ir.Attribute{Name: ir.KeyAnchor, Type: ir.AttrString, S: a.OpType})
	}
	for _, at := range a.Attrs {
		c := *at
		if ep.bias != nil && c.Name == "beta" {
			// An absorbed Add is unscaled; a Gemm without C had no use for beta.
			c = ir.Attribute{Name: "beta", Type: ir.AttrFloat, F: 1}
		}
		attrs = append(attrs, &c)
	}
	if ep.residual != nil {
		ins = append(ins, ep.residual)
		attrs = append(attrs, &ir.Attribute{Name: ir.KeyResidual, Type: ir.AttrInt, I: 1})
	}
	if ep.act != "" {
		attrs = append(attrs, &ir.Attribute{Name: ir.KeyActivation, Type: ir.AttrString, S: ep.act})
		attrs = append(attrs, ep.actAttrs...)
	}
	if ep.gate != nil {
		for len(ins) < 4 {
			ins = append(ins, nil)
		}
		ins = append(ins, ep.gate)
		attrs = append(attrs, &ir.Attribute{Name: ir.KeyGate, Type: ir.AttrInt, I: 1})
	}
	if p := ep.pool; p != nil {
		attrs = append(attrs, &ir.Attribute{Name: ir.KeyPool, Type: ir.AttrString, S: p.OpType})
		for _, at := range p.Attrs {
			c := *at
			c.Name = ir.KeyPoolPrefix + at.Name
			attrs = append(attrs, &c)
		}
	}
	// Trailing absent inputs are dropped, as ONNX writers do.
	for len(ins) > 2 && ins[len(ins)-1] == nil {
		ins = ins[:len(ins)-1]
	}
	return Fusion{Nodes: ep.nodes, OpType: op, Inputs: ins, Outputs: []*ir.Value{ep.out}, Attrs: attrs}
}
