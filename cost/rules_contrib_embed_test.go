package cost

import (
	"math"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/ir/irtest"
)

// bertEmbedModel is BERT-base's EmbedLayerNormalization as onnxruntime's
// transformers optimizer writes it: int32 ids [batch, seq], fp32 tables
// word [30522, 768], position [512, 768], segment [2, 768] (segment
// omitted when segments is false), gamma and beta [768], the int32 mask,
// and the outputs output and mask_index (and embedding_sum when sum).
func bertEmbedModel(t *testing.T, batch, seq int64, segments, sum bool) *irtest.Builder {
	b := irtest.New(t, 17)
	b.M.Opsets = append(b.M.Opsets, ir.OpsetImport{Domain: "com.microsoft", Version: 1})
	ids := b.Input("input_ids", ir.Int32, batch, seq)
	var segIDs, segTable *ir.Value
	if segments {
		segIDs = b.Input("segment_ids", ir.Int32, batch, seq)
		segTable = initializer(b, "segment", ir.Float32, 2, 768)
	}
	mask := b.Input("mask", ir.Int32, batch, seq)
	ins := []*ir.Value{ids, segIDs, initializer(b, "word", ir.Float32, 30522, 768), initializer(b, "position", ir.Float32, 512, 768),
		segTable, initializer(b, "gamma", ir.Float32, 768), initializer(b, "beta", ir.Float32, 768), mask}
	nout := 2
	if sum {
		nout = 3
	}
	n := b.Node("EmbedLayerNormalization", ins, nout, ir.FloatAttr("epsilon", 1e-12))
	n.Domain = "com.microsoft"
	b.Output(n.Outputs...)
	b.Infer()
	return b
}

// TestEmbedLayerNormArithmetic: BERT-base's embedding for 2 sequences of
// 128 tokens at fp32.
func TestEmbedLayerNormArithmetic(t *testing.T) {
	const (
		b, s, h = 2.0, 128.0, 768.0
		out     = b * s * h // 196,608 output elements
		rows    = b * s     // one layer norm per token
		maskEl  = b * s
	)
	for _, tc := range []struct {
		name          string
		segments, sum bool
		tables        float64
	}{
		{"word+position+segment", true, false, 3},
		{"distilbert: word+position, embedding_sum written", false, true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := analyzeOn(t, bertEmbedModel(t, int64(b), int64(s), tc.segments, tc.sum), "A100", "")
			nc := nodeByOp(t, r, "EmbedLayerNormalization")
			// (tables−1) adds + LayerNormalization's 8 per element, 1 per
			// row, + 1 per mask element for mask_index.
			flops := (tc.tables-1)*out + 8*out + rows + maskEl
			// Each table moves the rows it looks up, out·4 bytes (the
			// 2-row segment table is smaller: all 2·768·4 of it); ids,
			// segment ids and mask 4 bytes per token; gamma, beta 768·4.
			read := out*4 + out*4 + 2*h*4 + rows*4 + rows*4 + maskEl*4 + 2*h*4
			if !tc.segments {
				read = out*4 + out*4 + rows*4 + maskEl*4 + 2*h*4
			}
			// output fp32, mask_index int32 [b], embedding_sum fp32.
			written := out*4 + b*4
			if tc.sum {
				written += out * 4
			}
			for _, c := range []struct {
				what      string
				got, want float64
			}{{"macs", nc.MACs, 0}, {"flops", nc.FLOPs, flops}, {"transcendentals", nc.Transcendentals, rows},
				{"bytes read", nc.BytesRead, read}, {"bytes written", nc.BytesWritten, written}} {
				if math.Abs(c.got-c.want) > 1e-9*math.Abs(c.want) {
					t.Errorf("%s = %.0f, want %.0f", c.what, c.got, c.want)
				}
			}
			if !(nc.TimeS > 0) {
				t.Errorf("time %g, want a positive kernel time", nc.TimeS)
			}
		})
	}
	// Three tables cost SkipLayerNormalization's 9 per element plus the
	// one extra add; the same rows and reads otherwise.
	t.Run("one more add than SkipLayerNormalization", func(t *testing.T) {
		bb := irtest.New(t, 17)
		bb.M.Opsets = append(bb.M.Opsets, ir.OpsetImport{Domain: "com.microsoft", Version: 1})
		x := bb.Input("x", ir.Float32, int64(b), int64(s), int64(h))
		skip := bb.Input("skip", ir.Float32, int64(b), int64(s), int64(h))
		n := bb.Node("SkipLayerNormalization", []*ir.Value{x, skip, initializer(bb, "g", ir.Float32, 768), initializer(bb, "be", ir.Float32, 768)}, 1)
		n.Domain = "com.microsoft"
		bb.Output(n.Out(0))
		bb.Infer()
		skipLN := nodeByOp(t, analyzeOn(t, bb, "A100", ""), "SkipLayerNormalization").FLOPs
		embed := nodeByOp(t, analyzeOn(t, bertEmbedModel(t, int64(b), int64(s), true, false), "A100", ""), "EmbedLayerNormalization").FLOPs
		if got, want := embed-maskEl, skipLN+out; math.Abs(got-want) > 1e-9*want {
			t.Errorf("embed layer norm %.0f flops (less the mask's %.0f), SkipLayerNormalization %.0f + %.0f: want equal", embed, maskEl, skipLN, out)
		}
	})
}
