package cost

import (
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/ir/irtest"
)

// packedModel is a packing-mode layer in fp16: 4 sequences of 16 slots
// holding 16, 8, 4 and 4 real tokens (32), RemovePadding, PackedAttention
// with 4 heads over 64-wide rows, PackedMultiHeadAttention over its
// output (with and without a bias), RestorePadding.
func packedModel(t *testing.T) *irtest.Builder {
	b := msBuilder(t, 17)
	counts := b.Tensor("counts", ir.Int32, 4)
	ct := ir.IntTensor([]int64{4}, []int64{16, 8, 4, 4})
	ct.DType = ir.Int32
	b.G.AddInitializer(counts, ct)
	rp := b.Node("RemovePadding", []*ir.Value{b.Input("x", ir.Float16, 4, 16, 64), counts}, 4)
	rp.Domain, rp.Name = "com.microsoft", "remove"
	off, cum := rp.Out(1), rp.Out(2)
	heads := ir.IntAttr("num_heads", 4)
	pa := b.Node("PackedAttention", []*ir.Value{rp.Out(0), initializer(b, "w", ir.Float16, 64, 192), initializer(b, "bias", ir.Float16, 192), off, cum}, 1, heads)
	pa.Domain, pa.Name = "com.microsoft", "pa"
	x := pa.Out(0)
	mha := b.Node("PackedMultiHeadAttention", []*ir.Value{x, x, x, nil, off, cum}, 1, heads)
	mha.Domain, mha.Name = "com.microsoft", "mha"
	biased := b.Node("PackedMultiHeadAttention", []*ir.Value{mha.Out(0), x, x, initializer(b, "qkv_bias", ir.Float16, 192), off, cum}, 1, heads)
	biased.Domain, biased.Name = "com.microsoft", "mha_bias"
	restore := b.Node("RestorePadding", []*ir.Value{biased.Out(0), off}, 1)
	return finishMSNode(b, restore, "restore")
}

// TestPackedCounts: the packed ops' arithmetic over the 32 real tokens
// (each sequence attending within itself: Σ L² = 352 scores a head),
// their kernels and their bytes.
func TestPackedCounts(t *testing.T) {
	r := analyzeOn(t, packedModel(t), "A100", "")
	const rows, qkv, sumSq = 32 * 64 * 2.0, 32 * 192 * 2.0, 352.0
	attn := 4 * sumSq * (16 + 16)
	for _, c := range []struct {
		node           string
		macs, launches float64
		read, written  float64
		note           string
	}{
		{"remove", 0, 2, 4*4 + rows, rows + 4*16*4 + 5*4 + 4, ""},
		{"pa", 32*64*192 + attn, 3, rows + 64*192*2 + 192*2 + 2*qkv + 4*16*4 + 5*4, 2*qkv + rows, "from cumulative_sequence_length"},
		{"mha", attn, 1, 3*rows + 4*16*4 + 5*4, rows, "from cumulative_sequence_length"},
		{"mha_bias", attn, 2, 3*rows + 192*2 + 4*16*4 + 5*4 + 3*rows, rows + 3*rows, "bias-add/transpose"},
		{"restore", 0, 1, rows + 4*16*4, 4 * 16 * 64 * 2, ""},
	} {
		nc := nodeNamed(t, r, c.node)
		if nc.MACs != c.macs || nc.Launches != c.launches || nc.BytesRead != c.read || nc.BytesWritten != c.written {
			t.Errorf("%s: %g MACs (want %g), %g launches (want %g), %g B read (want %g), %g written (want %g)",
				c.node, nc.MACs, c.macs, nc.Launches, c.launches, nc.BytesRead, c.read, nc.BytesWritten, c.written)
		}
		if !strings.Contains(nc.Note, c.note) {
			t.Errorf("%s: note %q, want %q in it", c.node, nc.Note, c.note)
		}
	}
	if d := nodeNamed(t, r, "mha_bias").FLOPs - nodeNamed(t, r, "mha").FLOPs; d != 32*192 {
		t.Errorf("the bias adds %g flops, want one per Q, K and V element (%d)", d, 32*192)
	}
}
