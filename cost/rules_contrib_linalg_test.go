package cost

import (
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// TestInverseAndIsAllFiniteCounts: 32 inverses of 64×64 (2·64³ FLOPs
// each) and an all-finite check over two tensors (one FLOP an element),
// counted by hand.
func TestInverseAndIsAllFiniteCounts(t *testing.T) {
	b := msBuilder(t, 17)
	x := b.Input("x", ir.Float32, 32, 64, 64)
	g := b.Input("g", ir.Float16, 1000)
	inv := b.Node("Inverse", []*ir.Value{x}, 1)
	inv.Domain, inv.Name = "com.microsoft", "inv"
	fin := b.Node("IsAllFinite", []*ir.Value{x, g}, 1)
	fin.Domain, fin.Name = "com.microsoft", "finite"
	b.Output(inv.Outputs[0], fin.Outputs[0])
	b.Infer()
	r := analyzeCovered(t, b, "A100")
	for _, c := range []struct {
		name            string
		flops, read, wr float64
	}{
		{"inv", 32 * 2 * 64 * 64 * 64, 32 * 64 * 64 * 4, 32 * 64 * 64 * 4},
		{"finite", 32*64*64 + 1000, 32*64*64*4 + 1000*2, 1},
	} {
		nc := nodeNamed(t, r, c.name)
		if nc.FLOPs != c.flops || nc.BytesRead != c.read || nc.BytesWritten != c.wr || !(nc.TimeS > 0) {
			t.Errorf("%s: %g FLOPs, %g B read, %g B written, %g s; want %g, %g, %g", c.name, nc.FLOPs, nc.BytesRead, nc.BytesWritten, nc.TimeS, c.flops, c.read, c.wr)
		}
	}
}
