package train

import (
	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/cost/perf"
)

// convRule is the backward of one kind of convolution, as its table entry
// (backward.go) describes it.
type convRule struct {
	// geometry: a plain 2-D convolution (Conv, FusedConv, WinogradConv)
	// whose gradients are priced from its geometry where it is known
	// (convGeomOf); ConvTranspose and DeformConv keep the GEMM view.
	geometry bool
	// fused: a fused node with an epilogue (passes/epilogue.go).
	fused bool
	// winograd: the plan may have chosen Winograd for the forward.
	winograd bool
}

// backward: the data gradient dX = dY ⋆ Wᵀ (a transposed convolution,
// as an implicit GEMM of the forward's M×K×N view: M = N·P·Q rows, K = the
// forward's reduction C/g·R·S as output columns, N = output channels as
// reduction) and the weight gradient dW = Xᵀ ⋆ dY (M' = out channels, N' =
// C/g·R·S, K' = N·P·Q). Each has the forward's MACs, so backward FLOPs are
// 2× forward, except that the data gradient is skipped when X needs no
// gradient (the first layer: the input image is not trained) and the
// weight gradient when W is not trainable. The bias gradient is a
// reduction of dY.
func (r convRule) backward(b *bwCtx) backwardPlan {
	var p backwardPlan
	n := b.n
	x, w, y := n.In(0), n.In(1), n.Out(0)
	e := convView(b)
	cl := perf.ClassConv
	// dgrad is M×K (reduction N), wgrad N×K (reduction M).
	dm, dn, dk, wm, wn, wk := e.M, e.K, e.N, e.N, e.K, e.M
	if r.winograd && b.fwd.Class == perf.ClassWinograd {
		// The plan chose Winograd for this 3×3 stride-1 layer (and the
		// rule kept it at this dtype: no tensor cores); cuDNN has
		// Winograd algorithms for both gradients too (BWD_DATA_ALGO_
		// WINOGRAD, BWD_FILTER_ALGO_WINOGRAD_NONFUSED), each the
		// forward's transformed GEMMs over the same tiles.
		e, cl = b.fwd, perf.ClassWinograd
		dm, dn, dk, wm, wn, wk = e.M, e.N, e.K, e.M, e.N, e.K
	}
	geom, okGeom := perf.ConvGeom{}, false
	if r.geometry {
		geom, okGeom = convGeomOf(b)
	}
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
	if b.layout && okGeom && !geom.Depthwise() {
		// Each cuDNN gradient call transposes its NCHW operands to NHWC
		// and its result back: dgrad dY, W and dX; wgrad X, dY and dW
		// (a depthwise convolution has no tensor-core kernel to feed).
		var moved, calls float64
		if b.needIn(0) {
			moved, calls = moved+b.bytes(y)+b.bytes(w)+b.bytes(x), calls+3
		}
		if b.needIn(1) {
			moved, calls = moved+b.bytes(x)+b.bytes(y)+b.bytes(w), calls+3
		}
		if calls > 0 {
			// Each call moves X, W and dY's shapes once (perf.TransposeElements).
			g := geom
			cg, pq := float64(g.GroupChannels()), float64(g.P())*float64(g.Q())
			tiles := perf.TransposeElements(float64(g.N)*float64(g.C)*float64(g.H)*float64(g.W), float64(g.C), float64(g.H)*float64(g.W)) +
				perf.TransposeElements(float64(g.K)*cg*float64(g.R)*float64(g.S), cg, float64(g.R)*float64(g.S)) +
				perf.TransposeElements(float64(g.N)*float64(g.K)*pq, float64(g.K), pq)
			p.Kernels = append(p.Kernels, bwKernel{Name: "nchw-transpose", Class: perf.ClassData,
				BytesRead: moved, BytesWritten: moved, Launches: calls, Library: true, TransposeElements: tiles * calls / 3})
			p.LayoutCopyBytes = b.bytes(x) + b.bytes(w) + b.bytes(y)
		}
	}
	if bias := n.In(2); b.needGrad(bias) {
		p.Kernels = append(p.Kernels, bwKernel{Name: "bgrad", Class: perf.ClassReduction, FLOPs: b.numel(y),
			BytesRead: b.bytes(y), BytesWritten: b.bytes(bias), Launches: 1})
	}
	if r.fused {
		epilogueBackward(b, &p, func() float64 { return r.prePoolElems(b) })
	}
	return p
}

// prePoolElems is the element count of a fused convolution's output
// before its fused pool. A WinogradConv's MACs are the transformed
// algorithm's, so its size comes from the input: a 3×3 stride-1
// convolution keeps H+pads−2 by W+pads−2. Otherwise the direct GEMM view
// gives M·N.
func (r convRule) prePoolElems(b *bwCtx) float64 {
	if r.winograd && b.fwd.Class == perf.ClassWinograd {
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
	v := convView(b)
	return float64(v.M) * float64(v.N)
}

// convView is the direct convolution's implicit-GEMM view, rebuilt from
// the weight and the MACs: N = output channels (W's dim 0), K = the rest
// of W (C/g·R·S), M = MACs/(N·K) = batch·output pixels. The forward's own
// view may be another algorithm's (WinogradConv's transformed GEMMs) or
// see the pooled output of a fused pool; backward kernels are the direct
// algorithm's (cuDNN's dgrad/wgrad as implicit GEMMs).
func convView(b *bwCtx) cost.NodeEstimate {
	e := b.fwd
	if w := b.n.In(1); w != nil {
		if d, ok := b.c.Dims(w); ok && len(d) >= 2 && d[0] > 0 {
			nn, kk := d[0], b.c.Numel(w)/d[0]
			if kk > 0 && e.MACs > 0 {
				e.M, e.N, e.K, e.Batch = cost.ClampInt(e.MACs/(nn*kk)), cost.ClampInt(nn), cost.ClampInt(kk), 1
				return e
			}
		}
	}
	if e.M <= 0 || e.N <= 0 || e.K <= 0 {
		// No GEMM view (unknown shapes): price at the forward's MACs.
		e.M, e.N, e.K, e.Batch = 1, 1, cost.ClampInt(e.MACs), 1
	}
	return e
}

// convGeomOf is the geometry the gradient kernels are priced from
// (perf.EstimateConvGrad); ok false keeps the forward's GEMM view.
func convGeomOf(b *bwCtx) (perf.ConvGeom, bool) { return cost.ConvGeomOf(b.n, b.c) }
