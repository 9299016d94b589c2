package passes

import (
	"slices"

	"math"
	"sort"

	"github.com/onnxcost/onnxcost/ir"
)

// Matching helpers shared by the decomposition, attention and
// elementwise-chain passes (passes part 2).

// constTol is the relative tolerance for recognising an exporter's
// constants (sqrt(2), 0.5, 0.044715, ...): exporters write them in float32.
const constTol = 1e-3

// scalarConst returns v's value when v is a known constant with exactly
// one element (a scalar or a [1] tensor), as exporters write the literals
// of a decomposed formula.
func scalarConst(v *ir.Value) (float64, bool) {
	t := ir.Known(v)
	if t == nil || t.NumElements() != 1 {
		return 0, false
	}
	switch {
	case len(t.Floats) == 1:
		return t.Floats[0], true
	case len(t.Ints) == 1:
		return float64(t.Ints[0]), true
	}
	return 0, false
}

// near reports whether a and b agree within constTol (relative).
func near(a, b float64) bool {
	return math.Abs(a-b) <= constTol*math.Max(math.Abs(a), math.Abs(b))
}

// isConstNear reports whether v is a scalar constant close to want.
func isConstNear(v *ir.Value, want float64) bool {
	k, ok := scalarConst(v)
	return ok && near(k, want)
}

// constOperand splits a binary default-domain node into its variable
// operand and its scalar-constant operand. Sub, Div and Pow count only a
// right-hand constant (x-k, x/k, x^k).
func constOperand(n *ir.Node) (x *ir.Value, k float64, ok bool) {
	if n == nil || n.Domain != "" || len(n.Inputs) != 2 || n.In(0) == nil || n.In(1) == nil {
		return nil, 0, false
	}
	if k, ok := scalarConst(n.In(1)); ok {
		return n.In(0), k, true
	}
	if ir.OpHas("", n.OpType, ir.Commutative) {
		if k, ok := scalarConst(n.In(0)); ok {
			return n.In(1), k, true
		}
	}
	return nil, 0, false
}

// binaryWith reports whether n is the binary op op of v and a scalar
// constant close to want, in an order op allows.
func binaryWith(n *ir.Node, op string, v *ir.Value, want float64) bool {
	if !isOp(n, op) {
		return false
	}
	x, k, ok := constOperand(n)
	return ok && x == v && near(k, want)
}

// readers returns the distinct nodes reading v, in first-read order; a
// node that reads v in two slots (Mul(x, x)) appears once.
func readers(v *ir.Value) []*ir.Node {
	var out []*ir.Node
	for _, c := range v.Consumers {
		seen := false
		for _, o := range out {
			if o == c {
				seen = true
				break
			}
		}
		if !seen {
			out = append(out, c)
		}
	}
	return out
}

// twoReaders returns the two distinct nodes reading v when v is an
// intermediate (not a graph output) with exactly two readers: the fork a
// normalisation's centred input and a softmax's exponent make.
func twoReaders(g *ir.Graph, v *ir.Value) ([]*ir.Node, bool) {
	if v == nil || g.IsGraphOutput(v) {
		return nil, false
	}
	rd := readers(v)
	return rd, len(rd) == 2
}

// sqrtPlusEps matches Sqrt(Add(v, eps)) with eps a non-negative scalar
// constant and each step the only reader of the one before: the
// denominator LayerNorm and RMSNorm share.
func sqrtPlusEps(g *ir.Graph, v *ir.Value) (addEps, sqrt *ir.Node, eps float64, ok bool) {
	addEps, eps, ok = plusEps(g, v)
	if !ok {
		return nil, nil, 0, false
	}
	sqrt = onlyUse(g, addEps.Out(0))
	if !isOp(sqrt, "Sqrt") {
		return nil, nil, 0, false
	}
	return addEps, sqrt, eps, true
}

// plusEps matches Add(v, eps), the only reader of v, with eps a
// non-negative scalar constant: the variance plus epsilon under a
// normalisation's square root.
func plusEps(g *ir.Graph, v *ir.Value) (addEps *ir.Node, eps float64, ok bool) {
	addEps = onlyUse(g, v)
	if !isOp(addEps, "Add") {
		return nil, 0, false
	}
	x, eps, ok := constOperand(addEps)
	if !ok || x != v || eps < 0 {
		return nil, 0, false
	}
	return addEps, eps, true
}

// singleReader returns the one node reading v (in any number of slots)
// when v is not a graph output, else nil.
func singleReader(g *ir.Graph, v *ir.Value) *ir.Node {
	if v == nil || len(v.Consumers) == 0 || g.IsGraphOutput(v) {
		return nil
	}
	// Every consumer entry the same node, checked without the list
	// readers builds: fuse-elementwise asks this of every chainable node.
	r := v.Consumers[0]
	for _, c := range v.Consumers[1:] {
		if c != r {
			return nil
		}
	}
	return r
}

// reduceAxes returns a Reduce* node's axes (attribute before opset 18,
// constant input 1 from ReduceSum-13/opset 18 on). ok is false when the
// axes are not known, are empty (reduce over everything), or keepdims is
// 0: the decompositions the passes recognise keep dims for broadcasting.
func reduceAxes(n *ir.Node) ([]int64, bool) {
	if n.AttrInt("keepdims", 1) != 1 {
		return nil, false
	}
	if axes, ok := n.AttrInts("axes"); ok && len(axes) > 0 {
		return axes, true
	}
	if t := ir.Known(n.In(1)); t != nil && len(t.Ints) > 0 {
		return t.Ints, true
	}
	return nil, false
}

// trailingAxes reports how many trailing dims axes covers when it is
// exactly the last k dims of a rank-r tensor (any order, negative or not).
func trailingAxes(axes []int64, r int) (int, bool) {
	if r <= 0 || len(axes) == 0 || len(axes) > r {
		return 0, false
	}
	pos := make([]int, len(axes))
	for i, a := range axes {
		if a < 0 {
			a += int64(r)
		}
		if a < 0 || a >= int64(r) {
			return 0, false
		}
		pos[i] = int(a)
	}
	sort.Ints(pos)
	for i, p := range pos {
		if p != r-len(pos)+i {
			return 0, false
		}
	}
	return len(pos), true
}

// sameAxes reports whether two axis lists name the same axes of a rank-r
// tensor.
func sameAxes(a, b []int64, r int) bool {
	if len(a) != len(b) {
		return false
	}
	norm := func(xs []int64) []int64 {
		out := make([]int64, len(xs))
		for i, x := range xs {
			if x < 0 {
				x += int64(r)
			}
			out[i] = x
		}
		sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
		return out
	}
	na, nb := norm(a), norm(b)
	for i := range na {
		if na[i] != nb[i] {
			return false
		}
	}
	return true
}

// partKey names a part's op: "Op" in the default domain, "domain.Op"
// elsewhere.
func partKey(n *ir.Node) string {
	if n.Domain == "" {
		return n.OpType
	}
	return n.Domain + "." + n.OpType
}

// parts accumulates the part attributes of a fused node reading ins and
// writing outs. Each part's element counts (of its first input and its
// output, symbolic dims and all) are written as they are added, relative
// to the fused node's own inputs and outputs (ir.PartCountExpr), so
// nothing is frozen at the bindings the passes ran under. Writing them as
// added, not from shapes kept until attrs, spares a list of shapes per
// fused node (2.5 MB of the fused plan's allocations on a 112k-node
// LLaMA-shaped graph).
type parts struct {
	ins, outs []*ir.Value
	ops       []string
	in, out   []string // the counts' expressions
	arity     []int64
}

// newParts starts the parts of a fused node reading ins and writing outs,
// with every node of nodes as a part.
func newParts(ins, outs []*ir.Value, nodes ...*ir.Node) *parts {
	p := &parts{ins: ins, outs: outs}
	p.grow(len(nodes)) // a node carrying parts grows the lists again in add
	for _, n := range nodes {
		p.add(n)
	}
	return p
}

// add records n as a part, flattening a node that already carries parts
// (a fused node being fused again): its counts are read against its own
// inputs and outputs, to be written again against the new node's.
func (p *parts) add(n *ir.Node) {
	if a := n.Attr(ir.KeyPartOps); a != nil && n.Domain == ir.FusedDomain {
		ar, _ := n.AttrInts(ir.KeyPartArity)
		in, ok1 := n.AttrStrings(ir.KeyPartInExpr)
		out, ok2 := n.AttrStrings(ir.KeyPartOutExpr)
		if ok1 && ok2 && len(in) == len(a.Strings) && len(out) == len(a.Strings) && len(ar) == len(a.Strings) {
			shape := func(expr string) ir.Shape {
				if dims, ok := ir.PartCountDims(expr, n.Inputs, n.Outputs); ok {
					return ir.RankedShape(dims...)
				}
				return ir.Unranked()
			}
			p.grow(len(a.Strings))
			for i, op := range a.Strings {
				p.ops = append(p.ops, op)
				p.in = append(p.in, p.expr(shape(in[i])))
				p.out = append(p.out, p.expr(shape(out[i])))
				p.arity = append(p.arity, ar[i])
			}
			return
		}
	}
	present := int64(0)
	for _, v := range n.Inputs {
		if v != nil {
			present++
		}
	}
	p.ops = append(p.ops, partKey(n))
	p.in = append(p.in, p.expr(shapeOf(n.In(0))))
	p.out = append(p.out, p.expr(shapeOf(n.Out(0))))
	p.arity = append(p.arity, present)
}

// expr writes the element count of shape s against the fused node's
// inputs and outputs.
func (p *parts) expr(s ir.Shape) string { return ir.PartCountExpr(s, p.ins, p.outs) }

// grow makes room for k more parts. The lists grew by doubling one part
// at a time; sized up front, the fused plan of a 112k-node LLaMA-shaped
// graph allocates 3.5 MB (7%) less.
//
// The first sizing puts the three string lists in one allocation (each a
// capped window of it, so growing one later copies it out rather than
// overwriting the next): two fewer allocations per fused node.
func (p *parts) grow(k int) {
	if p.ops == nil && p.in == nil && p.out == nil && k > 0 {
		buf := make([]string, 3*k)
		p.ops, p.in, p.out = buf[:0:k], buf[k:k:2*k], buf[2*k:2*k:3*k]
	}
	p.ops = slices.Grow(p.ops, k)
	p.in = slices.Grow(p.in, k)
	p.out = slices.Grow(p.out, k)
	p.arity = slices.Grow(p.arity, k)
}

// shapeOf is v's shape, unranked for an absent value.
func shapeOf(v *ir.Value) ir.Shape {
	if v == nil {
		return ir.Unranked()
	}
	return v.Shape
}

// attrs returns the part attributes, allocated two by two: a fused
// node's attributes were a third of the fused plan's allocated objects.
// Not all four in one block: past 512 bytes an object with pointers
// carries an 8-byte header, which puts 4×224 bytes in the 1024-byte size
// class (1 MB more on a 112k-node LLaMA-shaped graph).
func (p *parts) attrs() []*ir.Attribute {
	a := &[2]ir.Attribute{
		{Name: ir.KeyPartOps, Type: ir.AttrStrings, Strings: p.ops},
		{Name: ir.KeyPartInExpr, Type: ir.AttrStrings, Strings: nonNil(p.in)},
	}
	b := &[2]ir.Attribute{
		{Name: ir.KeyPartOutExpr, Type: ir.AttrStrings, Strings: nonNil(p.out)},
		{Name: ir.KeyPartArity, Type: ir.AttrInts, Ints: p.arity},
	}
	return []*ir.Attribute{&a[0], &a[1], &b[0], &b[1]}
}

// nonNil is ss, or an empty list for nil (the count lists of no parts
// have always been empty, not absent).
func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}

// trimNil drops trailing absent inputs.
func trimNil(vs []*ir.Value) []*ir.Value {
	for len(vs) > 0 && vs[len(vs)-1] == nil {
		vs = vs[:len(vs)-1]
	}
	return vs
}

// live reports whether n is still in g (an earlier rewrite in the same
// sweep may have removed it).
func live(g *ir.Graph, n *ir.Node) bool { return n != nil && n.Graph() == g }

// producedBy reports whether v is written by one of nodes.
func producedBy(v *ir.Value, nodes []*ir.Node) bool {
	if v == nil || v.Producer == nil {
		return false
	}
	for _, n := range nodes {
		if v.Producer == n {
			return true
		}
	}
	return false
}

// floatAttr and intAttr build attributes.

// runMatcher applies match to every live node of g's main graph whose op
// type is one of ops and that start accepts, in graph order, applying
// each fusion found. It is the loop of every recogniser pass. ops must
// hold every op type start accepts: only those nodes are visited.
func runMatcher(g *ir.Graph, ops []string, start func(*ir.Node) bool, match func(*ir.Graph, *ir.Node) (Fusion, bool)) (bool, error) {
	changed := false
	// One compaction of the node list for the whole sweep (see ir's
	// Graph.Batch); matchers reach nodes through values, never positions.
	err := g.Batch(func() error {
		for n := range nodesOfType(g, ops...) {
			if !live(g, n) || !start(n) {
				continue
			}
			f, ok := match(g, n)
			if !ok {
				continue
			}
			if _, err := f.Apply(g); err != nil {
				return err
			}
			changed = true
		}
		return nil
	})
	return changed, err
}
