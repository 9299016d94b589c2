package passes

import (
	"fmt"
	"math"
	"slices"

	"github.com/onnxcost/onnxcost/ir"
)

// cleanup removes what an inference engine never runs: no-op nodes
// (Identity, Dropout in inference mode, an Expand to its input's own
// shape, a Slice of all of its input), shape arithmetic whose result
// inference already knows (folded into Constant nodes), and nodes whose
// outputs nobody reads. It touches the main graph only; subgraph bodies
// are left as written.
func cleanup(g *ir.Graph) (bool, error) { return cleanupWith(g, keepsWhole) }

// cleanupORT is cleanup as onnxruntime's level-basic rewrites remove
// no-op nodes: a Slice only when its bounds say "all" (eliminatesSliceORT).
func cleanupORT(g *ir.Graph) (bool, error) {
	return cleanupWith(g, func(g *ir.Graph, n *ir.Node) bool {
		return keepsWhole(g, n) && (!isOp(n, "Slice") || eliminatesSliceORT(n))
	})
}

// cleanupWith is cleanup with whole telling an Expand or Slice that
// outputs its input unchanged and runs no kernel.
func cleanupWith(g *ir.Graph, whole func(*ir.Graph, *ir.Node) bool) (bool, error) {
	changed := false
	for n := range nodesAtStart(g) {
		if n.Graph() != g {
			continue // removed earlier in this sweep
		}
		switch {
		case isOp(n, "Identity"):
			// Identity(x) -> x
			changed = bypass(g, n) || changed
		case isOp(n, "Dropout") && dropoutIsNoOp(g, n):
			// Dropout(x){inference} -> x
			changed = bypass(g, n) || changed
		case (isOp(n, "Expand") || isOp(n, "Slice")) && whole(g, n):
			// Expand to x's own shape, or a Slice of all of x -> x
			changed = bypass(g, n) || changed
		case foldable(g, n):
			// f(consts) -> Constant{value inference computed}
			if err := foldToConstants(g, n); err != nil {
				return changed, err
			}
			changed = true
		}
	}
	if removeDead(g) {
		changed = true
	}
	return changed, nil
}

// keepsWhole reports whether Expand or Slice n outputs its input
// unchanged: the same known dims, and for a Slice unit steps (a
// reversing Slice keeps the dims too). onnxruntime removes such an
// Expand at its basic level (ExpandElimination) and such a Slice only
// when its bounds say so (cleanupORT), PyTorch's expand and basic slicing
// are views, and an engine drops identity layers: none runs a kernel for
// them, where the plans had priced a copy. onnxruntime reads
// the target or the bounds as constants when it builds the graph
// (ir.Graph.Session): a dynamic-batch ViT's class-token Expand to
// [batch, 1, 768] is an identity only once the batch is bound, and it
// runs it.
func keepsWhole(g *ir.Graph, n *ir.Node) bool {
	in, out := n.In(0), n.Out(0)
	if in == nil || out == nil || !in.Shape.Ranked || !out.Shape.Ranked || in.Shape.Rank() != out.Shape.Rank() {
		return false
	}
	for i, d := range in.Shape.Dims {
		if !d.IsKnown() || d != out.Shape.Dims[i] {
			return false
		}
	}
	if operandsUnread(n, func(v *ir.Value) bool { return sessionKnown(g, v) }) {
		return false
	}
	if isOp(n, "Slice") {
		if steps := n.In(4); steps != nil {
			t := ir.Known(steps)
			if t == nil || slices.ContainsFunc(t.Ints, func(s int64) bool { return s != 1 }) {
				return false
			}
		}
	}
	return true
}

// eliminatesSliceORT reports whether onnxruntime's EliminateSlice removes
// Slice n: every start 0 and every end at least INT64_MAX, as constants
// (core/optimizer/slice_elimination.cc; "TODO: take into account the
// input's shape" there). A Slice that keeps all of its input by its
// shape alone (torchvision Swin-T's x[:, :H, :W, :] after a window
// padding of 0) stays, and its CUDA kernel copies: onnxruntime 1.23.2's
// graph of a static-batch Swin-T keeps 42 Slices where cleanup leaves 18.
func eliminatesSliceORT(n *ir.Node) bool {
	if starts, ok := n.AttrInts("starts"); ok { // Slice-1
		ends, _ := n.AttrInts("ends")
		return allBounds(starts, ends)
	}
	st, en := ir.Known(n.In(1)), ir.Known(n.In(2))
	if st == nil || en == nil {
		return false
	}
	return allBounds(st.Ints, en.Ints)
}

// allBounds reports whether starts and ends, one pair per axis, are 0
// and INT64_MAX.
func allBounds(starts, ends []int64) bool {
	if len(starts) == 0 || len(starts) != len(ends) {
		return false
	}
	for i := range starts {
		if starts[i] != 0 || ends[i] != math.MaxInt64 {
			return false
		}
	}
	return true
}

// bypass makes every reader of n's first output read n's first input and
// removes n. It declines when that output is a graph output (its name is
// part of the model's interface) or the input is absent.
func bypass(g *ir.Graph, n *ir.Node) bool { return bypassTo(g, n, n.In(0)) }

// bypassTo is bypass with in, any value n passes through unchanged, as
// what n's readers read instead.
func bypassTo(g *ir.Graph, n *ir.Node, in *ir.Value) bool {
	out := n.Out(0)
	if in == nil || out == nil || g.IsGraphOutput(out) {
		return false
	}
	for _, o := range n.Outputs[1:] {
		if o != nil && (len(o.Consumers) > 0 || g.IsGraphOutput(o)) {
			return false
		}
	}
	g.ReplaceAllUses(out, in)
	g.RemoveNode(n)
	for _, o := range n.Outputs {
		if o != nil {
			g.RemoveValue(o)
		}
	}
	return true
}

// dropoutIsNoOp: Dropout is the identity at inference, unless its
// training_mode input (opset 12+) is known true or may be true, or its
// mask output is used.
func dropoutIsNoOp(g *ir.Graph, n *ir.Node) bool {
	if tm := n.In(2); tm != nil {
		t := ir.Known(tm)
		if t == nil || len(t.Ints) != 1 || t.Ints[0] != 0 {
			return false
		}
	}
	// Opset < 7 had is_test; is_test=0 means training.
	if a := n.Attr("is_test"); a != nil && a.I == 0 {
		return false
	}
	mask := n.Out(1)
	return mask == nil || (len(mask.Consumers) == 0 && !g.IsGraphOutput(mask))
}

// foldable reports whether every output of n is a small tensor whose
// contents inference already computed (Shape, Gather on a shape, shape
// arithmetic, Constant), so the node can become initializers; under a
// runtime that optimized the graph with symbolic dims (ir.Graph.Session),
// only where that runtime could compute them too.
func foldable(g *ir.Graph, n *ir.Node) bool {
	if n.Domain == ir.FusedDomain || isOp(n, "Constant") || len(n.Outputs) == 0 {
		return false
	}
	folds := false
	for _, o := range n.Outputs {
		if o == nil {
			continue
		}
		t := ir.Known(o)
		if t == nil || o.Kind != ir.TensorValue || g.IsGraphOutput(o) || t.NumElements() > ir.DefaultLimits.SmallTensorElems {
			return false
		}
		if !sessionKnown(g, o) {
			return false // computed at run time, on the host or the GPU (ortplacement.go)
		}
		folds = true
	}
	// Last: most nodes' outputs are not constants, and testing those
	// first spares reading the attributes of every node of the graph.
	return folds && len(n.Subgraphs()) == 0
}

// foldToConstants replaces n by one Constant node per output holding the
// value inference computed. Constants, not initializers: the folded values
// are not model parameters, and counting them as such would make a
// model's parameter count depend on the plan.
func foldToConstants(g *ir.Graph, n *ir.Node) error {
	// The constants take n's place: before the node that followed it.
	var at *ir.Node
	if i := slices.Index(g.Nodes, n); i >= 0 && i+1 < len(g.Nodes) {
		at = g.Nodes[i+1]
	}
	g.RemoveNode(n)
	for i, o := range n.Outputs {
		if o == nil {
			continue
		}
		// The name says what happened: a report row "X/folded" with op
		// Constant is X computed at load time, not a kernel called X.
		name := g.UniqueName(n.Name + "/folded")
		if i > 0 {
			name = g.UniqueName(fmt.Sprintf("%s/folded_%d", n.Name, i))
		}
		c := &ir.Node{Name: name, OpType: "Constant", Outputs: []*ir.Value{o},
			Attrs: []*ir.Attribute{{Name: "value", Type: ir.AttrTensor, T: o.Const}}}
		if err := g.InsertNodeBefore(c, at); err != nil {
			return err
		}
	}
	return nil
}

// removeDead deletes, last to first so chains go in one sweep, nodes none
// of whose outputs is read or is a graph output, then initializers nothing
// reads. Graph inputs are the model's interface and stay.
func removeDead(g *ir.Graph) bool {
	changed := false
	if len(g.RemoveNodesBackward(func(n *ir.Node) bool { return deadNode(g, n) })) > 0 {
		changed = true
	}
	live := g.Initializers[:0]
	for _, v := range g.Initializers {
		if len(v.Consumers) == 0 && !g.IsGraphOutput(v) {
			g.RemoveValue(v)
			changed = true
			continue
		}
		live = append(live, v)
	}
	g.Initializers = live
	return changed
}

func deadNode(g *ir.Graph, n *ir.Node) bool {
	for _, o := range n.Outputs {
		if o != nil && (len(o.Consumers) > 0 || g.IsGraphOutput(o)) {
			return false
		}
	}
	return true
}

// eliminateCastORT removes each Cast to the dtype its input already has,
// as onnxruntime's CastElimination does at its basic level, before the
// fusions that would otherwise meet it: a Hugging Face RMSNorm's
// .to(torch.float32) on an fp32 residual, whose output torch.onnx also
// hands to the residual Add, kept SimplifiedLayerNormFusion's pattern
// from our plan where onnxruntime 1.23.2 fused all five of
// scripts/saved_tensors.py's llama_hf_small. Only the onnxruntime plan:
// under autocast, the other runtimes' dtypes as they run decide
// (cost's noOpCast).
func eliminateCastORT(g *ir.Graph) (bool, error) {
	changed := false
	for n := range nodesAtStart(g) {
		if n.Graph() != g || !isOp(n, "Cast") && !isOp(n, "CastLike") {
			continue
		}
		if in, out := n.In(0), n.Out(0); in != nil && out != nil && in.DType != ir.Undefined && in.DType == out.DType {
			changed = bypass(g, n) || changed
		}
	}
	return changed, nil
}

// eliminateNoopORT removes x+0, 0+x, x−0, x·1, 1·x and x/1, as
// onnxruntime's NoopElimination does at its basic level
// (onnxruntime/core/optimizer/noop_elimination.cc): one operand a
// constant of at most one element and no higher rank than the other (so
// the output is the other operand, shape and all), the constant second
// for Sub and Div, the output not a graph output. torchvision's RAFT
// divides its sampling grid by a constant 1 twice an update: onnxruntime
// 1.23.2 saved the model without those 22 Divs. PyTorch runs them, and
// an engine takes them into the elementwise chain around them, so only
// the onnxruntime plan.
func eliminateNoopORT(g *ir.Graph) (bool, error) {
	changed := false
	for n := range nodesOfType(g, "Add", "Sub", "Mul", "Div") {
		if n.Graph() != g || n.Domain != "" || len(n.Inputs) != 2 {
			continue
		}
		if keep := noopOperand(g, n); keep != nil && n.Out(0) != nil && n.Out(0).DType == keep.DType {
			changed = bypassTo(g, n, keep) || changed
		}
	}
	return changed, nil
}

// noopOperand is the operand an Add, Sub, Mul or Div n passes through
// unchanged (eliminateNoopORT's conditions), or nil. A constant is one
// onnxruntime knew when it built the graph (sessionKnown).
func noopOperand(g *ir.Graph, n *ir.Node) *ir.Value {
	known := func(v *ir.Value) *ir.Tensor {
		if v == nil || !sessionKnown(g, v) {
			return nil
		}
		return ir.Known(v)
	}
	k0, k1 := known(n.In(0)), known(n.In(1))
	if (k0 == nil) == (k1 == nil) || (n.OpType == "Sub" || n.OpType == "Div") && k1 == nil {
		return nil
	}
	c, keep := k1, n.In(0)
	if k0 != nil {
		c, keep = k0, n.In(1)
	}
	if keep == nil || !keep.Shape.Ranked || len(c.Dims) > keep.Shape.Rank() || c.NumElements() > 1 {
		return nil
	}
	switch c.DType {
	case ir.Float32, ir.Float16, ir.Float64, ir.Int32, ir.Int64:
	default:
		return nil
	}
	if c.NumElements() == 0 {
		return keep
	}
	var v float64
	switch {
	case len(c.Floats) == 1:
		v = c.Floats[0]
	case len(c.Ints) == 1:
		v = float64(c.Ints[0])
	default:
		return nil
	}
	if want := map[string]float64{"Add": 0, "Sub": 0, "Mul": 1, "Div": 1}[n.OpType]; v != want {
		return nil
	}
	return keep
}
