package passes

import (
	"math"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// rmsNorm evaluates RMSNormalization over the trailing axes from axis:
// x / sqrt(mean(x²) + eps), times gamma when given.
func rmsNorm(x, gamma *tensor, axis int64, eps float64) *tensor {
	y := mapRows(x, axis, func(v, out []float64) {
		sq := 0.0
		for _, a := range v {
			sq += a * a
		}
		rms := math.Sqrt(sq/float64(len(v)) + eps)
		for j, a := range v {
			out[j] = a / rms
		}
	})
	if gamma != nil {
		y = broadcast(y, gamma, mul)
	}
	return y
}

// rmsNormOpts vary the hand-built RMSNorm.
type rmsNormOpts struct {
	mulSquare  bool // Mul(x, x) instead of Pow(x, 2)
	reciprocal bool // Mul(x, Reciprocal(r)) instead of Div(x, r)
	noGamma    bool
	axis       int64 // reduced axis (default -1)
	epsInput   bool  // epsilon is a graph input
	meanOutput bool  // the mean square is also a graph output
	cube       bool  // Pow(x, 3): not a square
	// How x/sqrt(v) is spelled; the default is Div(x, Sqrt(v)).
	rsqrt string // "div1": Mul(x, Div(1, Sqrt(v))) as torch.onnx's TorchScript
	// exporter writes torch.rsqrt; "pow": Mul(x, Pow(v, -0.5)); "div2":
	// Mul(x, Div(2, Sqrt(v))), not a reciprocal.
	rsqrtFirst bool     // Mul(rsqrt, x) rather than Mul(x, rsqrt)
	cast       ir.DType // x of this dtype, Cast to float32 and back (HF's .to(float32) … .to(input_dtype)); 0: none
	castRead   bool     // the float32 copy of x is also read outside the norm
}

// buildRMSNorm builds LLaMA's RMSNorm export over x [2,4,8]; x is also
// read by a residual Add, as in a decoder layer.
func buildRMSNorm(b *builder, o rmsNormOpts) *ir.Value {
	var x, x0 *ir.Value
	if o.cast == 0 {
		x = b.input("x", 2, 4, 8)
		x0 = x
	} else {
		x0 = b.Input("x16", o.cast, 2, 4, 8)
		x = b.op("Cast", []*ir.Attribute{ir.IntAttr("to", int64(ir.Float32))}, x0)
		if o.castRead {
			b.output(x)
		}
	}
	axis := o.axis
	if axis == 0 {
		axis = -1
	}
	var sq *ir.Value
	switch {
	case o.mulSquare:
		sq = b.op("Mul", nil, x, x)
	case o.cube:
		sq = b.op("Pow", nil, x, b.scalar("three", 3))
	default:
		sq = b.op("Pow", nil, x, b.scalar("two", 2))
	}
	ms := b.op("ReduceMean", []*ir.Attribute{ir.IntsAttr("axes", axis)}, sq)
	v := b.op("Add", nil, ms, b.epsilon(1e-6, o.epsInput))
	times := func(inv *ir.Value) *ir.Value {
		if o.rsqrtFirst {
			return b.op("Mul", nil, inv, x)
		}
		return b.op("Mul", nil, x, inv)
	}
	var y *ir.Value
	switch {
	case o.rsqrt == "pow":
		y = times(b.op("Pow", nil, v, b.scalar("minus_half", -0.5)))
	case o.rsqrt == "div1": // torch.ones(1): a [1] constant, not a scalar
		y = times(b.op("Div", nil, b.constant("one", []int64{1}, []float64{1}), b.op("Sqrt", nil, v)))
	case o.rsqrt == "div2":
		y = times(b.op("Div", nil, b.constant("two_", []int64{1}, []float64{2}), b.op("Sqrt", nil, v)))
	case o.reciprocal:
		y = times(b.op("Reciprocal", nil, b.op("Sqrt", nil, v)))
	default:
		y = b.op("Div", nil, x, b.op("Sqrt", nil, v))
	}
	if o.cast != 0 {
		y = b.op("Cast", []*ir.Attribute{ir.IntAttr("to", int64(o.cast))}, y)
	}
	if !o.noGamma {
		gamma := b.weight("gamma", 8)
		if o.cast != 0 { // HF keeps the weight in the model's dtype
			gamma = b.value("gamma16")
			t := ir.FloatTensor(o.cast, []int64{8}, []float64{0.5, -1, 1.5, 2, -0.25, 1, 0.75, -2})
			t.Name = "gamma16"
			b.g.AddInitializer(gamma, t)
		}
		y = b.op("Mul", nil, gamma, y)
	}
	b.output(y, b.op("Add", nil, x0, y))
	if o.meanOutput {
		b.output(ms)
	}
	return y
}

func TestRMSNormFuses(t *testing.T) {
	for name, c := range map[string]struct {
		o     rmsNormOpts
		parts int
		ins   int
	}{
		"Pow, Div, gamma":        {rmsNormOpts{}, 6, 2},
		"Mul square, Reciprocal": {rmsNormOpts{mulSquare: true, reciprocal: true}, 7, 2},
		"no gamma":               {rmsNormOpts{noGamma: true}, 5, 1},
		// HF LlamaRMSNorm as torch.onnx.export (TorchScript) writes it:
		// torch.rsqrt is Div(ones(1), Sqrt(·)), then x * that, weight * ·.
		"torch rsqrt: Div(1, Sqrt), Mul":     {rmsNormOpts{rsqrt: "div1"}, 7, 2},
		"torch rsqrt, Mul(rsqrt, x)":         {rmsNormOpts{rsqrt: "div1", rsqrtFirst: true}, 7, 2},
		"dynamo rsqrt: Reciprocal(Sqrt)":     {rmsNormOpts{reciprocal: true, rsqrtFirst: true}, 7, 2},
		"x * v ** -0.5: Pow(v, -0.5)":        {rmsNormOpts{rsqrt: "pow"}, 6, 2},
		"fp16 export: Cast to fp32 and back": {rmsNormOpts{rsqrt: "div1", cast: ir.Float16}, 9, 2},
		"fp32 export: no-op Casts":           {rmsNormOpts{rsqrt: "div1", cast: ir.Float32}, 9, 2},
		"bf16, Reciprocal":                   {rmsNormOpts{reciprocal: true, cast: ir.BFloat16}, 9, 2},
	} {
		t.Run(name, func(t *testing.T) {
			b := newBuilder(t)
			y := buildRMSNorm(b, c.o)
			g := b.infer()
			checkPreserves(t, g, "fuse-rmsnorm")
			n := expectOne(t, g, ir.OpFusedRMSNorm, c.parts)
			want := "x"
			if c.o.cast != 0 {
				want = "x16" // the Casts are inside the kernel
			}
			if n.Out(0) != y || len(n.Inputs) != c.ins || n.In(0).Name != want || n.Out(0).DType != n.In(0).DType {
				t.Errorf("RMSNormalization reads %v writes %v", n.Inputs, n.Outputs)
			}
			if a, eps := n.AttrInt("axis", 0), n.AttrFloat("epsilon", 0); a != -1 || math.Abs(eps-1e-6) > 1e-12 {
				t.Errorf("axis %d epsilon %g, want -1, 1e-6", a, eps)
			}
		})
	}
}

func TestRMSNormGuards(t *testing.T) {
	expectDeclines(t, "fuse-rmsnorm", ir.OpFusedRMSNorm, guardCases(buildRMSNorm, map[string]rmsNormOpts{
		"mean square is a graph output": {meanOutput: true},
		"epsilon not a constant":        {epsInput: true},
		"axis is not trailing":          {axis: 1},
		"Pow(x, 3) is not a square":     {cube: true},
		"Div(2, Sqrt) is not rsqrt":     {rsqrt: "div2"},
	}))
}

// TestRMSNormCastReadElsewhere: when the float32 copy of x is read outside
// the norm, the Casts stay (the copy must be written) and the norm fuses
// from the copy; the trailing Cast and the weight Mul, on the far side of
// that Cast, stay outside.
func TestRMSNormCastReadElsewhere(t *testing.T) {
	b := newBuilder(t)
	buildRMSNorm(b, rmsNormOpts{rsqrt: "div1", cast: ir.Float16, castRead: true})
	g := b.infer()
	checkPreserves(t, g, "fuse-rmsnorm")
	n := expectOne(t, g, ir.OpFusedRMSNorm, 6)
	if n.In(0).DType != ir.Float32 || len(n.Inputs) != 1 {
		t.Errorf("RMSNormalization reads %v, want the float32 copy of x alone", n.Inputs)
	}
}
