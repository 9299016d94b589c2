package perf

import (
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
)

// Backward (gradient) kernels of convolutions and recurrent layers: the
// builders the backward rules (train/backward.go) and the DeepBench
// backward calibration (internal/calibrate) share, so that what is
// calibrated is what is estimated. internal/calibrate/CALIBRATION.md
// ("Backward kernels") has the data behind each choice.

// Grad names which gradient a backward GEMM-like kernel computes; the
// empty Grad is a forward kernel.
type Grad string

const (
	// GradData is a data gradient (dX, cuDNN's backward-data).
	GradData Grad = "dgrad"
	// GradWeight is a weight gradient (dW, cuDNN's backward-filter).
	GradWeight Grad = "wgrad"
)

// ConvDgradKernel is a convolution's data gradient dX = dY ⋆ Wᵀ, the
// transposed convolution, as the implicit GEMM libraries run for it: its
// output is dX, so M = input pixels, N = C/g, and the reduction runs over
// K/g·R·S filter taps. For a strided convolution the transposed
// convolution reads a zero-inserted dY. A CTA tile covers consecutive
// pixels of one input row, so for rows that no filter row lines up with
// the whole tile is skipped, but along the row neighbouring pixels
// alternate between aligned and zero taps and every tap is issued for
// all of them: the kernel does the MACs of M = N·P·W rows, stride_w×
// the forward's (1× at stride 1). FLOPs stay the useful 2·MACs of the
// forward; the GEMM view carries the executed work.
func ConvDgradKernel(c ConvGeom, pr hwdb.Precision, inBytes, outBytes float64) Kernel {
	g := c.groups()
	return convGradKernel(c, GradData, satProd(c.N, c.P(), max(c.W, c.Q())), c.C/g, satProd(c.K/g, c.R, c.S), pr, inBytes, outBytes)
}

// ConvWgradKernel is a convolution's weight gradient dW = Xᵀ ⋆ dY as an
// implicit GEMM per group: M = K/g, N = C/g·R·S, K = N·P·Q (the reduction
// runs over every output pixel of the batch). It reads X and dY and
// writes dW.
func ConvWgradKernel(c ConvGeom, pr hwdb.Precision, inBytes, outBytes float64) Kernel {
	g := c.groups()
	return convGradKernel(c, GradWeight, c.K/g, satProd(c.C/g, c.R, c.S), satProd(c.N, c.P(), c.Q()), pr, inBytes, outBytes)
}

// convGradKernel is a gradient of convolution c run as the implicit GEMM
// m×n×k per group: the forward's useful FLOPs and boundary bytes (input,
// weights and output, each read or written once), the GEMM view of the
// work the gradient's kernel executes.
func convGradKernel(c ConvGeom, grad Grad, m, n, k int64, pr hwdb.Precision, inBytes, outBytes float64) Kernel {
	bytes := c.ioBytes(inBytes, outBytes)
	return Kernel{
		Class: ClassConv, Precision: pr, Grad: grad,
		FLOPs: c.DirectFLOPs(), Bytes: bytes, WorkingSet: bytes,
		M: m, N: n, K: k, Batch: c.groups(),
		Launches: 1, ElemBytes: inBytes,
	}
}

// winogradGradKernel is the Winograd F(m×m, 3×3) form of a 3×3 stride-1
// convolution's gradient (cuDNN's BWD_DATA_ALGO_WINOGRAD and
// BWD_FILTER_ALGO_WINOGRAD_NONFUSED): (m+2)² batched GEMMs over the same
// tiles as the forward. The data gradient is itself a 3×3 stride-1
// convolution from K to C channels ([tiles × K]·[K × C]); the weight
// gradient reduces over the tiles ([K × tiles]·[tiles × C]).
func winogradGradKernel(c ConvGeom, grad Grad, m int64, pr hwdb.Precision, inBytes, outBytes float64) (Kernel, bool) {
	k, ok := WinogradKernel(c, m, pr, inBytes, outBytes)
	if !ok {
		return k, false
	}
	k.Grad = grad
	switch grad {
	case GradData:
		k.N, k.K = c.C, c.K
	case GradWeight:
		k.M, k.N, k.K = c.K, c.C, k.M
	}
	return k, true
}

// EstimateConvGrad prices a convolution's gradient with the faster of its
// implicit GEMM and (where it applies) Winograd, as cuDNN's algorithm
// search for the backward passes does; it returns the chosen kernel with
// its time. Winograd is declined on packed int8 paths, as forward.
func EstimateConvGrad(g *hwdb.GPU, c ConvGeom, grad Grad, pr hwdb.Precision, inBytes, outBytes float64, o Options) (Kernel, KernelTime) {
	// The packed paths need the input channels in whole packs for the
	// gradients too (convPath): DeepBench's T4 fp16 weight gradients of
	// 1- and 3-channel first layers run 3-5× slower than even the fp32
	// path would, nowhere near tensor-core rates.
	pr = convPath(c, pr)
	k := ConvWgradKernel(c, pr, inBytes, outBytes)
	if grad == GradData {
		k = ConvDgradKernel(c, pr, inBytes, outBytes)
	}
	t := EstimateKernel(g, k, o)
	if w, ok := winogradGradKernel(c, grad, WinogradTile, pr, inBytes, outBytes); ok && !isInt8(pr) && LibraryWinograd(g) {
		if wt := EstimateKernel(g, w, o); wt.TimeS < t.TimeS {
			return w, wt
		}
	}
	return k, t
}

// RNNDgradKernel is a recurrent layer's data gradient through time: the
// recurrence run backwards, step by step, priced as the forward kernel's
// shape (the same MACs and weight bytes per step). The step's GEMM is
// really the transpose (dh = Rᵀ·δ: a gates× narrower output with a
// gates× longer reduction), but pricing that shape made the held-out
// DeepBench error worse (32% → 38%): what the measurements show is
// GPU-specific (CALIBRATION.md, "Backward kernels"), not the shape.
func RNNDgradKernel(op string, hidden, input, batch, steps, dirs int64, pr hwdb.Precision, elemBytes float64) Kernel {
	k := RNNKernel(op, hidden, input, batch, steps, dirs, pr, elemBytes)
	k.Grad = GradData
	return k
}

// RNNWgradKernel is the recurrent weights' gradient dR = Σ_t δ_tᵀ·h_{t-1}:
// one GEMM of gates·hidden × hidden with the reduction over batch·steps,
// per direction (the gate deltas of every step are kept from the data
// gradient).
func RNNWgradKernel(op string, hidden, batch, steps, dirs int64, pr hwdb.Precision, elemBytes float64) Kernel {
	gates := max(ir.RNNGates(op), 1)
	k := GEMMKernel(satProd(gates, hidden), hidden, satProd(batch, steps), dirs, pr, elemBytes, elemBytes)
	k.Grad = GradWeight
	return k
}
