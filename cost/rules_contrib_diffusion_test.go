package cost

import (
	"math"
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/ir/irtest"
)

// TestNhwcConvAsConv: onnxruntime's NhwcConv (NHWC input and weight) over
// SD 1.5's first 3×3 convolution of a 64×64 latent, 320 channels in and
// out, costs what Conv of the same problem run channels-last does (PyTorch
// channels_last, runtime graph-nhwc: no layout transposes): its MACs,
// bytes and time on an A100 in fp16 (a GEMM view in its NHWC output's
// terms).
func TestNhwcConvAsConv(t *testing.T) {
	nhwcRuntime, err := hwdb.LookupRuntime("graph-nhwc")
	if err != nil {
		t.Fatal(err)
	}
	a100, err := hwdb.Lookup("A100")
	if err != nil {
		t.Fatal(err)
	}
	// priced is the node "conv" of the graph build gives, unfused.
	priced := func(build func(b *irtest.Builder, attrs []*ir.Attribute) *ir.Value) report.NodeCost {
		b := msBuilder(t, 17)
		y := build(b, []*ir.Attribute{ir.IntsAttr("pads", 1, 1, 1, 1)})
		y.Producer.Name = "conv"
		b.Output(y)
		b.Infer()
		r, err := Analyze(b.G, b.M, a100, Options{Plan: "unfused", Runtime: nhwcRuntime})
		if err != nil {
			t.Fatal(err)
		}
		return nodeNamed(t, r, "conv")
	}
	conv := func(nhwc bool) report.NodeCost {
		return priced(func(b *irtest.Builder, attrs []*ir.Attribute) *ir.Value {
			bias := initializer(b, "b", ir.Float16, 320)
			if nhwc {
				return msNode(b, "NhwcConv", attrs, b.Input("x", ir.Float16, 2, 64, 64, 320), initializer(b, "w", ir.Float16, 320, 3, 3, 320), bias)
			}
			return b.Op("Conv", attrs, b.Input("x", ir.Float16, 2, 320, 64, 64), initializer(b, "w", ir.Float16, 320, 320, 3, 3), bias)
		})
	}
	nchw, nhwc := conv(false), conv(true)
	if nhwc.MACs != 2*64*64*320*320*9 || nhwc.MACs != nchw.MACs || nhwc.BytesRead != nchw.BytesRead || !near(nhwc.TimeS, nchw.TimeS) {
		t.Errorf("NhwcConv %g MACs, %g B, %.4g s; Conv %g MACs, %g B, %.4g s", nhwc.MACs, nhwc.BytesRead, nhwc.TimeS, nchw.MACs, nchw.BytesRead, nchw.TimeS)
	}
	// NhwcFusedConv (its weight in Conv's layout) with a residual Z and a
	// Relu: NhwcConv's count, 2 flops more an output element, Z read.
	fused := priced(func(b *irtest.Builder, attrs []*ir.Attribute) *ir.Value {
		x := b.Input("x", ir.Float16, 2, 64, 64, 320)
		return msNode(b, "NhwcFusedConv", append(attrs, ir.StringAttr("activation", "Relu")),
			x, initializer(b, "w", ir.Float16, 320, 320, 3, 3), initializer(b, "b", ir.Float16, 320), x)
	})
	out := 2 * 64 * 64 * 320.0
	if fused.MACs != nhwc.MACs || fused.FLOPs != nhwc.FLOPs+2*out || fused.BytesRead != nhwc.BytesRead+2*out {
		t.Errorf("NhwcFusedConv %g MACs, %g FLOPs, %g B read; NhwcConv %g, %g, %g", fused.MACs, fused.FLOPs, fused.BytesRead, nhwc.MACs, nhwc.FLOPs, nhwc.BytesRead)
	}
}

// TestDiffusionContribCounts: SD 1.5's GroupNorm with SiLU and
// SkipGroupNorm (64×64×320 NHWC, 32 groups), BiasSplitGelu (4096 tokens,
// 2·1280 wide) and BiasAdd, counted by hand at batch 2 in fp16.
func TestDiffusionContribCounts(t *testing.T) {
	b := msBuilder(t, 17)
	x := b.Input("x", ir.Float16, 2, 64, 64, 320)
	gamma, beta := initializer(b, "g", ir.Float16, 320), initializer(b, "b", ir.Float16, 320)
	gn := []*ir.Attribute{ir.IntAttr("groups", 32), ir.IntAttr("activation", 1)}
	named := func(v *ir.Value, name string) *ir.Value { v.Producer.Name = name; return v }
	g := named(msNode(b, "GroupNorm", gn, x, gamma, beta), "gn")
	sgn := b.Node("SkipGroupNorm", []*ir.Value{g, gamma, beta, x, initializer(b, "bias", ir.Float16, 320)}, 2, gn...)
	sgn.Domain, sgn.Name = "com.microsoft", "sgn"
	h := b.Input("h", ir.Float16, 2, 4096, 2560)
	gelu := named(msNode(b, "BiasSplitGelu", nil, h, initializer(b, "hb", ir.Float16, 2560)), "geglu")
	seq := b.Input("s", ir.Float16, 2, 4096, 1280)
	add := named(msNode(b, "BiasAdd", nil, gelu, initializer(b, "ab", ir.Float16, 1280), seq), "biasadd")
	b.Output(sgn.Outputs[0], sgn.Outputs[1], add)
	b.Infer()
	r := analyzeCovered(t, b, "A100")
	const (
		out  = 2 * 64 * 64 * 320.0
		rows = 2 * 32.0
		half = 2 * 4096 * 1280.0
	)
	for _, c := range []struct {
		name                  string
		flops, trans, written float64
	}{
		// GroupNormalization's 8 an element and 1 a row, SiLU's 4 an element.
		{"gn", 8*out + rows + 4*out, rows + out, out * 2},
		// + skip and bias; Y and S written.
		{"sgn", 8*out + rows + 4*out + 2*out, rows + out, 2 * out * 2},
		// two bias adds, Gelu's 5 and its erf, the product.
		{"geglu", (2 + 5 + 1) * half, half, half * 2},
		{"biasadd", 2 * half, 0, half * 2},
	} {
		nc := nodeNamed(t, r, c.name)
		if math.Abs(nc.FLOPs-c.flops) > 1e-9*c.flops || nc.Transcendentals != c.trans || nc.BytesWritten != c.written || !(nc.TimeS > 0) {
			t.Errorf("%s: %g FLOPs, %g transcendentals, %g B written, %g s; want %g, %g, %g", c.name, nc.FLOPs, nc.Transcendentals,
				nc.BytesWritten, nc.TimeS, c.flops, c.trans, c.written)
		}
	}
}
