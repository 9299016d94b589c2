package passes

import (
	"github.com/onnxcost/onnxcost/ir"
)

// winograd substitutes Winograd convolution for direct convolution where
// cuDNN's and TensorRT's algorithm search would pick it:
//
//	Conv(x,w,b){3x3, stride 1, dilation 1, group 1}      -> WinogradConv(x,w,b){winograd_tile=m}
//	FusedConv(x,w,b,r){3x3, stride 1, dilation 1, group 1} -> WinogradConv(x,w,b,r){winograd_tile=m, epilogue kept}
//
// onnxcost::WinogradConv takes exactly FusedConv's inputs and attributes
// (a plain Conv has no epilogue attributes) plus winograd_tile (int m: the
// kernel is F(m×m, 3×3), tiles of (m+2)×(m+2) inputs). Its FusedFrom names
// the convolution it replaced (and that node's own FusedFrom).
//
// Tile rule, per node (P×Q is the convolution's output, C and K its input
// and output channels):
//   - not at all unless C ≥ winogradMinChannels and K ≥ winogradMinChannels:
//     with few channels the transforms, whose cost is per channel and per
//     tile, are not amortised over the C·K products, and libraries pick
//     implicit GEMM;
//   - F(4×4,3×3) when P, Q ≥ winogradBigTileMinOut and C, K ≥
//     winogradBigTileMinChannels and the two rules below hold for it: 36
//     products per 16 outputs (2.25 per output instead of 9), worth its
//     larger transforms and its fp32 rounding error only on large enough
//     layers;
//   - else F(2×2,3×3) if the rules below hold for it: 16 products per 4
//     outputs (4 per output); cuDNN runs it as its fused kernel, whose
//     executed arithmetic the cost rule counts (cost/winograd_variant.go);
//   - and only if the tiling pays: (m+2)²·⌈P/m⌉·⌈Q/m⌉ ≤ winogradMaxProductRatio
//     · 9·P·Q (partial tiles at the border waste products; a 2×2 output
//     gains nothing);
//   - and only with at least winogradMinTiles tiles in all, N·⌈P/m⌉·⌈Q/m⌉
//     (the M of each of the (m+2)² batched GEMMs): fewer rows leave most
//     of the GPU idle, and the cost model then prices Winograd slower than
//     implicit GEMM (ResNet-50 at batch 1: layer3's 14×14 and layer4's 7×7
//     convolutions have 16 tiles and run 1.5-2× slower as Winograd on T4
//     and A100, while layer1/layer2 with 196 and 49 tiles run 1.1-1.7×
//     faster). A symbolic batch counts as 1.
//
// The filter transform is done once, offline, as TensorRT does at build
// time; the cost rule counts the transformed filter's bytes instead of the
// 3×3 weights.
func winograd(g *ir.Graph) (bool, error) {
	changed := false
	for n := range nodesOfType(g, "Conv", ir.OpFusedConv) {
		if n.Graph() != g {
			continue
		}
		if !isOp(n, "Conv") && !ir.IsFused(n, ir.OpFusedConv) {
			continue
		}
		m := winogradTile(n)
		if m == 0 {
			continue
		}
		w := &ir.Node{Name: n.Name, OpType: ir.OpWinogradConv, Domain: ir.FusedDomain,
			FusedFrom: nodeNames(n),
			Inputs:    append([]*ir.Value(nil), n.Inputs...),
			Outputs:   append([]*ir.Value(nil), n.Outputs...)}
		w.SetDoc(n.Doc())
		for _, a := range n.Attrs {
			c := *a
			w.Attrs = append(w.Attrs, &c)
		}
		w.SetAttr(&ir.Attribute{Name: ir.KeyWinogradTile, Type: ir.AttrInt, I: m})
		if err := swapIn(g, []*ir.Node{n}, w); err != nil {
			return changed, err
		}
		changed = true
	}
	return changed, nil
}

const (
	winogradMinChannels        = 16
	winogradBigTileMinOut      = 8
	winogradBigTileMinChannels = 64
	winogradMaxProductRatio    = 0.75
	winogradMinTiles           = 32
)

// winogradTile returns the output tile m (2 or 4) for a convolution node,
// or 0 when Winograd does not apply or does not pay.
func winogradTile(n *ir.Node) int64 {
	x, w, y := n.In(0), n.In(1), n.Out(0)
	if !floatTensor(x) || !floatTensor(y) || w == nil || constant(w) == nil {
		return 0 // the filter transform is offline: the weights must be constant
	}
	wd, ok := w.Shape.Ints()
	if !ok || len(wd) != 4 || wd[2] != 3 || wd[3] != 3 {
		return 0
	}
	if n.AttrInt("group", 1) != 1 || !allOnes(n, "strides") || !allOnes(n, "dilations") {
		return 0
	}
	xd := x.Shape.Dims
	if len(xd) != 4 || !xd[1].IsKnown() || !xd[2].IsKnown() || !xd[3].IsKnown() {
		return 0
	}
	c, k := xd[1].Value, wd[0]
	if c != wd[1] || c < winogradMinChannels || k < winogradMinChannels {
		return 0
	}
	p, q, ok := winogradConvOut(n, xd[2].Value, xd[3].Value)
	if !ok || p <= 0 || q <= 0 {
		return 0
	}
	batch := int64(1)
	if xd[0].IsKnown() && xd[0].Value > 0 {
		batch = xd[0].Value
	}
	if p >= winogradBigTileMinOut && q >= winogradBigTileMinOut && c >= winogradBigTileMinChannels && k >= winogradBigTileMinChannels &&
		winogradPays(4, p, q, batch) {
		return 4
	}
	// Too small for F(4×4) (a batch-1 13×13 layer has 16 4×4 tiles):
	// F(2×2), which cuDNN runs as its fused kernel (cost/winograd_variant.go).
	if winogradPays(2, p, q, batch) {
		return 2
	}
	return 0
}

// winogradPays applies the tiling and tile-count rules to F(m×m,3×3).
func winogradPays(m, p, q, batch int64) bool {
	products := float64((m+2)*(m+2)) * float64(ceilDiv(p, m)*ceilDiv(q, m))
	if products > winogradMaxProductRatio*9*float64(p*q) {
		return false
	}
	return batch*ceilDiv(p, m)*ceilDiv(q, m) >= winogradMinTiles
}

// winogradConvOut is the output size of a 3×3, stride-1, dilation-1
// convolution of an h×w input: h + pads − 2 (SAME keeps h, VALID pads 0).
func winogradConvOut(n *ir.Node, h, w int64) (p, q int64, ok bool) {
	autoPad := n.AttrString("auto_pad", "NOTSET")
	switch autoPad {
	case "SAME_UPPER", "SAME_LOWER", "VALID", "NOTSET", "":
	default:
		return 0, 0, false
	}
	pads, ok := n.AttrInts("pads")
	if !ok {
		pads = []int64{0, 0, 0, 0}
	}
	if len(pads) != 4 {
		return 0, 0, false
	}
	// A non-positive size is kept (ok is ignored): the caller's tile
	// count rejects it.
	p, _ = ir.ConvOutDim(h, 3, 1, 1, pads[0], pads[2], autoPad)
	q, _ = ir.ConvOutDim(w, 3, 1, 1, pads[1], pads[3], autoPad)
	return p, q, true
}

// allOnes: an INTS attribute that is absent (default 1) or all 1.
func allOnes(n *ir.Node, name string) bool {
	v, _ := n.AttrInts(name)
	for _, x := range v {
		if x != 1 {
			return false
		}
	}
	return true
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }
