package passes

import (
	"math"

	"github.com/onnxcost/onnxcost/ir"
)

// fuseRotary folds rotary position embeddings written out as LLaMA's
// rotate_half (Hugging Face's apply_rotary_pos_emb as exported):
//
//	x1 = Slice(x, 0:h, last axis)   x2 = Slice(x, h:d, last axis)   h = d/2
//	r  = Concat(Neg(x2), x1, last axis)
//	y  = Add(Mul(x, cos), Mul(r, sin))          either operand orders
//	  -> Rotary(x, cos, sin) -> y
//
// one kernel, as runtimes run RoPE (onnxruntime's RotaryEmbedding,
// TensorRT-LLM's fused rope): the halves, their negation and the
// concatenation never reach memory. Every intermediate is read only inside
// the pattern; x may be read elsewhere.
func fuseRotary(g *ir.Graph) (bool, error) {
	return runMatcher(g, []string{"Concat"}, func(n *ir.Node) bool { return isOp(n, "Concat") }, matchRotary)
}

func matchRotary(g *ir.Graph, cat *ir.Node) (Fusion, bool) {
	if len(cat.Inputs) != 2 {
		return Fusion{}, false
	}
	r := cat.Out(0)
	if !floatTensor(r) || !lastAxis(cat.AttrInt("axis", 0), r.Shape.Rank()) {
		return Fusion{}, false
	}
	neg := producerOf(cat.In(0))
	if !isOp(neg, "Neg") || onlyUse(g, neg.Out(0)) != cat {
		return Fusion{}, false
	}
	s2, s1 := producerOf(neg.In(0)), producerOf(cat.In(1))
	if !isOp(s1, "Slice") || !isOp(s2, "Slice") || s1.In(0) != s2.In(0) ||
		onlyUse(g, s1.Out(0)) != cat || onlyUse(g, neg.In(0)) != neg {
		return Fusion{}, false
	}
	x := s1.In(0)
	if !floatTensor(x) || !sameShape(x, r) {
		return Fusion{}, false
	}
	dim := x.Shape.Dims[x.Shape.Rank()-1]
	if !dim.IsKnown() || dim.Value < 2 || dim.Value%2 != 0 {
		return Fusion{}, false
	}
	d, h := dim.Value, dim.Value/2
	if !lastAxisSlice(s1, d, 0, h) || !lastAxisSlice(s2, d, h, d) {
		return Fusion{}, false
	}
	mulSin := onlyUse(g, r)
	if !isOp(mulSin, "Mul") {
		return Fusion{}, false
	}
	sin := ir.OtherOperand(mulSin, r)
	sum := onlyUse(g, mulSin.Out(0))
	if sin == nil || !isOp(sum, "Add") {
		return Fusion{}, false
	}
	mulCos := producerOf(ir.OtherOperand(sum, mulSin.Out(0)))
	if !isOp(mulCos, "Mul") || onlyUse(g, mulCos.Out(0)) != sum {
		return Fusion{}, false
	}
	cos := ir.OtherOperand(mulCos, x)
	if cos == nil || cos == x {
		return Fusion{}, false
	}
	y := sum.Out(0)
	for _, v := range []*ir.Value{cos, sin} {
		if !floatTensor(v) || v.DType != x.DType {
			return Fusion{}, false
		}
	}
	// The tables broadcast onto x: y keeps x's shape.
	if !floatTensor(y) || !sameShape(y, x) || y.DType != x.DType {
		return Fusion{}, false
	}
	nodes := []*ir.Node{s1, s2, neg, cat, mulCos, mulSin, sum}
	ins, outs := []*ir.Value{x, cos, sin}, []*ir.Value{y}
	return Fusion{Nodes: nodes, OpType: ir.OpFusedRotary, Inputs: ins, Outputs: outs, Attrs: newParts(ins, outs, nodes...).attrs()}, true
}

// lastAxis reports whether axis names the last axis of a rank-r tensor.
func lastAxis(axis int64, r int) bool { return r > 0 && (axis == -1 || axis == int64(r-1)) }

// lastAxisSlice reports whether Slice s (opset 10+ form: constant starts,
// ends, axes, steps inputs) takes [from, to) of the last axis, of size d,
// with step 1.
func lastAxisSlice(s *ir.Node, d, from, to int64) bool {
	r := s.In(0).Shape.Rank()
	starts, ends := ir.Known(s.In(1)), ir.Known(s.In(2))
	if starts == nil || ends == nil || len(starts.Ints) != 1 || len(ends.Ints) != 1 {
		return false
	}
	if s.In(3) != nil {
		axes := ir.Known(s.In(3))
		if axes == nil || len(axes.Ints) != 1 || !lastAxis(axes.Ints[0], r) {
			return false
		}
	} else if r != 1 {
		return false
	}
	if s.In(4) != nil {
		steps := ir.Known(s.In(4))
		if steps == nil || len(steps.Ints) != 1 || steps.Ints[0] != 1 {
			return false
		}
	}
	clamp := func(v int64) int64 {
		if v < 0 {
			v += d
		}
		return max(0, min(v, d))
	}
	e := ends.Ints[0]
	if e >= math.MaxInt32 {
		e = d
	}
	return clamp(starts.Ints[0]) == from && clamp(e) == to
}
