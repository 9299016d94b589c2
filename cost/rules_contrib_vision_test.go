package cost

import (
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// TestContribVisionCounts counts by hand:
//
//	MaxpoolWithMask 3×3 stride 2 over [1,4,9,9]: 100 outputs, a compare
//	  and a mask test a tap; X and the int32 mask read
//	ConvTransposeWithDynamicPads [1,4,5,5] by [4,3,3,3], stride 2, pads 1
//	  as a constant input, with a bias: 100·27 MACs, 243 bias adds
//	CropAndResize of 4 boxes of [2,3,20,20] to 5×6, bilinear: 7 flops and
//	  at most 4 elements read an output
//	CDist euclidean of [5,16] and [7,16]: 5·7·16 + 12·16 MACs, 2 adds and
//	  a sqrt an output
func TestContribVisionCounts(t *testing.T) {
	b := msBuilder(t, 17)
	ms := func(name, op string, ins []*ir.Value, attrs ...*ir.Attribute) *ir.Value {
		return msNamed(b, name, op, 1, ins, attrs...).Out(0)
	}
	f := ir.Float32
	pads := b.Tensor("pads", ir.Int64, 4)
	b.G.AddInitializer(pads, &ir.Tensor{Name: "pads", DType: ir.Int64, Dims: []int64{4}, Ints: []int64{1, 1, 1, 1}, HasData: true})
	crop := b.Tensor("crop", ir.Int32, 2)
	b.G.AddInitializer(crop, &ir.Tensor{Name: "crop", DType: ir.Int32, Dims: []int64{2}, Ints: []int64{5, 6}, HasData: true})
	b.Output(
		ms("pool", "MaxpoolWithMask", []*ir.Value{b.Input("x", f, 1, 4, 9, 9), b.Input("m", ir.Int32, 1, 4, 9, 9)},
			ir.IntsAttr("kernel_shape", 3, 3), ir.IntsAttr("strides", 2, 2), ir.IntsAttr("pads", 1, 1, 1, 1)),
		ms("deconv", "ConvTransposeWithDynamicPads", []*ir.Value{b.Input("cx", f, 1, 4, 5, 5), initializer(b, "cw", f, 4, 3, 3, 3), pads, initializer(b, "cb", f, 3)},
			ir.IntsAttr("strides", 2, 2)),
		ms("crop", "CropAndResize", []*ir.Value{b.Input("img", f, 2, 3, 20, 20), b.Input("rois", f, 4, 4), b.Input("bi", ir.Int32, 4), crop}),
		ms("cdist", "CDist", []*ir.Value{b.Input("a", f, 5, 16), b.Input("bb", f, 7, 16)}, ir.StringAttr("metric", "euclidean")),
	)
	b.Infer()
	r := analyzeCovered(t, b, "A100")
	for _, c := range []struct {
		name                  string
		macs, flops, read, wr float64
	}{
		{"pool", 0, 2 * 9 * 100, 324*4 + 324*4, 400},
		{"deconv", 2700, 2*2700 + 243, 400 + 432 + 32 + 12, 243 * 4},
		{"crop", 0, 7 * 360, 4*360*4 + 64 + 16 + 8, 360 * 4},
		{"cdist", 560 + 192, 2*752 + 70, 320 + 448, 140},
	} {
		nc := nodeNamed(t, r, c.name)
		if nc.MACs != c.macs || nc.FLOPs != c.flops || nc.BytesRead != c.read || nc.BytesWritten != c.wr || !(nc.TimeS > 0) {
			t.Errorf("%s: %g MACs, %g FLOPs, %g B read, %g B written, %g s; want %g, %g, %g, %g", c.name, nc.MACs, nc.FLOPs, nc.BytesRead, nc.BytesWritten, nc.TimeS, c.macs, c.flops, c.read, c.wr)
		}
	}
}
