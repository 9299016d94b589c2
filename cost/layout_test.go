package cost

import (
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
)

// TestConvLayoutKernels: under a runtime that hands cuDNN NCHW tensors, a
// half-precision convolution runs two transposes (input and filter) before
// its tensor-core kernel: two more launches, their bytes and time in the
// node's row, the same FLOPs; fp32 and TF32 convolutions and runtimes
// that choose their own layouts run none. Larger batches never get faster.
func TestConvLayoutKernels(t *testing.T) {
	gpu, err := hwdb.Lookup("H100-SXM5-80GB")
	if err != nil {
		t.Fatal(err)
	}
	eager, err := hwdb.LookupRuntime("pytorch")
	if err != nil {
		t.Fatal(err)
	}
	if eager.ConvLayoutKernels != 2 {
		t.Fatalf("pytorch profile: %g layout kernels, want 2", eager.ConvLayoutKernels)
	}
	chooser := eager.Clone()
	chooser.ConvLayoutKernels = 0
	conv := func(batch int64, dtype string, rt *hwdb.Runtime) (launches, timeS, flops, read float64) {
		b := newBuilder(t)
		x := b.input("x", batch, 64, 56, 56)
		w := b.weight("w", 64, 64, 3, 3)
		y := b.val("y", ir.Float32, batch, 64, 56, 56)
		b.g.Outputs = append(b.g.Outputs, y)
		b.node("Conv", []*ir.Value{x, w}, []*ir.Value{y}, ir.IntsAttr("pads", 1, 1, 1, 1))
		r, err := Analyze(b.g, b.m, gpu, Options{DType: dtype, Runtime: rt})
		if err != nil {
			t.Fatal(err)
		}
		n := r.Nodes[0]
		return n.Launches, n.TimeS, n.FLOPs, n.BytesRead
	}
	l, tm, f, rd := conv(8, "fp16", eager)
	l0, t0, f0, rd0 := conv(8, "fp16", chooser)
	if l != 3 || l0 != 1 {
		t.Errorf("fp16 launches %g (NCHW runtime) and %g (own layouts), want 3 and 1", l, l0)
	}
	if !(tm > t0) || f != f0 {
		t.Errorf("fp16: time %g vs %g s, FLOPs %g vs %g: the transposes must add time, not FLOPs", tm, t0, f, f0)
	}
	// The input (8·64·56·56 halves) and the filter (64·64·9 halves) are read once more.
	if want := rd0 + 2*(8*64*56*56+64*64*9); rd != want {
		t.Errorf("fp16 bytes read %g, want %g", rd, want)
	}
	for _, dt := range []string{"fp32", "tf32"} {
		if l, _, _, _ := conv(8, dt, eager); l != 1 {
			t.Errorf("%s: %g launches, want 1 (no layout conversion off the half-precision path)", dt, l)
		}
	}
	if l, _, _, _ := conv(8, "fp16", nil); l != 1 {
		t.Errorf("default runtime: %g launches, want 1", l)
	}
	prev := 0.0
	for _, batch := range []int64{1, 2, 4, 8, 16, 32, 64, 128} {
		_, tm, _, _ := conv(batch, "fp16", eager)
		if tm < prev {
			t.Errorf("batch %d: %g s, below the smaller batch's %g s", batch, tm, prev)
		}
		prev = tm
	}
}
