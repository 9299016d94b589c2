package cost

import (
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/ir/irtest"
)

// deltaNetModel is one Qwen3.5-style Gated DeltaNet recurrence: tokens of
// one sequence, 16 query/key heads and 32 value heads of 128 (bf16),
// per-head decay and beta and the [1, 32, 128, 128] float32 state in and
// out.
func deltaNetModel(t *testing.T, tokens int64) *irtest.Builder {
	b := msBuilder(t, 17)
	n := b.Node("GatedDeltaNet", []*ir.Value{b.Input("q", ir.BFloat16, tokens, 16, 128), b.Input("k", ir.BFloat16, tokens, 16, 128),
		b.Input("v", ir.BFloat16, tokens, 32, 128), nil, b.Input("decay", ir.Float32, tokens, 32), b.Input("beta", ir.Float32, tokens, 32),
		b.Input("state", ir.Float32, 1, 32, 128, 128)}, 2)
	return finishMSNode(b, n, "gdn")
}

// TestGatedDeltaNetCounts: a decode step is the state's traffic (2 MiB of
// float32 read and written) and 3·128·128 multiply-accumulates a value
// head; a 512-token prefill adds, per token, 63 earlier tokens of its
// 64-token chunk at (128 + 128) each. No kernel beats its bytes over the
// H100's DRAM bandwidth.
func TestGatedDeltaNetCounts(t *testing.T) {
	const state = 32 * 128 * 128 * 4.0
	r := analyzeOn(t, deltaNetModel(t, 1), "H100", "")
	nc := nodeNamed(t, r, "gdn")
	wantMACs := 32 * 3 * 128 * 128.0
	wantRead := state + 2*16*128*2 + 32*128*2 + 2*32*4
	if nc.MACs != wantMACs || nc.FLOPs != 2*wantMACs+32*128*128 || nc.BytesRead != wantRead || nc.BytesWritten != state+32*128*2 {
		t.Errorf("decode: %g MACs (want %g), %g FLOPs, %g B read (want %g), %g written", nc.MACs, wantMACs, nc.FLOPs, nc.BytesRead, wantRead, nc.BytesWritten)
	}
	h100, err := hwdb.Lookup("H100")
	if err != nil {
		t.Fatal(err)
	}
	if floor := (nc.BytesRead + nc.BytesWritten) / h100.MemBW; nc.TimeS < floor {
		t.Errorf("decode: %.3g s, below its bytes over DRAM bandwidth %.3g s", nc.TimeS, floor)
	}
	r = analyzeOn(t, deltaNetModel(t, 512), "H100", "")
	if got, want := nodeNamed(t, r, "gdn").MACs, 512*32*(3*128*128+63*256.0); got != want {
		t.Errorf("prefill: %g MACs, want %g", got, want)
	}
	// update_rule keeps the terms it names: linear neither the retrieval
	// nor the decay, gated the decay, delta the retrieval.
	for rule, want := range map[string][2]float64{"linear": {2, 0}, "gated": {2, 1}, "delta": {3, 0}} {
		b := deltaNetModel(t, 1)
		gdn := b.G.Outputs[0].Producer
		gdn.Attrs = append(gdn.Attrs, ir.StringAttr("update_rule", rule))
		nc := nodeNamed(t, analyzeOn(t, b, "H100", ""), "gdn")
		if macs := want[0] * 32 * 128 * 128; nc.MACs != macs || nc.FLOPs != 2*macs+want[1]*32*128*128 {
			t.Errorf("%s: %g MACs (want %g), %g FLOPs", rule, nc.MACs, macs, nc.FLOPs)
		}
	}
}

// TestLinearHybridCounts: CausalConvWithState (4 taps over 8192 channels,
// bias, SiLU), GatedRMSNorm (rows of 128) and GatedAdd, written out.
func TestLinearHybridCounts(t *testing.T) {
	b := msBuilder(t, 17)
	const s, ch = 16.0, 8192.0
	x := b.Input("x", ir.Float16, 1, ch, s)
	conv := b.Node("CausalConvWithState", []*ir.Value{x, initializer(b, "w", ir.Float16, ch, 1, 4), initializer(b, "bias", ir.Float16, ch),
		b.Input("past", ir.Float16, 1, ch, 3)}, 2, ir.StringAttr("activation", "silu"))
	conv.Domain, conv.Name = "com.microsoft", "conv"
	h := b.Input("h", ir.Float16, 1, s, 4096)
	norm := msNode(b, "GatedRMSNorm", nil, h, initializer(b, "scale", ir.Float16, 128), b.Input("gate", ir.Float16, 1, s, 4096))
	norm.Producer.Name = "norm"
	add := msNode(b, "GatedAdd", nil, h, norm, b.Input("g", ir.Float16, 1, s, 1))
	add.Producer.Name = "add"
	b.Output(conv.Outputs...)
	b.Output(add)
	b.Infer()
	r := analyzeOn(t, b, "A100", "")
	sw, swT, _ := OpCount("Swish")
	if nc := nodeNamed(t, r, "conv"); nc.MACs != ch*s*4 || nc.FLOPs != 2*ch*s*4+ch*s+sw*ch*s || nc.Transcendentals != swT*ch*s ||
		nc.BytesRead != 2*(ch*s+ch*4+ch+ch*3) || nc.BytesWritten != 2*(ch*s+ch*3) {
		t.Errorf("conv: %g MACs %g FLOPs %g transcendentals, %g B read %g written", nc.MACs, nc.FLOPs, nc.Transcendentals, nc.BytesRead, nc.BytesWritten)
	}
	const out = s * 4096
	if nc := nodeNamed(t, r, "norm"); nc.FLOPs != (5+sw)*out+2*out/128 || nc.Transcendentals != swT*out+out/128 {
		t.Errorf("norm: %g FLOPs %g transcendentals", nc.FLOPs, nc.Transcendentals)
	}
	if nc := nodeNamed(t, r, "add"); nc.FLOPs != 2*out || nc.BytesWritten != 2*out {
		t.Errorf("add: %g FLOPs, %g B written", nc.FLOPs, nc.BytesWritten)
	}
}
