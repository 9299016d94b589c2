package train

import (
	"testing"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/internal/costtest"
	"github.com/onnxcost/onnxcost/ir"
)

// TestAutocastSavedDTypes: x[8,16] (fp32, fed by the loop) → MatMul(W1)
// → h → Softmax → p → MatMul(W2) → y under autocast. The first MatMul
// casts x to fp16 and saves that copy; h is fp16; softmax (on autocast's
// float32 list) casts h up (a copy only its kernel reads) and saves its
// fp32 output p; the second MatMul casts p down and saves the fp16 copy;
// y is fp16 and read by the loss, whose log_softmax (cross_entropy is on
// the float32 list) keeps fp32 log-probabilities. Saved, in bytes (128
// elements each):
//
//	x 512 (held by the loop) + x16 256 + p 512 + p16 256 + y 256 + lsm 512 = 2304
//
// The weights are fp32 parameters (master) with one fp16 copy each, the
// gradients fp32.
func TestAutocastSavedDTypes(t *testing.T) {
	b := newBuilder(t)
	x := b.Input("x", 8, 16)
	w1, w2 := b.Weight("w1", 16, 16), b.Weight("w2", 16, 16)
	h, p, y := b.Val("h", ir.Float32, 8, 16), b.Val("p", ir.Float32, 8, 16), b.Val("y", ir.Float32, 8, 16)
	b.Node("MatMul", []*ir.Value{x, w1}, []*ir.Value{h})
	b.Node("Softmax", []*ir.Value{h}, []*ir.Value{p}, &ir.Attribute{Name: "axis", Type: ir.AttrInt, I: -1})
	b.Node("MatMul", []*ir.Value{p, w2}, []*ir.Value{y})
	b.G.AddOutput(y)
	m := b.analyze(cost.Options{DType: "fp16", Train: &Options{Optimizer: "sgd"}}).Totals.Train.Memory
	if m.ActivationsBytes != 2304 {
		t.Errorf("activations %v B, want 2304 (x 512 + x16 256 + p 512 + p16 256 + y 256 + lsm 512)", m.ActivationsBytes)
	}
	if m.MasterWeightsBytes != 4*512 || m.WeightsBytes != 2*512 || m.GradientsBytes != 4*512 {
		t.Errorf("fp32 params %v, fp16 copies %v, grads %v B; want 2048, 1024, 2048", m.MasterWeightsBytes, m.WeightsBytes, m.GradientsBytes)
	}
}

// TestInplaceReLU6: Conv → BatchNorm → Clip (torchvision's
// ReLU6(inplace=True)) → Conv. BatchNorm saves its input y1; hardtanh_
// saves a copy of its input y2 made before it overwrites it, and the
// second Conv saves the result y3: PyTorch's autograd keeps them apart
// (scripts/saved_tensors.py on torchvision's MobileNetV2). Saved: x, y1,
// y2, y3, the output y4 and the loss's log-probabilities — six buffers
// of 2·4·8·8 fp32 elements (five while the model took hardtanh_ to save
// its result, as relu_ does).
func TestInplaceReLU6(t *testing.T) {
	b := newBuilder(t)
	x := b.Input("x", 2, 4, 8, 8)
	w1, w2 := b.Weight("w1", 4, 4, 1, 1), b.Weight("w2", 4, 4, 1, 1)
	scale, bias, mean, vr := b.Weight("s", 4), b.Weight("b", 4), b.Weight("m", 4), b.Weight("v", 4)
	lo, hi := b.Weight("lo", 1), b.Weight("hi", 1)
	lo.Shape, hi.Shape = ir.KnownShape(), ir.KnownShape()
	var ys [4]*ir.Value
	for i := range ys {
		ys[i] = b.Val("y"+itoa(i+1), ir.Float32, 2, 4, 8, 8)
	}
	b.Node("Conv", []*ir.Value{x, w1}, []*ir.Value{ys[0]})
	b.Node("BatchNormalization", []*ir.Value{ys[0], scale, bias, mean, vr}, []*ir.Value{ys[1]})
	b.Node("Clip", []*ir.Value{ys[1], lo, hi}, []*ir.Value{ys[2]})
	b.Node("Conv", []*ir.Value{ys[2], w2}, []*ir.Value{ys[3]})
	b.G.AddOutput(ys[3])
	st := trainOn(t, b, Options{Optimizer: "sgd"})
	if want := 6.0 * 4 * 2 * 4 * 8 * 8; st.tr.Memory.ActivationsBytes != want {
		t.Errorf("activations %v B, want 6 buffers = %v", st.tr.Memory.ActivationsBytes, want)
	}
	// The clone is a copy kernel in the eager forward, of the Clip's input.
	if f := st.plans[2].Forward; len(f) != 1 || f[0].Name != "inplace-clone" || f[0].BytesRead != 4*2*4*8*8 || f[0].BytesWritten != f[0].BytesRead {
		t.Errorf("Clip after a batch norm: forward kernels %+v, want one inplace-clone of its %d-byte input", f, 4*2*4*8*8)
	}
}

// TestClampClonesNothing: a Clip that reads no convolution or batch norm
// (here a scaled convolution output, on the gradient path) is as likely
// torch.clamp, out of place, and copies nothing.
func TestClampClonesNothing(t *testing.T) {
	b := newBuilder(t)
	x := b.Input("x", 2, 4, 8, 8)
	lo, hi := b.Weight("lo", 1), b.Weight("hi", 1)
	lo.Shape, hi.Shape = ir.KnownShape(), ir.KnownShape()
	y, m, z := b.Val("y", ir.Float32, 2, 4, 8, 8), b.Val("m", ir.Float32, 2, 4, 8, 8), b.Val("z", ir.Float32, 2, 4, 8, 8)
	b.Node("Conv", []*ir.Value{x, b.Weight("w", 4, 4, 1, 1)}, []*ir.Value{y})
	b.Node("Mul", []*ir.Value{y, b.Weight("s", 4, 1, 1)}, []*ir.Value{m})
	b.Node("Clip", []*ir.Value{m, lo, hi}, []*ir.Value{z})
	b.G.AddOutput(z)
	st := trainOn(t, b, Options{Optimizer: "sgd"})
	if len(st.plans[2].Kernels) == 0 {
		t.Fatal("Clip has no backward kernel: not on the gradient path")
	}
	if f := st.plans[2].Forward; len(f) != 0 {
		t.Errorf("Clip of a scaled convolution: forward kernels %+v, want none", f)
	}
}

// TestWeightTransposeBackward: a weight's Transpose (F.linear exported
// without constant folding) is W.t(), a view: the step keeps no copy of
// it and transposes no gradient back, so its device time and activations
// are those of the folded export's MatMul(x, Wᵀ).
func TestWeightTransposeBackward(t *testing.T) {
	build := func(transposed bool) *builder { return &builder{costtest.Linear(t, transposed)} }
	rv := build(true).analyze(cost.Options{Train: &Options{Optimizer: "sgd"}})
	rf := build(false).analyze(cost.Options{Train: &Options{Optimizer: "sgd"}})
	v, f := rv.Totals.Train, rf.Totals.Train
	if v.BackwardTimeS != f.BackwardTimeS || v.Memory.ActivationsBytes != f.Memory.ActivationsBytes {
		t.Errorf("backward %g s, activations %g B; the folded export's %g s, %g B", v.BackwardTimeS, v.Memory.ActivationsBytes, f.BackwardTimeS, f.Memory.ActivationsBytes)
	}
}

// TestProductSavesWhatGradientsRead: Conv → Mul by a constant → output
// keeps the constant, not the product's input (autograd's MulBackward0
// saves self only when other needs a gradient), while Max by the same
// constant keeps its input, which its gradient's mask compares.
func TestProductSavesWhatGradientsRead(t *testing.T) {
	act := func(op string) float64 {
		b := newBuilder(t)
		x := b.Input("x", 2, 4, 8, 8)
		h := b.Val("h", ir.Float32, 2, 4, 8, 8)
		y := b.Val("y", ir.Float32, 2, 4, 8, 8)
		c := b.Val("c", ir.Float32)
		c.Shape = ir.KnownShape()
		c.Const = &ir.Tensor{DType: ir.Float32, Floats: []float64{0.125}, HasData: true}
		b.Node("Conv", []*ir.Value{x, b.Weight("w", 4, 4, 1, 1)}, []*ir.Value{h})
		b.Node(op, []*ir.Value{h, c}, []*ir.Value{y})
		b.G.AddOutput(y)
		return trainOn(t, b, Options{Optimizer: "sgd"}).tr.Memory.ActivationsBytes
	}
	buf := 4.0 * 2 * 4 * 8 * 8
	mul, max := act("Mul"), act("Max")
	if max-mul != buf {
		t.Errorf("activations: Mul %v B, Max %v B; want Max to keep h (%v B) more", mul, max, buf)
	}
}

// TestNegAndCastKeepNothing: −x's gradient is −dY and a cast's is dY cast
// back, so neither keeps a tensor (rotate_half's Neg in a Hugging Face
// LLaMA kept the whole query); a cast to the dtype its input has is a
// view with no backward kernel at all.
func TestNegAndCastKeepNothing(t *testing.T) {
	b := newBuilder(t)
	x := b.Input("x", 16, 64)
	h, n, c, y := b.Val("h", ir.Float32, 16, 64), b.Val("n", ir.Float32, 16, 64), b.Val("c", ir.Float32, 16, 64), b.Val("y", ir.Float32, 16, 64)
	b.Node("MatMul", []*ir.Value{x, b.Weight("w1", 64, 64)}, []*ir.Value{h})
	b.Node("Neg", []*ir.Value{h}, []*ir.Value{n})
	b.Node("Cast", []*ir.Value{n}, []*ir.Value{c}, ir.IntAttr("to", int64(ir.Float32)))
	b.Node("MatMul", []*ir.Value{c, b.Weight("w2", 64, 64)}, []*ir.Value{y})
	b.G.AddOutput(y)
	st := trainOn(t, b, Options{Optimizer: "sgd"})
	if p := st.plans[1]; len(p.Saved) != 0 || len(p.Kernels) != 1 {
		t.Errorf("Neg: saved %v, %d kernels; want nothing saved, one kernel", p.Saved, len(p.Kernels))
	}
	if p := st.plans[2]; len(p.Saved) != 0 || len(p.Kernels) != 0 || !p.Views {
		t.Errorf("fp32 to fp32 Cast: saved %v, %d kernels, views %v; want a view", p.Saved, len(p.Kernels), p.Views)
	}
}

// TestWhereKeepsItsCondition: where(c, a, b)'s gradients are where(c,
// dY, 0) and where(c, 0, dY), so WhereBackward0 keeps c alone; a Hugging
// Face GPT-2 masks its attention scores with torch.where, and keeping
// the scores too put its training activations 3.4% over autograd's at
// sequence 512 (scripts/saved_tensors.py's gpt2_hf_small).
func TestWhereKeepsItsCondition(t *testing.T) {
	b := newBuilder(t)
	x := b.Input("x", 16, 64)
	cond := b.Input("cond", 16, 64)
	cond.DType, cond.Declared.DType = ir.Bool, ir.Bool
	h, y, z := b.Val("h", ir.Float32, 16, 64), b.Val("y", ir.Float32, 16, 64), b.Val("z", ir.Float32, 16, 64)
	fill := b.Val("fill", ir.Float32)
	fill.Shape = ir.KnownShape()
	fill.Const = &ir.Tensor{DType: ir.Float32, Floats: []float64{-1e4}, HasData: true}
	b.Node("MatMul", []*ir.Value{x, b.Weight("w1", 64, 64)}, []*ir.Value{h})
	b.Node("Where", []*ir.Value{cond, h, fill}, []*ir.Value{y})
	b.Node("MatMul", []*ir.Value{y, b.Weight("w2", 64, 64)}, []*ir.Value{z})
	b.G.AddOutput(z)
	st := trainOn(t, b, Options{Optimizer: "sgd"})
	if p := st.plans[1]; len(p.Saved) != 1 || p.Saved[0] != cond || len(p.Kernels) != 1 {
		t.Errorf("Where: saved %v, %d kernels; want its condition alone, one kernel", p.Saved, len(p.Kernels))
	}
}
