package cost

import (
	"math"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/internal/detmath"
	"github.com/onnxcost/onnxcost/ir"
)

// Per-box and per-pair work of non-maximum suppression, in flops.
const (
	// nmsAreaFLOPs: a box's area, (x2-x1)*(y2-y1), once per box.
	nmsAreaFLOPs = 3
	// nmsCenterFLOPs: center_point_box=1 boxes [xc,yc,w,h] become corners
	// (two halvings, two subtractions, two additions).
	nmsCenterFLOPs = 6
	// nmsIoUFLOPs: one pair's IoU test: 2 max + 2 min for the overlap's
	// corners, 2 subtractions and 2 clamps for its sides, 1 multiply for
	// its area, 2 for the union, 1 divide and 1 threshold compare.
	nmsIoUFLOPs = 13
)

func init() {
	RegisterRule("", "NonMaxSuppression", nmsRule)
}

// nmsRule: for each of the B·C (batch, class) pairs over N boxes,
// NonMaxSuppression filters by score (N compares), sorts the survivors
// (N·log2 N compares) and tests IoUs. The pairs tested depend on the data,
// so this is an upper bound: every pair, N(N-1)/2, as the bitmask kernels
// of torchvision's and TensorRT's GPU NMS compute. The number of boxes kept
// is data too: at most min(N, max_output_boxes_per_class) per pair, and the
// bytes written are counted at that bound (a missing bound keeps none).
func nmsRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := NodeEstimate{Class: perf.ClassReduction, Launches: 1, Note: "upper bound: every box pair's IoU tested, every allowed box kept"}
	c.Read(n, &e)
	boxes, bok := c.Dims(n.In(0))
	scores, sok := c.Dims(n.In(1))
	if !bok || !sok || len(boxes) != 3 || len(scores) != 3 {
		return e, nil // unknown counts were warned about by Dims
	}
	b, classes, nb := boxes[0], scores[1], boxes[1]
	pairs := b * classes
	perBox := nmsAreaFLOPs + 1.0 // area and score-threshold compare
	if n.AttrInt("center_point_box", 0) != 0 {
		perBox += nmsCenterFLOPs
	}
	sortCmp := nb * math.Max(1, detmath.Log2(math.Max(nb, 1)))
	iou := nb * math.Max(nb-1, 0) / 2 * nmsIoUFLOPs
	e.FLOPs = pairs * (nb*perBox + sortCmp + iou)
	kept := 0.0
	if v := n.In(2); v != nil {
		if v.Const == nil || len(v.Const.Ints) != 1 {
			c.Warnf("max_output_boxes_per_class is not a known constant; the selected indices are counted as none")
		} else {
			kept = math.Min(nb, math.Max(float64(v.Const.Ints[0]), 0))
		}
	}
	const indexFields = 3 // (batch, class, box) per selected box
	e.BytesWritten = pairs * kept * indexFields * float64(ir.Int64.Bits()) / 8
	return e, nil
}
