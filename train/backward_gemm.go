package train

import (
	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
)

// gemmRule is the backward of a GEMM-like op, as its table entry
// (backward.go) describes it.
type gemmRule struct {
	// bias: input 2 is a bias (Gemm, FusedGemm), whose gradient is a
	// reduction of dY.
	bias bool
	// fused: a fused node with an epilogue (passes/epilogue.go).
	fused bool
}

// gemmView is the forward's GEMM view for the backward kernels, with a
// stand-in of the forward's MACs where it has none, and its batch.
func gemmView(b *bwCtx) (cost.NodeEstimate, int64) {
	e := b.fwd
	if e.M <= 0 || e.N <= 0 || e.K <= 0 {
		e.M, e.N, e.K, e.Batch = 1, 1, int64(e.MACs), 1
	}
	return e, max(e.Batch, 1)
}

// backward: Y[M×N] = A[M×K]·B[K×N]; dA = dY·Bᵀ (M×K, reduction N) and
// dB = Aᵀ·dY (K×N, reduction M). When B is a weight shared by a batch of
// GEMMs (MatMul of a [b,M,K] activation by a [K,N] weight) its gradient
// sums over the batch: one GEMM with reduction b·M. Each operand's
// gradient runs only when it needs one (weight grad only for trainable
// initializers or activations that depend on them).
func (r gemmRule) backward(b *bwCtx) backwardPlan {
	var p backwardPlan
	n := b.n
	e, bat := gemmView(b)
	a0, b0, y := n.In(0), n.In(1), n.Out(0)
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
		// Its reduction is over the forward's rows, the batch's tokens
		// for a layer's weight.
		p.Kernels = append(p.Kernels, gemmKernel("dB", perf.ClassGEMM, e.K, e.N, kk, bb, b.bytes(y)+b.bytes(a0), b.bytes(b0)).weightGrad())
		p.Saved = append(p.Saved, a0)
	}
	if c := n.In(2); r.bias && b.needGrad(c) {
		p.Kernels = append(p.Kernels, bwKernel{Name: "bgrad", Class: perf.ClassReduction, FLOPs: b.numel(y),
			BytesRead: b.bytes(y), BytesWritten: b.bytes(c), Launches: 1})
	}
	if r.fused {
		epilogueBackward(b, &p, func() float64 { return float64(b.fwd.M) * float64(b.fwd.N) })
	}
	return p
}

// groupedGemmBackward: one activation times several packed weights: its
// data gradient is one GEMM of the forward's size (summed over the
// groups) and the weight gradients together another.
func groupedGemmBackward(b *bwCtx) backwardPlan {
	var p backwardPlan
	n := b.n
	e, bat := gemmView(b)
	a0 := n.In(0)
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
		p.Kernels = append(p.Kernels, gemmKernel("dW", perf.ClassGEMM, e.M, e.N, e.K, bat, b.outBytes()+b.bytes(a0), wb).weightGrad())
		p.Saved = append(p.Saved, a0)
	}
	return p
}

// einsumBackward: operand layouts vary, so one GEMM of the forward's size
// per operand that needs a gradient.
func einsumBackward(b *bwCtx) backwardPlan {
	var p backwardPlan
	n := b.n
	e, bat := gemmView(b)
	y := n.Out(0)
	for i, in := range n.Inputs {
		if b.needGrad(in) {
			p.Kernels = append(p.Kernels, gemmKernel("grad"+string(rune('0'+i%10)), perf.ClassGEMM, e.M, e.N, e.K, bat,
				b.bytes(y)+b.otherBytes(i), b.bytes(in)))
			p.Saved = append(p.Saved, n.Inputs...)
		}
	}
	return p
}

// epilogueBackward adds the backward of a fused Conv/Gemm epilogue: the
// activation's dY*f' (an elementwise kernel reading the saved output) and
// the pool's scatter. The residual Add passes dY through (no kernel).
// prePool is the element count before a fused pool, which only the
// anchor's rule can tell.
func epilogueBackward(b *bwCtx, p *backwardPlan, prePool func() float64) {
	act, _, pool := ir.EpilogueOf(b.n)
	y := b.n.Out(0)
	eb := b.c.ElemBytes(y)
	// pre is the bytes of the activation's output: y, or before a fused
	// pool the un-pooled tensor, which is not a value of the graph; its
	// size comes from the GEMM view (M rows of N channels).
	pre := b.bytes(y)
	if pool != "" {
		pre = prePool() * eb
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
		case pointwise[act].savesOutput:
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
		g := b.n.In(cost.GateInput)
		p.Kernels = append(p.Kernels, bwKernel{Name: "gate-bwd", Class: perf.ClassElementwise, FLOPs: 2 * pre / eb,
			BytesRead: 2*pre + b.bytes(g), BytesWritten: pre + b.bytes(g), Launches: 1})
		p.Saved = append(p.Saved, g)
	}
}
