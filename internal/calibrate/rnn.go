package calibrate

import (
	"fmt"
	"math"

	"github.com/onnxcost/onnxcost/cost/perf"
)

// FitRNN fits the two recurrent-only parameters on the RNN rows of the
// training split, holding every other parameter at start's value:
// RNNGemvStepLaunches on the rows whose step runs a GEMV-like kernel
// (batch 1-8) and RNNStepLaunches on the rest. Each latency prices only
// its own rows, so the two searches are independent. train is forward
// cases; the backward-through-time rows timed with them (BackwardCases:
// the data gradient, and the whole backward where that is the one
// column) are fitted too, as their steps pay the same latency. The
// weight gradient is one GEMM over all steps and has none.
//
// It is a stage of its own, as FitBackward is, because in the pooled fit
// the RNN rows are a sixth of DeepBench and none of Vidur: the pooled
// loss's median term does not see them, and one shared latency has to
// split the difference between steps that differ by 2× (CALIBRATION.md,
// "RNN steps: two latencies").
func FitRNN(train []BenchCase, start perf.Params) (perf.Params, error) {
	var gemv, tiled []BenchCase
	for _, c := range append(append([]BenchCase(nil), train...), BackwardCases(train)...) {
		switch c.Row.Kind {
		case BenchRNN, BenchRNNDgrad, BenchRNNBwd:
		default:
			continue
		}
		if _, k := c.Predict(start); perf.RNNStepIsGEMV(k) {
			gemv = append(gemv, c)
		} else {
			tiled = append(tiled, c)
		}
	}
	if len(gemv) == 0 || len(tiled) == 0 {
		return start, fmt.Errorf("FitRNN needs RNN rows of both step kinds (have %d GEMV-like, %d tiled)", len(gemv), len(tiled))
	}
	p := start
	p.RNNGemvStepLaunches = fitStepLatency(gemv, start, func(q *perf.Params, v float64) { q.RNNGemvStepLaunches = v })
	p.RNNStepLaunches = fitStepLatency(tiled, start, func(q *perf.Params, v float64) { q.RNNStepLaunches = v })
	return p, nil
}

// fitStepLatency minimises FitLoss over one latency. The loss is not
// unimodal in it (the median term steps as rows cross it, and short
// sequences pull apart from long ones), so the search scans
// rnnStepGrid points over [rnnStepLo, rnnStepHi] on a log scale, 1%
// apart, and refines the best by golden section between its neighbours.
func fitStepLatency(rows []BenchCase, start perf.Params, set func(*perf.Params, float64)) float64 {
	loss := func(x float64) float64 {
		p := start
		set(&p, math.Exp(x))
		return FitLoss(rows, p)
	}
	lo, hi := math.Log(rnnStepLo), math.Log(rnnStepHi)
	dx := (hi - lo) / (rnnStepGrid - 1)
	best, bestLoss := 0, math.Inf(1)
	for i := range rnnStepGrid {
		if l := loss(lo + float64(i)*dx); l < bestLoss {
			best, bestLoss = i, l
		}
	}
	a := lo + float64(max(best-1, 0))*dx
	b := lo + float64(min(best+1, rnnStepGrid-1))*dx
	x := goldenSection(loss, a, b)
	if loss(x) > bestLoss {
		x = lo + float64(best)*dx
	}
	return math.Exp(x)
}

// The per-step latency search: 1 to 64 launch overheads (a dependent
// GEMM and gate kernel cost at least one; no DeepBench step exceeds its
// GEMM by 64), on 418 points 1% apart.
const (
	rnnStepLo, rnnStepHi = 1.0, 64.0
	rnnStepGrid          = 418
)
