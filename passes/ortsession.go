package passes

import (
	"slices"
	"strconv"
	"strings"

	"github.com/onnxcost/onnxcost/ir"
)

// What onnxruntime knows of a graph's shapes when it optimizes it.
//
// onnxruntime runs its graph transformers when the session is created,
// before any input is seen, so a dim that is symbolic in the file (a
// dynamic batch or sequence axis) is symbolic to its shape-dependent
// fusions, whatever batch the model later runs at. Its shape inference is
// ONNX's, which knows the contents only of initializers (Constants and
// what its constant folding computes among them) and does no arithmetic
// on dims: a Reshape whose target is computed at run time (torch.onnx's
// Shape → Gather → Concat) gets the target's length as its rank and no
// dim, or, before opset 14, no shape at all; a value computed from an
// unranked one is unranked. onnxcost binds the dims first and evaluates
// the arithmetic, so its own shapes are concrete; ORTSession records, for
// the onnxruntime plan's passes, the shapes onnxruntime had instead, and
// which values it could compute ahead (ir.Graph.Session).
//
// Measured with onnxruntime 1.23.2 (CPU, level all, the optimized graph
// saved and counted): a two-layer block (MatMul+bias, residual Add,
// LayerNorm, erf-GELU MLP) with a symbolic batch and sequence ran its
// MatMuls unfused (MatMulAddFusion makes a Gemm of a MatMul whose input
// has rank 3 or more only when every dim of that input is a number), the
// biases taken into BiasGelu and SkipLayerNormalization (which accepts
// symbolic dims that match); the BERT-base fixture, whose embeddings
// broadcast its batch against an unknown dim, lost the batch there and
// with it every SkipLayerNormalization: 301 kernels, 213 with the batch
// fixed. The view is held, value by value, to the shapes onnxruntime
// reported for 22 exports (TestORTSessionAgainstOnnxruntime).

// ORTSession sets g.Session for m's main graph: the shapes of an
// inference without the bindings of bound (the dims as the file has them)
// that, like onnxruntime's, evaluates no shape arithmetic, and the values
// it could compute ahead. The graph's own shapes are inferred again with
// bound afterwards, as they were. It does nothing when bound binds no
// symbol of the file, or when the graph does not infer that way
// (onnxruntime could not run it then either: the plan stays as priced).
func ORTSession(m *ir.Model, bound ir.InferOptions) error {
	g := m.Graph
	g.Session = nil
	if len(bound.Bindings) == 0 && bound.Assume == 0 {
		return nil
	}
	known, declared := map[*ir.Value]bool{}, declaredTypes(g)
	unknown := 0
	fresh := func() ir.Dim { unknown++; return ir.Dim{Sym: "?ort" + strconv.Itoa(unknown)} }
	free := ir.InferOptions{InputData: bound.InputData, Limits: bound.Limits,
		AfterNode: func(n *ir.Node, opset int64) {
			forgetAsORT(n, opset, known, fresh)
			for _, o := range n.Outputs {
				if d := declared[o]; d != nil {
					o.Shape = mergeDeclared(o.Shape, d.Shape)
				}
			}
		}}
	_, ferr := ir.InferShapes(m, free)
	var s *ir.Session
	if ferr == nil {
		s = sessionView(g, known)
		s.Host = hostPlaced(g, known, m.Opset(""))
	}
	if _, err := ir.InferShapes(m, bound); err != nil {
		return err
	}
	g.Session = s
	return nil
}

// sessionView copies the shapes of g's inputs and node outputs as the
// emulating inference left them, with the values it could compute ahead.
func sessionView(g *ir.Graph, known map[*ir.Value]bool) *ir.Session {
	shapes := make(map[*ir.Value]ir.Shape, 2*len(g.Nodes))
	for _, v := range g.Inputs {
		if v != nil {
			shapes[v] = v.Shape.Clone()
		}
	}
	for _, n := range g.Nodes {
		for _, o := range n.Outputs {
			if o != nil {
				shapes[o] = o.Shape.Clone()
			}
		}
	}
	return &ir.Session{Shapes: shapes, Known: known}
}

// declaredTypes maps the node outputs of g that the file declares a
// shape for (graph outputs, value_info) to that declaration.
func declaredTypes(g *ir.Graph) map[*ir.Value]*ir.TypeInfo {
	d := map[*ir.Value]*ir.TypeInfo{}
	for _, n := range g.Nodes {
		for _, o := range n.Outputs {
			if o == nil {
				continue
			}
			t := o.Declared
			if t == nil {
				t = g.DeclaredInfo(o.Name)
			}
			if t != nil && t.Shape.Ranked {
				d[o] = t
			}
		}
	}
	return d
}

// mergeDeclared is inferred completed with what declared adds, as
// onnxruntime merges a declared type into the one it infers: a number
// from either, else a symbol from either; the declared shape whole when
// the rank was not inferred.
func mergeDeclared(inferred, declared ir.Shape) ir.Shape {
	if !inferred.Ranked {
		return declared.Clone()
	}
	if inferred.Rank() != declared.Rank() {
		return inferred
	}
	out := inferred.Clone()
	for i, d := range declared.Dims {
		switch o := out.Dims[i]; {
		case o.IsKnown():
		case d.IsKnown(), strings.HasPrefix(o.Sym, "?") && d.Sym != "":
			out.Dims[i] = d
		}
	}
	return out
}

// forgetAsORT makes node n's outputs, just inferred, what onnxruntime's
// inference knew of them when it fused (ONNX's shape functions over the
// graph its level-basic optimizers leave): contents only where its
// constant folding computes them (a Reshape or Expand to a target it
// cannot read gets the target's length as its rank, and the dims ONNX
// infers from that), no dim computed as an expression, nothing from an
// unranked input, and, op by op, what ONNX's functions do that onnxcost's
// do not: a Reshape before opset 14 gives such a target no shape (unless
// ReshapeFusion makes it constant), a Slice with bounds it cannot read
// unknown dims, broadcasting a symbol against an unknown dim an unknown
// dim.
func forgetAsORT(n *ir.Node, opset int64, known map[*ir.Value]bool, fresh func() ir.Dim) {
	k := foldedByORT(n, known)
	for _, o := range n.Outputs {
		if o == nil {
			continue
		}
		if k {
			known[o] = true
			continue
		}
		o.Const, o.SymInts = nil, nil
	}
	if k {
		return
	}
	for _, o := range n.Outputs {
		if o != nil {
			o.Shape = plainDims(o.Shape, fresh)
		}
	}
	out := n.Out(0)
	if n.Domain != "" || out == nil {
		return
	}
	switch {
	case n.OpType == "Reshape" && len(n.Inputs) > 1 && !foldKnown(n.In(1), known):
		if target, ok := reshapeFusionTarget(n, opset, known); ok {
			known[n.In(1)] = true
			out.Shape = reshapeTo(n.In(0).Shape, target, fresh)
		} else if opset < 14 {
			out.Shape = ir.Unranked()
		}
	case slices.ContainsFunc(n.Inputs, unranked) && !rankFree[n.OpType]:
		// ONNX's shape functions give nothing when an input's rank is
		// unknown (a Gemm after such a Reshape too).
		for _, o := range n.Outputs {
			if o != nil {
				o.Shape = ir.Unranked()
			}
		}
	case n.OpType == "Slice":
		out.Shape = onnxSlice(n, known, fresh)
	case onnxBroadcasts[n.OpType]:
		shapes := make([]ir.Shape, 0, len(n.Inputs))
		for _, v := range n.Inputs {
			if v != nil {
				shapes = append(shapes, v.Shape)
			}
		}
		out.Shape = onnxBroadcast(shapes, fresh)
	case n.OpType == "MatMul" && out.Shape.Rank() > 2 && n.In(0).Shape.Rank() >= 2 && n.In(1).Shape.Rank() >= 2:
		a, b := n.In(0).Shape, n.In(1).Shape
		batch := onnxBroadcast([]ir.Shape{ir.RankedShape(a.Dims[:a.Rank()-2]...), ir.RankedShape(b.Dims[:b.Rank()-2]...)}, fresh)
		out.Shape = ir.RankedShape(append(batch.Dims, a.Dims[a.Rank()-2], b.Dims[b.Rank()-1])...)
	}
}

// reshapeFusionTarget is the constant target onnxruntime's ReshapeFusion
// (reshape_fusion.cc, level basic) gives Reshape n in place of the Concat
// that computes it, read only by n: each Concat input a constant, or 0 for
// Unsqueeze(Gather(Shape(x), i)) at position i with x the Reshape's input
// or a value of the same dims, all numbers, or -1 for one other input of
// one element (one -1 at most). It reports false when the fusion does not
// apply (its DistilBERT pattern, a Shape of the MatMul input before a
// projection, is not modelled).
// BERT's attention reshapes (Concat of the batch and sequence dims of the
// projection they reshape, 12 and 64) become [0, 0, 12, 64].
func reshapeFusionTarget(n *ir.Node, opset int64, known map[*ir.Value]bool) ([]int64, bool) {
	root, c := n.In(0), producerOf(n.In(1))
	if opset >= 19 || root == nil || !isOp(c, "Concat") || len(n.In(1).Consumers) != 1 {
		return nil, false
	}
	var target []int64
	for _, v := range c.Inputs {
		if v == nil {
			return nil, false
		}
		if foldKnown(v, known) {
			vals, ok := knownInts(v)
			if !ok {
				return nil, false
			}
			target = append(target, vals...)
			continue
		}
		if shapeDimOf(v, root, len(target)) {
			target = append(target, 0)
			continue
		}
		if n, ok := v.Shape.NumElements(); !ok || n != 1 {
			return nil, false
		}
		target = append(target, -1)
	}
	if count(target, -1) > 1 {
		return nil, false // one -1 at most, a constant's included
	}
	return target, true
}

// count is the number of elements of s equal to x.
func count(s []int64, x int64) int {
	n := 0
	for _, v := range s {
		if v == x {
			n++
		}
	}
	return n
}

// shapeDimOf reports whether v is Unsqueeze(Gather(Shape(x), i), axes
// [0]) with x root or a value whose dims are root's, all numbers
// (optimizer_utils::CompareShape), as ReshapeFusion matches a dim it may
// copy.
func shapeDimOf(v, root *ir.Value, i int) bool {
	u := producerOf(v)
	if !isOp(u, "Unsqueeze") || u.In(0) == nil {
		return false
	}
	if axes, ok := unsqueezeAxes(u); !ok || !slices.Equal(axes, []int64{0}) {
		return false
	}
	g := producerOf(u.In(0))
	if !isOp(g, "Gather") || g.In(1) == nil || !(g.In(1).IsInitializer || isOp(g.In(1).Producer, "Constant")) {
		return false
	}
	if idx, ok := knownInts(g.In(1)); !ok || len(idx) != 1 || idx[0] != int64(i) {
		return false
	}
	sh := producerOf(g.In(0))
	if !isOp(sh, "Shape") || sh.In(0) == nil || len(sh.Attrs) > 0 {
		return false
	}
	x := sh.In(0)
	return x == root || concrete(x.Shape) && sameDims(x.Shape, root.Shape)
}

// knownInts is v's contents when they are known integers.
func knownInts(v *ir.Value) ([]int64, bool) {
	t := ir.Known(v)
	if t == nil || !t.DType.IsInt() || int64(len(t.Ints)) != t.NumElements() {
		return nil, false
	}
	return t.Ints, true
}

// reshapeTo is ONNX's inference of a Reshape of a value of shape in to the
// constant target: 0 copies in's dim, -1 takes the elements left when
// every other dim is a number.
func reshapeTo(in ir.Shape, target []int64, fresh func() ir.Dim) ir.Shape {
	out := make([]ir.Dim, len(target))
	neg, rest := -1, int64(1)
	for i, t := range target {
		switch {
		case t == 0 && in.Ranked && i < in.Rank():
			out[i] = in.Dims[i]
		case t == -1:
			neg = i
			continue
		case t > 0:
			out[i] = ir.D(t)
		default:
			out[i] = fresh()
		}
		if out[i].IsKnown() && rest > 0 {
			rest *= out[i].Value
		} else {
			rest = 0
		}
	}
	if neg >= 0 {
		out[neg] = fresh()
		if total, ok := in.NumElements(); ok && rest > 0 && total%rest == 0 {
			out[neg] = ir.D(total / rest)
		}
	}
	return ir.RankedShape(out...)
}

// onnxSlice is Slice n's output shape as ONNX infers it: every dim
// unknown when it cannot read the bounds, and a sliced dim unknown when
// the input's is not a number (ONNX does not reason about "the last
// element of a vector of unknown length").
func onnxSlice(n *ir.Node, known map[*ir.Value]bool, fresh func() ir.Dim) ir.Shape {
	out, in := n.Out(0).Shape, n.In(0).Shape
	if operandsUnread(n, func(v *ir.Value) bool { return foldKnown(v, known) }) {
		return unknownDims(out.Rank(), fresh)
	}
	if !out.Ranked || out.Rank() != in.Rank() {
		return out
	}
	out = out.Clone()
	for i, d := range in.Dims {
		if !d.IsKnown() && out.Dims[i] != d {
			out.Dims[i] = fresh()
		}
	}
	return out
}

// plainDims is s with every dim onnxcost computed as an expression
// ((H-1)/2+1, batch*64) made unknown: ONNX's inference carries a symbol
// through ops that copy a dim, and computes none.
func plainDims(s ir.Shape, fresh func() ir.Dim) ir.Shape {
	if !slices.ContainsFunc(s.Dims, compound) {
		return s
	}
	s = s.Clone()
	for i, d := range s.Dims {
		if compound(d) {
			s.Dims[i] = fresh()
		}
	}
	return s
}

// compound reports whether d is a symbolic expression rather than a
// symbol (or an unknown dim, whose name starts with "?").
func compound(d ir.Dim) bool {
	return d.Sym != "" && !strings.HasPrefix(d.Sym, "?") && strings.ContainsAny(d.Sym, "?()+-*/% ")
}

// operandsUnread reports whether an input of n after its data (a target,
// bounds, axes) is one the runtime could not read when it built the graph
// (read false).
func operandsUnread(n *ir.Node, read func(*ir.Value) bool) bool {
	return len(n.Inputs) > 1 && slices.ContainsFunc(n.Inputs[1:], func(v *ir.Value) bool { return v != nil && !read(v) })
}

// unranked reports whether v is an input of unknown rank.
func unranked(v *ir.Value) bool { return v != nil && !v.Shape.Ranked }

// rankFree lists the ops whose output shape ONNX infers without their
// inputs' ranks.
var rankFree = map[string]bool{"Shape": true, "Size": true, "Range": true, "ConstantOfShape": true}

// onnxBroadcasts lists the ops whose output shape is their inputs'
// multidirectional broadcast.
var onnxBroadcasts = map[string]bool{"Add": true, "Sub": true, "Mul": true, "Div": true, "Pow": true, "Mod": true,
	"And": true, "Or": true, "Xor": true, "Equal": true, "Greater": true, "Less": true, "GreaterOrEqual": true,
	"LessOrEqual": true, "Max": true, "Min": true, "Mean": true, "Sum": true, "Where": true, "BitShift": true}

// onnxBroadcast is ONNX's multidirectional broadcast of shapes (all
// ranked), as its shape inference computes it: a number other than 1
// wins; a dim no input gives as a number is the one symbol given, the
// same symbol given by every input, or else unknown.
func onnxBroadcast(shapes []ir.Shape, fresh func() ir.Dim) ir.Shape {
	rank := 0
	for _, s := range shapes {
		rank = max(rank, s.Rank())
	}
	out := make([]ir.Dim, rank)
	for i := range out {
		value, syms := int64(1), []ir.Dim(nil)
		for _, s := range shapes {
			j := i - (rank - s.Rank())
			if j < 0 {
				continue
			}
			switch d := s.Dims[j]; {
			case d.IsKnown():
				if d.Value != 1 {
					value = d.Value
				}
			default:
				syms = append(syms, d)
			}
		}
		switch {
		case value != 1 || len(syms) == 0:
			out[i] = ir.D(value)
		case !slices.ContainsFunc(syms, func(d ir.Dim) bool { return d != syms[0] || strings.HasPrefix(d.Sym, "?") }):
			out[i] = syms[0]
		default:
			out[i] = fresh()
		}
	}
	return ir.RankedShape(out...)
}

// unknownDims is a shape of rank r whose dims are all unknown (unranked
// when r is -1, the rank of an unranked shape).
func unknownDims(r int, fresh func() ir.Dim) ir.Shape {
	if r < 0 {
		return ir.Unranked()
	}
	dims := make([]ir.Dim, r)
	for i := range dims {
		dims[i] = fresh()
	}
	return ir.RankedShape(dims...)
}

// foldedByORT reports whether onnxruntime knows n's outputs when it
// builds the session: a Constant, the Shape or Size of a value whose dims
// it knew as numbers, or a default-domain op it folds with every input
// known.
func foldedByORT(n *ir.Node, known map[*ir.Value]bool) bool {
	if n.Domain != "" {
		return false
	}
	switch n.OpType {
	case "Constant":
		return true
	case "Shape", "Size":
		in := n.In(0)
		return in != nil && concrete(in.Shape)
	}
	if len(n.Inputs) == 0 || noFold[n.OpType] {
		return false
	}
	for _, v := range n.Inputs {
		if v != nil && !foldKnown(v, known) {
			return false
		}
	}
	return true
}

// foldKnown reports whether onnxruntime knows v's contents when it builds
// the session (a Constant's output is in known: foldedByORT).
func foldKnown(v *ir.Value, known map[*ir.Value]bool) bool {
	return v.IsInitializer || known[v]
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
	return sameDims(sessionShape(g, a), sessionShape(g, b))
}

// sameDims reports whether sa and sb have the same rank and each dim the
// same number or the same named symbol.
func sameDims(sa, sb ir.Shape) bool {
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
