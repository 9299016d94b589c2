package cost

import (
	"math"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/ir/irtest"
)

// qAttentionModel is BERT-base's self-attention as onnxruntime's
// quantize_dynamic writes it, B = 1, S = 128, hidden 768, 12 heads:
// QAttention over a uint8 input and int8 weights, a float32 bias and
// scales, the mask index and both zero points, s tokens (BERT's 128
// unless said). float instead builds the float Attention it replaced
// (fp32 input, weights and bias).
func qAttentionModel(t *testing.T, s int64, float bool) *irtest.Builder {
	const hidden = 768
	b := msBuilder(t, 17)
	mask := b.Input("mask", ir.Int32, 1)
	var n *ir.Node
	if float {
		n = b.Node("Attention", []*ir.Value{b.Input("x", ir.Float32, 1, s, hidden), initializer(b, "w", ir.Float32, hidden, 3*hidden),
			initializer(b, "bias", ir.Float32, 3*hidden), mask}, 1, ir.IntAttr("num_heads", 12))
	} else {
		n = b.Node("QAttention", []*ir.Value{b.Input("x", ir.Uint8, 1, s, hidden), initializer(b, "w", ir.Int8, hidden, 3*hidden),
			initializer(b, "bias", ir.Float32, 3*hidden), b.Input("x_scale", ir.Float32), initializer(b, "w_scale", ir.Float32),
			mask, b.Input("x_zero", ir.Uint8), initializer(b, "w_zero", ir.Int8)}, 1, ir.IntAttr("num_heads", 12))
	}
	return finishMSNode(b, n, "attn")
}

// finishMSNode makes n a com.microsoft node named name whose outputs are
// the graph's, and infers the graph.
func finishMSNode(b *irtest.Builder, n *ir.Node, name string) *irtest.Builder {
	n.Domain, n.Name = "com.microsoft", name
	b.Output(n.Outputs...)
	b.Infer()
	return b
}

// TestQAttentionCounts: the arithmetic and traffic of quantize_dynamic's
// BERT-base attention written out (TestMSAttentionBert's, with the
// projection at 8 bits, its int32 accumulators and the dequantize kernel),
// and the two precisions it runs at.
func TestQAttentionCounts(t *testing.T) {
	const (
		s, hidden, h = 128.0, 768.0, 12.0
		acc          = s * 3 * hidden // Q|K|V elements
	)
	r := analyzeCovered(t, qAttentionModel(t, s, false), "A100")
	nc := nodeNamed(t, r, "attn")
	const projMACs = s * hidden * 3 * hidden
	const scores = h * s * s
	const attMACs = scores * 2 * (hidden / h)
	// 2 flops an accumulator: the scale back to float and the bias.
	const flops = 2*projMACs + 2*acc + 2*attMACs + 4*scores + h*s
	// x and w at a byte, both zero points, the float bias and two scales,
	// the int32 accumulators read by the dequantize kernel, Q|K|V (fp32)
	// read by the layout pass and by the attention, the int32 mask index.
	const read = s*hidden + hidden*3*hidden + 2 + 3*hidden*4 + 2*4 + acc*4 + 2*acc*4 + 4
	const written = acc*4 + 2*acc*4 + s*hidden*4 // accumulators, Q|K|V twice, output
	for _, c := range []struct {
		what      string
		got, want float64
	}{{"macs", nc.MACs, projMACs + attMACs}, {"flops", nc.FLOPs, flops}, {"transcendentals", nc.Transcendentals, scores},
		{"bytes read", nc.BytesRead, read}, {"bytes written", nc.BytesWritten, written}, {"launches", nc.Launches, 4}} {
		if math.Abs(c.got-c.want) > 1e-9*c.want {
			t.Errorf("%s = %.0f, want %.0f", c.what, c.got, c.want)
		}
	}
	if nc.Precision != "int8_tensor" || !strings.Contains(nc.Note, "attention kernel at fp32") {
		t.Errorf("precision %q, note %q: want the projection on int8 tensor cores, the attention at fp32", nc.Precision, nc.Note)
	}
}

// TestQAttentionTwoPrecisions: the projection is priced at 8 bits and the
// attention at fp32, each as a kernel of its own. At 512 tokens on an
// A100 the node beats the fp32 Attention it replaced (whose 1.8 GFLOP
// projection runs on the CUDA cores) but not its attention's own fp32
// floor (0.82 GFLOP at the fp32 peak, 42 µs: the same attention priced at
// int8 rates takes a few). Under --dtype fp16 both parts run on fp16
// tensor cores, faster than the int8 projection with fp32 attention.
func TestQAttentionTwoPrecisions(t *testing.T) {
	const s, hidden, h = 512.0, 768.0, 12.0
	q := nodeNamed(t, analyzeOn(t, qAttentionModel(t, s, false), "A100", ""), "attn")
	f := nodeNamed(t, analyzeOn(t, qAttentionModel(t, s, true), "A100", ""), "attn")
	g, err := hwdb.Lookup("A100")
	if err != nil {
		t.Fatal(err)
	}
	attFLOPs := 2*h*s*s*2*(hidden/h) + 4*h*s*s
	floor := attFLOPs / g.PeakFor(hwdb.FP32)
	if !(q.TimeS < f.TimeS) || !(q.TimeS > floor) {
		t.Errorf("QAttention %.3g s, fp32 Attention %.3g s, the attention's fp32 floor %.3g s: want floor < QAttention < Attention",
			q.TimeS, f.TimeS, floor)
	}
	half := nodeNamed(t, analyzeOn(t, qAttentionModel(t, s, false), "A100", "fp16"), "attn")
	// One path for both parts: the note names none.
	if half.Precision != "fp16_tensor" || strings.Contains(half.Note, "kernel at") || !(half.TimeS < q.TimeS) {
		t.Errorf("--dtype fp16: precision %q, note %q, %.3g s (int8 %.3g s)", half.Precision, half.Note, half.TimeS, q.TimeS)
	}
}

// TestQEmbedLayerNormCounts: BERT-base's embedding as quantize_dynamic
// writes it, 2 sequences of 128 tokens: EmbedLayerNormalization's count
// (TestEmbedLayerNormArithmetic) plus 2 flops a dequantized element (each
// of the three gathered rows, gamma and beta for every output element),
// the tables moving a byte an element.
func TestQEmbedLayerNormCounts(t *testing.T) {
	const (
		bs, s, h = 2.0, 128.0, 768.0
		out      = bs * s * h
		rows     = bs * s
	)
	b := msBuilder(t, 17)
	ids := b.Input("input_ids", ir.Int32, 2, 128)
	ins := []*ir.Value{ids, b.Input("segment_ids", ir.Int32, 2, 128), initializer(b, "word", ir.Uint8, 30522, 768),
		initializer(b, "position", ir.Uint8, 512, 768), initializer(b, "segment", ir.Uint8, 2, 768),
		initializer(b, "gamma", ir.Uint8, 768), initializer(b, "beta", ir.Uint8, 768), b.Input("mask", ir.Int32, 2, 128)}
	for i := range 5 {
		ins = append(ins, initializer(b, "scale"+string(rune('0'+i)), ir.Float32))
	}
	for i := range 5 {
		ins = append(ins, initializer(b, "zero"+string(rune('0'+i)), ir.Uint8))
	}
	n := b.Node("QEmbedLayerNormalization", ins, 2)
	n.Domain = "com.microsoft"
	b.Output(n.Outputs...)
	b.Infer()
	r := analyzeOn(t, b, "A100", "")
	nc := nodeByOp(t, r, "QEmbedLayerNormalization")
	flops := 2*out + 8*out + rows + rows + 2*5*out
	// The gathered rows (the 2-row segment table whole), ids, segment
	// ids, mask, gamma and beta at a byte, five float scales and five
	// zero points.
	read := out + out + 2*h + 3*rows*4 + 2*h + 5*4 + 5
	written := out*4 + bs*4
	for _, c := range []struct {
		what      string
		got, want float64
	}{{"flops", nc.FLOPs, flops}, {"bytes read", nc.BytesRead, read}, {"bytes written", nc.BytesWritten, written}} {
		if math.Abs(c.got-c.want) > 1e-9*c.want {
			t.Errorf("%s = %.0f, want %.0f", c.what, c.got, c.want)
		}
	}
	if !(nc.TimeS > 0) || nc.Precision != "fp32" {
		t.Errorf("time %g on %q", nc.TimeS, nc.Precision)
	}
}
