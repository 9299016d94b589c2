package calibrate

import (
	"fmt"
	"math"

	"github.com/onnxcost/onnxcost/cost/perf"
)

// FitRNN fits the recurrent-only parameters on the RNN rows of the
// training split, holding every other parameter at start's value:
// RNNGemvStepLaunches on the rows whose step runs a GEMV-like kernel
// (batch 1-8), RNNStepLaunches and RNNTiledBatchHalf on the rest. The
// GEMV-like latency goes first: its rows depend on it alone, while a
// tiled step is capped by GEMV-like passes and so depends on it too.
// train is forward cases; the backward-through-time rows timed with them
// (BackwardCases: the data gradient, and the whole backward where that is
// the one column) are fitted too, as their steps are priced alike. The
// weight gradient is one GEMM over all steps and has no step.
//
// It is a stage of its own, as FitBackward is, because in the pooled fit
// the RNN rows are a sixth of DeepBench and none of Vidur: the pooled
// loss's median term does not see them (CALIBRATION.md, "RNN steps: two
// latencies").
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
	p.RNNGemvStepLaunches = scanLog(lossOf(gemv, p, func(q *perf.Params, v float64) { q.RNNGemvStepLaunches = v }), stepLaunchesLo, stepLaunchesHi)
	// The tiled step's latency and batch-half trade against each other
	// along a shallow valley: coordinate descent settles in a few rounds,
	// but where depends on where it starts, so it always starts from
	// batchHalfStart (the latency's first scan covers its whole range),
	// which makes the stage's result depend on the data alone.
	p.RNNTiledBatchHalf = batchHalfStart
	for range tiledRounds {
		p.RNNStepLaunches = scanLog(lossOf(tiled, p, func(q *perf.Params, v float64) { q.RNNStepLaunches = v }), stepLaunchesLo, stepLaunchesHi)
		half := scanLog(lossOf(tiled, p, func(q *perf.Params, v float64) { q.RNNTiledBatchHalf = v }), batchHalfLo, batchHalfHi)
		if half == p.RNNTiledBatchHalf {
			break
		}
		p.RNNTiledBatchHalf = half
	}
	return p, nil
}

// lossOf is FitLoss over rows as a function of the logarithm of the one
// parameter set writes, the rest at p's values.
func lossOf(rows []BenchCase, p perf.Params, set func(*perf.Params, float64)) func(float64) float64 {
	return func(x float64) float64 {
		q := p
		set(&q, math.Exp(x))
		return FitLoss(rows, q)
	}
}

// scanLog minimises a loss of log(v) over [lo, hi]. The loss is not
// unimodal (the median term steps as rows cross it, and short sequences
// pull apart from long ones), so it scans points 1% apart and refines the
// best by golden section between its neighbours.
func scanLog(loss func(float64) float64, lo, hi float64) float64 {
	a0, b0 := math.Log(lo), math.Log(hi)
	n := int(math.Ceil((b0-a0)/math.Log(1.01))) + 1
	dx := (b0 - a0) / float64(n-1)
	best, bestLoss := 0, math.Inf(1)
	for i := range n {
		if l := loss(a0 + float64(i)*dx); l < bestLoss {
			best, bestLoss = i, l
		}
	}
	a := a0 + float64(max(best-1, 0))*dx
	b := a0 + float64(min(best+1, n-1))*dx
	x := goldenSection(loss, a, b)
	if loss(x) > bestLoss {
		x = a0 + float64(best)*dx
	}
	return math.Exp(x)
}

// The searches' brackets: a step latency of 1 to 64 launch overheads (a
// dependent GEMM and gate kernel cost at least one; no DeepBench step
// exceeds its GEMM by 64), a batch-half of 4 to 512 (from near-full rate
// at batch 16 to a twentieth of it at 32), and at most tiledRounds rounds
// of the tiled coordinate descent.
const (
	stepLaunchesLo, stepLaunchesHi = 1.0, 64.0
	batchHalfLo, batchHalfHi       = 4.0, 512.0
	batchHalfStart                 = 32.0
	tiledRounds                    = 8
)
