package passes

import (
	"fmt"
	"math"
	"sort"

	"github.com/onnxcost/onnxcost/ir"
)

// fuseQDQ folds the QuantizeLinear/DequantizeLinear boundaries a Q/DQ
// export writes around a convolution or matrix product into the quantized
// op an int8 engine runs (onnxruntime's QDQ transformer makes the same
// rewrite): DQ(x_q), DQ(w_q) [, DQ(b_q)] -> Conv|MatMul [-> Relu] -> Q
// becomes QLinearConv|QLinearMatMul reading x_q and w_q and writing the
// quantized output. The DQ nodes go only when the op is their sole reader
// (a DQ output also read by a residual Add stays for it).
//
// Guards, each because the rewrite would change values or break the
// QLinear op's contract: both DQ inputs are 8-bit integers; the
// activation's and (for MatMul) the weight's scales are per-tensor
// scalars; every DQ and the Q carry an explicit zero point (QLinear ops
// require one); a Conv bias is the DQ of an int32 tensor (the bias form
// QLinearConv reads); the anchor's output is read only by the Q (or by a
// Relu read only by it); a Relu is absorbed only when the Q's zero point
// is its type's minimum, where saturation already clips at zero.
func fuseQDQ(g *ir.Graph) (bool, error) {
	return runReplacer(g, "fuse-qdq", []string{"Conv", "MatMul"}, func(n *ir.Node) bool { return isOp(n, "Conv") || isOp(n, "MatMul") }, matchQDQ)
}

// runReplacer applies match at every live node of the op types ops that
// start accepts (ops holds every type start accepts); a match
// names the nodes to replace and the node (outside the onnxcost domain:
// a standard or onnxruntime op) that replaces them.
func runReplacer(g *ir.Graph, pass string, ops []string, start func(*ir.Node) bool, match func(*ir.Graph, *ir.Node) ([]*ir.Node, *ir.Node, bool)) (bool, error) {
	changed := false
	for n := range nodesOfType(g, ops...) {
		if !live(g, n) || !start(n) {
			continue
		}
		old, repl, ok := match(g, n)
		if !ok {
			continue
		}
		if err := replaceInOrder(g, old, repl); err != nil {
			return changed, fmt.Errorf("%s at %q: %w", pass, n.Name, err)
		}
		changed = true
	}
	return changed, nil
}

// replaceInOrder replaces old, sorted into graph order, by repl, whose
// FusedFrom lists the replaced nodes' names (flattening fused ones).
func replaceInOrder(g *ir.Graph, old []*ir.Node, repl *ir.Node) error {
	pos := make(map[*ir.Node]int, len(g.Nodes))
	for i, m := range g.Nodes {
		pos[m] = i
	}
	sort.Slice(old, func(i, j int) bool { return pos[old[i]] < pos[old[j]] })
	for _, m := range old {
		if len(m.FusedFrom) > 0 {
			repl.FusedFrom = append(repl.FusedFrom, m.FusedFrom...)
		} else {
			repl.FusedFrom = append(repl.FusedFrom, m.Name)
		}
	}
	return g.ReplaceNodes(old, repl)
}

// quant8 reports whether v is an 8-bit integer tensor.
func quant8(v *ir.Value) bool {
	return v != nil && (v.DType == ir.Int8 || v.DType == ir.Uint8)
}

// oneElementConst reports whether v is a constant holding one element.
func oneElementConst(v *ir.Value) bool {
	c := constant(v)
	return c != nil && c.NumElements() == 1
}

// isQDQ reports whether n is op (QuantizeLinear or DequantizeLinear) in
// the ONNX domain or as onnxruntime's com.microsoft twin, which its QDQ
// transformer fuses alike.
func isQDQ(n *ir.Node, op string) bool {
	return isOp(n, op) || (n != nil && n.Domain == "com.microsoft" && n.OpType == op)
}

// dqOf returns the DequantizeLinear producing v when it dequantizes an
// 8-bit integer tensor with an explicit zero point.
func dqOf(v *ir.Value) *ir.Node {
	if v == nil {
		return nil
	}
	d := v.Producer
	if !isQDQ(d, "DequantizeLinear") || len(d.Inputs) < 3 || d.In(2) == nil || !quant8(d.In(0)) {
		return nil
	}
	return d
}

func matchQDQ(g *ir.Graph, n *ir.Node) (old []*ir.Node, repl *ir.Node, ok bool) {
	conv := isOp(n, "Conv")
	dx, dw := dqOf(n.In(0)), dqOf(n.In(1))
	if dx == nil || dw == nil || !oneElementConst(dx.In(1)) || !conv && !oneElementConst(dw.In(1)) {
		return nil, nil, false
	}
	// QLinearConv scales its weight per output channel (axis 0) only.
	if conv && !oneElementConst(dw.In(1)) && dw.AttrInt("axis", 1) != 0 {
		return nil, nil, false
	}
	var db *ir.Node
	if conv && len(n.Inputs) > 2 && n.In(2) != nil {
		db = n.In(2).Producer
		if !isQDQ(db, "DequantizeLinear") || db.In(0) == nil || db.In(0).DType != ir.Int32 || !biasScaleMatches(db, dx, dw) {
			return nil, nil, false
		}
	}
	y := n.Out(0)
	next := onlyUse(g, y)
	var relu *ir.Node
	if isOp(next, "Relu") {
		relu = next
		next = onlyUse(g, relu.Out(0))
	}
	q := next
	if !isQDQ(q, "QuantizeLinear") || len(q.Inputs) < 3 || q.In(2) == nil || !quant8(q.Out(0)) || !oneElementConst(q.In(1)) {
		return nil, nil, false
	}
	if relu != nil && !zeroPointIsMin(q.In(2)) {
		return nil, nil, false
	}
	old = []*ir.Node{n, q}
	if relu != nil {
		old = append(old, relu)
	}
	for _, d := range []*ir.Node{dx, dw, db} {
		if d != nil && soleConsumer(g, d.Out(0), n) {
			old = append(old, d)
		}
	}
	op := "QLinearMatMul"
	if conv {
		op = "QLinearConv"
	}
	repl = &ir.Node{Name: q.Name, OpType: op,
		Inputs:  []*ir.Value{dx.In(0), dx.In(1), dx.In(2), dw.In(0), dw.In(1), dw.In(2), q.In(1), q.In(2)},
		Outputs: []*ir.Value{q.Out(0)}}
	if conv {
		repl.Attrs = n.Attrs
		if db != nil {
			repl.Inputs = append(repl.Inputs, db.In(0))
		}
	}
	return old, repl, true
}

// biasScaleMatches reports whether the bias DQ db dequantizes at
// x_scale·w_scale (per output channel when the weight's scale is) with
// zero point 0: the only bias QLinearConv can read, its scale implied.
// Scales compare within float32 rounding.
func biasScaleMatches(db, dx, dw *ir.Node) bool {
	bs, xs, ws := constant(db.In(1)), constant(dx.In(1)), constant(dw.In(1))
	if bs == nil || xs == nil || ws == nil || !bs.HasData || !xs.HasData || !ws.HasData || len(xs.Floats) != 1 {
		return false
	}
	if len(db.Inputs) > 2 && db.In(2) != nil {
		z := constant(db.In(2))
		if z == nil || !z.HasData {
			return false
		}
		for _, v := range z.Ints {
			if v != 0 {
				return false
			}
		}
	}
	nb, nw := len(bs.Floats), len(ws.Floats)
	if nb != nw && nb != 1 && nw != 1 {
		return false
	}
	for i := 0; i < max(nb, nw); i++ {
		b, w := bs.Floats[min(i, nb-1)], ws.Floats[min(i, nw-1)]
		want := xs.Floats[0] * w
		if math.Abs(b-want) > 1e-6*math.Abs(want) {
			return false
		}
	}
	return true
}

// zeroPointIsMin reports whether the constant zero point z is the least
// value of its 8-bit type: then Q saturates every negative input to Q(0)
// and a Relu before it changes nothing.
func zeroPointIsMin(z *ir.Value) bool {
	c := constant(z)
	if c == nil || !c.HasData || len(c.Ints) != 1 {
		return false
	}
	v := c.Ints[0]
	switch z.DType {
	case ir.Uint8:
		return v == 0
	case ir.Int8:
		return v == -128
	}
	return false
}
