package passes

import (
	"slices"

	"github.com/onnxcost/onnxcost/ir"
)

// A zero Pad of the spatial axes read only by a convolution or pooling is
// that op's own padding, which its kernel applies as it reads: no padded
// copy is written. Exporters write it so: torch.onnx renders
// avg_pool2d(padding=p) (count_include_pad=True, PyTorch's default) as a
// Pad and an AveragePool without pads (torchvision's Inception-v3 has
// nine), and a model that pads by hand (F.pad, TensorFlow's SAME padding
// ported) as a Pad before its Conv. What folds depends on the runtime:
//
//   - fold-pad (the fused plan): into a Conv, whose implicit padding is
//     zeros, and into an AveragePool whose window counts the padding
//     (count_include_pad, or no pads of its own): the same numbers either
//     way. Not into a MaxPool, whose padding is −∞, not 0.
//   - fold-pad-ort (onnxruntime's PadFusion, a level-1 rewrite every
//     provider runs; onnxruntime/core/optimizer/pad_fusion.cc): into a
//     Conv, AveragePool or MaxPool that has a pads attribute and one
//     output, a MaxPool whatever the values (its padding is −∞, so
//     onnxruntime's numbers differ from the file's where a window holds
//     only the Pad's zeros or negative values), an AveragePool under
//     the fused plan's condition (microsoft/onnxruntime PR #23190: our
//     onnxruntime-node 1.23.2 at the basic level keeps a Pad before an
//     AveragePool of its own pads and count_include_pad 0, and folds one
//     before a pool without pads, setting count_include_pad 1).
//     onnxruntime 1.23.2 saved torchvision's Inception-v3 with its nine
//     Pads folded into their AveragePools (pads 1, count_include_pad 1).
//   - fold-pad-pool (PyTorch eager and Inductor): into an AveragePool
//     only, the export of avg_pool2d's own padding, one ATen kernel that
//     saves its unpadded input for backward (autograd's saved tensors of
//     Inception-v3 in training: with the Pads as copies, 9.9% over).
//     A Pad before a Conv is an F.pad the module runs as its own kernel.

// padInto says which readers a fold-pad variant folds a Pad into.
type padInto struct {
	conv, avgPool, maxPool bool
	// ort: onnxruntime's condition that the reader has a pads
	// attribute.
	ort bool
}

func foldPad(g *ir.Graph) (bool, error) { return foldPadInto(g, padInto{conv: true, avgPool: true}) }

func foldPadORT(g *ir.Graph) (bool, error) {
	return foldPadInto(g, padInto{conv: true, avgPool: true, maxPool: true, ort: true})
}

func foldPadPool(g *ir.Graph) (bool, error) { return foldPadInto(g, padInto{avgPool: true}) }

func foldPadInto(g *ir.Graph, into padInto) (bool, error) {
	changed := false
	for n := range nodesOfType(g, "Pad") {
		if n.Graph() != g || !isOp(n, "Pad") {
			continue
		}
		pads, ok := zeroSpatialPads(n)
		if !ok {
			continue
		}
		c := padReader(g, n, into)
		if c == nil {
			continue
		}
		spatial := len(pads)/2 - 2
		own, ok := c.AttrInts("pads")
		if !ok {
			own = make([]int64, 2*spatial)
		}
		if len(own) != 2*spatial {
			continue
		}
		if isOp(c, "AveragePool") && c.AttrInt("count_include_pad", 0) == 0 && slices.ContainsFunc(own, func(p int64) bool { return p != 0 }) {
			continue // its own padding is left out of the count; the Pad's would not be
		}
		if isOp(c, "AveragePool") && c.AttrInt("count_include_pad", 0) == 0 && c.AttrInt("ceil_mode", 0) != 0 {
			// count_include_pad 1 would also count a ceil_mode window's
			// overhang past the padding, as onnxruntime divides (PyTorch
			// does not): the runtimes disagree on the folded pool.
			continue
		}
		merged := slices.Clone(own)
		for i := range spatial {
			merged[i] += pads[2+i]
			merged[spatial+i] += pads[len(pads)/2+2+i]
		}
		if !bypass(g, n) {
			continue
		}
		c.SetAttr(ir.IntsAttr("pads", merged...))
		if isOp(c, "AveragePool") {
			c.SetAttr(ir.IntAttr("count_include_pad", 1))
		}
		changed = true
	}
	return changed, nil
}

// zeroSpatialPads is the pads of a constant-mode Pad n that pads with
// zeros, only the axes after the first two (NC, then spatial), by no
// negative amount, on a tensor of rank 3 or more; ok is false for any
// other Pad, or one whose pads or value are not known constants.
func zeroSpatialPads(n *ir.Node) ([]int64, bool) {
	if n.AttrString("mode", "constant") != "constant" {
		return nil, false
	}
	var pads []int64
	if p := n.In(1); p != nil { // opset 11 and later: pads, constant_value, axes as inputs
		t := ir.Known(p)
		if t == nil || n.In(3) != nil {
			return nil, false
		}
		pads = t.Ints
		if v := n.In(2); v != nil {
			cv := ir.Known(v)
			if cv == nil || slices.ContainsFunc(cv.Floats, func(f float64) bool { return f != 0 }) || slices.ContainsFunc(cv.Ints, func(i int64) bool { return i != 0 }) {
				return nil, false
			}
		}
	} else {
		var ok bool
		if pads, ok = n.AttrInts("pads"); !ok || n.AttrFloat("value", 0) != 0 {
			return nil, false
		}
	}
	r := len(pads) / 2
	if r < 3 || len(pads) != 2*r || n.In(0) == nil || n.In(0).Shape.Ranked && n.In(0).Shape.Rank() != r {
		return nil, false
	}
	if pads[0] != 0 || pads[1] != 0 || pads[r] != 0 || pads[r+1] != 0 || slices.ContainsFunc(pads, func(p int64) bool { return p < 0 }) {
		return nil, false
	}
	return pads, true
}

// padReader is the one reader of Pad n's output that into folds it into,
// reading it as its data input (not a weight) with explicit padding, or
// nil.
func padReader(g *ir.Graph, n *ir.Node, into padInto) *ir.Node {
	out := n.Out(0)
	if out == nil || g.IsGraphOutput(out) || len(out.Consumers) != 1 {
		return nil
	}
	c := out.Consumers[0]
	switch {
	case isOp(c, "Conv") && into.conv, isOp(c, "AveragePool") && into.avgPool:
	case isOp(c, "MaxPool") && into.maxPool:
		if slices.ContainsFunc(c.Outputs[1:], func(v *ir.Value) bool { return v != nil }) {
			return nil // its indices would index the unpadded tensor
		}
	default:
		return nil
	}
	if c.In(0) != out || slices.Contains(c.Inputs[1:], out) || c.AttrString("auto_pad", "NOTSET") != "NOTSET" {
		return nil
	}
	if _, ok := c.AttrInts("pads"); into.ort && !ok {
		return nil
	}
	return c
}
