package cost

import (
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// TestEngramGateCounts: an Engram gate at batch 2 × 16 tokens over 4
// hyper-connections of 512 in fp16, with and without its normed output,
// counted by hand, and ExpandDims as a view.
func TestEngramGateCounts(t *testing.T) {
	b := msBuilder(t, 17)
	key := b.Input("key", ir.Float16, 2, 16, 4, 512)
	query := b.Input("query", ir.Float16, 2, 16, 4, 512)
	value := b.Input("value", ir.Float16, 2, 16, 512)
	sc := initializer(b, "sc", ir.Float16, 4, 512)
	one := b.Node("EngramGate", []*ir.Value{key, query, value, sc, sc}, 1)
	one.Domain, one.Name = "com.microsoft", "gate"
	two := b.Node("EngramGate", []*ir.Value{key, query, value, sc, sc, sc}, 2)
	two.Domain, two.Name = "com.microsoft", "normed"
	ed := b.Node("ExpandDims", []*ir.Value{value, constant(b, "axis", ir.Int32, nil, []int64{1})}, 1)
	ed.Domain, ed.Name = "com.microsoft", "expand"
	b.Output(one.Outputs[0], two.Outputs[0], two.Outputs[1], ed.Outputs[0])
	b.Infer()
	r := analyzeCovered(t, b, "H100")
	const n, rows = 2 * 16 * 4 * 512.0, 2 * 16 * 4.0
	for _, c := range []struct {
		name             string
		flops, trans, wr float64
	}{
		{"gate", 11*n + 7*rows, 4 * rows, 2 * n},
		{"normed", 15*n + 8*rows, 5 * rows, 2 * 2 * n},
	} {
		nc := nodeNamed(t, r, c.name)
		if nc.FLOPs != c.flops || nc.Transcendentals != c.trans || nc.BytesWritten != c.wr || !(nc.TimeS > 0) {
			t.Errorf("%s: %g FLOPs, %g transcendentals, %g B written, %g s; want %g, %g, %g", c.name, nc.FLOPs, nc.Transcendentals, nc.BytesWritten, nc.TimeS, c.flops, c.trans, c.wr)
		}
	}
	if e := nodeNamed(t, r, "expand"); e.TimeS != 0 || e.FLOPs != 0 || e.BytesWritten != 0 {
		t.Errorf("ExpandDims: %g s, %g FLOPs, %g B written; want a view", e.TimeS, e.FLOPs, e.BytesWritten)
	}
}
