package report

import (
	"math"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/onnxcost/onnxcost/internal/measured"
	"github.com/onnxcost/onnxcost/ir"
)

// TestHostOpTableMatchesMeasured: hostOpUS is the host-op table our H200
// machine measured (scripts/measure_gpu.py --host-ops), functional calls
// under their op's name and module calls under "op.module"; the autocast
// rows are not kinds (an autocast op is priced as its casts' kernels and
// the op).
func TestHostOpTableMatchesMeasured(t *testing.T) {
	recs, err := measured.Read(filepath.Join("..", "..", "testdata", "measured", "h200_sxm_host_ops.csv"), "op,mode,kernels,us,kernel_us")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, r := range recs {
		key := r[0]
		switch r[1] {
		case "autocast":
			continue
		case "module":
			key += ".module"
		}
		us, err := strconv.ParseFloat(r[3], 64)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := hostOpUS[key]; !ok || got != us {
			t.Errorf("%s: table %g µs, measured %g", key, got, us)
		}
		seen++
	}
	if seen != len(hostOpUS) {
		t.Errorf("table has %d kinds, the measurement %d", len(hostOpUS), seen)
	}
}

// TestCallsScale: a call of one op pays its kind's cost as timed alone,
// a call of many the scale fitted on whole models less its first call's
// share, and the scale never falls as ops are added; a runtime without
// op_call_scale keeps 0.
func TestCallsScale(t *testing.T) {
	if got := CallsScale(1.35, 1); got != 1 {
		t.Errorf("one op: %g, want 1", got)
	}
	if got := CallsScale(1.35, 2); math.Abs(got-1.175) > 1e-12 {
		t.Errorf("two ops: %g, want 1.175", got)
	}
	if got := CallsScale(1.35, 300); got < 1.3488 || got > 1.35 {
		t.Errorf("300 ops: %g, want within 0.1%% of 1.35", got)
	}
	if got := CallsScale(0, 5); got != 0 {
		t.Errorf("no op_call_scale: %g, want 0", got)
	}
	for n := 1; n < 50; n++ {
		if CallsScale(1.35, n+1) < CallsScale(1.35, n) {
			t.Fatalf("the scale falls from %d to %d ops", n, n+1)
		}
	}
	// A one-node model's host is its kind's, as the host-op table timed it.
	one := []NodeCost{{Name: "ln", OpType: "LayerNormalization", Inputs: make([]TensorInfo, 3), Launches: 1}}
	if got, want := NodeHosts(8e-6, 2e-6, 1.35, one)[0], HostKindS(8e-6, "layer_norm"); math.Abs(got-want) > 1e-15 {
		t.Errorf("a lone LayerNormalization: host %.4g µs, want its kind's %.4g", got*1e6, want*1e6)
	}
}

// TestNodeHosts: an eager runtime prices each node by its op's kind, a
// module's only op in its module form (a convolution only with a bias),
// a view's call with no kernel, one module call per scope entered (each
// scope above too, once), further kernels at dispatch and a library's
// own at a driver launch; a runtime without op_call_scale charges
// dispatch a kernel; a graph replay charges nothing.
func TestNodeHosts(t *testing.T) {
	const d, m = 8e-6, 2e-6
	// op_call_scale 1.5 over nine host calls: each pays 1 + 0.5·8/9 of
	// its kind (CallsScale).
	const scale = 1.5
	s := CallsScale(scale, 9)
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b)) }
	kind := func(k string) float64 { return HostKindS(d, k) * s }
	in := func(n int) []TensorInfo { return make([]TensorInfo, n) }
	nodes := []NodeCost{
		{Name: "/layer1/layer1.0/conv1/Conv", OpType: "Conv", Inputs: in(2), Launches: 4, LibraryLaunches: 3},
		{Name: "/layer1/layer1.0/bn1/BatchNormalization", OpType: "BatchNormalization", Inputs: in(5), Launches: 1},
		{Name: "/layer1/layer1.0/Add", OpType: "Add", Launches: 1},
		{Name: "/features/features.0/Conv", OpType: "Conv", Inputs: in(3), Launches: 2},
		{Name: "/attn/Reshape", OpType: "Reshape"},
		{Name: "/attn/Transpose", OpType: "Transpose"},
		{Name: "/attn/MatMul", OpType: "MatMul", Outputs: []TensorInfo{{Shape: Shape{ir.D(1), ir.D(12), ir.D(128), ir.D(128)}}}, Launches: 1},
		{Name: "/attn/q/MatMul", OpType: "FusedGemm", Inputs: in(3), Params: 10, Launches: 3, LibraryLaunches: 2, HelperLaunches: 2},
		{Name: "/mlp/up/MatMul", OpType: "MatMul", Inputs: in(2), Params: 10, Launches: 1},
		{Name: "/w/Transpose", OpType: "Transpose", Params: 10},
		{Name: "/Constant", OpType: "Constant"},
	}
	got := NodeHosts(d, m, scale, nodes)
	want := []float64{
		// conv without a bias: the functional call, its three cuDNN
		// transposes, and three module calls (layer1, layer1.0, conv1).
		kind("conv2d") + 3*LibraryLaunchHostS + 3*m*s,
		kind("batch_norm.module"),
		kind("add"),
		// conv with a bias: the module form holds its module call; the
		// enclosing /features is entered here; the second kernel is a
		// bare op's.
		kind("conv2d.module") + d + m*s,
		kind("view") + m*s,
		kind("permute"),
		kind("bmm4d"),
		kind("linear.module"),
		// a Linear without a bias is a product (mm) and its module call
		kind("matmul") + 2*m*s,
		// a weight's transpose is F.linear's, not a call (torch.onnx
		// writes F.linear of a 3-D input as MatMul(x, Transpose(W)))
		0,
		0,
	}
	for i := range nodes {
		if !near(got[i], want[i]) {
			t.Errorf("%s: host %.3g µs, want %.3g", nodes[i].Name, got[i]*1e6, want[i]*1e6)
		}
	}
	if kind("conv2d.module") < 4*kind("add") || kind("view") > kind("add")/4 {
		t.Errorf("kinds out of proportion: conv module %.3g, add %.3g, view %.3g µs", kind("conv2d.module")*1e6, kind("add")*1e6, kind("view")*1e6)
	}
	// No op_call_scale: dispatch a kernel, library kernels at a launch,
	// module calls unscaled, views free.
	plain := NodeHosts(d, m, 0, nodes)
	for i, w := range []float64{d + 3*LibraryLaunchHostS + 3*m, d + m, d, 2*d + 2*m, 0, 0, d + m, d + m, d + 2*m, 0, 0} {
		if !near(plain[i], w) {
			t.Errorf("no op_call_scale: %s: %.3g µs, want %.3g", nodes[i].Name, plain[i]*1e6, w*1e6)
		}
	}
	for i, h := range NodeHosts(0, m, scale, nodes) {
		if h != 0 {
			t.Errorf("graph replay: %s has host %g", nodes[i].Name, h)
		}
	}
}
