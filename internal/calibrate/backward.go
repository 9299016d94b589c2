package calibrate

import (
	"fmt"
	"math"

	"github.com/onnxcost/onnxcost/cost/perf"
)

// Backward kernels from DeepBench's training sheets: the convolution
// tables time the gradient with respect to the input ("wrt inputs") and
// to the filters ("wrt parameters"), the RNN tables the backward pass
// with respect to the inputs and to the weights (or, on MI25 and P100's
// pseudo-fp16 sheet, the whole backward pass). Each becomes a BenchCase
// of its own kind, priced with the builders the backward rules use.

// Backward kinds of BenchCase.
const (
	BenchConvDgrad BenchKind = "conv-dgrad" // convolution, gradient wrt inputs
	BenchConvWgrad BenchKind = "conv-wgrad" // convolution, gradient wrt filters
	BenchRNNDgrad  BenchKind = "rnn-dgrad"  // RNN, backward wrt inputs (through time)
	BenchRNNWgrad  BenchKind = "rnn-wgrad"  // RNN, backward wrt weights
	BenchRNNBwd    BenchKind = "rnn-bwd"    // RNN, whole backward (one column)
)

// IsBackward reports whether a kind is a backward kernel.
func (k BenchKind) IsBackward() bool {
	switch k {
	case BenchConvDgrad, BenchConvWgrad, BenchRNNDgrad, BenchRNNWgrad, BenchRNNBwd:
		return true
	}
	return false
}

// BackwardCases turns the backward times of forward cases into cases of
// their own, one per measured gradient. A backward case is held out
// exactly when its forward row is, so a held-out geometry is never seen
// by a fit in either direction; that is the forward split (every third
// row of each GPU and kind, in file order).
func BackwardCases(fwd []BenchCase) []BenchCase {
	var out []BenchCase
	add := func(c BenchCase, kind BenchKind, t float64) {
		if t <= 0 {
			return
		}
		c.Row.Kind, c.Row.TimeS = kind, t
		out = append(out, c)
	}
	for _, c := range fwd {
		switch c.Row.Kind {
		case BenchConv:
			add(c, BenchConvDgrad, c.Row.BwdDataS)
			add(c, BenchConvWgrad, c.Row.BwdWeightS)
		case BenchRNN:
			add(c, BenchRNNDgrad, c.Row.BwdDataS)
			add(c, BenchRNNWgrad, c.Row.BwdWeightS)
			add(c, BenchRNNBwd, c.Row.BwdS)
		}
	}
	return out
}

// predictBackward prices a backward case.
func (c BenchCase) predictBackward(p perf.Params) (perf.KernelTime, perf.Kernel) {
	r := c.Row
	pr, in, out := benchPath(c.GPU, r.Precision)
	o := perf.Options{Params: p, Setting: perf.Isolated}
	est := func(k perf.Kernel) (perf.KernelTime, perf.Kernel) { return perf.EstimateKernel(c.GPU, k, o), k }
	switch r.Kind {
	case BenchConvDgrad:
		k, t := perf.EstimateConvGrad(c.GPU, r.Conv(), perf.GradData, pr, in, out, o)
		return t, k
	case BenchConvWgrad:
		k, t := perf.EstimateConvGrad(c.GPU, r.Conv(), perf.GradWeight, pr, in, out, o)
		return t, k
	case BenchRNNDgrad:
		return est(perf.RNNDgradKernel(r.RNNOp(), r.Hidden, 0, r.RNNBatch, r.Steps, 1, pr, in))
	case BenchRNNWgrad:
		return est(perf.RNNWgradKernel(r.RNNOp(), r.Hidden, r.RNNBatch, r.Steps, 1, pr, in))
	}
	// Whole backward: the two kernels in sequence.
	dt, dk := est(perf.RNNDgradKernel(r.RNNOp(), r.Hidden, 0, r.RNNBatch, r.Steps, 1, pr, in))
	wt, _ := est(perf.RNNWgradKernel(r.RNNOp(), r.Hidden, r.RNNBatch, r.Steps, 1, pr, in))
	dt.TimeS += wt.TimeS
	return dt, dk
}

// FitBackward fits the one backward-only parameter, EffWgrad, on the
// training split of the weight-gradient convolution rows, holding every
// forward parameter at start's value (they are fitted on forward rows
// only). The search is a golden-section search of FitLoss over
// log(EffWgrad) in [wgradLo, wgradHi]: one dimension, deterministic.
func FitBackward(train []BenchCase, start perf.Params) (perf.Params, float64, error) {
	var rows []BenchCase
	for _, c := range train {
		if c.Row.Kind == BenchConvWgrad {
			rows = append(rows, c)
		}
	}
	if len(rows) == 0 {
		return start, 0, fmt.Errorf("no weight-gradient convolution rows to fit")
	}
	loss := lossOf(rows, start, func(p *perf.Params, v float64) { p.EffWgrad = v })
	p := start
	p.EffWgrad = math.Exp(goldenSection(loss, math.Log(wgradLo), math.Log(wgradHi)))
	return p, FitLoss(rows, p), nil
}

// goldenSection is the minimum of a one-dimensional loss on [a, b] by 40
// golden-section steps: deterministic, and exact for a loss with one
// minimum in the bracket.
func goldenSection(loss func(float64) float64, a, b float64) float64 {
	const phi = 0.6180339887498949
	x1, x2 := b-phi*(b-a), a+phi*(b-a)
	f1, f2 := loss(x1), loss(x2)
	for range 40 {
		if f1 <= f2 {
			b, x2, f2 = x2, x1, f1
			x1 = b - phi*(b-a)
			f1 = loss(x1)
		} else {
			a, x1, f1 = x1, x2, f2
			x2 = a + phi*(b-a)
			f2 = loss(x2)
		}
	}
	return (a + b) / 2
}

// The bracket of the EffWgrad search: a weight gradient from 5× slower to
// 1.5× faster than the forward convolution.
const wgradLo, wgradHi = 0.2, 1.5
