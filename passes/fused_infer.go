package passes

import (
	"github.com/onnxcost/onnxcost/ir"
)

// Shape inference for the fused ops of the decomposition, elementwise and
// attention passes, so that a graph written by `onnxcost optimize` reads
// back and re-infers. (FusedConv, WinogradConv, FusedGemm: epilogue_infer.go;
// GroupedGemm: qkv.go; SkipLayerNormalization: skipln.go.)
func init() {
	ir.Register(
		// Gelu, Softmax, LayerNormalization: y has x's shape.
		&ir.OpSchema{Domain: Domain, Name: "Gelu", Since: 1, MinIn: 1, MaxIn: -1, MinOut: 1, MaxOut: 1, Infer: inferLikeFirst},
		&ir.OpSchema{Domain: Domain, Name: "Softmax", Since: 1, MinIn: 1, MaxIn: -1, MinOut: 1, MaxOut: 1, Infer: inferLikeFirst},
		&ir.OpSchema{Domain: Domain, Name: "LayerNormalization", Since: 1, MinIn: 1, MaxIn: -1, MinOut: 1, MaxOut: 1, Infer: inferLikeFirst},
		// FusedElementwise: a chain of broadcasting ops, so the result has
		// the broadcast shape of every input.
		&ir.OpSchema{Domain: Domain, Name: "FusedElementwise", Since: 1, MinIn: 1, MaxIn: -1, MinOut: 1, MaxOut: 1, Infer: inferBroadcastAll},
		// FusedAttention(Q, K, V, mask...): softmax(Q·Kᵀ)·V keeps Q's
		// leading dims and V's last (head) dim, whether the head split is
		// inside the node ([B,L,H·d]) or outside ([B,H,L,d]).
		&ir.OpSchema{Domain: Domain, Name: "FusedAttention", Since: 1, MinIn: 3, MaxIn: -1, MinOut: 1, MaxOut: 1, Infer: inferAttention},
	)
}

// outDType is the recorded output dtype, or input 0's.
func outDType(c *ir.InferCtx, i int) ir.DType {
	if dts, ok := c.AttrInts(attrOutDTypes); ok && i < len(dts) && ir.DType(dts[i]).Valid() {
		return ir.DType(dts[i])
	}
	return c.InType(0)
}

func inferLikeFirst(c *ir.InferCtx) error {
	return c.SetOut(0, outDType(c, 0), c.InShape(0).Clone())
}

func inferBroadcastAll(c *ir.InferCtx) error {
	var shapes []ir.Shape
	for i := 0; i < c.NumIn(); i++ {
		if v := c.In(i); v != nil && v.Kind == ir.TensorValue {
			shapes = append(shapes, v.Shape)
		}
	}
	s, err := ir.BroadcastShapes(shapes...)
	if err != nil {
		return c.Errorf("%v", err)
	}
	return c.SetOut(0, outDType(c, 0), s)
}

func inferAttention(c *ir.InferCtx) error {
	q, v := c.InShape(0), c.InShape(2)
	if !q.Ranked || !v.Ranked || q.Rank() < 2 || v.Rank() < 1 {
		return c.SetOut(0, outDType(c, 0), ir.Unranked())
	}
	out := q.Clone()
	out.Dims[len(out.Dims)-1] = v.Dims[len(v.Dims)-1]
	return c.SetOut(0, outDType(c, 0), out)
}
