package perf

import (
	"math"
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
)

// pointwiseConv is a 1×1 stride-1 fp32 convolution of c → k channels
// over n images of hw×hw pixels.
func pointwiseConv(n, c, hw, k int64) Kernel {
	return ConvKernel(ConvGeom{N: n, C: c, H: hw, W: hw, K: k, R: 1, S: 1, StrideH: 1, StrideW: 1}, hwdb.FP32, 4, 4)
}

// TestCUDNNSIMTRounds checks cuDNN's sm80 fp32 tile on the H200: a grid
// runs in rounds of two CTAs per SM (264 slots), so 392 CTAs (ResNet-50's
// 512→256 1×1 at 28×28, batch 32) cost what 528 do and 529 cost more; and
// the tile is the plan wherever the grid fills the SMs over channels in
// 64s.
func TestCUDNNSIMTRounds(t *testing.T) {
	g := mustGPU(t, "H200")
	o := PlanOptions()
	main := func(k Kernel) (GEMMPlan, float64) {
		t.Helper()
		pl, ok := ChooseGEMM(g, k, o)
		if !ok {
			t.Fatalf("%d×%d×%d: no plan", k.M, k.N, k.K)
		}
		return pl, pl.ComputeS
	}
	// M = 256 × CTA rows: 98 rows × 4 channel tiles = 392 CTAs; 132 × 4
	// = 528; one pixel more takes a third round.
	pl, at392 := main(pointwiseConv(32, 512, 28, 256))
	if pl.TileM != cudnnSIMTTile.m || pl.TileN != cudnnSIMTTile.n || pl.Split != 1 {
		t.Fatalf("512→256 at 28×28: plan %d×%d split %d, want cuDNN's %d×%d", pl.TileM, pl.TileN, pl.Split, cudnnSIMTTile.m, cudnnSIMTTile.n)
	}
	k528 := pointwiseConv(1, 512, 1, 256)
	k528.M = 132 * 256
	_, at528 := main(k528)
	k528.M++
	_, at529 := main(k528)
	if r := at528 / at392; r < 1-1e-9 || r > 1+1e-9 {
		t.Errorf("528 CTAs cost %.4f× 392 (%.1f µs, %.1f µs), want the same two rounds", r, at528*1e6, at392*1e6)
	}
	if at529 <= at528*1.2 {
		t.Errorf("529 CTAs %.1f µs, want a third round beyond 528's %.1f µs", at529*1e6, at528*1e6)
	}
	// The library keeps smaller tiles for 96 output channels and for a
	// 3-channel first layer (alignc4), grouped layers other kernels, and
	// other families their own;
	// TensorRT times its own tactics.
	trt, err := hwdb.LookupRuntime("tensorrt")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		g    string
		k    Kernel
		rt   *hwdb.Runtime
	}{
		{"96 channels", "H200", pointwiseConv(128, 16, 112, 96), nil},
		{"2 groups", "H200", ConvKernel(ConvGeom{N: 32, C: 128, H: 56, W: 56, K: 128, R: 3, S: 3, PadH: 1, PadW: 1, StrideH: 1, StrideW: 1, Group: 2}, hwdb.FP32, 4, 4), nil},
		{"3 channels", "H200", ConvKernel(ConvGeom{N: 32, C: 3, H: 224, W: 224, K: 64, R: 7, S: 7, PadH: 3, PadW: 3, StrideH: 2, StrideW: 2}, hwdb.FP32, 4, 4), nil},
		{"Volta", "V100-SXM2-32GB", pointwiseConv(32, 512, 28, 256), nil},
		{"tensor cores", "H200", ConvKernel(ConvGeom{N: 32, C: 512, H: 28, W: 28, K: 256, R: 1, S: 1, StrideH: 1, StrideW: 1}, hwdb.FP16Tensor, 2, 2), nil},
		{"TensorRT", "H200", pointwiseConv(32, 512, 28, 256), trt},
	} {
		co := o
		co.Runtime = c.rt
		pl, ok := ChooseGEMM(mustGPU(t, c.g), c.k, co)
		if ok && pl.TileM == cudnnSIMTTile.m && pl.TileN == cudnnSIMTTile.n {
			t.Errorf("%s: plan %d×%d, cuDNN's sm80 fp32 tile", c.name, pl.TileM, pl.TileN)
		}
	}
}

// TestCUDNNSIMTRate checks where cudnnSIMTRate applies: over a grid of
// whole rounds (two CTAs on every SM) the tile's main loop is the
// model's own 256×64 tile at 1/cudnnSIMTRate on the H200's 128-lane SMs
// and at 1 on the A100's 64-lane ones.
func TestCUDNNSIMTRate(t *testing.T) {
	p := PlanOptions().Params
	for _, c := range []struct {
		gpu  string
		want float64
	}{{"H200", 1 / cudnnSIMTRate}, {"A100-SXM4-80GB", 1}} {
		g := mustGPU(t, c.gpu)
		ctas := float64(4 * cudnnSIMTResident * g.SMs)
		clk := newPathClock(g, p, hwdb.FP32)
		at := func(lib gemmLib) float64 {
			return tileTime(g, clk, hwdb.FP32, cudnnSIMTTile, 256*int64(ctas), 64, 576, 1, ctas, 1, 1e12, p, lib)
		}
		if r := at(gemmLib{pixelRows: true, cudnnSIMT: true}) / at(gemmLib{pixelRows: true}); math.Abs(r/c.want-1) > 1e-9 {
			t.Errorf("%s: cuDNN's tile %.4f× the model's own over whole rounds, want %.4f", c.gpu, r, c.want)
		}
	}
}

// TestCUDNNSIMTPixelsNeverCheaper walks a 1×1 convolution's pixels (what
// a batch grows) across the grid size where cuDNN's tile takes over, on
// each family it serves: the time never falls.
func TestCUDNNSIMTPixelsNeverCheaper(t *testing.T) {
	o := PlanOptions()
	for _, name := range []string{"H200", "A100-SXM4-80GB", "RTX-4090", "A10"} {
		g := mustGPU(t, name)
		for _, ch := range [][2]int64{{64, 64}, {512, 256}, {256, 1024}} {
			k := pointwiseConv(1, ch[0], 1, ch[1])
			prev := 0.0
			for m := int64(256); m <= 256*int64(g.SMs)*3; m += 64 {
				k.M = m
				got := EstimateKernel(g, k, o).TimeS
				if got < prev*(1-1e-12) {
					t.Errorf("%s %d→%d: %d pixels %.3f µs, less than %.3f at %d", name, ch[0], ch[1], m, got*1e6, prev*1e6, m-64)
					break
				}
				prev = got
			}
		}
	}
}
