package passes

import (
	"github.com/onnxcost/onnxcost/ir"
)

// splitConvBias gives every biased Conv's bias its own kernel:
//
//	Conv(x, W, b) -> Add(Conv(x, W), b as [K, 1, …, 1])
//
// This is what PyTorch eager runs: ATen's cuDNN convolution computes the
// product without the bias and then adds it in place with a separate
// broadcast kernel (aten/src/ATen/native/Convolution.cpp: the cuDNN and
// MIOpen backends call output.add_(reshape_bias(...)) after the
// convolution), a full read and write of the output that the ONNX file's
// single Conv hides. The Add is marked in place (ir.Node.InPlace): add_
// allocates nothing. A plan variant: only the eager and inductor plans
// run it (inductor then fuses the Add into the pointwise chain after it).
func splitConvBias(g *ir.Graph) (bool, error) {
	changed := false
	err := g.Batch(func() error {
		for n := range nodesOfType(g, "Conv") {
			if n.Graph() != g || !isOp(n, "Conv") || !splittable(n) {
				continue
			}
			if err := applyBiasSplit(g, n); err != nil {
				return err
			}
			changed = true
		}
		return nil
	})
	return changed, err
}

// SplitBiasSuffix ends the name of the initializer splitConvBias gives a
// split bias: what tells a reader that the Conv before its Add had one.
const SplitBiasSuffix = "_bias_bcast"

// splittable: a float Conv of known rank with a 1-D bias of its output
// channel count.
func splittable(n *ir.Node) bool {
	y, b := n.Out(0), n.In(2)
	if b == nil || !floatTensor(y) || len(y.Shape.Dims) < 3 || !b.Shape.Ranked || len(b.Shape.Dims) != 1 || b.Shape.Dims[0].Sym != "" {
		return false
	}
	for _, o := range n.Outputs[1:] {
		if o != nil {
			return false
		}
	}
	return b.DType == y.DType
}

// applyBiasSplit inserts the bias-free Conv before n and replaces n with
// the Add, which keeps writing n's output value.
func applyBiasSplit(g *ir.Graph, n *ir.Node) error {
	y, b := n.Out(0), n.In(2)
	mid, err := g.NewValue(g.UniqueName(n.Name + "_nobias"))
	if err != nil {
		return err
	}
	mid.Kind, mid.DType, mid.Shape = y.Kind, y.DType, y.Shape
	conv := &ir.Node{Name: n.Name, OpType: "Conv", Attrs: append([]*ir.Attribute(nil), n.Attrs...),
		Inputs: []*ir.Value{n.In(0), n.In(1)}, Outputs: []*ir.Value{mid}, FusedFrom: n.FusedFrom}
	conv.SetDoc(n.Doc())
	conv.AddFoldedFLOPs(n.FoldedFLOPs())
	inheritModule(conv, n)
	if err := g.InsertNodeBefore(conv, n); err != nil {
		return err
	}
	bias, err := newInitializer(g, n.Name+SplitBiasSuffix, broadcastBias(b, len(y.Shape.Dims)))
	if err != nil {
		return err
	}
	add := &ir.Node{Name: g.UniqueName(n.Name + "/bias"), OpType: "Add",
		Inputs: []*ir.Value{mid, bias}, Outputs: []*ir.Value{y}}
	add.SetInPlace()
	return swapIn(g, []*ir.Node{n}, add)
}

// broadcastBias is b ([K]) reshaped to [K, 1, …, 1] so that it broadcasts
// along the channel axis of a rank-r output; its contents are b's when
// known, else marked missing (the cost needs only its dims and bytes).
func broadcastBias(b *ir.Value, rank int) *ir.Tensor {
	dims := make([]int64, rank-1)
	for i := range dims {
		dims[i] = 1
	}
	dims[0] = b.Shape.Dims[0].Value
	if t := ir.Known(b); t != nil && t.DType.IsFloat() && len(t.Floats) > 0 {
		return ir.FloatTensor(t.DType, dims, t.Floats)
	}
	return &ir.Tensor{DType: b.DType, Dims: dims, Loc: ir.DataLocation{Missing: true}}
}
