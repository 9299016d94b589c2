package passes

import (
	"github.com/onnxcost/onnxcost/ir"
)

// fuseQDQAdd folds the Q/DQ pairs around an int8 model's float residual
// Add into ONNX Runtime's QLinearAdd (its QDQ transformer makes the same
// rewrite; TensorRT fuses the add into the convolution before it):
//
//	Q(Add(DQ(a_q), DQ(b_q)) [-> Relu])  ->  com.microsoft.QLinearAdd(a_q, sa, za, b_q, sb, zb, sc, zc)
//
// so the residual stream stays 8-bit and the DQ, Add, Relu and Q kernels
// become one. Guards, as passes/qdq.go's: both operands and the output are
// the same 8-bit type (QLinearAdd's one type T); every scale is a
// per-tensor scalar and every zero point explicit; the Add's (or Relu's)
// output is read only by the Q; a Relu only when the Q's zero point is the
// type minimum (saturation already clips at zero). A DQ goes only when the
// Add is its sole reader.
func fuseQDQAdd(g *ir.Graph) (bool, error) {
	return runReplacer(g, "fuse-qdq-add", []string{"Add"}, func(n *ir.Node) bool { return isOp(n, "Add") }, matchQDQAdd)
}

func matchQDQAdd(g *ir.Graph, add *ir.Node) (old []*ir.Node, repl *ir.Node, ok bool) {
	if len(add.Inputs) != 2 || add.In(0) == add.In(1) {
		return nil, nil, false
	}
	da, db := dqOf(add.In(0)), dqOf(add.In(1))
	if da == nil || db == nil || !oneElementConst(da.In(1)) || !oneElementConst(db.In(1)) {
		return nil, nil, false
	}
	next := onlyUse(g, add.Out(0))
	var relu *ir.Node
	if isOp(next, "Relu") {
		relu, next = next, onlyUse(g, next.Out(0))
	}
	q := next
	if !isQDQ(q, "QuantizeLinear") || len(q.Inputs) < 3 || q.In(2) == nil || !quant8(q.Out(0)) || !oneElementConst(q.In(1)) {
		return nil, nil, false
	}
	t := q.Out(0).DType
	if da.In(0).DType != t || db.In(0).DType != t || (relu != nil && !zeroPointIsMin(q.In(2))) {
		return nil, nil, false
	}
	for _, d := range []*ir.Node{da, db} {
		if soleConsumer(g, d.Out(0), add) {
			old = append(old, d)
		}
	}
	old = append(old, add)
	if relu != nil {
		old = append(old, relu)
	}
	old = append(old, q)
	repl = &ir.Node{Name: q.Name, OpType: "QLinearAdd", Domain: "com.microsoft",
		Inputs:  []*ir.Value{da.In(0), da.In(1), da.In(2), db.In(0), db.In(1), db.In(2), q.In(1), q.In(2)},
		Outputs: []*ir.Value{q.Out(0)}}
	return old, repl, true
}
