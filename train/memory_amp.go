package train

import (
	"github.com/onnxcost/onnxcost/ir"
)

// Mixed precision as torch.autocast runs it (--dtype fp16/bf16 under
// --train), for the memory timeline (memory.go). The source is PyTorch's
// "Automatic Mixed Precision package - torch.amp" documentation ("CUDA Ops
// that can autocast to float16" and "... to float32") and
// aten/src/ATen/autocast_mode.cpp:
//
//   - the model's parameters stay fp32 (they are the master weights) and
//     so do their .grad tensors (a gradient has its parameter's dtype);
//   - an op on the lower-precision list (convolutions, linear, matmul,
//     bmm, RNN cells, prelu) casts each fp32 argument to fp16. A
//     parameter's cast is cached for the rest of the forward (the cache
//     holds leaf tensors that require grad, cleared when the autocast
//     region exits), so one fp16 copy per parameter; an activation's cast
//     is made per op, uncached. When the op's backward needs the argument,
//     autograd saves the fp16 copy, not the fp32 original;
//   - an op on the float32 list (softmax, log_softmax, layer_norm,
//     group_norm, pow, exp, log, reciprocal, sum, cumsum, the losses)
//     casts fp16 arguments up to fp32 and returns fp32: BERT's softmax
//     keeps its B·H·S² probabilities at 4 bytes, its LayerNorms an fp32
//     copy of their input;
//   - every other op runs in the dtype of its inputs, the widest of them
//     where they differ (type promotion: a residual add of an fp16 GEMM
//     output and an fp32 LayerNorm output is fp32); an op whose only float
//     inputs are parameters (an embedding lookup) runs in fp32, their
//     dtype; BatchNorm keeps its input's dtype (cuDNN takes fp16 data with
//     fp32 scale and statistics).
//
// The graph's float inputs are what a training loop feeds: fp32 tensors.

// memAutocastLow lists the ONNX ops autocast runs in fp16 (the lower-precision
// list; Einsum and attention decompose into bmm, which is on it).
var memAutocastLow = map[string]bool{
	"Conv": true, "ConvTranspose": true, "Gemm": true, "MatMul": true, "Einsum": true,
	"LSTM": true, "GRU": true, "RNN": true, "PRelu": true, "Attention": true, "MultiHeadAttention": true,
	// The plan's fused nodes anchored on them (ir/fused.go).
	ir.OpFusedConv: true, ir.OpWinogradConv: true, ir.OpFusedGemm: true, ir.OpGroupedGemm: true, ir.OpFusedAttention: true,
}

// memFusedOperands is how many leading inputs of a fused node autocast
// casts (the GEMM's or attention's operands); the rest (a residual, a
// gate) feed the epilogue's add or multiply, which promotes.
var memFusedOperands = map[string]int{
	ir.OpFusedConv: 1, ir.OpWinogradConv: 1, ir.OpFusedGemm: 1, ir.OpGroupedGemm: 1, ir.OpFusedAttention: 3,
}

// memAutocastHigh lists the ONNX ops autocast runs in fp32.
var memAutocastHigh = map[string]bool{
	"LayerNormalization": true, "GroupNormalization": true, "Softmax": true, "LogSoftmax": true,
	"Pow": true, "Exp": true, "Log": true, "Reciprocal": true, "ReduceSum": true, "ReduceSumSquare": true,
	"ReduceProd": true, "ReduceL2": true, "LpNormalization": true, "CumSum": true, "Softplus": true,
	"SoftmaxCrossEntropyLoss": true, "NegativeLogLikelihoodLoss": true, ir.OpSkipLayerNorm: true,
}

// memAMP holds each float value's element size under autocast and the
// width each node computes in.
type memAMP struct {
	low   float64 // 2: fp16 or bf16
	width map[*ir.Value]float64
}

// memIsFloat reports whether v is a floating-point tensor.
func memIsFloat(v *ir.Value) bool { return v != nil && v.DType.IsFloat() }

func newMemAMP(g *ir.Graph) *memAMP {
	a := &memAMP{low: 2, width: map[*ir.Value]float64{}}
	for _, v := range g.Inputs {
		if memIsFloat(v) {
			a.width[v] = 4
		}
	}
	for _, nd := range g.Nodes {
		w := a.nodeWidth(nd)
		for _, out := range nd.Outputs {
			if !memIsFloat(out) {
				continue
			}
			if nd.OpType == "Cast" {
				// An explicit cast keeps its target dtype.
				a.width[out] = float64(out.DType.Bits()) / 8
				continue
			}
			a.width[out] = w
		}
	}
	return a
}

// want is the width node nd casts its float arguments to, 0 for an op
// autocast leaves alone.
func (a *memAMP) want(nd *ir.Node) float64 {
	switch {
	case memAutocastLow[nd.OpType]:
		return a.low
	case memAutocastHigh[nd.OpType]:
		return 4
	}
	return 0
}

// nodeWidth is the element size of nd's float outputs.
func (a *memAMP) nodeWidth(nd *ir.Node) float64 {
	w, params := a.want(nd), false
	k, fused := memFusedOperands[nd.OpType]
	if w > 0 && !fused {
		return w
	}
	for j, in := range nd.Inputs {
		if !memIsFloat(in) || (fused && j < k) {
			continue
		}
		if isAct(in) {
			w = max(w, a.of(in))
		} else {
			params = true
		}
	}
	if w == 0 && params {
		w = 4
	}
	if w == 0 {
		w = 4 // made from no float tensor (ConstantOfShape, RandomNormal): the default dtype
	}
	return w
}

// of is v's element size under autocast.
func (a *memAMP) of(v *ir.Value) float64 {
	if w, ok := a.width[v]; ok {
		return w
	}
	if v == nil {
		return 0
	}
	return float64(v.DType.Bits()) / 8
}

// weightCasts adds autocast's fp16 copy of each parameter an fp16 op
// reads: made by its first such reader and cached for the forward, saved
// by the readers' backwards, so freed after the first reader's backward
// (backward runs in reverse); a recomputed segment casts again. Within
// that backward the engine releases the node's saved copy as soon as the
// node has run (torch/csrc/autograd/engine.cpp: release_variables after
// call_function), before the cast's own backward (ToCopyBackward) turns
// the fp16 weight gradient into the fp32 .grad: the step's peak there is
// fp16 gradient + fp32 gradient (gradients), which is more than copy +
// fp16 gradient, so the copy ends the step before.
func (mm *memoryModel) weightCasts() {
	if mm.amp == nil {
		return
	}
	mm.castAt = map[*ir.Value]int{}
	for _, v := range mm.trainable {
		first := -1
		for _, u := range v.Consumers {
			if i, ok := mm.idx[u]; ok && mm.amp.want(u) == mm.amp.low && (first < 0 || i < first) {
				first = i
			}
		}
		if first < 0 {
			continue
		}
		b := mm.share(v) * mm.amp.low * mm.c.Numel(v)
		mm.castAt[v] = first
		mm.m.WeightsBytes += b
		if mm.ck.recomputed(first) {
			mm.span(b, first, mm.n-1)
			mm.span(b, mm.bwAt(mm.ck.segEnd(first)), mm.bwAt(first)-1)
			continue
		}
		mm.span(b, first, mm.bwAt(first)-1)
	}
}

// autocastInputs are the copies autocast makes of node i's activation
// inputs (not cached: one per op), by input, in bytes; nil when autocast
// leaves the op alone.
func (mm *memoryModel) autocastInputs(i int, nd *ir.Node) map[*ir.Value]float64 {
	if mm.amp == nil {
		return nil
	}
	w := mm.amp.want(nd)
	if w == 0 {
		return nil
	}
	var casts map[*ir.Value]float64
	k, fused := memFusedOperands[nd.OpType]
	for j, in := range nd.Inputs {
		if !isAct(in) || !memIsFloat(in) || mm.amp.of(in) == w || (fused && j >= k) {
			continue
		}
		if casts == nil {
			casts = map[*ir.Value]float64{}
		}
		casts[in] = mm.c.Numel(in) * w
	}
	return casts
}

// keepSaved keeps bytes node i's backward reads from its forward (or,
// recomputed, from its segment's recompute) to that backward.
func (mm *memoryModel) keepSaved(bytes float64, i int) {
	if mm.ck.recomputed(i) {
		mm.span(bytes, mm.bwAt(mm.ck.segEnd(i)), mm.bwAt(i))
		return
	}
	mm.span(bytes, i, mm.bwAt(i))
	mm.m.ActivationsBytes += bytes
}
