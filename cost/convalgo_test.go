package cost

import (
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/measured"
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
	t4, h100 := testGPU(t, "T4"), testGPU(t, "H100-SXM5-80GB")
	graph, trt := testRuntime(t, "graph"), testRuntime(t, "tensorrt")
	nhwc := testRuntime(t, "graph-nhwc") // tensor-core cases: no NCHW transposes to count
	none := graph.Clone()
	none.ConvWinograd = 0
	conv := func(gpu *hwdb.GPU, rt *hwdb.Runtime, dtype string, batch, kernel, stride int64) *nodeRow {
		b := newBuilder(t)
		x := b.Input("x", batch, 128, 56, 56)
		pad := (kernel - 1) / 2
		out := (56+2*pad-kernel)/stride + 1
		y := b.Val("y", ir.Float32, batch, 128, out, out)
		b.Node("Conv", []*ir.Value{x, b.Weight("w", 128, 128, kernel, kernel)}, []*ir.Value{y},
			ir.IntsAttr("pads", pad, pad, pad, pad), ir.IntsAttr("strides", stride, stride))
		b.G.Outputs = append(b.G.Outputs, y)
		r, err := Analyze(b.G, b.M, gpu, Options{DType: dtype, Runtime: rt})
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
		{"fp16", conv(t4, nhwc, "fp16", 32, 3, 1)},
		{"tf32 on A100", conv(testGPU(t, "A100-SXM4-80GB"), nhwc, "tf32", 32, 3, 1)},
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

// TestTF32Warning: a model priced at its own fp32 on a GPU with TF32
// tensor cores says which of its nodes the runtime would have run as TF32
// by default (TensorRT and ONNX Runtime: convolutions and GEMMs; PyTorch:
// convolutions);
// an explicit --dtype, a GPU without TF32 and a runtime without the
// default say nothing.
func TestTF32Warning(t *testing.T) {
	gpu := func(name string) *hwdb.GPU { return testGPU(t, name) }
	rt := func(name string) *hwdb.Runtime { return testRuntime(t, name) }
	warning := func(g *hwdb.GPU, r *hwdb.Runtime, dtype string) string {
		b := newBuilder(t)
		x := b.Input("x", 4, 64, 14, 14)
		y := b.Val("y", ir.Float32, 4, 64, 14, 14)
		b.Node("Conv", []*ir.Value{x, b.Weight("w", 64, 64, 3, 3)}, []*ir.Value{y}, ir.IntsAttr("pads", 1, 1, 1, 1))
		z := b.Val("z", ir.Float32, 4, 64, 14, 64)
		b.Node("MatMul", []*ir.Value{y, b.Weight("m", 14, 64)}, []*ir.Value{z})
		b.G.Outputs = append(b.G.Outputs, z)
		rep, err := Analyze(b.G, b.M, g, Options{DType: dtype, Runtime: r})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range rep.Warnings {
			if strings.Contains(w, "TF32") {
				return w
			}
		}
		return ""
	}
	a100 := gpu("A100-SXM4-80GB")
	noTF32 := rt("tensorrt").Clone()
	noTF32.TF32Conv, noTF32.TF32GEMM = 0, 0
	if w := warning(a100, rt("tensorrt"), ""); !strings.Contains(w, "1 convolution(s) and 1 GEMM-like node(s)") || !strings.Contains(w, "--dtype tf32") {
		t.Errorf("tensorrt on A100: %q, want the convolution and the GEMM named", w)
	}
	if w := warning(a100, rt("pytorch"), ""); !strings.Contains(w, "1 convolution(s) priced") || strings.Contains(w, "GEMM") {
		t.Errorf("pytorch on A100: %q, want the convolution only (PyTorch's matmuls stay fp32)", w)
	}
	if w := warning(a100, rt("onnxruntime"), ""); !strings.Contains(w, "1 convolution(s) and 1 GEMM-like node(s)") {
		t.Errorf("onnxruntime on A100: %q, want both (the CUDA EP's use_tf32 is on by default)", w)
	}
	for _, c := range []struct {
		what  string
		g     *hwdb.GPU
		r     *hwdb.Runtime
		dtype string
	}{
		{"--dtype fp32", a100, rt("tensorrt"), "fp32"},
		{"T4", gpu("T4"), rt("tensorrt"), ""},
		{"a runtime without the defaults", a100, noTF32, ""},
	} {
		if w := warning(c.g, c.r, c.dtype); w != "" {
			t.Errorf("%s: %q, want no TF32 warning", c.what, w)
		}
	}
}

// testGPU and testRuntime look up a built-in GPU and runtime profile.
func testGPU(t *testing.T, name string) *hwdb.GPU {
	t.Helper()
	g, err := hwdb.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func testRuntime(t *testing.T, name string) *hwdb.Runtime {
	t.Helper()
	r, err := hwdb.LookupRuntime(name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestNativeDepthwise: under the PyTorch runtimes an fp32 (or TF32, bf16)
// depthwise convolution is PyTorch's own direct kernel, priced by its
// instruction issue and never below its bytes; fp16, grouped-but-not-
// depthwise convolutions and the other runtimes keep the library kernel.
func TestNativeDepthwise(t *testing.T) {
	h100 := testGPU(t, "H100-SXM5-80GB")
	conv := func(rt *hwdb.Runtime, dtype string, batch, group int64) report.NodeCost {
		b := newBuilder(t)
		x := b.Input("x", batch, 128, 56, 56)
		y := b.Val("y", ir.Float32, batch, 128, 56, 56)
		b.Node("Conv", []*ir.Value{x, b.Weight("w", 128, 128/group, 3, 3)}, []*ir.Value{y},
			ir.IntsAttr("pads", 1, 1, 1, 1), ir.IntAttr("group", group))
		b.G.Outputs = append(b.G.Outputs, y)
		r, err := Analyze(b.G, b.M, h100, Options{DType: dtype, Runtime: rt})
		if err != nil {
			t.Fatal(err)
		}
		return r.Nodes[0]
	}
	native := func(n report.NodeCost) bool { return strings.Contains(n.Note, "conv_depthwise2d") }
	// fp16: cuDNN for a 3×3 filter over 128 channels (above), PyTorch's
	// kernel for a 7×7 one (ConvNeXt's) or fewer than 32 channels.
	half := func(channels, kernel int64) report.NodeCost {
		b := newBuilder(t)
		x := b.Input("x", 8, channels, 56, 56)
		y := b.Val("y", ir.Float32, 8, channels, 56, 56)
		p := (kernel - 1) / 2
		b.Node("Conv", []*ir.Value{x, b.Weight("w", channels, 1, kernel, kernel)}, []*ir.Value{y},
			ir.IntsAttr("pads", p, p, p, p), ir.IntAttr("group", channels))
		b.G.Outputs = append(b.G.Outputs, y)
		r, err := Analyze(b.G, b.M, h100, Options{DType: "fp16", Runtime: testRuntime(t, "pytorch")})
		if err != nil {
			t.Fatal(err)
		}
		return r.Nodes[0]
	}
	if !native(half(128, 7)) || !native(half(16, 3)) || native(half(128, 3)) || native(half(128, 5)) {
		t.Errorf("fp16 depthwise: 7x7 native %v, 16 channels native %v, 3x3 native %v, 5x5 native %v; want true, true, false, false",
			native(half(128, 7)), native(half(16, 3)), native(half(128, 3)), native(half(128, 5)))
	}
	pt, graph, ort := testRuntime(t, "pytorch"), testRuntime(t, "graph"), testRuntime(t, "onnxruntime")
	for _, dt := range []string{"fp32", "tf32", "bf16"} {
		if n := conv(graph, dt, 32, 128); !native(n) || n.KernelClass != string(perf.ClassConv) || n.Launches != 1 {
			t.Errorf("graph %s depthwise: class %s, %g launches, note %q; want PyTorch's native kernel", dt, n.KernelClass, n.Launches, n.Note)
		}
	}
	if n := conv(graph, "fp16", 32, 128); n.Launches != 1 {
		t.Errorf("fp16 depthwise under graph: %g launches, want cuDNN's kernel alone (no layout transposes)", n.Launches)
	}
	for _, c := range []struct {
		what string
		n    report.NodeCost
	}{
		{"fp16", conv(pt, "fp16", 32, 128)},
		{"onnxruntime", conv(ort, "fp32", 32, 128)},
		{"group 2", conv(pt, "fp32", 32, 2)},
	} {
		if native(c.n) {
			t.Errorf("%s: priced as PyTorch's native depthwise kernel (%q)", c.what, c.n.Note)
		}
	}
	// At batch 32 the kernel is bound by issue, not by its 51 MB: the
	// integer work of 12.8 M outputs over 132 SMs × 64 lanes.
	n := conv(graph, "fp32", 32, 128)
	outputs := 32.0 * 128 * 56 * 56
	issue := outputs * perf.DirectConvInstr(9) / (132 * 64 * 1980e6)
	if math.Abs(n.ComputeS/issue-1) > 0.02 || !(n.ComputeS > n.MemoryS) {
		t.Errorf("H100 fp32 depthwise at batch 32: compute %.3g s, memory %.3g s; want the issue time %.3g s, above memory", n.ComputeS, n.MemoryS, issue)
	}
	prev := 0.0
	for _, batch := range []int64{1, 2, 4, 8, 16, 32, 64, 128} {
		n := conv(graph, "fp32", batch, 128)
		if n.TimeS < prev || n.TimeS < n.MemoryS {
			t.Errorf("batch %d: %g s (memory %g s), below the smaller batch's %g s or its bytes", batch, n.TimeS, n.MemoryS, prev)
		}
		prev = n.TimeS
	}
}

// TestLayoutTransposes: a tensor-core convolution of an NCHW model under a
// runtime that hands NCHW tensors to cuDNN runs three transposes around
// its kernel (input and filter to NHWC, the output back), each reading
// and writing its tensor once; channels_last profiles, the vector path
// and TensorRT run none.
func TestLayoutTransposes(t *testing.T) {
	h100 := testGPU(t, "H100-SXM5-80GB")
	conv := func(rt *hwdb.Runtime, dtype string, batch int64) report.NodeCost {
		b := newBuilder(t)
		x := b.Input("x", batch, 64, 56, 56)
		y := b.Val("y", ir.Float32, batch, 128, 56, 56)
		b.Node("Conv", []*ir.Value{x, b.Weight("w", 128, 64, 3, 3)}, []*ir.Value{y}, ir.IntsAttr("pads", 1, 1, 1, 1))
		b.G.Outputs = append(b.G.Outputs, y)
		r, err := Analyze(b.G, b.M, h100, Options{DType: dtype, Runtime: rt})
		if err != nil {
			t.Fatal(err)
		}
		return r.Nodes[0]
	}
	graph, nhwc := testRuntime(t, "graph"), testRuntime(t, "graph-nhwc")
	for _, dt := range []string{"tf32", "fp16"} {
		n, c := conv(graph, dt, 32), conv(nhwc, dt, 32)
		elem := 4.0
		if dt == "fp16" {
			elem = 2
		}
		moved := elem * (32*64*56*56 + 128*64*3*3 + 32*128*56*56)
		if n.Launches != 4 || n.LibraryLaunches != 3 || c.Launches != 1 || !strings.Contains(n.Note, "NHWC") {
			t.Errorf("%s: NCHW %g launches (%q), channels_last %g; want 4 and 1", dt, n.Launches, n.Note, c.Launches)
		}
		if got := (n.BytesRead + n.BytesWritten) - (c.BytesRead + c.BytesWritten); math.Abs(got/(2*moved)-1) > 1e-9 {
			t.Errorf("%s: the transposes move %g B, want %g (each tensor read and written once)", dt, got, 2*moved)
		}
		if !(n.TimeS > c.TimeS) || n.FLOPs != c.FLOPs {
			t.Errorf("%s: NCHW %g s vs channels_last %g s, FLOPs %g vs %g: want slower, same FLOPs", dt, n.TimeS, c.TimeS, n.FLOPs, c.FLOPs)
		}
	}
	for _, c := range []struct {
		what string
		n    report.NodeCost
	}{
		{"fp32 (vector path)", conv(graph, "fp32", 32)},
		{"tensorrt", conv(testRuntime(t, "tensorrt"), "fp16", 32)},
		{"pytorch-compile (channels_last by layout optimisation)", conv(testRuntime(t, "pytorch-compile"), "fp16", 32)},
	} {
		if c.n.Launches != 1 {
			t.Errorf("%s: %g launches, want the convolution alone", c.what, c.n.Launches)
		}
	}
	prev := 0.0
	for _, batch := range []int64{1, 2, 4, 8, 16, 32, 64, 128} {
		n := conv(graph, "fp16", batch)
		if n.TimeS < prev {
			t.Errorf("batch %d: %g s below the smaller batch's %g s", batch, n.TimeS, prev)
		}
		prev = n.TimeS
	}
	// The fp16 transposes run at their tiles' element rate (perf
	// TransposeElements): 0.48 SM cycles an element of the input and
	// output, 32/9 times that for the filter's 9 taps.
	n, c := conv(graph, "fp16", 32), conv(nhwc, "fp16", 32)
	tiles := 0.48 * (32*64*56*56 + 128*64*3*3*32.0/9 + 32*128*56*56) / (float64(h100.SMs) * h100.BoostClockMHz * 1e6)
	if extra := n.TimeS - c.TimeS; extra < tiles {
		t.Errorf("fp16 NCHW transposes: %.3g s added, want at least their tiles' %.3g s", extra, tiles)
	}
}

// TestPointwiseConvRunsAsNCHWGEMM: a 1×1, stride-1, unpadded convolution
// of an NCHW model is a plain GEMM over each image's pixels, which cuDNN
// runs with no layout transpose (our H200's conv-choice sweep: 9 of 10
// such fp16 layers); strided, it keeps its transposes.
func TestPointwiseConvRunsAsNCHWGEMM(t *testing.T) {
	h100 := testGPU(t, "H100-SXM5-80GB")
	conv := func(stride int64) report.NodeCost {
		b := newBuilder(t)
		x := b.Input("x", 32, 256, 56, 56)
		hw := 56 / stride
		y := b.Val("y", ir.Float32, 32, 128, hw, hw)
		b.Node("Conv", []*ir.Value{x, b.Weight("w", 128, 256, 1, 1)}, []*ir.Value{y}, ir.IntsAttr("strides", stride, stride))
		b.G.Outputs = append(b.G.Outputs, y)
		r, err := Analyze(b.G, b.M, h100, Options{DType: "fp16", Runtime: testRuntime(t, "graph")})
		if err != nil {
			t.Fatal(err)
		}
		return r.Nodes[0]
	}
	if n := conv(1); n.Launches != 1 || n.LibraryLaunches != 0 {
		t.Errorf("1×1 stride 1: %g launches (%g the library's), want the GEMM alone", n.Launches, n.LibraryLaunches)
	}
	if n := conv(2); n.Launches != 3 || n.LibraryLaunches != 2 || !strings.Contains(n.Note, "transposes of input and output") {
		t.Errorf("1×1 stride 2: %g launches (%g the library's; %q), want the input's and output's transposes around it", n.Launches, n.LibraryLaunches, n.Note)
	}
}

// TestLayoutCopiesInThePeak: the NHWC copies cuDNN makes of an NCHW
// convolution's input, filter and output live in its call's workspace
// while it runs, so the inference peak of a one-convolution graph under a
// runtime that hands cuDNN NCHW tensors is its channels_last peak plus
// the three copies; the vector path makes none.
func TestLayoutCopiesInThePeak(t *testing.T) {
	h100 := testGPU(t, "H100-SXM5-80GB")
	peak := func(rt string, dtype string) float64 {
		b := newBuilder(t)
		x := b.Input("x", 16, 64, 56, 56)
		y := b.Val("y", ir.Float32, 16, 128, 56, 56)
		b.Node("Conv", []*ir.Value{x, b.Weight("w", 128, 64, 3, 3)}, []*ir.Value{y}, ir.IntsAttr("pads", 1, 1, 1, 1))
		b.G.Outputs = append(b.G.Outputs, y)
		r, err := Analyze(b.G, b.M, h100, Options{DType: dtype, Runtime: testRuntime(t, rt)})
		if err != nil {
			t.Fatal(err)
		}
		return r.Totals.PeakActivationBytes
	}
	copies := 2.0 * (16*64*56*56 + 128*64*3*3 + 16*128*56*56)
	if got := peak("graph", "fp16") - peak("graph-nhwc", "fp16"); got != copies {
		t.Errorf("fp16: NCHW peak %g B over channels_last's, want the copies' %g", got, copies)
	}
	if got := peak("graph", "fp32") - peak("graph-nhwc", "fp32"); got != 0 {
		t.Errorf("fp32 (vector path): NCHW peak %g B over channels_last's, want none", got)
	}
}

// TestFFTWorkspace: the workspace each of our H200's FFT calls allocated
// (the conv-choice table's ws_mib) is the three spectra perf.FFTWorkspace
// counts and a second filter spectrum, within 6%; the spectra alone fall
// 30% or more short of every one.
func TestFFTWorkspace(t *testing.T) {
	recs, err := measured.Read(filepath.Join("..", "testdata", "measured", "h200_sxm_conv_choices.csv"),
		"dtype,layout,batch,c,hw,k,r,stride,ms,kernel,grid,block,regs,smem,us,ws_mib")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	checked := 0
	for _, rec := range recs {
		key := strings.Join(rec[:8], ",")
		if seen[key] || rec[0] != "fp32" || !strings.Contains(rec[9], "fft2d") && !strings.Contains(rec[9], "flip_filter") {
			continue
		}
		seen[key] = true
		var v [6]int64
		for i, f := range rec[2:8] {
			if v[i], err = strconv.ParseInt(f, 10, 64); err != nil {
				t.Fatal(err)
			}
		}
		batch, c, hw, k, r := v[0], v[1], v[2], v[3], v[4]
		geom := perf.ConvGeom{N: batch, C: c, H: hw, W: hw, K: k, R: r, S: r, PadH: r / 2, PadW: r / 2, StrideH: 1, StrideW: 1}
		gemm, _, ok := perf.FFTConv(geom)
		if !ok {
			t.Fatalf("batch %d, %d→%d at %dx%d: cuDNN ran FFT, perf.FFTConv does not apply", batch, c, k, hw, hw)
		}
		ws, err := strconv.ParseFloat(rec[15], 64)
		if err != nil {
			t.Fatal(err)
		}
		ws *= 1 << 20
		got := perf.FFTWorkspace(gemm)
		t.Logf("batch %d, %d→%d at %dx%d: workspace %.0f MiB measured, %.0f priced (%+.1f%%), spectra alone %.0f", batch, c, k, hw, hw, ws/(1<<20), got/(1<<20), 100*(got/ws-1), gemm.Bytes/(1<<20))
		if math.Abs(got/ws-1) > 0.06 {
			t.Errorf("batch %d, %d→%d at %dx%d: workspace priced %.0f MiB, cuDNN allocated %.0f", batch, c, k, hw, hw, got/(1<<20), ws/(1<<20))
		}
		if gemm.Bytes > 0.7*ws {
			t.Errorf("batch %d, %d→%d at %dx%d: the spectra alone (%.0f MiB) are within 30%% of the %.0f MiB allocated: the second buffer is not what closes the gap", batch, c, k, hw, hw, gemm.Bytes/(1<<20), ws/(1<<20))
		}
		checked++
	}
	if checked < 6 {
		t.Errorf("checked %d FFT calls; the table holds 7", checked)
	}
}

// TestLibraryFFT: our H200's cudnn.benchmark picks
// (testdata/measured/h200_sxm_conv_choices.csv) are what libraryFFT
// chooses for every fp32 NCHW 3×3 stride-1 row: FFT where cuDNN ran
// fft2d_r2c_16x16, _32x32 or _64x64 (VGG-16's and ResNet-50's 14×14 and
// 28×28 layers at batch 32, VGG-16's 56×56 ones at 32 and 128), priced
// within 20% of the measured call (the 64-point ones within 5%), and
// implicit GEMM where it ran that (7×7, batch 1, 112×112 and above, and
// ResNet-50's 64→64 layer at 56×56). TF32, the fused plan's runtime and an H100 without the
// runtime's algorithm search keep implicit GEMM; more images never take
// less time.
func TestLibraryFFT(t *testing.T) {
	recs, err := measured.Read(filepath.Join("..", "testdata", "measured", "h200_sxm_conv_choices.csv"),
		"dtype,layout,batch,c,hw,k,r,stride,ms,kernel,grid,block,regs,smem,us,ws_mib")
	if err != nil {
		t.Fatal(err)
	}
	h200 := testGPU(t, "H200-SXM-141GB")
	graph := testRuntime(t, "graph")
	conv := func(gpu *hwdb.GPU, rt *hwdb.Runtime, dtype string, batch, c, hw, k int64) report.NodeCost {
		b := newBuilder(t)
		x := b.Input("x", batch, c, hw, hw)
		y := b.Val("y", ir.Float32, batch, k, hw, hw)
		b.Node("Conv", []*ir.Value{x, b.Weight("w", k, c, 3, 3)}, []*ir.Value{y}, ir.IntsAttr("pads", 1, 1, 1, 1))
		b.G.Outputs = append(b.G.Outputs, y)
		r, err := Analyze(b.G, b.M, gpu, Options{DType: dtype, Runtime: rt})
		if err != nil {
			t.Fatal(err)
		}
		return r.Nodes[0]
	}
	isFFT := func(n report.NodeCost) bool { return strings.Contains(n.Note, "FFT") }
	num := func(s string) int64 {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// cuDNN's own kernels of each call, the bias add PyTorch runs after
	// them left out: what the node prices.
	cudnnUS := map[string]float64{}
	for _, rec := range recs {
		if us, err := strconv.ParseFloat(rec[14], 64); err == nil && !strings.HasPrefix(rec[9], "void at::native") {
			cudnnUS[strings.Join(rec[:8], ",")] += us
		}
	}
	checked := map[bool]int{}
	seen := map[string]bool{}
	for _, rec := range recs {
		if rec[0] != "fp32" || rec[1] != "nchw" || rec[6] != "3" || rec[7] != "1" {
			continue
		}
		key := strings.Join(rec[:8], ",")
		if seen[key] {
			continue // a row per kernel of the call; its first names the algorithm
		}
		seen[key] = true
		batch, c, hw, k := num(rec[2]), num(rec[3]), num(rec[4]), num(rec[5])
		ran := strings.Contains(rec[9], "flip_filter") || strings.Contains(rec[9], "fft2d")
		n := conv(h200, graph, "fp32", batch, c, hw, k)
		want := ran
		if isFFT(n) != want {
			t.Errorf("batch %d, %d→%d at %dx%d: priced as FFT %v, want %v (cuDNN ran %.60s)", batch, c, k, hw, hw, isFFT(n), want, rec[9])
			continue
		}
		checked[want]++
		ms, err := strconv.ParseFloat(rec[8], 64)
		if err != nil {
			t.Fatal(err)
		}
		if want && math.Abs(n.TimeS/(ms*1e-3)-1) > 0.20 {
			t.Errorf("batch %d, %d→%d at %dx%d: FFT priced %.0f µs, measured %.0f µs", batch, c, k, hw, hw, n.TimeS*1e6, ms*1e3)
		}
		// The 64-point calls' kernels were priced one by one from this
		// table's batch-32 rows (perf.complexPointwiseCycles): their sum
		// within 5%, the batch-128 call held out.
		if us := cudnnUS[key]; want && hw > 30 {
			t.Logf("batch %d, %d→%d at %dx%d: 64-point FFT priced %.0f µs, its kernels %.0f µs (%+.1f%%)", batch, c, k, hw, hw, n.TimeS*1e6, us, 100*(n.TimeS/(us*1e-6)-1))
		}
		if us := cudnnUS[key]; want && hw > 30 && math.Abs(n.TimeS/(us*1e-6)-1) > 0.05 {
			t.Errorf("batch %d, %d→%d at %dx%d: 64-point FFT priced %.0f µs, its kernels measured %.0f µs", batch, c, k, hw, hw, n.TimeS*1e6, us)
		}
	}
	if checked[true] < 4 || checked[false] < 4 {
		t.Errorf("checked %d FFT and %d implicit-GEMM rows; the table holds more", checked[true], checked[false])
	}
	h100 := testGPU(t, "H100-SXM5-80GB")
	none := graph.Clone()
	none.ConvWinograd = 0
	for _, c := range []struct {
		what string
		n    report.NodeCost
	}{
		{"tf32", conv(h200, graph, "tf32", 32, 512, 28, 512)},
		{"tensorrt", conv(h200, testRuntime(t, "tensorrt"), "fp32", 32, 512, 28, 512)},
		{"no algorithm search", conv(h100, none, "fp32", 32, 512, 28, 512)},
	} {
		if isFFT(c.n) {
			t.Errorf("%s: priced as FFT", c.what)
		}
	}
	if n := conv(h100, graph, "fp32", 32, 512, 28, 512); !isFFT(n) {
		t.Errorf("H100 fp32 512→512 at 28x28, batch 32: %q, want FFT", n.Note)
	}
	prev := 0.0
	for batch := int64(1); batch <= 160; batch += 3 {
		n := conv(h200, graph, "fp32", batch, 256, 14, 256)
		if n.TimeS < prev {
			t.Fatalf("batch %d: %g s, below the smaller batch's %g s", batch, n.TimeS, prev)
		}
		prev = n.TimeS
	}
}

// TestIMMAReformatTakesTheFilterTranspose: cuDNN's int8 tensor-core
// convolution on Turing reorders the filter itself (a helper kernel of
// the plan, perf.ReformatsFilter), so an NCHW model's call runs that
// reformat and the input's and output's transposes, not a filter
// transpose too: four kernels under graph, as under TensorRT one.
func TestIMMAReformatTakesTheFilterTranspose(t *testing.T) {
	t4 := testGPU(t, "T4")
	conv := func(rt *hwdb.Runtime) report.NodeCost {
		b := newBuilder(t)
		x := b.Input("x", 8, 64, 28, 28)
		y := b.Val("y", ir.Float32, 8, 128, 28, 28)
		b.Node("Conv", []*ir.Value{x, b.Weight("w", 128, 64, 3, 3)}, []*ir.Value{y}, ir.IntsAttr("pads", 1, 1, 1, 1))
		b.G.Outputs = append(b.G.Outputs, y)
		r, err := Analyze(b.G, b.M, t4, Options{DType: "int8", Runtime: rt})
		if err != nil {
			t.Fatal(err)
		}
		return r.Nodes[0]
	}
	n := conv(testRuntime(t, "graph"))
	if n.Launches != 4 || n.LibraryLaunches != 3 || n.HelperLaunches != 1 || !strings.Contains(n.Note, "transposes of input and output") {
		t.Errorf("graph: %g launches (%g the library's, %g helpers; %q), want the reformat and the input's and output's transposes around the kernel",
			n.Launches, n.LibraryLaunches, n.HelperLaunches, n.Note)
	}
	if n := conv(testRuntime(t, "tensorrt")); n.Launches != 1 || n.HelperLaunches != 0 {
		t.Errorf("tensorrt: %g launches (%g helpers), want its own kernel alone", n.Launches, n.HelperLaunches)
	}
}

// TestWinogradWeighsItsFilter: cuDNN times each algorithm's whole call,
// so a layer runs as Winograd only where the product and its filter's
// transform together beat implicit GEMM: over a walk of layers, batches
// and pre-tensor-core GPUs, a Winograd node is never slower than the
// same layer as implicit GEMM. Under eager PyTorch the call's host time
// is the convolution's dispatch whichever algorithm runs (the filter's
// launch is a helper of the call), so leaving Winograd as the batch grows
// cannot make a host-bound call faster.
func TestWinogradWeighsItsFilter(t *testing.T) {
	graph, eager := testRuntime(t, "graph"), testRuntime(t, "pytorch")
	implicit := func(rt *hwdb.Runtime) *hwdb.Runtime {
		c := rt.Clone()
		c.ConvWinograd = 0
		return c
	}
	conv := func(gpu *hwdb.GPU, rt *hwdb.Runtime, batch, ch, hw int64) report.NodeCost {
		b := newBuilder(t)
		x := b.Input("x", batch, ch, hw, hw)
		y := b.Val("y", ir.Float32, batch, ch, hw, hw)
		b.Node("Conv", []*ir.Value{x, b.Weight("w", ch, ch, 3, 3)}, []*ir.Value{y}, ir.IntsAttr("pads", 1, 1, 1, 1))
		b.G.Outputs = append(b.G.Outputs, y)
		r, err := Analyze(b.G, b.M, gpu, Options{DType: "fp32", Runtime: rt})
		if err != nil {
			t.Fatal(err)
		}
		return r.Nodes[0]
	}
	chosen := 0
	for _, name := range []string{"T4", "GTX-1080-Ti", "M40", "P100-PCIe-16GB"} {
		g := testGPU(t, name)
		for _, ch := range []int64{64, 256, 512} {
			for _, hw := range []int64{7, 14, 28} {
				for _, batch := range []int64{1, 2, 3, 4, 8, 16} {
					w, d := conv(g, graph, batch, ch, hw), conv(g, implicit(graph), batch, ch, hw)
					if w.KernelClass != string(perf.ClassWinograd) {
						continue
					}
					chosen++
					if w.TimeS > d.TimeS*(1+1e-9) {
						t.Errorf("%s %d ch %d² batch %d: Winograd with its filter %.3g s, implicit GEMM %.3g s", name, ch, hw, batch, w.TimeS, d.TimeS)
					}
					we, de := conv(g, eager, batch, ch, hw), conv(g, implicit(eager), batch, ch, hw)
					if we.KernelClass == string(perf.ClassWinograd) && we.HostS != de.HostS {
						t.Errorf("%s %d ch %d² batch %d: eager host %.3g s as Winograd, %.3g s as implicit GEMM; want the call's dispatch either way", name, ch, hw, batch, we.HostS, de.HostS)
					}
				}
			}
		}
	}
	if chosen == 0 {
		t.Fatal("no layer of the walk ran as Winograd")
	}
}
