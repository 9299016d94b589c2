package cost

import (
	"math"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// TestPositionBiasCounts: T5's RelativePositionBias over a 512-token
// encoder (32 buckets, 8 heads, fp32) writes its [1, 8, 512, 512] bias, a
// bucket (8 FLOPs, a log) an element, and reads its table once; WavLM's
// GatedRelativePositionBias (batch 2, 100 frames, 12 heads of 64, D 8)
// is a GEMM of 2·12·100 rows by 64 into 8 and a trailer gating rel_pos
// into the [2, 12, 100, 100] output, written out.
func TestPositionBiasCounts(t *testing.T) {
	b := msBuilder(t, 17)
	q := b.Tensor("q_len", ir.Int64)
	b.G.AddInitializer(q, &ir.Tensor{Name: "q_len", DType: ir.Int64, Ints: []int64{512}, HasData: true})
	out := msNode(b, "RelativePositionBias", []*ir.Attribute{ir.IntAttr("max_distance", 128), ir.IntAttr("is_bidirectional", 1)},
		initializer(b, "table", ir.Float32, 32, 8), q, q)
	out.Producer.Name = "rpb"
	b.Output(out)
	b.Infer()
	r := analyzeOn(t, b, "A100", "")
	nc := nodeNamed(t, r, "rpb")
	const elems = 8 * 512 * 512.0
	if nc.FLOPs != 8*elems || nc.Transcendentals != elems || nc.BytesWritten != 4*elems || nc.BytesRead != 32*8*4 {
		t.Errorf("RelativePositionBias: %g FLOPs %g transcendentals, %g B read %g written", nc.FLOPs, nc.Transcendentals, nc.BytesRead, nc.BytesWritten)
	}

	g := msBuilder(t, 17)
	const batch, frames, heads, hd, d = 2, 100, 12, 64, 8
	y := msNode(g, "GatedRelativePositionBias", []*ir.Attribute{ir.IntAttr("num_heads", heads)},
		g.Input("x", ir.Float32, batch, frames, heads*hd), initializer(g, "q_bias", ir.Float32, heads*hd),
		g.Input("rel_pos", ir.Float32, 1, heads, frames, frames), initializer(g, "w", ir.Float32, hd, d),
		initializer(g, "bias", ir.Float32, d), initializer(g, "eco_a", ir.Float32, 1, heads, 1, 1))
	y.Producer.Name = "gate"
	g.Output(y)
	g.Infer()
	r = analyzeOn(t, g, "A100", "")
	nc = nodeNamed(t, r, "gate")
	const rows = batch * heads * frames
	const outElems = rows * frames
	wantMACs := float64(rows * hd * d)
	wantFLOPs := 2*wantMACs + rows*hd + rows*d + rows*(d-2+2*3+3) + outElems
	wantRead := 4.0 * (batch*frames*heads*hd + heads*hd + hd*d + d + // the GEMM's inputs
		rows*hd + // the biased query, read back
		rows*d + heads*frames*frames + heads) // the gate's: projection, rel_pos, eco_a
	wantWritten := 4.0 * (rows*hd + rows*d + outElems)
	if nc.MACs != wantMACs || math.Abs(nc.FLOPs-wantFLOPs) > 1e-9*wantFLOPs || nc.BytesRead != wantRead || nc.BytesWritten != wantWritten || nc.Launches != 3 {
		t.Errorf("GatedRelativePositionBias: %g MACs (want %g), %g FLOPs (want %g), %g B read (want %g), %g written (want %g), %g launches",
			nc.MACs, wantMACs, nc.FLOPs, wantFLOPs, nc.BytesRead, wantRead, nc.BytesWritten, wantWritten, nc.Launches)
	}
}
