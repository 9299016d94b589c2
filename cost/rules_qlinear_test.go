package cost

import (
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

// TestQLinearContribCounts: each QOperator op on a small batch-2 chain,
// counted by hand. Bytes read are the tensors', give or take the scalar
// scales and zero points (at most scalarSlack bytes a node). Per element a
// dequantize is 2 FLOPs and a quantize 3 (DequantizeLinear's and
// QuantizeLinear's counts).
func TestQLinearContribCounts(t *testing.T) {
	b := msBuilder(t, 13)
	x := b.Input("x", ir.Uint8, 2, 16, 8, 8) // 2048 elements
	s, z := initializer(b, "s", ir.Float32), initializer(b, "z", ir.Uint8)
	named := func(v *ir.Value, name string) *ir.Value { v.Producer.Name = name; return v }
	sig := named(msNode(b, "QLinearSigmoid", nil, x, s, z, s, z), "sig")
	mul := named(msNode(b, "QLinearMul", nil, x, s, z, sig, s, z, s, z), "mul")
	lr := named(msNode(b, "QLinearLeakyRelu", []*ir.Attribute{ir.FloatAttr("alpha", 0.1)}, mul, s, z, s, z), "leaky")
	cat := named(msNode(b, "QLinearConcat", []*ir.Attribute{ir.IntAttr("axis", 1)}, s, z, x, s, z, lr, s, z), "concat")
	pool := named(msNode(b, "QLinearAveragePool", []*ir.Attribute{ir.IntsAttr("kernel_shape", 2, 2), ir.IntsAttr("strides", 2, 2)}, cat, s, z, s, z), "pool")
	gap := named(msNode(b, "QLinearGlobalAveragePool", nil, pool, s, z, s, z), "gap")
	flat := b.Op("Flatten", []*ir.Attribute{ir.IntAttr("axis", 1)}, gap)
	w, wz, bias := initializer(b, "w", ir.Int8, 10, 32), initializer(b, "wz", ir.Int8), initializer(b, "bias", ir.Int32, 10)
	gemm := named(msNode(b, "QGemm", []*ir.Attribute{ir.IntAttr("transB", 1)}, flat, s, z, w, s, wz, bias, s, z), "gemm")
	sm := named(msNode(b, "QLinearSoftmax", []*ir.Attribute{ir.IntAttr("opset", 13)}, gemm, s, z, s, z), "softmax")
	keep, floor := initializer(b, "keep", ir.Bool, 10), initializer(b, "floor", ir.Uint8, 10)
	wh := named(msNode(b, "QLinearWhere", nil, keep, sm, s, z, floor, s, z, s, z), "where")
	nhwc := b.Input("x_nhwc", ir.Uint8, 2, 8, 8, 16)
	cw := initializer(b, "cw", ir.Uint8, 8, 16, 3, 3)
	conv := named(msNode(b, "QLinearConv", []*ir.Attribute{ir.IntAttr("channels_last", 1), ir.IntsAttr("pads", 1, 1, 1, 1)},
		nhwc, s, z, cw, s, z, s, z), "conv_nhwc")
	b.Output(wh, conv)
	b.Infer()
	r := analyzeCovered(t, b, "T4")
	const scalarSlack = 16
	for _, c := range []struct {
		name                              string
		macs, flops, trans, read, written float64
	}{
		{"sig", 0, 2048 * (2 + 3 + 3), 2048, 2048, 2048},                // one exp a sigmoid
		{"mul", 0, 2048 * (2*2 + 1 + 3), 0, 2 * 2048, 2048},             // A and B dequantized
		{"leaky", 0, 2048 * (2 + 2 + 3), 0, 2048, 2048},                 // compare, multiply
		{"concat", 0, 4096 * (2 + 3), 0, 2048 + 2048, 4096},             // every element requantized
		{"pool", 0, 1024*(4+1) + 2*4096 + 3*1024, 0, 4096, 1024},        // 4 taps and a divide an output
		{"gap", 0, 1024 + 64 + 2*1024 + 3*64, 0, 1024, 64},              // an add an input, a divide an output
		{"gemm", 640, 2*640 + 20, 0, 64 + 320 + 40, 20},                 // M=2 N=10 K=32, the int32 bias added
		{"softmax", 0, 4*20 + 2 + 2*20 + 3*20, 20, 20, 20},              // Softmax's 4 an element, 1 a row
		{"where", 0, 20 * (2*2 + 1 + 3), 0, 10 + 20 + 10, 20},           // condition, X, Y
		{"conv_nhwc", 1024 * 144, 2 * 1024 * 144, 0, 2048 + 1152, 1024}, // [2,8,8,8] outputs, K = 16·3·3
	} {
		nc := nodeNamed(t, r, c.name)
		checkCounts(t, nc, c.macs, c.flops, nc.BytesRead, c.written)
		if d := nc.BytesRead - c.read; d < 0 || d > scalarSlack {
			t.Errorf("%s: bytes read %.0f, want %.0f and its scalars", c.name, nc.BytesRead, c.read)
		}
		if !near(nc.Transcendentals, c.trans) && !(c.trans == 0 && nc.Transcendentals == 0) {
			t.Errorf("%s: transcendentals %g, want %g", c.name, nc.Transcendentals, c.trans)
		}
		if !(nc.TimeS > 0) {
			t.Errorf("%s: time %g", c.name, nc.TimeS)
		}
	}
}

// nodeNamed is the report row of the node called name.
func nodeNamed(t *testing.T, r *report.Report, name string) report.NodeCost {
	t.Helper()
	for _, n := range r.Nodes {
		if n.Name == name {
			return n
		}
	}
	t.Fatalf("no node %q in report", name)
	return report.NodeCost{}
}

// TestChannelsLastQLinearConvView: onnxruntime's channels-last
// QLinearConv is priced as the same convolution in NCHW: its GEMM view
// takes the channels from the output's last dim.
func TestChannelsLastQLinearConvView(t *testing.T) {
	conv := func(last bool) report.NodeCost {
		b := msBuilder(t, 13)
		dims := []int64{2, 64, 28, 28}
		if last {
			dims = []int64{2, 28, 28, 64}
		}
		x := b.Input("x", ir.Uint8, dims...)
		s, z := initializer(b, "s", ir.Float32), initializer(b, "z", ir.Uint8)
		w := initializer(b, "w", ir.Uint8, 128, 64, 3, 3)
		attrs := []*ir.Attribute{ir.IntsAttr("pads", 1, 1, 1, 1)}
		var y *ir.Value
		if last {
			y = msNode(b, "QLinearConv", append(attrs, ir.IntAttr("channels_last", 1)), x, s, z, w, s, z, s, z)
		} else {
			y = b.Op("QLinearConv", attrs, x, s, z, w, s, z, s, z)
		}
		y.Producer.Name = "conv"
		b.Output(y)
		b.Infer()
		return nodeNamed(t, analyzeOn(t, b, "A100", ""), "conv")
	}
	nchw, nhwc := conv(false), conv(true)
	if nhwc.MACs != nchw.MACs || !near(nhwc.TimeS, nchw.TimeS) {
		t.Errorf("channels last: %g MACs in %.3g s, NCHW %g in %.3g s", nhwc.MACs, nhwc.TimeS, nchw.MACs, nchw.TimeS)
	}
}
