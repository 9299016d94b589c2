package cost

import (
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/ir/irtest"
)

// pagedModel is a LLaMA-3-8B-shaped PagedAttention decode step (32 query
// heads, 8 KV heads of 128, fp16): 4 sequences of one token each, a cache
// of 1024 blocks of 16 positions and a block table of maxBlocks a
// sequence.
func pagedModel(t *testing.T, maxBlocks int64) *irtest.Builder {
	b := msBuilder(t, 17)
	cache := func(name string) *ir.Value { return b.Input(name, ir.Float16, 1024, 16, 8, 128) }
	n := b.Node("PagedAttention", []*ir.Value{b.Input("q", ir.Float16, 4, 4096), b.Input("k", ir.Float16, 4, 1024), b.Input("v", ir.Float16, 4, 1024),
		cache("kc"), cache("vc"), b.Input("cu", ir.Int32, 5), b.Input("past", ir.Int32, 4), b.Input("table", ir.Int32, 4, maxBlocks)}, 1,
		ir.IntAttr("num_heads", 32), ir.IntAttr("kv_num_heads", 8))
	return finishMSNode(b, n, "paged")
}

// TestPagedAttentionCounts: each of the 4 queries attends its block
// table's 64·16 = 1024 positions (the capacity, noted as a bound), so
// 4·32·1024·(128+128) multiply-accumulates; the cache rows it did not
// write this step (1023 a sequence, 8 heads of 128 in fp16, K and V) are
// read and the new ones written in place; a table half as wide halves
// the attention.
func TestPagedAttentionCounts(t *testing.T) {
	r := analyzeOn(t, pagedModel(t, 64), "H100", "")
	nc := nodeNamed(t, r, "paged")
	const row = 8 * 128 * 2.0
	wantMACs := 4 * 32 * 1024 * 256.0
	wantRead := 2*4*1023*row + 2*(4*4096+2*4*1024) + 4*5 + 4*4 + 4*4*64
	wantWritten := 2*4*row + 2*4*4096
	if nc.MACs != wantMACs || nc.BytesRead != wantRead || nc.BytesWritten != wantWritten {
		t.Errorf("%g MACs (want %g), %g B read (want %g), %g written (want %g)", nc.MACs, wantMACs, nc.BytesRead, wantRead, nc.BytesWritten, wantWritten)
	}
	if !strings.Contains(nc.Note, "1024 keys") {
		t.Errorf("note %q does not give the context it assumed", nc.Note)
	}
	half := nodeNamed(t, analyzeOn(t, pagedModel(t, 32), "H100", ""), "paged")
	if half.MACs != wantMACs/2 || !(half.TimeS < nc.TimeS) {
		t.Errorf("a 32-block table: %g MACs, %.3g s; 64 blocks: %g, %.3g s", half.MACs, half.TimeS, nc.MACs, nc.TimeS)
	}
}
