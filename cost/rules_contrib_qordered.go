package cost

import (
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
)

// Cost rules for onnxruntime's QOrdered ops (ir/ops_contrib_qordered.go),
// each one kernel at int8 (integerQuantOp) with the layout change inside
// it:
//
//	QuantizeWithOrder    QuantizeLinear's 3 flops an element
//	DequantizeWithOrder  DequantizeLinear's 2
//	QOrderedMatMul       MatMul's count over A and B, + 1 an output for a
//	                     bias, + 2 for C (scaled and added), + the
//	                     quantize of each output
//	QOrderedGelu         dequantize, Gelu and quantize an element
//	QOrderedLayerNorm.   LayerNormalization's count, + the dequantize of
//	                     each element read and the quantize of each written

func init() {
	RegisterRule(msDomain, "QuantizeWithOrder", elementwiseAs("QuantizeLinear"))
	RegisterRule(msDomain, "DequantizeWithOrder", elementwiseAs("DequantizeLinear"))
	RegisterRule(msDomain, "QOrderedMatMul", qorderedMatMulRule)
	RegisterRule(msDomain, "QOrderedGelu", qlinearElementwiseRule("Gelu", 1))
	RegisterRule(msDomain, "QOrderedAttention", qorderedAttentionRule)
	RegisterRule(msDomain, "QOrderedLayerNormalization", func(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
		return quantizedPart(n, c, "LayerNormalization", []*ir.Attribute{ir.IntAttr("axis", n.AttrInt("axis", -1))})
	})
}

// elementwiseAs is one elementwise kernel at op's count an output element.
func elementwiseAs(op string) Rule {
	return func(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
		e := kernel(n, c, perf.ClassElementwise)
		f, tr, _ := OpCount(op)
		out := c.Numel(n.Out(0))
		e.FLOPs, e.Transcendentals = f*out, tr*out
		return e, nil
	}
}

func qorderedMatMulRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e, err := matmulRule(0, 2)(n, c)
	if err != nil {
		return e, err
	}
	_, q := quantCounts()
	per := q
	if n.In(5) != nil {
		per++
	}
	if n.In(6) != nil {
		per += 2
	}
	e.FLOPs += per * c.Numel(n.Out(0))
	return e, nil
}

// qorderedAttentionRule: QOrderedAttention as qordered_attention.cc runs
// it, int8 throughout, seven kernels over input [B, S, in] and hidden =
// H·d:
//
//	Q|K|V    one int8 GEMM over the merged weights (bias in its
//	         epilogue): B·S·in·3·hidden MACs, + 1 flop an output
//	layout   Q|K|V transposed to [3, B, H, S, d]; V to [B, H, d, S]; the
//	         context back to [B, S, hidden]: each read and written
//	scores   Q·Kᵀ and P·V int8 batched GEMMs over B·H·S·S scores (2d MACs
//	         each), written and read by the masked softmax (a lookup
//	         table: Softmax's count)
func qorderedAttentionRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassGEMM)
	h := float64(n.AttrInt("num_heads", 0))
	x, ok1 := c.Dims(n.In(0))
	y, ok2 := c.Dims(n.Out(0))
	if !ok1 || !ok2 || len(x) != 3 || len(y) != 3 || h <= 0 {
		return e, nil
	}
	b, s, in, hid := x[0], x[1], x[2], y[2]
	eb := c.elemBytes(n.Out(0))
	qkv := b * s * 3 * hid
	e.MACs = qkv * in
	e.FLOPs = perf.FMAFLOPs*e.MACs + qkv
	e.M, e.N, e.K, e.Batch = clampInt(b*s), clampInt(3*hid), clampInt(in), 1
	// The GEMM's output; its transpose; V's transpose; the context
	// written and transposed into the output (written by kernel).
	e.BytesWritten += (qkv + qkv + b*s*hid + b*s*hid) * eb
	e.BytesRead += (qkv + qkv + b*s*hid + b*s*hid) * eb
	unfusedScores(&e, b*h*s*s, b*h*s, hid/h, eb)
	e.Launches = 7
	e.Note = "int8 Q|K|V GEMM, then unfused int8 attention: the B·H·S·S scores written and read back by the masked softmax and P·V"
	return e, nil
}
