package train

import (
	"testing"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
)

// TestConvGradChoiceUnderRuntime: a convolution's gradient algorithm is
// chosen under the report's runtime. PyTorch's cuDNN convolutions are not
// split over K; chosen where they were, AlexNet's batch-1 13×13 data
// gradient took implicit GEMM and, priced unsplit, cost more than the
// batch-2 step's Winograd: the step got faster as the batch grew.
func TestConvGradChoiceUnderRuntime(t *testing.T) {
	gpu, err := hwdb.Lookup("RTX-4090")
	if err != nil {
		t.Fatal(err)
	}
	rt, err := hwdb.LookupRuntime("graph")
	if err != nil {
		t.Fatal(err)
	}
	backward := func(batch int64) float64 {
		b := newBuilder(t)
		x := b.Input("x", batch, 192, 13, 13)
		w := b.Weight("w", 384, 192, 3, 3)
		h := b.Val("h", ir.Float32, batch, 192, 13, 13)
		y := b.Val("y", ir.Float32, batch, 384, 13, 13)
		// A trained layer before it, so the convolution's input needs a
		// gradient: the data gradient is the kernel whose choice moved.
		b.Node("Add", []*ir.Value{x, b.Weight("shift", 192, 1, 1)}, []*ir.Value{h})
		b.Node("Conv", []*ir.Value{h, w}, []*ir.Value{y}, ir.IntsAttr("pads", 1, 1, 1, 1))
		b.G.AddOutput(y)
		r, err := cost.Analyze(b.G, b.M, gpu, cost.Options{DType: "fp16", Runtime: rt, Train: &Options{}})
		if err != nil {
			t.Fatal(err)
		}
		return r.Nodes[1].Backward.TimeS
	}
	prev := 0.0
	for _, batch := range []int64{1, 2, 4} {
		got := backward(batch)
		if got < prev {
			t.Errorf("batch %d: convolution backward %.3g s, less than the smaller batch's %.3g s", batch, got, prev)
		}
		prev = got
	}
}
