package models

import (
	"math"

	"github.com/onnxcost/onnxcost/ir"
)

// The layers below are spelled the way torch.onnx (opset 13-17) exports
// the corresponding nn modules, so that the fusion passes meet the same
// patterns in zoo models as in real exports.

// linear is nn.Linear on an N-D input: MatMul by the pre-transposed weight
// [in,out], then Add of the bias (omitted when bias is false).
func (b *builder) linear(scope, prefix string, x *ir.Value, in, out int64, bias bool) *ir.Value {
	w := b.weight(prefix+".weight", in, out)
	y := b.op(scope, "MatMul", []*ir.Value{x, w})
	if !bias {
		return y
	}
	bv := b.weight(prefix+".bias", out)
	return b.op(scope, "Add", []*ir.Value{bv, y})
}

// gemm is nn.Linear on a 2-D input: Gemm(x, W[out,in], b) with transB=1.
func (b *builder) gemm(scope, prefix string, x *ir.Value, in, out int64) *ir.Value {
	w := b.weight(prefix+".weight", out, in)
	bv := b.weight(prefix+".bias", out)
	return b.op(scope, "Gemm", []*ir.Value{x, w, bv},
		aFloat("alpha", 1), aFloat("beta", 1), ir.IntAttr("transB", 1))
}

// conv is nn.Conv2d with square kernel k, stride s and padding p.
func (b *builder) conv(scope, prefix string, x *ir.Value, cin, cout, k, s, p int64, bias bool) *ir.Value {
	ins := []*ir.Value{x, b.weight(prefix+".weight", cout, cin, k, k)}
	if bias {
		ins = append(ins, b.weight(prefix+".bias", cout))
	}
	return b.op(scope, "Conv", ins,
		ir.IntsAttr("dilations", 1, 1), ir.IntAttr("group", 1), ir.IntsAttr("kernel_shape", k, k),
		ir.IntsAttr("pads", p, p, p, p), ir.IntsAttr("strides", s, s))
}

// batchNorm is nn.BatchNorm2d in eval mode.
func (b *builder) batchNorm(scope, prefix string, x *ir.Value, c int64) *ir.Value {
	return b.op(scope, "BatchNormalization", []*ir.Value{x,
		b.weight(prefix+".weight", c), b.weight(prefix+".bias", c),
		b.weight(prefix+".running_mean", c), b.weight(prefix+".running_var", c)},
		aFloat("epsilon", 1e-5), aFloat("momentum", 0.9))
}

// maxPool is nn.MaxPool2d(k, s, p).
func (b *builder) maxPool(scope string, x *ir.Value, k, s, p int64) *ir.Value {
	return b.op(scope, "MaxPool", []*ir.Value{x},
		ir.IntAttr("ceil_mode", 0), ir.IntsAttr("kernel_shape", k, k), ir.IntsAttr("pads", p, p, p, p), ir.IntsAttr("strides", s, s))
}

// layerNorm is nn.LayerNorm over the last axis as opset-13 exports spell
// it: mean, centre, Pow 2, mean, + eps, Sqrt, Div, scale, shift.
func (b *builder) layerNorm(scope, prefix string, x *ir.Value, d int64, eps float64) *ir.Value {
	mean := b.op(scope, "ReduceMean", []*ir.Value{x}, ir.IntsAttr("axes", -1))
	xc := b.op(scope, "Sub", []*ir.Value{x, mean})
	sq := b.op(scope, "Pow", []*ir.Value{xc, b.scalar(scope, 2)})
	v := b.op(scope, "ReduceMean", []*ir.Value{sq}, ir.IntsAttr("axes", -1))
	ve := b.op(scope, "Add", []*ir.Value{v, b.scalar(scope, eps)})
	sd := b.op(scope, "Sqrt", []*ir.Value{ve})
	xn := b.op(scope, "Div", []*ir.Value{xc, sd})
	y := b.op(scope, "Mul", []*ir.Value{xn, b.weight(prefix+".weight", d)})
	return b.op(scope, "Add", []*ir.Value{y, b.weight(prefix+".bias", d)})
}

// rmsNorm is LLaMA's RMSNorm: x / sqrt(mean(x^2) + eps) * weight, spelled
// Pow/ReduceMean/Add/Sqrt/Div/Mul.
func (b *builder) rmsNorm(scope, prefix string, x *ir.Value, d int64, eps float64) *ir.Value {
	sq := b.op(scope, "Pow", []*ir.Value{x, b.scalar(scope, 2)})
	ms := b.op(scope, "ReduceMean", []*ir.Value{sq}, ir.IntsAttr("axes", -1))
	mse := b.op(scope, "Add", []*ir.Value{ms, b.scalar(scope, eps)})
	rms := b.op(scope, "Sqrt", []*ir.Value{mse})
	xn := b.op(scope, "Div", []*ir.Value{x, rms})
	return b.op(scope, "Mul", []*ir.Value{b.weight(prefix+".weight", d), xn})
}

// geluTanh is GPT-2's gelu_new, 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))),
// spelled as torch exports F.gelu(approximate="tanh").
func (b *builder) geluTanh(scope string, x *ir.Value) *ir.Value {
	x2 := b.op(scope, "Mul", []*ir.Value{x, x})
	x3 := b.op(scope, "Mul", []*ir.Value{x, x2})
	cx3 := b.op(scope, "Mul", []*ir.Value{b.scalar(scope, 0.044715), x3})
	in := b.op(scope, "Add", []*ir.Value{x, cx3})
	sc := b.op(scope, "Mul", []*ir.Value{b.scalar(scope, math.Sqrt(2/math.Pi)), in})
	th := b.op(scope, "Tanh", []*ir.Value{sc})
	one := b.op(scope, "Add", []*ir.Value{b.scalar(scope, 1), th})
	xm := b.op(scope, "Mul", []*ir.Value{x, one})
	return b.op(scope, "Mul", []*ir.Value{b.scalar(scope, 0.5), xm})
}

// geluErf is the exact GELU, x·0.5·(1 + erf(x/√2)), as torch exports
// F.gelu() before opset 20.
func (b *builder) geluErf(scope string, x *ir.Value) *ir.Value {
	d := b.op(scope, "Div", []*ir.Value{x, b.scalar(scope, math.Sqrt2)})
	e := b.op(scope, "Erf", []*ir.Value{d})
	a := b.op(scope, "Add", []*ir.Value{e, b.scalar(scope, 1)})
	m := b.op(scope, "Mul", []*ir.Value{x, a})
	return b.op(scope, "Mul", []*ir.Value{m, b.scalar(scope, 0.5)})
}

// silu is x·sigmoid(x), as torch exports nn.SiLU.
func (b *builder) silu(scope string, x *ir.Value) *ir.Value {
	s := b.op(scope, "Sigmoid", []*ir.Value{x})
	return b.op(scope, "Mul", []*ir.Value{x, s})
}

// splitHeads turns [b,s,h·hd] into [b,s,h,hd] (Reshape with 0 = copy, so
// symbolic batch and seq survive) and transposes by perm.
func (b *builder) splitHeads(scope string, x *ir.Value, heads, hd int64, perm ...int64) *ir.Value {
	r := b.op(scope, "Reshape", []*ir.Value{x, b.ints(scope, 0, 0, heads, hd)})
	if perm == nil {
		return r
	}
	return b.op(scope, "Transpose", []*ir.Value{r}, ir.IntsAttr("perm", perm...))
}

// attend is scaled dot-product attention as the fixtures spell it:
// MatMul(q, kᵀ) → Div(√hd) → Add(mask) → Softmax → MatMul(·, v). kT is
// already transposed; mask may be nil.
func (b *builder) attend(scope string, q, kT, v, mask *ir.Value, hd int64) *ir.Value {
	s := b.op(scope, "MatMul", []*ir.Value{q, kT})
	s = b.op(scope, "Div", []*ir.Value{s, b.scalar(scope, math.Sqrt(float64(hd)))})
	if mask != nil {
		s = b.op(scope, "Add", []*ir.Value{s, mask})
	}
	p := b.op(scope, "Softmax", []*ir.Value{s}, ir.IntAttr("axis", -1))
	return b.op(scope, "MatMul", []*ir.Value{p, v})
}

// mha is multi-head self-attention over [b,s,d] inputs q, k, v (already
// projected): split heads, attend, merge back to [b,s,d].
func (b *builder) mha(scope string, q, k, v, mask *ir.Value, heads, d int64) *ir.Value {
	hd := d / heads
	qh := b.splitHeads(scope, q, heads, hd, 0, 2, 1, 3)
	kT := b.splitHeads(scope, k, heads, hd, 0, 2, 3, 1)
	vh := b.splitHeads(scope, v, heads, hd, 0, 2, 1, 3)
	y := b.attend(scope, qh, kT, vh, mask, hd)
	y = b.op(scope, "Transpose", []*ir.Value{y}, ir.IntsAttr("perm", 0, 2, 1, 3))
	return b.op(scope, "Reshape", []*ir.Value{y, b.ints(scope, 0, 0, d)})
}

// seqLen is the sequence length of a [batch, seq] id tensor as a scalar
// (Shape → Gather), symbolic when the input's seq is.
func (b *builder) seqLen(scope string, ids *ir.Value) *ir.Value {
	sh := b.op(scope, "Shape", []*ir.Value{ids})
	return b.op(scope, "Gather", []*ir.Value{sh, b.scalarInt(scope, 1)}, ir.IntAttr("axis", 0))
}

// causalMask builds the additive causal mask [1,1,s,s] (0 on and below the
// diagonal, the most negative float above) from the sequence length:
// Trilu(ConstantOfShape(min), upper, k=1). It holds no parameters, unlike
// a [max_pos,max_pos] buffer sliced per call.
func (b *builder) causalMask(scope string, seq *ir.Value) *ir.Value {
	s1 := b.op(scope, "Unsqueeze", []*ir.Value{seq, b.ints(scope, 0)})
	shape := b.op(scope, "Concat", []*ir.Value{b.ints(scope, 1, 1), s1, s1}, ir.IntAttr("axis", 0))
	fill := ir.FloatTensor(ir.Float32, []int64{1}, []float64{negInf})
	full := b.op(scope, "ConstantOfShape", []*ir.Value{shape}, &ir.Attribute{Name: "value", Type: ir.AttrTensor, T: fill})
	return b.op(scope, "Trilu", []*ir.Value{full, b.scalarInt(scope, 1)}, ir.IntAttr("upper", 1))
}

// positions is Range(0, seq, 1): the position ids [s].
func (b *builder) positions(scope string, seq *ir.Value) *ir.Value {
	return b.op(scope, "Range", []*ir.Value{b.scalarInt(scope, 0), seq, b.scalarInt(scope, 1)})
}
