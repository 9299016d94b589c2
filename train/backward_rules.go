package train

import (
	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
)

// attentionBackward: flash-attention style. The forward keeps only Q, K,
// V, O and the row log-sum-exp; the backward recomputes the scores (QKᵀ)
// and runs four more GEMMs (dV = Pᵀ·dO, dP = dO·Vᵀ, dQ = dS·K, dK =
// dSᵀ·Q): 5 GEMMs against the forward's 2, so 2.5× the forward FLOPs.
func attentionBackward(b *bwCtx) backwardPlan {
	var p backwardPlan
	any := false
	for _, in := range b.n.Inputs {
		any = any || b.needGrad(in)
	}
	if !any {
		return p
	}
	var in float64
	for i := 0; i < 3 && i < len(b.n.Inputs); i++ {
		in += b.bytes(b.n.In(i))
	}
	k := bwKernel{Name: "flash-bwd", Class: perf.ClassAttention, FLOPs: 2.5 * b.fwd.FLOPs,
		BytesRead: in + 2*b.bytes(b.n.Out(0)), BytesWritten: in, M: b.fwd.M, N: b.fwd.N, K: b.fwd.K,
		Batch: b.fwd.Batch, Launches: 1}
	p.Kernels = append(p.Kernels, k)
	for i := 0; i < 3 && i < len(b.n.Inputs); i++ {
		p.Saved = append(p.Saved, b.n.In(i))
	}
	p.Saved = append(p.Saved, b.n.Out(0))
	p.Note = "flash-style backward: recomputes the scores (2.5x forward FLOPs)"
	return p
}

// rnnBackward: backpropagation through time. The data gradient runs the
// recurrence backwards (the same sequential per-step GEMMs as the
// forward); the weight gradients of all steps are one GEMM each for W and
// R over batch·seq rows. So ≈ 2× the forward GEMM FLOPs. The forward
// keeps every step's gates and hidden state (cuDNN's reserve space).
func rnnBackward(b *bwCtx) backwardPlan {
	var p backwardPlan
	e := b.fwd
	if e.M <= 0 || e.N <= 0 || e.K <= 0 || e.Steps <= 0 {
		p.Kernels = append(p.Kernels, bwKernel{Name: "bptt", Class: perf.ClassElementwise, FLOPs: 2 * e.FLOPs,
			BytesRead: e.BytesRead + e.BytesWritten, BytesWritten: e.BytesRead, Launches: 1})
		return p
	}
	dirs := max(e.Batch, 1)
	// Data gradient through time: the forward kernel's shape again.
	p.Kernels = append(p.Kernels, bwKernel{Name: "bptt-data", Class: perf.ClassRNN, FLOPs: e.FLOPs,
		BytesRead: e.BytesRead + e.BytesWritten, BytesWritten: b.bytes(b.n.In(0)),
		M: e.M, N: e.N, K: e.K, Batch: e.Batch, Steps: e.Steps, InputK: e.InputK, Launches: 1})
	if b.needIn(1) || b.needIn(2) {
		// dW (gates·h × input) and dR (gates·h × h), reduction over
		// batch·seq, per direction.
		rows := e.N * e.Steps
		p.Kernels = append(p.Kernels,
			gemmKernel("dW", perf.ClassGEMM, e.M, max(e.InputK, 1), rows, dirs, b.bytes(b.n.In(0)), b.bytes(b.n.In(1))).weightGrad(),
			gemmKernel("dR", perf.ClassGEMM, e.M, e.K, rows, dirs, b.bytes(b.n.Out(0)), b.bytes(b.n.In(2))).weightGrad())
	}
	// Reserve space: gates (M per batch row per step) and h per step.
	eb := b.c.ElemBytes(b.n.In(0))
	p.SavedExtra = float64(e.M+e.K) * float64(e.N) * float64(e.Steps) * float64(dirs) * eb
	p.Saved = append(p.Saved, b.n.In(0))
	return p
}

// normBackward: with the saved per-row (or per-channel) statistics, the
// backward makes two passes over X and dY: one reduction (Σ dY, Σ dY·x̂)
// and one elementwise dX = γ·σ⁻¹·(dY − mean(dY) − x̂·mean(dY·x̂)),
// ≈ 8 FLOPs per element, plus dγ, dβ.
func normBackward(b *bwCtx) backwardPlan {
	var p backwardPlan
	x, y := b.n.In(0), b.n.Out(0)
	if !b.needIn(0) && !b.needIn(1) {
		return p
	}
	var params float64
	for i := 1; i < len(b.n.Inputs); i++ {
		if in := b.n.In(i); in != nil && in.IsInitializer {
			params += b.bytes(in)
		}
	}
	p.Kernels = append(p.Kernels, bwKernel{Name: "norm-bwd", Class: perf.ClassReduction, FLOPs: 8 * b.numel(x),
		BytesRead: 2*b.bytes(x) + 2*b.bytes(y) + params, BytesWritten: b.bytes(x) + params, Launches: 2,
		Vectorized: vectorizedGrad(b.n.OpType)})
	p.Saved = append(p.Saved, x)
	return p
}

// vectorizedGrad reports whether the training kernels of a node of
// opType are vectorized library kernels (perf.Kernel.Vectorized): those of
// an op whose forward is (cost.VectorizedOp: layer norm), and batch
// norm's, whose training-mode statistics and backward run in cuDNN's
// (and PyTorch's) batch-norm kernels, never scalar loops.
func vectorizedGrad(opType string) bool {
	return opType == "BatchNormalization" || cost.VectorizedOp(opType)
}

// batchNormBackward: normBackward; in training mode BatchNormalization
// also computes the batch statistics in the forward: one more read of X
// (a training-only forward kernel), which the inference rule does not
// count.
func batchNormBackward(b *bwCtx) backwardPlan {
	p := normBackward(b)
	if len(p.Kernels) > 0 {
		x := b.n.In(0)
		p.Forward = append(p.Forward, bwKernel{Name: "bn-batch-stats", Class: perf.ClassReduction, FLOPs: 3 * b.numel(x),
			BytesRead: b.bytes(x), Launches: 1, Vectorized: vectorizedGrad(b.n.OpType)})
		// torch.nn.BatchNorm2d in training mode also counts its
		// batches, num_batches_tracked.add_(1) (torch/nn/modules/
		// batchnorm.py, _BatchNorm.forward): one launch on an int64.
		p.Forward = append(p.Forward, bwKernel{Name: "bn-count", Class: perf.ClassElementwise, FLOPs: 1,
			BytesRead: 8, BytesWritten: 8, Launches: 1})
	}
	return p
}

// softmaxBackward: dX = Y ⊙ (dY − Σ dY⊙Y): reads Y and dY, 4 FLOPs per
// element; saves the output.
func softmaxBackward(b *bwCtx) backwardPlan {
	var p backwardPlan
	if !b.needIn(0) {
		return p
	}
	y := b.n.Out(0)
	p.Kernels = append(p.Kernels, bwKernel{Name: "softmax-bwd", Class: perf.ClassReduction, FLOPs: 4 * b.numel(y),
		BytesRead: 2 * b.bytes(y), BytesWritten: b.bytes(b.n.In(0)), Launches: 1})
	p.Saved = append(p.Saved, y)
	return p
}

// lossBackward: the gradient of cross-entropy w.r.t. the logits is
// softmax(x) − onehot(label), scaled by 1/N: 3 FLOPs per element, reading
// the logits (saved) and writing dX.
func lossBackward(b *bwCtx) backwardPlan {
	var p backwardPlan
	if !b.needIn(0) {
		return p
	}
	x := b.n.In(0)
	p.Kernels = append(p.Kernels, bwKernel{Name: "xent-bwd", Class: perf.ClassElementwise, FLOPs: 3 * b.numel(x),
		BytesRead: b.bytes(x) + b.bytes(b.n.In(1)), BytesWritten: b.bytes(x), Launches: 1})
	p.Saved = append(p.Saved, x)
	return p
}

// maxPoolBackward: the forward keeps the argmax index of each output
// (int64 in PyTorch's max_pool2d_with_indices); the backward zero-fills dX
// and scatters dY to those positions. Autograd keeps the input too
// (max_pool2d_with_indices_backward takes self, for its shape): mostly a
// ReLU's result kept anyway, but an Inception block's concatenation read
// only by the pool is held for it (GoogLeNet: 4.3 MB a sample at batch 2,
// scripts/saved_tensors.py).
func maxPoolBackward(b *bwCtx) backwardPlan {
	var p backwardPlan
	if !b.needIn(0) {
		return p
	}
	x, y := b.n.In(0), b.n.Out(0)
	idx := 8 * b.numel(y)
	p.Kernels = append(p.Kernels, bwKernel{Name: "maxpool-bwd", Class: perf.ClassData, FLOPs: b.numel(y),
		BytesRead: b.bytes(y) + idx, BytesWritten: b.bytes(x), Launches: 1})
	p.Saved = append(p.Saved, x)
	p.SavedExtra = idx
	return p
}

// poolSaves says what a pool's backward keeps of the forward.
type poolSaves int

const (
	// savesShape: only sizes (a global average pool, which PyTorch runs
	// as mean, whose backward keeps its input's sizes).
	savesShape poolSaves = iota
	// savesInput: the input, although the gradient reads only its shape:
	// avg_pool2d_backward takes self (derivatives.yaml), so autograd
	// holds the tensor (DenseNet-121's transitions in training: 2.8 MB a
	// sample, scripts/saved_tensors.py).
	savesInput
	// savesInputOutput: an Lp pool's gradient reads its input and output.
	savesInputOutput
)

// avgPoolBackward: each dY element is spread evenly over its window: one
// add per input element read back.
func avgPoolBackward(saves poolSaves) BackwardRule {
	return func(b *bwCtx) backwardPlan {
		var p backwardPlan
		if !b.needIn(0) {
			return p
		}
		x, y := b.n.In(0), b.n.Out(0)
		p.Kernels = append(p.Kernels, bwKernel{Name: "avgpool-bwd", Class: perf.ClassData, FLOPs: b.numel(x),
			BytesRead: b.bytes(y), BytesWritten: b.bytes(x), Launches: 1})
		switch saves {
		case savesInput:
			p.Saved = append(p.Saved, x)
		case savesInputOutput:
			p.Saved = append(p.Saved, x, y)
		}
		return p
	}
}

// dropoutBackward: in training the forward draws a mask and scales (a
// kernel the inference rule may have costed as a view), keeping the mask
// (one byte per element); the backward multiplies dY by it. A constant
// ratio of 0 drops nothing and runs nothing.
func dropoutBackward(b *bwCtx) backwardPlan {
	var p backwardPlan
	if cost.DropsNothing(b.n) {
		return p
	}
	x, y := b.n.In(0), b.n.Out(0)
	ne := b.numel(x)
	if b.fwd.View || b.fwd.Launches == 0 {
		p.Forward = append(p.Forward, bwKernel{Name: "dropout-mask", Class: perf.ClassElementwise, FLOPs: 3 * ne,
			BytesRead: b.bytes(x), BytesWritten: b.bytes(y) + ne, Launches: 1})
	}
	if b.needIn(0) {
		p.Kernels = append(p.Kernels, bwKernel{Name: "dropout-bwd", Class: perf.ClassElementwise, FLOPs: 2 * ne,
			BytesRead: b.bytes(y) + ne, BytesWritten: b.bytes(x), Launches: 1})
	}
	p.SavedExtra = ne
	return p
}

// gatherBackward: Embedding's backward scatter-adds dY rows into a
// zero-filled gradient of the table (atomic adds): it writes the whole
// table once (the zero fill) and reads dY and the indices.
func gatherBackward(b *bwCtx) backwardPlan {
	var p backwardPlan
	if !b.needIn(0) {
		return p
	}
	data, idx, y := b.n.In(0), b.n.In(1), b.n.Out(0)
	p.Kernels = append(p.Kernels, bwKernel{Name: "scatter-add", Class: perf.ClassData, FLOPs: b.numel(y),
		BytesRead: b.bytes(y) + b.bytes(idx), BytesWritten: b.bytes(data) + b.bytes(y), Launches: 2})
	p.Saved = append(p.Saved, idx)
	return p
}

// pointwiseOp is the backward of a pointwise op: dX = dY ⊙ f'(·) from
// the saved output (savesOutput: PyTorch saves the result for these) or
// the input. flops per element is f' plus the multiply; 0 means "as many
// as the forward, plus one".
type pointwiseOp struct {
	savesOutput bool
	flops       float64
}

// gradReadsNothing are the pointwise ops whose gradient reads neither
// input nor output: Neg's is −dY, a cast's dY cast back (NegBackward0 and
// ToCopyBackward0 keep no tensor; rotate_half's Neg in a Hugging Face
// LLaMA kept the whole query, scripts/saved_tensors.py).
var gradReadsNothing = map[string]bool{"Neg": true, "Cast": true, "CastLike": true}

// pointwise are the pointwise ops with a backward rule, one entry per op;
// a fused epilogue's activation reads savesOutput here too.
var pointwise = map[string]pointwiseOp{
	"Relu": {true, 1}, "Sigmoid": {true, 3}, "Tanh": {true, 3}, "Exp": {true, 3}, "Sqrt": {true, 3},
	"Reciprocal": {true, 3}, "Elu": {true, 2}, "Selu": {true, 2}, "Celu": {true, 2},

	"LeakyRelu": {false, 2}, "Clip": {false, 2}, "Abs": {false, 2}, "Neg": {false, 2}, "HardSigmoid": {false, 2},
	"ThresholdedRelu": {false, 2}, "Shrink": {false, 2}, "Softsign": {false, 2}, "Cast": {false, 2},
	"CastLike": {false, 2},

	"Gelu": {}, "onnxcost.Gelu": {}, "com.microsoft.Gelu": {}, "com.microsoft.FastGelu": {},
	"com.microsoft.QuickGelu": {}, "onnxcost.QuickGelu": {}, "com.microsoft.BiasGelu": {}, "Swish": {}, "Mish": {}, "Softplus": {},
	"HardSwish": {}, "Erf": {}, "Log": {}, "Sin": {}, "Cos": {}, "Tan": {}, "Asin": {}, "Acos": {}, "Atan": {},
	"Sinh": {}, "Cosh": {}, "Asinh": {}, "Acosh": {}, "Atanh": {}, "Pow": {}, "PRelu": {},
	"RotaryEmbedding": {}, "onnxcost.Rotary": {},
}

func (u pointwiseOp) backward(b *bwCtx) backwardPlan {
	var p backwardPlan
	x, y := b.n.In(0), b.n.Out(0)
	if b.fwd.View {
		// A cast to the dtype its input has: .to() returned the
		// tensor, and its gradient is dY.
		p.Views = true
		return p
	}
	if !b.needIn(0) {
		// A trainable second operand (PRelu's slope, BiasGelu's
		// bias) still needs its gradient: priced below as the same
		// kernel.
		any := false
		for i := 1; i < len(b.n.Inputs); i++ {
			any = any || b.needIn(i)
		}
		if !any {
			return p
		}
	}
	saved := x
	if u.savesOutput {
		saved = y
	}
	f := u.flops * b.numel(y)
	if u.flops == 0 {
		f = b.fwd.FLOPs + b.numel(y)
	}
	var rd float64
	for _, in := range b.n.Inputs {
		rd += b.bytes(in)
	}
	nothing := gradReadsNothing[b.n.OpType] && b.n.Domain == ""
	switch {
	case u.savesOutput:
		rd = b.bytes(y)
	case nothing:
		rd = 0
	}
	p.Kernels = append(p.Kernels, bwKernel{Name: "act-bwd", Class: perf.ClassElementwise, FLOPs: f,
		BytesRead: rd + b.outBytes(), BytesWritten: b.bytes(x), Launches: 1, Vectorized: vectorizedGrad(b.n.OpType)})
	switch {
	case u.savesOutput:
		p.Saved = append(p.Saved, saved)
	case !nothing:
		p.Saved = append(p.Saved, b.n.Inputs...)
	}
	if b.eager && clonesInput(b.n) {
		p.Forward = append(p.Forward, bwKernel{Name: "inplace-clone", Class: perf.ClassData,
			BytesRead: b.bytes(x), BytesWritten: b.bytes(x), Launches: 1})
	}
	return p
}

// clonesInput reports whether n is an activation a CNN runs in place
// whose gradient reads its input: Hardswish, which torchvision's
// MobileNetV3 constructs with inplace=True wherever it uses it, and
// ReLU6 (Clip) and SiLU (QuickGelu at alpha 1, the eager plan's
// fuse-silu) right after a convolution or batch norm, as torchvision's
// Conv2dNormActivation and SqueezeExcitation build them (inplace=True);
// a Clip elsewhere is as likely torch.clamp. Their derivative formulas read self,
// so autograd clones the input before the in-place op overwrites it: a
// copy kernel in every recorded forward (torch.profiler on the CPU,
// torch 1.13, training mode: MobileNetV2 35 aten::clone for 35
// hardtanh_, MobileNetV3-small 19 for 19 hardswish_, EfficientNet-B0 49
// for 49 silu_, ResNet-18's relu_ none; under no_grad none). ReLU and
// LeakyReLU save their result and need no copy. An activation after a
// GEMM (a transformer's MLP) is PyTorch's out-of-place F.silu or
// nn.SiLU(), and an ONNX file cannot say inplace=True: the producer
// stands in for it.
func clonesInput(n *ir.Node) bool {
	switch ir.QualifiedOp(n.Domain, n.OpType) {
	case "HardSwish":
		return true
	case "Clip":
	case "onnxcost.QuickGelu":
		if n.AttrFloat("alpha", 1) != 1 {
			return false
		}
	default:
		return false
	}
	x := n.In(0)
	if x == nil || x.Producer == nil || len(x.Consumers) != 1 {
		return false
	}
	switch pr := x.Producer; pr.OpType {
	case "BatchNormalization", "Conv":
		return pr.Domain == ""
	case "Add":
		return convBiasInput(pr) != nil
	}
	return false
}

// outputOnlyParts are chain members whose backward needs at most the
// chain's output (ReLU's mask from its output; adds pass dY on).
var outputOnlyParts = map[string]bool{"Add": true, "Sub": true, "Relu": true, "Neg": true, "Identity": true, "Sigmoid": true, "Tanh": true}

// fusedElementwiseBackward: the sum of the parts' backward as one kernel.
// When every part needs at most the chain's output (a residual Add then
// ReLU) only the output is saved; otherwise the chain's inputs are.
func fusedElementwiseBackward(b *bwCtx) backwardPlan {
	outOnly := false
	if a := b.n.Attr(ir.KeyPartOps); a != nil && len(a.Strings) > 0 {
		outOnly = true
		for _, op := range a.Strings {
			outOnly = outOnly && outputOnlyParts[op]
		}
	}
	return pointwiseOp{savesOutput: outOnly}.backward(b)
}

// addBackward: dA = dB = dY (no kernel: the gradient buffer is passed on),
// except that an input broadcast in the forward gets dY summed over the
// broadcast axes (a reduction kernel), and an input whose gradient is a
// scaled dY (scaled(i): Sub's subtrahend, Mean's inputs) gets a kernel.
func addBackward(scaled func(i int) bool) BackwardRule {
	return func(b *bwCtx) backwardPlan {
		var p backwardPlan
		y := b.n.Out(0)
		for i, in := range b.n.Inputs {
			if !b.needGrad(in) {
				continue
			}
			if b.numel(in) < b.numel(y) || scaled(i) {
				p.Kernels = append(p.Kernels, bwKernel{Name: "reduce-bcast", Class: perf.ClassReduction, FLOPs: b.numel(y),
					BytesRead: b.bytes(y), BytesWritten: b.bytes(in), Launches: 1})
			}
		}
		return p
	}
}

// onlyBroadcast is addBackward's scaled for Add and Sum: dY passes on
// unscaled.
func onlyBroadcast(int) bool { return false }

// mulBackward: dA = dY ⊙ B (and dB = dY ⊙ A), one kernel per input that
// needs a gradient, reading the other operand (saved); a broadcast input
// also sums (counted in the same kernel's FLOPs). Only the operands the
// gradients computed read are saved, as autograd saves them (MulBackward0
// and DivBackward0 keep self only when other requires grad): attention's
// scores scaled by a constant 1/√d keep the constant, not the scores
// (our BERT-base in training: one [B, H, S, S] buffer a layer fewer,
// scripts/saved_tensors.py). A divisor's gradient, −dY ⊙ A / B², reads
// both.
func mulBackward(b *bwCtx) backwardPlan {
	var p backwardPlan
	y := b.n.Out(0)
	for i, in := range b.n.Inputs {
		if !b.needGrad(in) {
			continue
		}
		if b.n.OpType == "Where" {
			// where(c, dY, 0) and where(c, 0, dY): WhereBackward0
			// keeps the condition alone (a Hugging Face GPT-2's
			// masked scores are not kept).
			p.Kernels = append(p.Kernels, bwKernel{Name: "where-bwd", Class: perf.ClassElementwise, FLOPs: b.numel(y),
				BytesRead: b.bytes(y) + b.bytes(b.n.In(0)), BytesWritten: b.bytes(in), Launches: 1})
			p.Saved = append(p.Saved, b.n.In(0))
			continue
		}
		p.Kernels = append(p.Kernels, bwKernel{Name: "mul-bwd", Class: perf.ClassElementwise, FLOPs: 2 * b.numel(y),
			BytesRead: b.bytes(y) + b.otherBytes(i), BytesWritten: b.bytes(in), Launches: 1})
		if len(b.n.Inputs) != 2 || b.n.OpType != "Mul" && b.n.OpType != "Div" {
			// Max and Min compare both operands.
			p.Saved = append(p.Saved, b.n.Inputs...)
			continue
		}
		p.Saved = append(p.Saved, b.n.Inputs[1-i])
		if i == 1 && b.n.OpType == "Div" {
			p.Saved = append(p.Saved, b.n.Inputs[1])
		}
	}
	return p
}

// movementBackward: the inverse permutation/slice/concat of dY: reads dY,
// writes dX (zero-filled where the forward dropped elements). An op that
// places by an index input (savesIndices: TopK, Compress, Scatter*)
// keeps its other inputs for the backward.
func movementBackward(savesIndices bool) BackwardRule {
	return func(b *bwCtx) backwardPlan {
		var p backwardPlan
		for _, in := range b.n.Inputs {
			if in == nil || !b.needGrad(in) {
				continue
			}
			if cost.WeightTranspose(b.n) || b.n.OpType == "Transpose" && b.fwd.View {
				// W.t() is a view: the GEMM's backward writes dW in
				// W's own layout (mm_mat2_backward), and nothing is
				// transposed back. So is any transpose the forward
				// ran as a view (cost's strideView): its gradient is
				// dY transposed, a view again.
				break
			}
			p.Kernels = append(p.Kernels, bwKernel{Name: "move-bwd", Class: perf.ClassData,
				BytesRead: b.bytes(b.n.Out(0)), BytesWritten: b.bytes(in), Launches: 1})
			if savesIndices {
				p.Saved = append(p.Saved, b.n.Inputs[1:]...)
			}
			break // one kernel handles every input (Concat, Split)
		}
		return p
	}
}

// concatBackward: PyTorch's CatBackward0 hands each input a narrow view
// of dY and launches nothing (torch/csrc/autograd/FunctionsManual.cpp,
// cat_tensors_backward). A view is copied only where the backward it
// reaches needs a contiguous gradient and nothing made one: an input read
// once (an input read by several nodes gets its gradients summed, the sum
// written contiguous: the producer's grad-sum), cut from dY along an
// inner axis (a slice along the outermost non-unit axis is contiguous),
// whose producer hands its gradient to a library call (cuDNN's
// convolution and batch norm, cuBLAS) rather than to an elementwise
// kernel that reads strides: one copy kernel of that input's size.
func concatBackward(b *bwCtx) backwardPlan {
	p := backwardPlan{Views: true}
	axis := b.n.AttrInt("axis", 0)
	y := b.n.Out(0)
	if y == nil || !y.Shape.Ranked {
		return movementBackward(false)(b)
	}
	r := int64(len(y.Shape.Dims))
	if axis < 0 {
		axis += r
	}
	outer := true // the dims before the axis are all 1
	for i := int64(0); i < axis && i < r; i++ {
		outer = outer && y.Shape.Dims[i].Is(1)
	}
	for _, in := range b.n.Inputs {
		if in == nil || !b.needGrad(in) || len(in.Consumers) != 1 || outer || !libraryGradient(in) {
			continue
		}
		p.Kernels = append(p.Kernels, bwKernel{Name: "move-bwd", Class: perf.ClassData,
			BytesRead: b.bytes(in), BytesWritten: b.bytes(in), Launches: 1})
	}
	return p
}

// libraryGradient reports whether v's producer passes v's gradient to a
// cuDNN or cuBLAS call (through a bias Add, which passes it on as is).
func libraryGradient(v *ir.Value) bool {
	p := v.Producer
	if p != nil && p.Domain == "" && p.OpType == "Add" && len(p.Inputs) == 2 {
		// A bias Add: one operand computed, the other a constant.
		a, c := p.In(0), p.In(1)
		switch {
		case a != nil && c != nil && a.Producer != nil && c.Producer == nil:
			p = a.Producer
		case a != nil && c != nil && c.Producer != nil && a.Producer == nil:
			p = c.Producer
		}
	}
	if p == nil {
		return false
	}
	switch p.OpType {
	case "Conv", "ConvTranspose", "BatchNormalization", "MatMul", "Gemm", ir.OpFusedConv, ir.OpFusedGemm, ir.OpFusedMatMul:
		return true
	}
	return false
}

// broadcastBackward: the gradient of a broadcast/reduction is dY
// broadcast back (or summed back for Expand/Tile/Resize): reads dY and,
// for a reduction whose gradient depends on the values (savesXY:
// max/min/prod/norms), the saved input and output, writes dX.
func broadcastBackward(savesXY bool) BackwardRule {
	return func(b *bwCtx) backwardPlan {
		var p backwardPlan
		if !b.needIn(0) {
			return p
		}
		x, y := b.n.In(0), b.n.Out(0)
		k := bwKernel{Name: "bcast-bwd", Class: perf.ClassReduction, FLOPs: b.numel(x),
			BytesRead: b.bytes(y), BytesWritten: b.bytes(x), Launches: 1}
		if savesXY {
			k.BytesRead += b.bytes(x) + b.bytes(y)
			k.FLOPs *= 2
			p.Saved = append(p.Saved, x, y)
		}
		p.Kernels = append(p.Kernels, k)
		return p
	}
}

// viewBackward: a reshape of dY, no kernel.
func viewBackward(*bwCtx) backwardPlan { return backwardPlan{} }
