package cost

import (
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// TestNGramOpsCounts counts by hand:
//
//	NGramHashMapping over [2,16] int64 ids, orders 2-3, 4 heads each:
//	  4·(2+1+1 + 3+2+1) = 40 ops a token, 32 tokens
//	VarlenNGramHashMapping over 40 packed int32 ids with head offsets:
//	  40 + 8 adds a token
//	NGramRepeatBlock, trigrams over [2,10] ids and [2,100] scores: 8
//	  windows of 2 compares a sequence; the scores copied, then banned
//	VarlenCausalConvWithState over [40,64] fp16, 4 taps: 40·64·4 MACs
func TestNGramOpsCounts(t *testing.T) {
	b := msBuilder(t, 17)
	ms := func(name, op string, nout int, ins []*ir.Value, attrs ...*ir.Attribute) []*ir.Value {
		return msNamed(b, name, op, nout, ins, attrs...).Outputs
	}
	attrs := []*ir.Attribute{ir.IntAttr("max_ngram_size", 3), ir.IntAttr("n_head_per_ngram", 4), ir.IntAttr("pad_id", 0)}
	cu := b.Input("cu", ir.Int32, 5)
	var outs []*ir.Value
	outs = append(outs, ms("hash", "NGramHashMapping", 2, []*ir.Value{b.Input("ids", ir.Int64, 2, 16), initializer(b, "mult", ir.Int64, 3),
		initializer(b, "vocab", ir.Int64, 8), b.Input("past", ir.Int64, 2, 2)}, attrs...)...)
	outs = append(outs, ms("varlen", "VarlenNGramHashMapping", 1, []*ir.Value{b.Input("packed", ir.Int32, 40), initializer(b, "mult32", ir.Int32, 3),
		initializer(b, "vocab32", ir.Int32, 8), cu, nil, initializer(b, "offsets", ir.Int32, 8)}, attrs...)...)
	outs = append(outs, ms("ban", "NGramRepeatBlock", 1, []*ir.Value{b.Input("seq", ir.Int64, 2, 10), b.Input("scores", ir.Float32, 2, 100)},
		ir.IntAttr("ngram_size", 3))...)
	outs = append(outs, ms("conv", "VarlenCausalConvWithState", 2, []*ir.Value{b.Input("x", ir.Float16, 40, 64), initializer(b, "w", ir.Float16, 64, 1, 4),
		cu, nil, b.Input("state", ir.Float16, 4, 64, 3)})...)
	b.Output(outs...)
	b.Infer()
	r := analyzeCovered(t, b, "A100")
	for _, c := range []struct {
		name                        string
		macs, flops, read, wr, runs float64
	}{
		{"hash", 0, 40 * 32, 256 + 24 + 64 + 32, 2*16*8*8 + 32, 1},
		{"varlen", 0, 48 * 40, 160 + 12 + 32 + 20 + 32, 40*8*4 + 0, 1},
		{"ban", 0, 2 * 8 * 2, 160 + 800, 800, 2},
		{"conv", 40 * 64 * 4, 2 * 40 * 64 * 4, 40*64*2 + 64*4*2 + 20 + 4*64*3*2, 40*64*2 + 4*64*3*2, 1},
	} {
		nc := nodeNamed(t, r, c.name)
		if nc.MACs != c.macs || nc.FLOPs != c.flops || nc.BytesRead != c.read || nc.BytesWritten != c.wr || nc.Launches != c.runs || !(nc.TimeS > 0) {
			t.Errorf("%s: %g MACs, %g FLOPs, %g B read, %g B written, %g launches, %g s; want %g, %g, %g, %g, %g",
				c.name, nc.MACs, nc.FLOPs, nc.BytesRead, nc.BytesWritten, nc.Launches, nc.TimeS, c.macs, c.flops, c.read, c.wr, c.runs)
		}
	}
}
