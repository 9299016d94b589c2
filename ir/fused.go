package ir

import "strings"

// The fused-op contract. Package passes writes nodes in FusedDomain;
// package cost prices them; `onnxcost optimize` writes them to a file that
// this package reads back. All three sides use these names, keys and
// accessors, and the shape rules in ops_fused.go; none spells a key as a
// string literal.
//
// FusedConv, WinogradConv and FusedGemm carry an epilogue:
//
//	anchor         string  Gemm or MatMul: the op FusedGemm was built around (default MatMul)
//	residual       int     1: input 3 is added after the bias
//	activation     string  the absorbed activation's op type (Relu, Clip, Silu, ...)
//	activation_*   any     that activation's own attributes (activation_alpha, activation_min, ...)
//	pool           string  FusedConv only: a pooling op applied last (MaxPool, AveragePool, ...)
//	pool_*         any     the pooling op's own attributes (pool_kernel_shape, ...)
//	winograd_tile  int     WinogradConv only: the output tile m of F(m×m, 3×3)
//
// Any other attribute of FusedConv/FusedGemm is the anchor's own (strides,
// pads, transB, ...). FusedElementwise, Gelu, Softmax and LayerNormalization
// record the default-domain nodes they replaced as parts (part_*), and
// every fused node may record its output dtypes (out_dtypes) so that a
// written graph re-infers under other bindings.
const FusedDomain = "onnxcost"

// Op types in FusedDomain.
const (
	OpFusedConv        = "FusedConv"
	OpWinogradConv     = "WinogradConv"
	OpFusedGemm        = "FusedGemm"
	OpGroupedGemm      = "GroupedGemm"
	OpFusedElementwise = "FusedElementwise"
	OpFusedGelu        = "Gelu"
	OpFusedSoftmax     = "Softmax"
	OpFusedLayerNorm   = "LayerNormalization"
	OpFusedAttention   = "FusedAttention"
	OpSkipLayerNorm    = "SkipLayerNormalization"
)

// Attribute keys of fused nodes.
const (
	KeyAnchor           = "anchor"
	KeyResidual         = "residual"
	KeyActivation       = "activation"
	KeyActivationPrefix = "activation_"
	KeyPool             = "pool"
	KeyPoolPrefix       = "pool_"
	KeyWinogradTile     = "winograd_tile"
	KeyNumHeads         = "num_heads"
	KeyOutDTypes        = "out_dtypes"
	KeyTransB           = "trans_b" // GroupedGemm: per weight, 1 when stored [N, K]
	// The part attributes: a fused node from the decomposition, elementwise
	// or attention passes records, for each node it replaced, the op
	// ("Op", or "domain.Op" outside the default domain), the element counts
	// of its first input and its output, and how many inputs it read; the
	// cost rules sum the parts' own costs over them, so a fused node's
	// FLOPs are exactly those of the nodes it replaced. An unknown count
	// is -1.
	KeyPartOps   = "part_ops"
	KeyPartIn    = "part_in"
	KeyPartOut   = "part_out"
	KeyPartArity = "part_arity"
)

// IsFused reports whether n is the fused op typ.
func IsFused(n *Node, typ string) bool {
	return n != nil && n.Domain == FusedDomain && n.OpType == typ
}

// EpilogueOf reads a fused Conv/Gemm node's epilogue: the absorbed
// activation ("" for none), whether a residual input is added, and the
// pooling op ("" for none).
func EpilogueOf(n *Node) (act string, residual bool, pool string) {
	return n.AttrString(KeyActivation, ""), n.AttrInt(KeyResidual, 0) != 0, n.AttrString(KeyPool, "")
}

// AnchorOf is the op a FusedGemm was built around: Gemm or MatMul.
func AnchorOf(n *Node) string { return n.AttrString(KeyAnchor, "MatMul") }

// SplitPoolAttrs separates a FusedConv's attributes into the convolution's
// own and the pooling op's, with the pool_ prefix removed (copies; n is
// not changed).
func SplitPoolAttrs(n *Node) (conv, pool []*Attribute) {
	for _, a := range n.Attrs {
		if name, ok := strings.CutPrefix(a.Name, KeyPoolPrefix); ok {
			cp := *a
			cp.Name = name
			pool = append(pool, &cp)
		} else {
			conv = append(conv, a)
		}
	}
	return conv, pool
}
