package cost

import (
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/costtest"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/ir/irtest"
)

// quantConv is the convolution both quantized test models hold:
// [1,64,56,56] * [64,64,3,3], pad 1.
var quantConvAttrs = []*ir.Attribute{ir.IntsAttr("pads", 1, 1, 1, 1), ir.IntsAttr("kernel_shape", 3, 3)}

func initializer(b *irtest.Builder, name string, dt ir.DType, dims ...int64) *ir.Value {
	v := b.Tensor(name, dt, dims...)
	b.G.AddInitializer(v, &ir.Tensor{Name: name, DType: dt, Dims: dims})
	return v
}

// qlinearConvModel: uint8 x -> QLinearConv (int8 weights, int32 bias).
func qlinearConvModel(t *testing.T) *irtest.Builder {
	b := irtest.New(t, 13)
	x := b.Input("x", ir.Uint8, 1, 64, 56, 56)
	scale := func(name string) *ir.Value { return initializer(b, name, ir.Float32) }
	zp := func(name string, dt ir.DType) *ir.Value { return initializer(b, name, dt) }
	w := initializer(b, "w", ir.Int8, 64, 64, 3, 3)
	bias := initializer(b, "bias", ir.Int32, 64)
	y := b.Op("QLinearConv", quantConvAttrs, x, scale("xs"), zp("xz", ir.Uint8), w, scale("ws"), zp("wz", ir.Int8), scale("ys"), zp("yz", ir.Uint8), bias)
	b.Output(y)
	b.Infer()
	return b
}

// qdqConvModel: float x -> Q -> DQ -> Conv (weights int8 through DQ) ->
// Relu -> Q -> DQ, as a Q/DQ exporter writes it.
func qdqConvModel(t *testing.T) *irtest.Builder {
	b := irtest.New(t, 13)
	x := b.Input("x", ir.Float32, 1, 64, 56, 56)
	s := initializer(b, "s", ir.Float32)
	z := initializer(b, "z", ir.Int8)
	xq := b.Op("QuantizeLinear", nil, x, s, z)
	xd := b.Op("DequantizeLinear", nil, xq, s, z)
	wq := initializer(b, "w", ir.Int8, 64, 64, 3, 3)
	wd := b.Op("DequantizeLinear", nil, wq, s, z)
	bias := initializer(b, "bias", ir.Float32, 64)
	y := b.Op("Conv", quantConvAttrs, xd, wd, bias)
	r := b.Op("Relu", nil, y)
	yq := b.Op("QuantizeLinear", nil, r, s, z)
	b.Output(b.Op("DequantizeLinear", nil, yq, s, z))
	b.Infer()
	return b
}

// floatConvModel is the same convolution in fp32.
func floatConvModel(t *testing.T) *irtest.Builder {
	b := irtest.New(t, 13)
	x := b.Input("x", ir.Float32, 1, 64, 56, 56)
	w := initializer(b, "w", ir.Float32, 64, 64, 3, 3)
	bias := initializer(b, "bias", ir.Float32, 64)
	b.Output(b.Op("Conv", quantConvAttrs, x, w, bias))
	b.Infer()
	return b
}

func analyzeOn(t *testing.T, b *irtest.Builder, gpu, dtype string) *report.Report {
	t.Helper()
	return analyzeModelOn(t, b.G, b.M, gpu, dtype)
}

// analyzeCovered is analyzeOn without a --dtype, failing the test when
// a node is unsupported or the totals are partial.
func analyzeCovered(t *testing.T, b *irtest.Builder, gpu string) *report.Report {
	t.Helper()
	r := analyzeOn(t, b, gpu, "")
	if len(r.UnsupportedOps) > 0 || r.Totals.Partial != nil {
		t.Fatalf("unsupported %v, partial %v", r.UnsupportedOps, r.Totals.Partial)
	}
	return r
}

// analyzeModelOn is analyzeOn for a model read from a file.
func analyzeModelOn(t *testing.T, graph *ir.Graph, m *ir.Model, gpu, dtype string) *report.Report {
	t.Helper()
	g, err := hwdb.Lookup(gpu)
	if err != nil {
		t.Fatal(err)
	}
	// Kernels as a serving runtime replays them: one CUDA graph (the
	// in-graph launch gap), so the comparisons are of the kernels.
	rt, err := hwdb.LookupRuntime("graph")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Analyze(graph, m, g, Options{DType: dtype, Plan: "unfused", Runtime: rt})
	if err != nil {
		t.Fatal(err)
	}
	costtest.CheckSane(t, r)
	return r
}

func convNode(t *testing.T, r *report.Report) report.NodeCost {
	t.Helper()
	for _, n := range r.Nodes {
		if n.OpType == "QLinearConv" || n.OpType == "Conv" {
			return n
		}
	}
	t.Fatal("no convolution in the report")
	return report.NodeCost{}
}

// TestQuantizedModelsRunAtInt8: with no --dtype, a QLinearConv and a
// Q/DQ-wrapped Conv are costed at int8 (int8 tensor cores, 1-byte
// operands), as fast as the float convolution at --dtype int8 and far
// faster than at fp32; the report says int8 (quantized model).
func TestQuantizedModelsRunAtInt8(t *testing.T) {
	for _, gpu := range []string{"A100", "T4"} {
		f32 := convNode(t, analyzeOn(t, floatConvModel(t), gpu, ""))
		i8 := convNode(t, analyzeOn(t, floatConvModel(t), gpu, "int8"))
		for name, b := range map[string]*irtest.Builder{"QLinearConv": qlinearConvModel(t), "QDQ Conv": qdqConvModel(t)} {
			r := analyzeOn(t, b, gpu, "")
			n := convNode(t, r)
			if r.DType != "int8" || r.Quantized != "int8" {
				t.Errorf("%s on %s: dtype %q quantized %q, want int8 (quantized model)", name, gpu, r.DType, r.Quantized)
			}
			if n.Precision != string(hwdb.INT8Tensor) {
				t.Errorf("%s on %s: precision %q, want %s", name, gpu, n.Precision, hwdb.INT8Tensor)
			}
			// Far faster than fp32 in its arithmetic: the fixed fill
			// both kernels pay is the same.
			if n.TimeS > 1.1*i8.TimeS || n.ComputeS > 0.6*f32.ComputeS {
				t.Errorf("%s on %s: %.3g s (compute %.3g s), want about the int8 convolution's %.3g s (fp32: %.3g s, compute %.3g s)",
					name, gpu, n.TimeS, n.ComputeS, i8.TimeS, f32.TimeS, f32.ComputeS)
			}
			t.Logf("%s on %s: %s %.3g µs (float conv: fp32 %.3g µs, int8 %.3g µs)", name, gpu, n.Precision, n.TimeS*1e6, f32.TimeS*1e6, i8.TimeS*1e6)
			if n.MACs != f32.MACs {
				t.Errorf("%s on %s: macs %g, want %g", name, gpu, n.MACs, f32.MACs)
			}
		}
	}
	// A weight-only quantized MatMul (float activations) is not an int8 kernel.
	b := irtest.New(t, 13)
	x := b.Input("x", ir.Float32, 8, 512)
	s := initializer(b, "s", ir.Float32)
	z := initializer(b, "z", ir.Int8)
	w := b.Op("DequantizeLinear", nil, initializer(b, "w", ir.Int8, 512, 512), s, z)
	b.Output(b.Op("MatMul", nil, x, w))
	b.Infer()
	if r := analyzeOn(t, b, "A100", ""); r.Quantized != "" || r.DType == "int8" {
		t.Errorf("weight-only quantized MatMul: dtype %q quantized %q, want a float model", r.DType, r.Quantized)
	}
}
