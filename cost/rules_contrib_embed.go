package cost

import (
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
)

func init() {
	RegisterRule(msDomain, "EmbedLayerNormalization", embedLayerNormRule)
	RegisterRule(msDomain, "QEmbedLayerNormalization", qEmbedLayerNormRule)
}

// qEmbedLayerNormRule: QEmbedLayerNormalization is embedLayerNormRule's
// kernel over 8-bit tables (their bytes at one byte an element), which
// dequantizes every element it reads: each gathered table element, and
// gamma and beta once per output element, as onnxruntime's kernel does
// (2 flops each: subtract the zero point, multiply by the scale).
//
//	flops = embedLayerNormRule's + 2·(t + 2)·out
func qEmbedLayerNormRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e, err := embedLayerNormRule(n, c)
	if err != nil {
		return e, err
	}
	tables := 0.0
	for _, slot := range []int{2, 3, 4} {
		if n.In(slot) != nil {
			tables++
		}
	}
	dq, _ := quantCounts()
	e.FLOPs += dq * (tables + 2) * c.Numel(n.Out(0))
	return e, nil
}

// embedLayerNormRule: onnxruntime's fused BERT embedding, one kernel per
// token row: gather the word, position and (optional) segment rows, add
// them, layer-normalize the sum. With out = numel(output) = B·S·hidden,
// rows = B·S and t the tables present (2 or 3):
//
//	flops = (t−1)·out (the adds: 2 per element for word+position+segment,
//	        as SkipLayerNormalization's 1 residual add)
//	      + 8·out + rows (LayerNormalization's count: mean 1, variance 3,
//	        normalize 2, scale and shift 2 per element; 1 rsqrt per row)
//	      + numel(mask) (mask_index counts each sequence's ones: one
//	        compare-and-add per mask element)
//	transcendentals = rows (the rsqrt)
//	bytes = the gathered rows of each table (out elements each, at most the
//	        table, as Gather), ids, segment ids, mask, position ids,
//	        gamma and beta read once; output, mask_index and embedding_sum
//	        written once
//
// So with three tables it is SkipLayerNormalization's 9 per element plus
// one: the extra embedding is one more add.
func embedLayerNormRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := NodeEstimate{Class: perf.ClassReduction, Launches: 1}
	out := c.Numel(n.Out(0))
	tables := 0.0
	for i, v := range n.Inputs {
		if v == nil {
			continue
		}
		switch i {
		case 2, 3, 4: // word, position, segment tables: only the looked-up rows move
			tables++
			e.BytesRead += min(c.Bytes(v), out*c.elemBytes(v))
			c.param(v, &e)
		default:
			c.readOne(v, &e)
		}
	}
	c.Write(n, &e)
	hidden, ok := c.Dim(n.Out(0), -1)
	if !ok || hidden <= 0 || out <= 0 {
		return e, nil
	}
	rows := out / hidden
	e.FLOPs = max(tables-1, 0)*out + normOps["LayerNormalization"].inFLOPs*out + normOps["LayerNormalization"].rowFLOPs*rows + c.Numel(n.In(7))
	e.Transcendentals = normOps["LayerNormalization"].rowTrans * rows
	e.Rows, e.RowLen, e.RowPasses = clampInt(rows), clampInt(hidden), rowPasses["LayerNormalization"]
	return e, nil
}
