package main

import (
	"math"
	"sort"
)

// The error summaries of the whole-model checks (measured_test.go).

// modelRow is one measured whole-model call.
type modelRow struct {
	GPU, Model, DType string
	Batch             int64
	LatencyMS         float64
}

// modelResult is one row with its prediction.
type modelResult struct {
	modelRow
	PredMS float64
	Err    float64 // (pred − measured) / measured, signed
}

// quantileAbs is the q-quantile (nearest rank, linear between ranks) of |err|.
func quantileAbs(res []modelResult, q float64) float64 {
	if len(res) == 0 {
		return 0
	}
	a := make([]float64, len(res))
	for i, r := range res {
		a[i] = math.Abs(r.Err)
	}
	sort.Float64s(a)
	pos := q * float64(len(a)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(a)-1)
	return a[lo] + (pos-float64(lo))*(a[hi]-a[lo])
}
