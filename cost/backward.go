package cost

import (
	"maps"
	"slices"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
)

// Backward rules. Each op with a cost rule (rules_*.go) has, keyed by the
// same ir.QualifiedOp name, either a BackwardRule here or an entry in
// NoBackward saying why it has none; internal/registrytest checks that the
// three tables agree. A backward rule turns the node's forward estimate
// into the kernels its backward pass launches (each priced by the same
// kernel model as the forward, perf.EstimateKernel) and names the forward
// tensors its backward reads, which training memory keeps alive from the
// forward pass until that backward has run (train_memory.go).

// bwKernel is one backward (or training-only forward) kernel.
type bwKernel struct {
	Name  string // "dgrad", "wgrad", ... shown in notes
	Class perf.KernelClass
	FLOPs float64
	// BytesRead and BytesWritten at the kernel boundary.
	BytesRead, BytesWritten float64
	// GEMM view for the time model, as in NodeEstimate.
	M, N, K, Batch, Steps, InputK int64
	Launches                      float64
	// Grad is which gradient a convolution's backward kernel computes;
	// with Conv set it is priced as cuDNN's backward algorithm search
	// would run it (perf.EstimateConvGrad), not from the GEMM view.
	Grad perf.Grad
	Conv *perf.ConvGeom
}

// backwardPlan is what a backward rule returns for one node.
type backwardPlan struct {
	Kernels []bwKernel
	// Forward lists kernels that run only in training mode in the forward
	// pass (Dropout's mask, BatchNormalization's batch statistics); they
	// add to forward time.
	Forward []bwKernel
	// Saved are the forward values the backward reads (kept alive until
	// this node's backward runs); SavedExtra are bytes of tensors the
	// forward writes only for backward (masks, indices, statistics).
	Saved      []*ir.Value
	SavedExtra float64
	Note       string
}

// bwCtx is what a backward rule sees.
type bwCtx struct {
	n   *ir.Node
	fwd NodeEstimate
	c   *RuleCtx
	// needGrad reports whether the gradient of a value must be computed
	// (it is a trainable parameter or depends on one).
	needGrad func(v *ir.Value) bool
}

// needIn reports whether input i needs a gradient.
func (b *bwCtx) needIn(i int) bool { return b.needGrad(b.n.In(i)) }

// bytes of value v at the costed dtype.
func (b *bwCtx) bytes(v *ir.Value) float64 {
	if v == nil {
		return 0
	}
	return b.c.Bytes(v)
}

func (b *bwCtx) numel(v *ir.Value) float64 {
	if v == nil {
		return 0
	}
	return b.c.Numel(v)
}

// outBytes is the bytes of all outputs (the incoming gradients dY).
func (b *bwCtx) outBytes() float64 {
	var s float64
	for _, o := range b.n.Outputs {
		s += b.bytes(o)
	}
	return s
}

// BackwardRule computes one node's backward plan.
type BackwardRule func(b *bwCtx) backwardPlan

var backwardTable = make(map[string]BackwardRule, 192) // sized as ruleTable is

// registerBackward gives every op in ops (ir.QualifiedOp names) rule r.
func registerBackward(r BackwardRule, ops ...string) {
	for _, k := range ops {
		if _, dup := backwardTable[k]; dup {
			panic("cost: backward rule registered twice: " + k)
		}
		backwardTable[k] = r
	}
}

// BackwardKeys lists the ops that have a backward rule, sorted.
func BackwardKeys() []string {
	return slices.Sorted(maps.Keys(backwardTable))
}

// Reasons an op has no backward rule. nonDiff ops pass no gradient (their
// output is integer, boolean, piecewise constant or random), so skipping
// them is exact; the others are differentiable but not modelled, and
// training reports their nodes in a warning.
const (
	nonDiff        = "not differentiable: no gradient flows through it, no backward kernel"
	inferenceOnly  = "quantised/integer inference op: not trained through"
	optimizerOp    = "an optimizer op itself: it is the update, not part of the backward pass"
	controlFlowBwd = "control flow: the backward of a body is not modelled; reported as missing"
	notModelled    = "differentiable, but no backward model yet; reported as missing"
)

// NoBackward lists ops with a cost rule but no backward rule, with the
// reason (one of the constants above).
var NoBackward = map[string]string{}

// Missing reports whether reason means a differentiable op whose backward
// is not costed (reported), as opposed to one with no gradient at all.
func missingBackward(reason string) bool {
	return reason == controlFlowBwd || reason == notModelled
}

func noBackward(reason string, ops ...string) {
	for _, k := range ops {
		NoBackward[k] = reason
	}
}

func init() {
	registerBackward(convBackward, "Conv", "ConvTranspose", "onnxcost.FusedConv", "onnxcost.WinogradConv", "DeformConv")
	registerBackward(gemmBackward, "Gemm", "MatMul", "onnxcost.FusedGemm", "onnxcost.GroupedGemm", "Einsum")
	registerBackward(attentionBackward, "Attention", "onnxcost.FusedAttention")
	registerBackward(rnnBackward, "LSTM", "GRU", "RNN")
	registerBackward(normBackward, "BatchNormalization", "GroupNormalization", "InstanceNormalization",
		"LayerNormalization", "RMSNormalization", "SimplifiedLayerNormalization", "onnxcost.LayerNormalization", "onnxcost.RMSNormalization",
		"onnxcost.SkipLayerNormalization", "com.microsoft.SimplifiedLayerNormalization", "com.microsoft.SkipLayerNormalization",
		"com.microsoft.SkipSimplifiedLayerNormalization", "LRN", "MeanVarianceNormalization", "LpNormalization")
	registerBackward(softmaxBackward, "Softmax", "LogSoftmax", "onnxcost.Softmax")
	registerBackward(lossBackward, "SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss")
	registerBackward(maxPoolBackward, "MaxPool", "GlobalMaxPool", "MaxRoiPool")
	registerBackward(avgPoolBackward, "AveragePool", "GlobalAveragePool", "LpPool", "GlobalLpPool")
	registerBackward(dropoutBackward, "Dropout")
	registerBackward(gatherBackward, "Gather", "GatherElements", "GatherND")
	// Activations whose backward reads their output (PyTorch saves the
	// result for these): dX = dY * f'(Y).
	registerBackward(unaryBackward(true, 1), outputSavingActs[0])
	registerBackward(unaryBackward(true, 3), outputSavingActs[1:6]...)
	registerBackward(unaryBackward(true, 2), outputSavingActs[6:]...)
	// Activations whose backward reads their input: f' recomputed from X.
	registerBackward(unaryBackward(false, 2), "LeakyRelu", "Clip", "Abs", "Neg", "HardSigmoid", "ThresholdedRelu",
		"Shrink", "Softsign", "Cast", "CastLike")
	registerBackward(unaryBackward(false, 0), "Gelu", "onnxcost.Gelu", "com.microsoft.Gelu", "com.microsoft.FastGelu",
		"com.microsoft.QuickGelu", "com.microsoft.BiasGelu", "Swish", "Mish", "Softplus", "HardSwish", "Erf", "Log",
		"Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Pow", "PRelu",
		"RotaryEmbedding", "onnxcost.Rotary")
	registerBackward(fusedElementwiseBackward, "onnxcost.FusedElementwise")
	registerBackward(addBackward, "Add", "Sub", "Sum", "Mean")
	registerBackward(mulBackward, "Mul", "Div", "Max", "Min", "Where")
	// Pure data movement: the backward is the inverse movement of dY.
	registerBackward(movementBackward, "Transpose", "Concat", "Split", "Slice", "Pad", "DepthToSpace", "SpaceToDepth",
		"Trilu", "CenterCropPad", "ReverseSequence", "Compress", "TopK", "ScatterElements", "ScatterND", "Scatter")
	// Broadcasting forwards: the backward sums dY back (a reduction).
	registerBackward(reduceBackBackward, "Expand", "Tile", "Resize", "Upsample", "ReduceSum", "ReduceMean",
		"ReduceMax", "ReduceMin", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceProd",
		"ReduceSumSquare", "CumSum", "ImageScaler")
	registerBackward(viewBackward, "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity")

	noBackward(nonDiff, "ArgMax", "ArgMin", "And", "Or", "Xor", "Not", "Equal", "Greater", "GreaterOrEqual",
		"Less", "LessOrEqual", "IsInf", "IsNaN", "BitShift", "BitwiseAnd", "BitwiseNot", "BitwiseOr", "BitwiseXor",
		"Ceil", "Floor", "Round", "Sign", "Mod", "Hardmax", "NonZero", "Shape", "Size", "Range", "ConstantOfShape",
		"EyeLike", "OneHot", "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Bernoulli",
		"Multinomial", "NonMaxSuppression", "BlackmanWindow", "HammingWindow", "HannWindow", "MelWeightMatrix",
		"Optional", "OptionalGetElement", "OptionalHasElement", "SequenceAt", "SequenceConstruct", "SequenceEmpty",
		"SequenceErase", "SequenceInsert", "SequenceLength", "SplitToSequence")
	noBackward(inferenceOnly, "ConvInteger", "QLinearConv", "MatMulInteger", "QLinearMatMul", "com.microsoft.QLinearAdd", "QuantizeLinear",
		"DequantizeLinear", "DynamicQuantizeLinear")
	noBackward(optimizerOp, "ai.onnx.preview.training.Adagrad", "ai.onnx.preview.training.Adam", "ai.onnx.preview.training.Momentum")
	noBackward(controlFlowBwd, "If", "Loop", "Scan")
	noBackward(notModelled, "AffineGrid", "Col2Im", "DFT", "STFT", "Det", "GridSample", "RoiAlign", "MaxUnpool")
	// Multinomial has no cost rule; keep NoBackward to ops that have one.
	delete(NoBackward, "Multinomial")
}

// gemmKernel is a GEMM-class backward kernel of M×N×K (batch b) reading r
// and writing w bytes.
func gemmKernel(name string, cl perf.KernelClass, m, n, k, batch int64, r, w float64) bwKernel {
	if batch < 1 {
		batch = 1
	}
	return bwKernel{Name: name, Class: cl, FLOPs: 2 * float64(m) * float64(n) * float64(k) * float64(batch),
		BytesRead: r, BytesWritten: w, M: m, N: n, K: k, Batch: batch, Launches: 1}
}

// outputSavingActs are the activations whose backward reads their output
// (PyTorch saves the result for these); every other activation's reads
// its input. Registered above in this order: Relu (1 FLOP per element),
// five of 3 FLOPs, three of 2.
var outputSavingActs = []string{"Relu", "Sigmoid", "Tanh", "Exp", "Sqrt", "Reciprocal", "Elu", "Selu", "Celu"}

// epilogueBackward adds the backward of a fused Conv/Gemm epilogue: the
// activation's dY*f' (an elementwise kernel reading the saved output) and
// the pool's scatter. The residual Add passes dY through (no kernel).
func epilogueBackward(b *bwCtx, p *backwardPlan) {
	act, _, pool := ir.EpilogueOf(b.n)
	y := b.n.Out(0)
	eb := b.c.elemBytes(y)
	// pre is the bytes of the activation's output: y, or before a fused
	// pool the un-pooled tensor, which is not a value of the graph; its
	// size comes from the GEMM view (M rows of N channels).
	pre := b.bytes(y)
	if pool != "" {
		pre = prePoolElems(b) * eb
		p.Kernels = append(p.Kernels, bwKernel{Name: "pool-bwd", Class: perf.ClassData, FLOPs: pre / eb,
			BytesRead: b.bytes(y), BytesWritten: pre, Launches: 1})
		// Max-pool indices: one byte each suffices for a window under 256.
		p.SavedExtra += b.numel(y)
	}
	if act != "" {
		p.Kernels = append(p.Kernels, bwKernel{Name: act + "-bwd", Class: perf.ClassElementwise, FLOPs: pre / eb,
			BytesRead: 2 * pre, BytesWritten: pre, Launches: 1})
		switch {
		case pool != "":
			p.SavedExtra += pre // the activation's un-pooled output (or input: same size)
		case slices.Contains(outputSavingActs, act):
			p.Saved = append(p.Saved, y)
		default:
			// GELU, SiLU, ...: the backward reads the pre-activation,
			// which is not a value of the fused graph; a training
			// kernel writes it beside the output (cuBLASLt's GELU_AUX
			// epilogue), as eager PyTorch keeps the GELU's input.
			p.SavedExtra += pre
		}
	}
	if b.n.AttrInt(ir.KeyGate, 0) != 0 {
		// d(act·G): dAct = dY·G and dG = dY·act, one pass reading dY, G
		// and the saved activation, writing both gradients.
		g := b.n.In(gateInput)
		p.Kernels = append(p.Kernels, bwKernel{Name: "gate-bwd", Class: perf.ClassElementwise, FLOPs: 2 * pre / eb,
			BytesRead: 2*pre + b.bytes(g), BytesWritten: pre + b.bytes(g), Launches: 1})
		p.Saved = append(p.Saved, g)
	}
}

// prePoolElems is the element count of a fused Conv/Gemm's output before
// its fused pool. A WinogradConv's MACs are the transformed algorithm's,
// so its size comes from the input: a 3×3 stride-1 convolution keeps
// H+pads−2 by W+pads−2. Otherwise the direct GEMM view gives M·N.
func prePoolElems(b *bwCtx) float64 {
	if ir.IsFused(b.n, ir.OpWinogradConv) && b.fwd.Class == perf.ClassWinograd {
		x, w := b.n.In(0), b.n.In(1)
		xd, okx := b.c.Dims(x)
		wd, okw := b.c.Dims(w)
		if okx && okw && len(xd) == 4 && len(wd) >= 1 {
			pads, _ := b.n.AttrInts("pads")
			p := [4]float64{}
			for i := 0; i < len(pads) && i < 4; i++ {
				p[i] = float64(pads[i])
			}
			return xd[0] * wd[0] * max(xd[2]+p[0]+p[2]-2, 1) * max(xd[3]+p[1]+p[3]-2, 1)
		}
	}
	v := b.fwd
	if b.n.OpType != ir.OpFusedGemm {
		v = convView(b)
	}
	return float64(v.M) * float64(v.N)
}

// convBackward: the data gradient dX = dY ⋆ Wᵀ (a transposed convolution,
// as an implicit GEMM of the forward's M×K×N view: M = N·P·Q rows, K = the
// forward's reduction C/g·R·S as output columns, N = output channels as
// reduction) and the weight gradient dW = Xᵀ ⋆ dY (M' = out channels, N' =
// C/g·R·S, K' = N·P·Q). Each has the forward's MACs, so backward FLOPs are
// 2× forward, except that the data gradient is skipped when X needs no
// gradient (the first layer: the input image is not trained) and the
// weight gradient when W is not trainable. The bias gradient is a
// reduction of dY.
func convBackward(b *bwCtx) backwardPlan {
	var p backwardPlan
	n := b.n
	x, w, y := n.In(0), n.In(1), n.Out(0)
	e := convView(b)
	cl := perf.ClassConv
	// dgrad is M×K (reduction N), wgrad N×K (reduction M).
	dm, dn, dk, wm, wn, wk := e.M, e.K, e.N, e.N, e.K, e.M
	if ir.IsFused(n, ir.OpWinogradConv) && b.fwd.Class == perf.ClassWinograd {
		// The plan chose Winograd for this 3×3 stride-1 layer (and the
		// rule kept it at this dtype: no tensor cores); cuDNN has
		// Winograd algorithms for both gradients too (BWD_DATA_ALGO_
		// WINOGRAD, BWD_FILTER_ALGO_WINOGRAD_NONFUSED), each the
		// forward's transformed GEMMs over the same tiles.
		e, cl = b.fwd, perf.ClassWinograd
		dm, dn, dk, wm, wn, wk = e.M, e.N, e.K, e.M, e.N, e.K
	}
	geom, okGeom := convGeomOf(b)
	grad := func(k bwKernel, g perf.Grad) bwKernel {
		k.Grad = g
		if okGeom {
			k.Conv = &geom
			// Priced from the geometry (Winograd where cuDNN would
			// pick it), so the FLOPs stay the useful work, 2·MACs per
			// gradient, as the forward's flops are the direct
			// convolution's, not a transformed algorithm's.
			k.FLOPs = 2 * b.fwd.MACs
		}
		return k
	}
	if b.needIn(0) {
		p.Kernels = append(p.Kernels, grad(gemmKernel("dgrad", cl, dm, dn, dk, e.Batch, b.bytes(y)+b.bytes(w), b.bytes(x)), perf.GradData))
		p.Saved = append(p.Saved, w)
	}
	if b.needIn(1) {
		p.Kernels = append(p.Kernels, grad(gemmKernel("wgrad", cl, wm, wn, wk, e.Batch, b.bytes(y)+b.bytes(x), b.bytes(w)), perf.GradWeight))
		p.Saved = append(p.Saved, x)
	}
	if bias := n.In(2); b.needGrad(bias) {
		p.Kernels = append(p.Kernels, bwKernel{Name: "bgrad", Class: perf.ClassReduction, FLOPs: b.numel(y),
			BytesRead: b.bytes(y), BytesWritten: b.bytes(bias), Launches: 1})
	}
	if n.Domain == ir.FusedDomain {
		epilogueBackward(b, &p)
	}
	return p
}

// convView is the direct convolution's implicit-GEMM view, rebuilt from
// the weight and the MACs: N = output channels (W's dim 0), K = the rest
// of W (C/g·R·S), M = MACs/(N·K) = batch·output pixels. The forward's own
// view may be another algorithm's (WinogradConv's transformed GEMMs) or
// see the pooled output of a fused pool; backward kernels are the direct
// algorithm's (cuDNN's dgrad/wgrad as implicit GEMMs).
func convView(b *bwCtx) NodeEstimate {
	e := b.fwd
	if w := b.n.In(1); w != nil {
		if d, ok := b.c.Dims(w); ok && len(d) >= 2 && d[0] > 0 {
			nn, kk := d[0], b.c.Numel(w)/d[0]
			if kk > 0 && e.MACs > 0 {
				e.M, e.N, e.K, e.Batch = clampInt(e.MACs/(nn*kk)), clampInt(nn), clampInt(kk), 1
				return e
			}
		}
	}
	if e.M <= 0 || e.N <= 0 || e.K <= 0 {
		// No GEMM view (unknown shapes): price at the forward's MACs.
		e.M, e.N, e.K, e.Batch = 1, 1, clampInt(e.MACs), 1
	}
	return e
}

// gemmBackward: Y[M×N] = A[M×K]·B[K×N]; dA = dY·Bᵀ (M×K, reduction N) and
// dB = Aᵀ·dY (K×N, reduction M). When B is a weight shared by a batch of
// GEMMs (MatMul of a [b,M,K] activation by a [K,N] weight) its gradient
// sums over the batch: one GEMM with reduction b·M. Each operand's
// gradient runs only when it needs one (weight grad only for trainable
// initializers or activations that depend on them).
func gemmBackward(b *bwCtx) backwardPlan {
	var p backwardPlan
	n := b.n
	e := b.fwd
	a0, b0, y := n.In(0), n.In(1), n.Out(0)
	if e.M <= 0 || e.N <= 0 || e.K <= 0 {
		e.M, e.N, e.K, e.Batch = 1, 1, int64(e.MACs), 1
	}
	bat := max(e.Batch, 1)
	if n.OpType == ir.OpGroupedGemm {
		// One activation times several packed weights: its data gradient
		// is one GEMM of the forward's size (summed over the groups) and
		// the weight gradients together another.
		var wb float64
		needW := false
		for i := 1; i < len(n.Inputs); i++ {
			wb += b.bytes(n.In(i))
			needW = needW || b.needIn(i)
		}
		if b.needIn(0) {
			p.Kernels = append(p.Kernels, gemmKernel("dX", perf.ClassGEMM, e.M, e.N, e.K, bat, b.outBytes()+wb, b.bytes(a0)))
			p.Saved = append(p.Saved, n.Inputs[1:]...)
		}
		if needW {
			p.Kernels = append(p.Kernels, gemmKernel("dW", perf.ClassGEMM, e.M, e.N, e.K, bat, b.outBytes()+b.bytes(a0), wb))
			p.Saved = append(p.Saved, a0)
		}
		return p
	}
	if n.OpType == "Einsum" {
		// Operand layouts vary: one GEMM of the forward's size per
		// operand that needs a gradient.
		for i, in := range n.Inputs {
			if b.needGrad(in) {
				p.Kernels = append(p.Kernels, gemmKernel("grad"+string(rune('0'+i%10)), perf.ClassGEMM, e.M, e.N, e.K, bat,
					b.bytes(y)+b.otherBytes(i), b.bytes(in)))
				p.Saved = append(p.Saved, n.Inputs...)
			}
		}
	} else {
		if b.needIn(0) {
			p.Kernels = append(p.Kernels, gemmKernel("dA", perf.ClassGEMM, e.M, e.K, e.N, bat, b.bytes(y)+b.bytes(b0), b.bytes(a0)))
			p.Saved = append(p.Saved, b0)
		}
		if b.needIn(1) {
			bb := bat
			kk := e.M
			if b0 != nil && b0.IsInitializer && bat > 1 {
				kk, bb = e.M*bat, 1
			}
			p.Kernels = append(p.Kernels, gemmKernel("dB", perf.ClassGEMM, e.K, e.N, kk, bb, b.bytes(y)+b.bytes(a0), b.bytes(b0)))
			p.Saved = append(p.Saved, a0)
		}
		if c := n.In(2); n.OpType != "MatMul" && b.needGrad(c) {
			p.Kernels = append(p.Kernels, bwKernel{Name: "bgrad", Class: perf.ClassReduction, FLOPs: b.numel(y),
				BytesRead: b.bytes(y), BytesWritten: b.bytes(c), Launches: 1})
		}
	}
	if n.Domain == ir.FusedDomain && n.OpType == ir.OpFusedGemm {
		epilogueBackward(b, &p)
	}
	return p
}

// otherBytes is the bytes of every input but i (what a gradient w.r.t.
// input i reads besides dY).
func (b *bwCtx) otherBytes(i int) float64 {
	var s float64
	for j, in := range b.n.Inputs {
		if j != i {
			s += b.bytes(in)
		}
	}
	return s
}

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
			gemmKernel("dW", perf.ClassGEMM, e.M, max(e.InputK, 1), rows, dirs, b.bytes(b.n.In(0)), b.bytes(b.n.In(1))),
			gemmKernel("dR", perf.ClassGEMM, e.M, e.K, rows, dirs, b.bytes(b.n.Out(0)), b.bytes(b.n.In(2))))
	}
	// Reserve space: gates (M per batch row per step) and h per step.
	eb := b.c.elemBytes(b.n.In(0))
	p.SavedExtra = float64(e.M+e.K) * float64(e.N) * float64(e.Steps) * float64(dirs) * eb
	p.Saved = append(p.Saved, b.n.In(0))
	return p
}

// normBackward: with the saved per-row (or per-channel) statistics, the
// backward makes two passes over X and dY: one reduction (Σ dY, Σ dY·x̂)
// and one elementwise dX = γ·σ⁻¹·(dY − mean(dY) − x̂·mean(dY·x̂)),
// ≈ 8 FLOPs per element, plus dγ, dβ. BatchNormalization in training mode
// also computes the batch statistics in the forward: one more read of X
// (a training-only forward kernel), which the inference rule does not
// count.
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
		BytesRead: 2*b.bytes(x) + 2*b.bytes(y) + params, BytesWritten: b.bytes(x) + params, Launches: 2})
	p.Saved = append(p.Saved, x)
	if b.n.OpType == "BatchNormalization" {
		p.Forward = append(p.Forward, bwKernel{Name: "bn-batch-stats", Class: perf.ClassReduction, FLOPs: 3 * b.numel(x),
			BytesRead: b.bytes(x), Launches: 1})
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
// and scatters dY to those positions.
func maxPoolBackward(b *bwCtx) backwardPlan {
	var p backwardPlan
	if !b.needIn(0) {
		return p
	}
	x, y := b.n.In(0), b.n.Out(0)
	idx := 8 * b.numel(y)
	p.Kernels = append(p.Kernels, bwKernel{Name: "maxpool-bwd", Class: perf.ClassData, FLOPs: b.numel(y),
		BytesRead: b.bytes(y) + idx, BytesWritten: b.bytes(x), Launches: 1})
	p.SavedExtra = idx
	return p
}

// avgPoolBackward: each dY element is spread evenly over its window: one
// add per input element read back, nothing saved but shapes.
func avgPoolBackward(b *bwCtx) backwardPlan {
	var p backwardPlan
	if !b.needIn(0) {
		return p
	}
	x, y := b.n.In(0), b.n.Out(0)
	p.Kernels = append(p.Kernels, bwKernel{Name: "avgpool-bwd", Class: perf.ClassData, FLOPs: b.numel(x),
		BytesRead: b.bytes(y), BytesWritten: b.bytes(x), Launches: 1})
	if b.n.OpType == "LpPool" || b.n.OpType == "GlobalLpPool" {
		p.Saved = append(p.Saved, x, y)
	}
	return p
}

// dropoutBackward: in training the forward draws a mask and scales (a
// kernel the inference rule may have costed as a view), keeping the mask
// (one byte per element); the backward multiplies dY by it.
func dropoutBackward(b *bwCtx) backwardPlan {
	var p backwardPlan
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

// unaryBackward builds the rule of a pointwise op: dX = dY ⊙ f'(·) from
// the saved output (useOut) or input. flops per element is f' plus the
// multiply; 0 means "as many as the forward, plus one".
func unaryBackward(useOut bool, flops float64) BackwardRule {
	return func(b *bwCtx) backwardPlan {
		var p backwardPlan
		x, y := b.n.In(0), b.n.Out(0)
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
		if useOut {
			saved = y
		}
		f := flops * b.numel(y)
		if flops == 0 {
			f = b.fwd.FLOPs + b.numel(y)
		}
		var rd float64
		for _, in := range b.n.Inputs {
			rd += b.bytes(in)
		}
		if useOut {
			rd = b.bytes(y)
		}
		p.Kernels = append(p.Kernels, bwKernel{Name: "act-bwd", Class: perf.ClassElementwise, FLOPs: f,
			BytesRead: rd + b.outBytes(), BytesWritten: b.bytes(x), Launches: 1})
		if useOut {
			p.Saved = append(p.Saved, saved)
		} else {
			p.Saved = append(p.Saved, b.n.Inputs...)
		}
		return p
	}
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
	if !outOnly {
		return unaryBackward(false, 0)(b)
	}
	p := unaryBackward(true, 0)(b)
	return p
}

// addBackward: dA = dB = dY (no kernel: the gradient buffer is passed on),
// except that an input broadcast in the forward gets dY summed over the
// broadcast axes (a reduction kernel).
func addBackward(b *bwCtx) backwardPlan {
	var p backwardPlan
	y := b.n.Out(0)
	for i, in := range b.n.Inputs {
		if !b.needGrad(in) {
			continue
		}
		if b.numel(in) < b.numel(y) || (b.n.OpType == "Sub" && i == 1) || b.n.OpType == "Mean" {
			p.Kernels = append(p.Kernels, bwKernel{Name: "reduce-bcast", Class: perf.ClassReduction, FLOPs: b.numel(y),
				BytesRead: b.bytes(y), BytesWritten: b.bytes(in), Launches: 1})
		}
	}
	return p
}

// mulBackward: dA = dY ⊙ B (and dB = dY ⊙ A), one kernel per input that
// needs a gradient, reading the other operand (saved); a broadcast input
// also sums (counted in the same kernel's FLOPs).
func mulBackward(b *bwCtx) backwardPlan {
	var p backwardPlan
	y := b.n.Out(0)
	for i, in := range b.n.Inputs {
		if !b.needGrad(in) {
			continue
		}
		p.Kernels = append(p.Kernels, bwKernel{Name: "mul-bwd", Class: perf.ClassElementwise, FLOPs: 2 * b.numel(y),
			BytesRead: b.bytes(y) + b.otherBytes(i), BytesWritten: b.bytes(in), Launches: 1})
		p.Saved = append(p.Saved, b.n.Inputs...)
	}
	return p
}

// movementBackward: the inverse permutation/slice/concat of dY: reads dY,
// writes dX (zero-filled where the forward dropped elements).
func movementBackward(b *bwCtx) backwardPlan {
	var p backwardPlan
	for _, in := range b.n.Inputs {
		if in == nil || !b.needGrad(in) {
			continue
		}
		p.Kernels = append(p.Kernels, bwKernel{Name: "move-bwd", Class: perf.ClassData,
			BytesRead: b.bytes(b.n.Out(0)), BytesWritten: b.bytes(in), Launches: 1})
		if b.n.OpType == "TopK" || b.n.OpType == "Compress" || b.n.OpType == "ScatterElements" || b.n.OpType == "ScatterND" || b.n.OpType == "Scatter" {
			p.Saved = append(p.Saved, b.n.Inputs[1:]...)
		}
		break // one kernel handles every input (Concat, Split)
	}
	return p
}

// reduceBackBackward: the gradient of a broadcast/reduction is dY
// broadcast back (or summed back for Expand/Tile/Resize): reads dY and
// (for max/min/prod/norm reductions) the saved input and output, writes
// dX.
func reduceBackBackward(b *bwCtx) backwardPlan {
	var p backwardPlan
	if !b.needIn(0) {
		return p
	}
	x, y := b.n.In(0), b.n.Out(0)
	k := bwKernel{Name: "bcast-bwd", Class: perf.ClassReduction, FLOPs: b.numel(x),
		BytesRead: b.bytes(y), BytesWritten: b.bytes(x), Launches: 1}
	switch b.n.OpType {
	case "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare":
		k.BytesRead += b.bytes(x) + b.bytes(y)
		k.FLOPs *= 2
		p.Saved = append(p.Saved, x, y)
	}
	p.Kernels = append(p.Kernels, k)
	return p
}

// viewBackward: a reshape of dY, no kernel.
func viewBackward(*bwCtx) backwardPlan { return backwardPlan{} }
