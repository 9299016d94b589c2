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
}

// buildRMSNorm builds LLaMA's RMSNorm export over x [2,4,8]; x is also
// read by a residual Add, as in a decoder layer.
func buildRMSNorm(b *builder, o rmsNormOpts) *ir.Value {
	x := b.input("x", 2, 4, 8)
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
	r := b.op("Sqrt", nil, b.op("Add", nil, ms, b.epsilon(1e-6, o.epsInput)))
	var y *ir.Value
	if o.reciprocal {
		y = b.op("Mul", nil, x, b.op("Reciprocal", nil, r))
	} else {
		y = b.op("Div", nil, x, r)
	}
	if !o.noGamma {
		y = b.op("Mul", nil, b.weight("gamma", 8), y)
	}
	b.output(y, b.op("Add", nil, x, y))
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
	} {
		t.Run(name, func(t *testing.T) {
			b := newBuilder(t)
			y := buildRMSNorm(b, c.o)
			g := b.infer()
			checkPreserves(t, g, "fuse-rmsnorm")
			n := expectOne(t, g, ir.OpFusedRMSNorm, c.parts)
			if n.Out(0) != y || len(n.Inputs) != c.ins || n.In(0).Name != "x" {
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
	}))
}
