package cost

import (
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
)

// TestBNPrepKernels: under the eager PyTorch profile a half-precision 2-D
// batch norm runs two small per-channel kernels before it: two more
// launches, their bytes and time in the node's row, the same FLOPs; fp32
// batch norms, convolutions and a runtime without them run none. Larger
// batches never get faster.
func TestBNPrepKernels(t *testing.T) {
	// channels_last, as the runs behind the kernel count: no NCHW layout
	// transposes around the convolution to count.
	gpu, eager := testGPU(t, "H100-SXM5-80GB"), testRuntime(t, "pytorch-nhwc")
	if eager.BNPrepKernels != 2 {
		t.Fatalf("pytorch-nhwc profile: %g batch-norm kernels, want 2", eager.BNPrepKernels)
	}
	plain := eager.Clone()
	plain.BNPrepKernels = 0
	type row struct{ launches, timeS, flops, read float64 }
	convBN := func(batch int64, dtype string, rt *hwdb.Runtime) (conv, bn row) {
		b := newBuilder(t)
		x := b.Input("x", batch, 64, 56, 56)
		w := b.Weight("w", 64, 64, 3, 3)
		y := b.Val("y", ir.Float32, batch, 64, 56, 56)
		b.Node("Conv", []*ir.Value{x, w}, []*ir.Value{y}, ir.IntsAttr("pads", 1, 1, 1, 1))
		z := b.Val("z", ir.Float32, batch, 64, 56, 56)
		b.Node("BatchNormalization", []*ir.Value{y, b.Weight("g", 64), b.Weight("beta", 64), b.Weight("mu", 64), b.Weight("var", 64)}, []*ir.Value{z})
		b.G.Outputs = append(b.G.Outputs, z)
		r, err := Analyze(b.G, b.M, gpu, Options{DType: dtype, Runtime: rt})
		if err != nil {
			t.Fatal(err)
		}
		c, n := r.Nodes[0], r.Nodes[1]
		return row{c.Launches, c.TimeS, c.FLOPs, c.BytesRead}, row{n.Launches, n.TimeS, n.FLOPs, n.BytesRead}
	}
	conv, bn := convBN(8, "fp16", eager)
	conv0, bn0 := convBN(8, "fp16", plain)
	if bn.launches != 3 || bn0.launches != 1 || conv.launches != 1 {
		t.Errorf("fp16 launches: batch norm %g (eager) and %g (without), convolution %g; want 3, 1, 1", bn.launches, bn0.launches, conv.launches)
	}
	if !(bn.timeS > bn0.timeS) || bn.flops != bn0.flops || conv != conv0 {
		t.Errorf("fp16: batch norm %g vs %g s, FLOPs %g vs %g; convolution %+v vs %+v: the kernels add time to the batch norm only", bn.timeS, bn0.timeS, bn.flops, bn0.flops, conv, conv0)
	}
	// Each reads two fp32 vectors of the 64 channels.
	if want := bn0.read + 2*2*4*64; bn.read != want {
		t.Errorf("fp16 batch norm bytes read %g, want %g", bn.read, want)
	}
	for _, dt := range []string{"fp32", "tf32"} {
		if _, bn := convBN(8, dt, eager); bn.launches != 1 {
			t.Errorf("%s: %g launches, want 1 (no per-channel kernels off half precision)", dt, bn.launches)
		}
	}
	if _, bn := convBN(8, "fp16", nil); bn.launches != 1 {
		t.Errorf("default runtime: %g launches, want 1", bn.launches)
	}
	prev := 0.0
	for _, batch := range []int64{1, 2, 4, 8, 16, 32, 64, 128} {
		_, bn := convBN(batch, "fp16", eager)
		if bn.timeS < prev {
			t.Errorf("batch %d: %g s, below the smaller batch's %g s", batch, bn.timeS, prev)
		}
		prev = bn.timeS
	}
}
