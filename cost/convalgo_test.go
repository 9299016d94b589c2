package cost

import (
	"testing"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
)

// TestLibraryWinograd: under a runtime whose convolutions are cuDNN's, a
// large 3×3 stride-1 fp32 convolution on a GPU whose library has Winograd
// kernels runs as Winograd with its filter-transform kernel (two launches,
// faster than implicit GEMM, the model's FLOPs unchanged); a 1×1 or
// strided one, TF32 or fp16 (tensor cores), a Hopper, the fused plan's
// runtime and a runtime without the field keep implicit GEMM. Larger
// batches never get faster across the switch between algorithms.
func TestLibraryWinograd(t *testing.T) {
	lookup := func(name string) *hwdb.GPU {
		g, err := hwdb.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	t4, h100 := lookup("T4"), lookup("H100-SXM5-80GB")
	graph, err := hwdb.LookupRuntime("graph")
	if err != nil {
		t.Fatal(err)
	}
	trt, err := hwdb.LookupRuntime("tensorrt")
	if err != nil {
		t.Fatal(err)
	}
	none := graph.Clone()
	none.ConvWinograd = 0
	conv := func(gpu *hwdb.GPU, rt *hwdb.Runtime, dtype string, batch, kernel, stride int64) *nodeRow {
		b := newBuilder(t)
		x := b.input("x", batch, 128, 56, 56)
		pad := (kernel - 1) / 2
		out := (56+2*pad-kernel)/stride + 1
		y := b.val("y", ir.Float32, batch, 128, out, out)
		b.node("Conv", []*ir.Value{x, b.weight("w", 128, 128, kernel, kernel)}, []*ir.Value{y},
			ir.IntsAttr("pads", pad, pad, pad, pad), ir.IntsAttr("strides", stride, stride))
		b.g.Outputs = append(b.g.Outputs, y)
		r, err := Analyze(b.g, b.m, gpu, Options{DType: dtype, Runtime: rt})
		if err != nil {
			t.Fatal(err)
		}
		n := r.Nodes[0]
		return &nodeRow{class: n.KernelClass, launches: n.Launches, timeS: n.TimeS, flops: n.FLOPs}
	}
	w, d := conv(t4, graph, "fp32", 32, 3, 1), conv(t4, none, "fp32", 32, 3, 1)
	if w.class != string(perf.ClassWinograd) || w.launches != 2 || d.class != string(perf.ClassConv) || d.launches != 1 {
		t.Errorf("T4 fp32 3x3 under graph: %+v, without the field %+v; want winograd with 2 launches, conv with 1", w, d)
	}
	if !(w.timeS < d.timeS) || w.flops != d.flops {
		t.Errorf("Winograd %g s vs implicit GEMM %g s, FLOPs %g vs %g: want faster, same model FLOPs", w.timeS, d.timeS, w.flops, d.flops)
	}
	for _, c := range []struct {
		what string
		row  *nodeRow
	}{
		{"1x1", conv(t4, graph, "fp32", 32, 1, 1)},
		{"stride 2", conv(t4, graph, "fp32", 32, 3, 2)},
		{"fp16", conv(t4, graph, "fp16", 32, 3, 1)},
		{"tf32 on A100", conv(lookup("A100-SXM4-80GB"), graph, "tf32", 32, 3, 1)},
		{"H100", conv(h100, graph, "fp32", 32, 3, 1)},
		{"tensorrt", conv(t4, trt, "fp32", 32, 3, 1)},
	} {
		if c.row.class == string(perf.ClassWinograd) && c.what != "tensorrt" || c.row.launches != 1 {
			t.Errorf("%s: %+v, want one implicit-GEMM kernel", c.what, c.row)
		}
	}
	prev := 0.0
	for _, batch := range []int64{1, 2, 4, 8, 16, 32, 64, 128} {
		r := conv(t4, graph, "fp32", batch, 3, 1)
		if r.timeS < prev {
			t.Errorf("batch %d: %g s (%s), below the smaller batch's %g s", batch, r.timeS, r.class, prev)
		}
		prev = r.timeS
	}
}

type nodeRow struct {
	class           string
	launches, timeS float64
	flops           float64
}
