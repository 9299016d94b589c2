package passes

import (
	"slices"
	"strings"

	"github.com/onnxcost/onnxcost/ir"
)

// What onnxruntime knows of a graph's shapes when it optimizes it.
//
// onnxruntime runs its graph transformers when the session is created,
// before any input is seen, so a dim that is symbolic in the file (a
// dynamic batch or sequence axis) is symbolic to its shape-dependent
// fusions, whatever batch the model later runs at. Its shape inference is
// ONNX's, which does not evaluate shape arithmetic: a Reshape whose target
// is computed at run time (torch.onnx's Shape → Gather → Concat) gets
// unknown dims, and so does everything computed from it. onnxcost binds
// the dims first and evaluates the arithmetic, so its own shapes are
// concrete; ORTSession records, for the onnxruntime plan's passes, the
// shapes onnxruntime had instead, and which values it could compute ahead
// (ir.Graph.Session).
//
// Measured with onnxruntime 1.23.2 (CPU, level all, the optimized graph
// saved and counted): a two-layer block (MatMul+bias, residual Add,
// LayerNorm, erf-GELU MLP) with a symbolic batch and sequence ran its
// MatMuls unfused (MatMulAddFusion makes a Gemm of a MatMul whose input
// has rank 3 or more only when every dim of that input is a number), the
// biases taken into BiasGelu and SkipLayerNormalization (which accepts
// symbolic dims that match); the BERT-base fixture, whose attention
// reshapes to computed shapes, lost its dims after the first attention
// and with them every SkipLayerNormalization: 301 kernels, 213 with the
// batch fixed.

// ORTSession sets g.Session for m's main graph: the shapes of an
// inference without the bindings of bound (the dims as the file has them),
// with every value whose shape onnxruntime's inference could not know made
// unranked, and the values it could compute ahead. The graph's own shapes
// are inferred again with bound afterwards, as they were. It does nothing
// when bound binds no symbol of the file, or when the graph does not infer
// without the bindings (onnxruntime could not run it then either: the plan
// stays as priced).
func ORTSession(m *ir.Model, bound ir.InferOptions) error {
	g := m.Graph
	g.Session = nil
	if len(bound.Bindings) == 0 && bound.Assume == 0 {
		return nil
	}
	free := ir.InferOptions{InputData: bound.InputData, Limits: bound.Limits}
	_, ferr := ir.InferShapes(m, free)
	var s *ir.Session
	if ferr == nil {
		s = sessionView(g)
	}
	if _, err := ir.InferShapes(m, bound); err != nil {
		return err
	}
	g.Session = s
	return nil
}

// sessionView copies the shapes of g's inputs and node outputs, unranked
// where onnxruntime's inference would not know them, and marks the values
// it could compute ahead (see nodeSession).
func sessionView(g *ir.Graph) *ir.Session {
	shapes := make(map[*ir.Value]ir.Shape, 2*len(g.Nodes))
	for _, v := range g.Inputs {
		if v != nil {
			shapes[v] = v.Shape.Clone()
		}
	}
	lost, known := map[*ir.Value]bool{}, map[*ir.Value]bool{}
	for _, n := range g.Nodes {
		l, k := nodeSession(n, shapes, lost, known)
		for _, o := range n.Outputs {
			if o == nil {
				continue
			}
			if l {
				shapes[o] = ir.Unranked()
				lost[o] = true
			} else {
				shapes[o] = o.Shape.Clone()
			}
			if k {
				known[o] = true
			}
		}
	}
	return &ir.Session{Shapes: shapes, Known: known}
}

// shapeInputs lists, per op, the inputs whose values set its output's
// shape: a target shape, slice bounds, axes, repeats, a count.
var shapeInputs = map[string][]int{
	"Reshape": {1}, "Expand": {1}, "Tile": {1}, "ConstantOfShape": {0},
	"Slice": {1, 2, 3, 4}, "Range": {0, 1, 2}, "Resize": {1, 2, 3}, "Upsample": {1},
	"Pad": {1, 3}, "Unsqueeze": {1}, "Squeeze": {1}, "TopK": {1}, "Split": {1}, "OneHot": {1},
	"ReduceSum": {1}, "ReduceMean": {1}, "ReduceMax": {1}, "ReduceMin": {1}, "ReduceProd": {1},
	"ReduceL1": {1}, "ReduceL2": {1}, "ReduceLogSum": {1}, "ReduceLogSumExp": {1}, "ReduceSumSquare": {1},
}

// valueDependent lists ops whose output shape depends on their input
// values, which no shape inference knows.
var valueDependent = map[string]bool{"NonZero": true, "NonMaxSuppression": true, "Unique": true, "Compress": true}

// nodeSession reports whether n's outputs have shapes onnxruntime would
// not know (lost: a shape input it cannot evaluate, a value-dependent op,
// or an input already lost) and whether their values are known when the
// session is built (known: computed from initializers and Constants, or
// the Shape of a value whose dims it knows, as its constant folding
// computes them).
func nodeSession(n *ir.Node, shapes map[*ir.Value]ir.Shape, lost, known map[*ir.Value]bool) (bool, bool) {
	isKnown := func(v *ir.Value) bool { return v.IsInitializer || known[v] || isOp(v.Producer, "Constant") }
	if n.Domain != "" {
		return anyLost(n, lost), false
	}
	switch n.OpType {
	case "Constant":
		return false, true
	case "Shape", "Size":
		in := n.In(0)
		if in == nil {
			return false, false
		}
		s, ok := shapes[in]
		if !ok {
			s = in.Shape
		}
		return false, !lost[in] && concrete(s)
	}
	if valueDependent[n.OpType] {
		return true, false
	}
	for _, i := range shapeInputs[n.OpType] {
		if v := n.In(i); v != nil && !isKnown(v) {
			return true, false
		}
	}
	all := true
	for _, v := range n.Inputs {
		if v != nil && !isKnown(v) {
			all = false
		}
	}
	return anyLost(n, lost), all && len(n.Inputs) > 0 && !noFold[n.OpType]
}

// anyLost reports whether an input of n has a shape onnxruntime lost.
func anyLost(n *ir.Node, lost map[*ir.Value]bool) bool {
	for _, v := range n.Inputs {
		if v != nil && lost[v] {
			return true
		}
	}
	return false
}

// concrete reports whether every dim of s is a number.
func concrete(s ir.Shape) bool {
	_, ok := s.Ints()
	return ok
}

// sessionShape is v's shape as the runtime that optimizes the graph saw it
// (ir.Graph.Session), or its own when none was recorded.
func sessionShape(g *ir.Graph, v *ir.Value) ir.Shape {
	if g.Session != nil {
		if s, ok := g.Session.Shapes[v]; ok {
			return s
		}
	}
	return v.Shape
}

// sessionKnown reports whether the runtime that optimizes the graph could
// compute v's contents ahead: an initializer, or a value it folds
// (ir.Graph.Session); every constant of a graph without a session record.
func sessionKnown(g *ir.Graph, v *ir.Value) bool {
	return g.Session == nil || v.IsInitializer || g.Session.Known[v]
}

// sessionConcrete reports whether the runtime saw every dim of v as a
// number.
func sessionConcrete(g *ir.Graph, v *ir.Value) bool { return concrete(sessionShape(g, v)) }

// sessionSameDims reports whether the runtime saw a and b with the same
// rank and each dim the same number or the same named symbol (a dim it
// did not know at all, which onnxcost's inference names "?...", matches
// nothing).
func sessionSameDims(g *ir.Graph, a, b *ir.Value) bool {
	sa, sb := sessionShape(g, a), sessionShape(g, b)
	if !sa.Ranked || !sb.Ranked || sa.Rank() != sb.Rank() {
		return false
	}
	for i, d := range sa.Dims {
		if d != sb.Dims[i] || strings.HasPrefix(d.Sym, "?") {
			return false
		}
	}
	return true
}

// fuseGemmBiasORT is fuse-gemm-bias as onnxruntime's MatMulAddFusion
// applies it (matmul_add_fusion.cc): a Gemm takes its bias Add; a MatMul
// only with a 2-D weight, and, when its input has rank 3 or more (the
// fusion reshapes it to 2-D with a constant shape), only when onnxruntime
// knew every dim of that input as a number when it built the graph
// (ir.Graph.Session).
func fuseGemmBiasORT(g *ir.Graph) (bool, error) {
	return fuseAnchors(g, ir.OpFusedGemm, []string{"Gemm", "MatMul"}, func(n *ir.Node) bool {
		if isOp(n, "Gemm") {
			return true
		}
		w := n.In(1)
		return isOp(n, "MatMul") && n.In(0) != nil && w != nil && w.Shape.Rank() == 2 && !shapeUnknownToORT(g, n)
	}, scope{})
}

// shapeUnknownToORT reports whether MatMul n's input has rank 3 or more
// and dims onnxruntime did not all know as numbers when it built the
// graph, so that its MatMulAddFusion leaves the bias apart.
func shapeUnknownToORT(g *ir.Graph, n *ir.Node) bool {
	a := n.In(0)
	return a.Shape.Rank() >= 3 && !sessionConcrete(g, a)
}

// ORTBiasesApart counts the MatMuls of g, read by an Add, whose bias
// onnxruntime's MatMulAddFusion cannot take because it did not know their
// input's dims (ir.Graph.Session; see fuseGemmBiasORT): what the report
// names when it prices a dynamic-axis export under onnxruntime.
func ORTBiasesApart(g *ir.Graph) int {
	if g.Session == nil {
		return 0
	}
	n := 0
	for _, m := range g.Nodes {
		if !isOp(m, "MatMul") || m.In(0) == nil || m.Out(0) == nil || !shapeUnknownToORT(g, m) {
			continue
		}
		if slices.ContainsFunc(m.Out(0).Consumers, func(c *ir.Node) bool { return isOp(c, "Add") }) {
			n++
		}
	}
	return n
}

// fuseBiasGeluORT is onnxruntime's BiasGeluFusion (bias_gelu_fusion.cc,
// CPU, CUDA, DML and ROCm): an Add of a 1-D operand whose length is the
// other's last dim, read only by a GELU, joins the GELU as one kernel
// (BiasGelu). It finds the bias Adds MatMulAddFusion left, those of a
// MatMul whose input dims onnxruntime did not know as numbers.
func fuseBiasGeluORT(g *ir.Graph) (bool, error) {
	return runMatcher(g, []string{ir.OpFusedGelu, "Gelu"},
		func(n *ir.Node) bool { return ir.IsFused(n, ir.OpFusedGelu) || isOp(n, "Gelu") },
		matchBiasGelu)
}

// matchBiasGelu matches the bias Add before GELU gelu (see
// fuseBiasGeluORT).
func matchBiasGelu(g *ir.Graph, gelu *ir.Node) (Fusion, bool) {
	x := gelu.In(0)
	add := producerOf(x)
	if len(gelu.Inputs) != 1 || !isOp(add, "Add") || len(add.Inputs) != 2 || !soleConsumer(g, x, gelu) || !floatTensor(gelu.Out(0)) {
		return Fusion{}, false
	}
	a, b := add.In(0), add.In(1)
	if a == nil || b == nil {
		return Fusion{}, false
	}
	if a.Shape.Rank() == 1 && b.Shape.Rank() != 1 {
		a, b = b, a
	}
	if b.Shape.Rank() != 1 || a.Shape.Rank() < 1 || a.DType != x.DType || b.DType != x.DType {
		return Fusion{}, false
	}
	if la, lb := a.Shape.Dims[a.Shape.Rank()-1], b.Shape.Dims[0]; !la.IsKnown() || la != lb {
		return Fusion{}, false
	}
	ins, outs := []*ir.Value{a, b}, []*ir.Value{gelu.Out(0)}
	p := newParts(ins, outs, add, gelu)
	attrs := append([]*ir.Attribute{ir.StringAttr("approximate", gelu.AttrString("approximate", "none"))}, p.attrs()...)
	return Fusion{Nodes: []*ir.Node{add, gelu}, OpType: ir.OpFusedGelu, Inputs: ins, Outputs: outs, Attrs: attrs}, true
}
