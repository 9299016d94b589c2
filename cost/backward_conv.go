package cost

import (
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
)

// convGeomOf is the 2-D convolution geometry of a Conv, FusedConv or
// WinogradConv node, which its gradient kernels are priced from
// (perf.EstimateConvGrad: the data gradient's own implicit GEMM, the
// cheaper Winograd where it applies). ok is false where the geometry is
// not a plain 2-D convolution with known shapes (dilation, an auto_pad
// whose padding is not written, an unknown dim): convBackward then keeps
// the forward's GEMM view.
func convGeomOf(b *bwCtx) (perf.ConvGeom, bool) {
	n := b.n
	if !(n.OpType == "Conv" && n.Domain == "") && !ir.IsFused(n, ir.OpFusedConv) && !ir.IsFused(n, ir.OpWinogradConv) {
		return perf.ConvGeom{}, false
	}
	xd, okx := b.c.Dims(n.In(0))
	wd, okw := b.c.Dims(n.In(1))
	if !okx || !okw || len(xd) != 4 || len(wd) != 4 {
		return perf.ConvGeom{}, false
	}
	if ap := n.AttrString("auto_pad", "NOTSET"); ap != "NOTSET" && ap != "" && ap != "VALID" {
		return perf.ConvGeom{}, false
	}
	if d, ok := n.AttrInts("dilations"); ok {
		for _, v := range d {
			if v != 1 {
				return perf.ConvGeom{}, false
			}
		}
	}
	stride := [2]int64{1, 1}
	if s, ok := n.AttrInts("strides"); ok && len(s) == 2 {
		stride = [2]int64{s[0], s[1]}
	}
	// ONNX pads are [top, left, bottom, right]; ConvGeom pads each side
	// alike, so an odd total rounds up (one row more, at most).
	var pad [2]int64
	if p, ok := n.AttrInts("pads"); ok && len(p) == 4 {
		pad = [2]int64{(p[0] + p[2] + 1) / 2, (p[1] + p[3] + 1) / 2}
	}
	g := perf.ConvGeom{
		N: clampInt(xd[0]), C: clampInt(xd[1]), H: clampInt(xd[2]), W: clampInt(xd[3]),
		K: clampInt(wd[0]), R: clampInt(wd[2]), S: clampInt(wd[3]),
		PadH: pad[0], PadW: pad[1], StrideH: stride[0], StrideW: stride[1],
		Group: max(n.AttrInt("group", 1), 1),
	}
	if g.N <= 0 || g.C <= 0 || g.K <= 0 || g.R <= 0 || g.S <= 0 || g.StrideH <= 0 || g.StrideW <= 0 || g.P() <= 0 || g.Q() <= 0 {
		return perf.ConvGeom{}, false
	}
	return g, true
}
