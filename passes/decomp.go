package passes

import (
	"math"

	"github.com/onnxcost/onnxcost/ir"
)

// Recognisers for the decompositions PyTorch exports where ONNX (at the
// opset used) has no single op, or where the exporter spells the formula
// out: LayerNorm before opset 17, GELU (exact and tanh forms), and softmax
// written as exp / sum. Each becomes one onnxcost node that an engine runs
// as one kernel. Every intermediate must be read only inside the pattern
// and must not be a graph output; the data must be floating point.

// fuseLayerNorm rewrites LayerNorm decompositions.
func fuseLayerNorm(g *ir.Graph) (bool, error) { return runLayerNorm(g, nil) }

// runLayerNorm runs matchLayerNorm; keep, when set, must accept each
// fusion.
func runLayerNorm(g *ir.Graph, keep func(Fusion) bool) (bool, error) {
	return runMatcher(g, []string{"ReduceMean"}, func(n *ir.Node) bool { return isOp(n, "ReduceMean") }, kept(matchLayerNorm, keep))
}

// kept is match, its fusions filtered by keep (nil: all kept).
func kept(match func(*ir.Graph, *ir.Node) (Fusion, bool), keep func(Fusion) bool) func(*ir.Graph, *ir.Node) (Fusion, bool) {
	if keep == nil {
		return match
	}
	return func(g *ir.Graph, n *ir.Node) (Fusion, bool) {
		f, ok := match(g, n)
		return f, ok && keep(f)
	}
}

// fuseGelu rewrites GELU decompositions (erf and tanh forms).
func fuseGelu(g *ir.Graph) (bool, error) { return runGelu(g, nil) }

// fuseGeluEager rewrites the GELU decompositions that stand for one
// kernel in eager PyTorch: F.gelu as torch.onnx exports it, exact (erf)
// or tanh (x·x·x). A tanh GELU whose cube is Pow(x, 3) was written in
// Python (Hugging Face's NewGELUActivation, GPT-2's gelu_new), and eager
// PyTorch runs it as its parts: 8 ATen ops (pow, 4 mul, 2 add, tanh),
// whose autograd keeps five buffers of the input's size where F.gelu
// keeps its input (torch.profiler and saved_tensors_hooks on the CPU,
// torch 1.13: an MLP with each activation, exported at opset 14).
func fuseGeluEager(g *ir.Graph) (bool, error) {
	return runGelu(g, func(f geluForm, _ *ir.Value) bool { return !f.pow })
}

// fuseGeluORT rewrites the GELU decompositions onnxruntime fuses at its
// default level (GeluFusion, gelu_fusion.cc, CPU and CUDA providers), and
// no other: Div(x, √2), Erf, Add 1, then Mul(Mul(x, 0.5), u) or
// Mul(Mul(x, u), 0.5), in float, float16 or double; not Mul(x, 1/√2), not
// Mul(x, Mul(u, 0.5)). Of the tanh forms, FastGeluFusion takes the one
// written with Pow(x, 3) and the tail Mul(Mul(x, 0.5), u), Hugging Face's
// NewGELUActivation (fast_gelu_fusion.cc's second formula; every operand
// order of its Muls and Adds), and no other: not torch.onnx's
// F.gelu(approximate="tanh") (x·x·x), our GPT-style fixture or zoo model,
// nor a Pow form with the 0.5 last. Checked by saving the optimized graphs
// of one-GELU models (each form, each tail, each operand order, read
// from a graph input or a MatMul) from a CPU session at level all
// (onnxruntime-node 1.23.2), and on a GPT-2 written as modeling_gpt2
// (scripts/saved_tensors.py's gpt2_hf_small: FastGelu for both layers).
// An earlier check of the Pow form had found it unfused, which the
// plan followed until this one.
func fuseGeluORT(g *ir.Graph) (bool, error) { return runGelu(g, ortGeluForm) }

// runGelu runs the GELU matchers; keep, when set, must accept the form
// of each fusion.
func runGelu(g *ir.Graph, keep func(geluForm, *ir.Value) bool) (bool, error) {
	return runMatcher(g, []string{"Erf", "Tanh"},
		func(n *ir.Node) bool { return isOp(n, "Erf") || isOp(n, "Tanh") },
		func(g *ir.Graph, n *ir.Node) (Fusion, bool) {
			var f Fusion
			var form geluForm
			var ok bool
			if n.OpType == "Erf" {
				f, form, ok = matchGeluErf(g, n)
			} else {
				f, form, ok = matchGeluTanh(g, n)
			}
			if !ok || (keep != nil && !keep(form, f.Inputs[0])) {
				return Fusion{}, false
			}
			return f, true
		})
}

// geluForm is how a matched GELU was written.
type geluForm struct {
	tanh bool
	// pow: x³ is Pow(x, 3), as Python code spells it (Hugging Face's
	// NewGELUActivation, GPT-2's gelu_new); torch.onnx's own symbolic for
	// F.gelu(approximate="tanh") writes x·x·x.
	pow bool
	// scaledBy is the op applying 1/√2 before the Erf (Div or Mul).
	scaledBy string
	tail     geluTailForm
}

// geluTailForm is where the tail applies the 0.5.
type geluTailForm int

const (
	halfLast  geluTailForm = iota // Mul(Mul(x, u), 0.5)
	halfInner                     // Mul(x, Mul(u, 0.5))
	halfFirst                     // Mul(Mul(x, 0.5), u)
)

// ortGeluForm reports whether onnxruntime fuses a GELU of form f on input
// x (see fuseGeluORT).
func ortGeluForm(f geluForm, x *ir.Value) bool {
	form := !f.tanh && f.scaledBy == "Div" && f.tail != halfInner || f.tanh && f.pow && f.tail == halfFirst
	return form && (x.DType == ir.Float32 || x.DType == ir.Float16 || x.DType == ir.Float64)
}

// fuseSoftmax rewrites softmax written as exp / sum (with or without the
// max subtraction).
func fuseSoftmax(g *ir.Graph) (bool, error) {
	return runMatcher(g, []string{"Exp"}, func(n *ir.Node) bool { return isOp(n, "Exp") }, matchSoftmax)
}

// matchLayerNorm, from the first ReduceMean:
//
//	d = Sub(x, ReduceMean(x))
//	Add(Mul(Div(d, Sqrt(Add(ReduceMean(Pow(d, 2)), eps))), gamma), beta)
//	  -> LayerNormalization(x, gamma, beta){axis = -k, epsilon = eps}
//
// where both ReduceMeans cover the same k trailing axes with keepdims,
// Pow(d, 2) may be Mul(d, d), and the Mul/Add affine tail is optional
// (gamma and beta must broadcast along the normalised axes only).
func matchLayerNorm(g *ir.Graph, mean *ir.Node) (Fusion, bool) {
	x := mean.In(0)
	if !floatTensor(x) {
		return Fusion{}, false
	}
	r := x.Shape.Rank()
	axes, ok := reduceAxes(mean)
	if !ok {
		return Fusion{}, false
	}
	k, ok := trailingAxes(axes, r)
	if !ok {
		return Fusion{}, false
	}
	sub := onlyUse(g, mean.Out(0))
	if !isOp(sub, "Sub") || sub.In(0) != x || sub.In(1) != mean.Out(0) {
		return Fusion{}, false
	}
	d := sub.Out(0)
	rd, ok := twoReaders(g, d)
	if !ok {
		return Fusion{}, false
	}
	var sq, div *ir.Node
	for _, c := range rd {
		switch {
		case isOp(c, "Div") && c.In(0) == d && c.In(1) != d:
			div = c
		case isOp(c, "Pow") && c.In(0) == d && isConstNear(c.In(1), 2),
			isOp(c, "Mul") && c.In(0) == d && c.In(1) == d:
			sq = c
		}
	}
	if sq == nil || div == nil {
		return Fusion{}, false
	}
	variance := onlyUse(g, sq.Out(0))
	if !isOp(variance, "ReduceMean") || variance.In(0) != sq.Out(0) {
		return Fusion{}, false
	}
	vaxes, ok := reduceAxes(variance)
	if !ok || !sameAxes(axes, vaxes, r) {
		return Fusion{}, false
	}
	addEps, sqrt, eps, ok := sqrtPlusEps(g, variance.Out(0))
	if !ok || onlyUse(g, sqrt.Out(0)) != div || div.In(1) != sqrt.Out(0) {
		return Fusion{}, false
	}
	nodes := []*ir.Node{mean, sub, sq, variance, addEps, sqrt, div}
	y := div.Out(0)
	var gamma, beta *ir.Value
	// Optional affine tail: y*gamma (+ beta), each a per-feature tensor.
	if m := onlyUse(g, y); isOp(m, "Mul") {
		if o := ir.OtherOperand(m, y); affineParam(o, k, nodes) {
			gamma, nodes, y = o, append(nodes, m), m.Out(0)
			if a := onlyUse(g, y); isOp(a, "Add") {
				if o := ir.OtherOperand(a, y); affineParam(o, k, nodes) {
					beta, nodes, y = o, append(nodes, a), a.Out(0)
				}
			}
		}
	}
	if !floatTensor(y) {
		return Fusion{}, false
	}
	ins := trimNil([]*ir.Value{x, gamma, beta})
	attrs := append([]*ir.Attribute{ir.IntAttr("axis", int64(-k)), ir.FloatAttr("epsilon", eps)}, newParts(ins, []*ir.Value{y}, nodes...).attrs()...)
	return Fusion{
		Nodes: nodes, OpType: ir.OpFusedLayerNorm,
		Inputs: ins, Outputs: []*ir.Value{y}, Attrs: attrs,
	}, true
}

// affineParam reports whether o can be a LayerNorm scale or shift over k
// normalised trailing axes: a float tensor of rank at most k that the
// pattern does not itself compute.
func affineParam(o *ir.Value, k int, nodes []*ir.Node) bool {
	return floatTensor(o) && o.Shape.Rank() <= k && !producedBy(o, nodes)
}

// Constants of the GELU formulas.
var (
	sqrt2        = math.Sqrt2
	sqrt2OverPi  = math.Sqrt(2 / math.Pi)
	geluTanhCube = 0.044715
)

// matchGeluErf, from the Erf:
//
//	Mul(Mul(x, Add(Erf(Div(x, sqrt2)), 1)), 0.5) -> Gelu(x){approximate="none"}
//
// with Div(x, sqrt2) also as Mul(x, 1/sqrt2) and the 0.5 applied to x
// first or last (see geluTail).
func matchGeluErf(g *ir.Graph, erf *ir.Node) (Fusion, geluForm, bool) {
	a := erf.In(0)
	p := producerOf(a)
	if p == nil || onlyUse(g, a) != erf {
		return Fusion{}, geluForm{}, false
	}
	var x *ir.Value
	switch {
	case isOp(p, "Div"):
		if v, k, ok := constOperand(p); ok && near(k, sqrt2) {
			x = v
		}
	case isOp(p, "Mul"):
		if v, k, ok := constOperand(p); ok && near(k, 1/sqrt2) {
			x = v
		}
	}
	if !floatTensor(x) {
		return Fusion{}, geluForm{}, false
	}
	tail, y, form, ok := geluTail(g, erf.Out(0), x)
	if !ok {
		return Fusion{}, geluForm{}, false
	}
	nodes := append([]*ir.Node{p, erf}, tail...)
	return geluFusion(nodes, x, y, "none"), geluForm{scaledBy: p.OpType, tail: form}, true
}

// matchGeluTanh, from the Tanh (GPT-2's gelu_new, F.gelu(approximate="tanh")):
//
//	Mul(Mul(x, Add(Tanh(Mul(sqrt(2/pi), Add(x, Mul(0.044715, x^3)))), 1)), 0.5)
//	  -> Gelu(x){approximate="tanh"}
//
// with x^3 as Pow(x, 3), Mul(x, Mul(x, x)) or Mul(Mul(x, x), x).
func matchGeluTanh(g *ir.Graph, tanh *ir.Node) (Fusion, geluForm, bool) {
	a := tanh.In(0)
	scale := producerOf(a)
	if onlyUse(g, a) != tanh || !isOp(scale, "Mul") {
		return Fusion{}, geluForm{}, false
	}
	inner, k, ok := constOperand(scale)
	if !ok || !near(k, sqrt2OverPi) {
		return Fusion{}, geluForm{}, false
	}
	sum := producerOf(inner)
	if onlyUse(g, inner) != scale || !isOp(sum, "Add") || len(sum.Inputs) != 2 {
		return Fusion{}, geluForm{}, false
	}
	// x + 0.044715*x^3: try each operand as x.
	var x *ir.Value
	var cubic []*ir.Node
	for i := 0; i < 2 && x == nil; i++ {
		cand, term := sum.In(i), sum.In(1-i)
		if nodes, ok := matchCubeTerm(g, term, sum, cand); ok {
			x, cubic = cand, nodes
		}
	}
	if !floatTensor(x) {
		return Fusion{}, geluForm{}, false
	}
	tail, y, form, ok := geluTail(g, tanh.Out(0), x)
	if !ok {
		return Fusion{}, geluForm{}, false
	}
	nodes := append(append(cubic, sum, scale, tanh), tail...)
	return geluFusion(nodes, x, y, "tanh"), geluForm{tanh: true, pow: isOp(cubic[0], "Pow"), tail: form}, true
}

// matchCubeTerm matches term = Mul(0.044715, x^3), read only by user,
// returning its nodes in topological order.
func matchCubeTerm(g *ir.Graph, term *ir.Value, user *ir.Node, x *ir.Value) ([]*ir.Node, bool) {
	m := producerOf(term)
	if onlyUse(g, term) != user || !isOp(m, "Mul") {
		return nil, false
	}
	cube, k, ok := constOperand(m)
	if !ok || !near(k, geluTanhCube) {
		return nil, false
	}
	c := producerOf(cube)
	if onlyUse(g, cube) != m || c == nil {
		return nil, false
	}
	if isOp(c, "Pow") && c.In(0) == x && isConstNear(c.In(1), 3) {
		return []*ir.Node{c, m}, true
	}
	if !isOp(c, "Mul") {
		return nil, false
	}
	sq := ir.OtherOperand(c, x)
	s := producerOf(sq)
	if sq == nil || sq == x || !isOp(s, "Mul") || s.In(0) != x || s.In(1) != x || onlyUse(g, sq) != c {
		return nil, false
	}
	return []*ir.Node{s, c, m}, true
}

// geluTail matches the common end of both GELU forms, given f, the
// output of their Erf or Tanh: u = Add(f, 1) (either order), then
//
//	Mul(Mul(x, u), 0.5), Mul(Mul(x, 0.5), u), Mul(x, Mul(u, 0.5))
//
// returning the nodes from the Add on (the last writes y), y and which of
// the three it was.
func geluTail(g *ir.Graph, f, x *ir.Value) ([]*ir.Node, *ir.Value, geluTailForm, bool) {
	add := onlyUse(g, f)
	if !binaryWith(add, "Add", f, 1) {
		return nil, nil, 0, false
	}
	u := add.Out(0)
	m1 := onlyUse(g, u)
	if !isOp(m1, "Mul") {
		return nil, nil, 0, false
	}
	o := ir.OtherOperand(m1, u)
	switch {
	case o == x:
		// Mul(Mul(x, u), 0.5)
		m2 := onlyUse(g, m1.Out(0))
		if binaryWith(m2, "Mul", m1.Out(0), 0.5) {
			return []*ir.Node{add, m1, m2}, m2.Out(0), halfLast, true
		}
	case isConstNear(o, 0.5):
		// Mul(x, Mul(u, 0.5))
		m2 := onlyUse(g, m1.Out(0))
		if isOp(m2, "Mul") && ir.OtherOperand(m2, m1.Out(0)) == x {
			return []*ir.Node{add, m1, m2}, m2.Out(0), halfInner, true
		}
	default:
		// Mul(Mul(x, 0.5), u)
		h := producerOf(o)
		if onlyUse(g, o) == m1 && binaryWith(h, "Mul", x, 0.5) {
			return []*ir.Node{add, h, m1}, m1.Out(0), halfFirst, true
		}
	}
	return nil, nil, 0, false
}

// geluFusion builds the Gelu fusion of nodes (the last writes y).
func geluFusion(nodes []*ir.Node, x, y *ir.Value, approximate string) Fusion {
	attrs := append([]*ir.Attribute{ir.StringAttr("approximate", approximate)}, newParts([]*ir.Value{x}, []*ir.Value{y}, nodes...).attrs()...)
	return Fusion{Nodes: nodes, OpType: ir.OpFusedGelu, Inputs: []*ir.Value{x}, Outputs: []*ir.Value{y}, Attrs: attrs}
}

// matchSoftmax, from the Exp:
//
//	e = Exp(Sub(x, ReduceMax(x, a)))   (or e = Exp(x))
//	Div(e, ReduceSum(e, a)) -> Softmax(x){axis = a}
//
// over one axis a, keepdims set.
func matchSoftmax(g *ir.Graph, exp *ir.Node) (Fusion, bool) {
	x := exp.In(0)
	var nodes []*ir.Node
	var maxAxes []int64
	if sub := producerOf(x); isOp(sub, "Sub") && onlyUse(g, x) == exp {
		if rmax := producerOf(sub.In(1)); isOp(rmax, "ReduceMax") && rmax.In(0) == sub.In(0) && onlyUse(g, sub.In(1)) == sub {
			axes, ok := reduceAxes(rmax)
			if !ok {
				return Fusion{}, false
			}
			maxAxes = axes
			nodes = append(nodes, rmax, sub)
			x = sub.In(0)
		}
	}
	if !floatTensor(x) {
		return Fusion{}, false
	}
	r := x.Shape.Rank()
	e := exp.Out(0)
	rd, ok := twoReaders(g, e)
	if !ok {
		return Fusion{}, false
	}
	var sum, div *ir.Node
	for _, c := range rd {
		switch {
		case isOp(c, "ReduceSum") && c.In(0) == e:
			sum = c
		case isOp(c, "Div") && c.In(0) == e:
			div = c
		}
	}
	if sum == nil || div == nil || onlyUse(g, sum.Out(0)) != div || div.In(1) != sum.Out(0) {
		return Fusion{}, false
	}
	axes, ok := reduceAxes(sum)
	if !ok || len(axes) != 1 || (maxAxes != nil && !sameAxes(axes, maxAxes, r)) {
		return Fusion{}, false
	}
	axis := axes[0]
	if axis >= 0 {
		axis -= int64(r)
	}
	if axis < -int64(r) || axis >= 0 || !floatTensor(div.Out(0)) {
		return Fusion{}, false
	}
	nodes = append(nodes, exp, sum, div)
	attrs := append([]*ir.Attribute{ir.IntAttr("axis", axis)}, newParts([]*ir.Value{x}, []*ir.Value{div.Out(0)}, nodes...).attrs()...)
	return Fusion{Nodes: nodes, OpType: ir.OpFusedSoftmax, Inputs: []*ir.Value{x}, Outputs: []*ir.Value{div.Out(0)}, Attrs: attrs}, true
}

// producerOf is v's producer, or nil.
func producerOf(v *ir.Value) *ir.Node {
	if v == nil {
		return nil
	}
	return v.Producer
}

// fuseLayerNormORT rewrites the LayerNorm decompositions onnxruntime's
// LayerNormFusion fuses (layer_norm_fusion.cc, level 2, CPU and CUDA),
// and no other. Measured on one-LayerNorm models saved optimized from an
// onnxruntime 1.23.2 CPU session at level all: the square as Pow(d, 2)
// and the affine Mul and Add fused; Mul(d, d), no affine tail, or
// Reciprocal and Mul in place of the Div ran as their parts.
func fuseLayerNormORT(g *ir.Graph) (bool, error) {
	return runLayerNorm(g, func(f Fusion) bool {
		c := opCounts(f.Nodes)
		return c["Pow"] == 1 && c["Div"] == 1 && c["Mul"] == 1 && c["Add"] == 2
	})
}

// fuseRMSNormORT rewrites the RMSNorm decompositions onnxruntime's
// SimplifiedLayerNormFusion fuses (layer_norm_fusion.cc, level 2), and no
// other. Measured as for fuseLayerNormORT: Pow(x, 2), ReduceMean, Add,
// Sqrt, Div(x, ·) and the scale Mul (either operand order) fused; the
// square as Mul(x, x), torch.rsqrt as Reciprocal(Sqrt) and Mul (the
// dynamo exporter's) or Pow(·, -0.5), or no scale ran as their parts.
// torch.onnx's TorchScript export of torch.rsqrt, Mul(x, Div(1, Sqrt)),
// is fused too: its DivMulFusion first makes it Div(x, Sqrt) (a Hugging
// Face LLaMA written as modeling_llama, exported by torch 1.13: all five
// RMSNorms of scripts/saved_tensors.py's llama_hf_small became
// SimplifiedLayerNormalization, the .to(torch.float32) pair included).
func fuseRMSNormORT(g *ir.Graph) (bool, error) {
	return runRMSNorm(g, func(f Fusion) bool {
		c := opCounts(f.Nodes)
		// The scale Mul, besides x·(1/√v)'s under torch.onnx's rsqrt.
		scale := c["Mul"] == 1
		if divOfOne(f.Nodes) {
			scale = c["Mul"] == 2
		}
		return c["Pow"] == 1 && c["Sqrt"] == 1 && c["Div"] == 1 && scale && c["Reciprocal"] == 0
	})
}

// divOfOne reports whether nodes hold a Div of the constant 1.
func divOfOne(nodes []*ir.Node) bool {
	for _, n := range nodes {
		if isOp(n, "Div") && isConstNear(n.In(0), 1) {
			return true
		}
	}
	return false
}

// opCounts counts default-domain op types among nodes.
func opCounts(nodes []*ir.Node) map[string]int {
	c := map[string]int{}
	for _, n := range nodes {
		if n.Domain == "" {
			c[n.OpType]++
		}
	}
	return c
}
