package calib

import (
	"math"

	"github.com/onnxcost/onnxcost/internal/detmath"
)

// Ridge cells: a kernel's error depends on where it sits against its
// GPU's ridge point, not only on its size. A GEMM far on the compute
// side (large, square) runs near its roof, one near the ridge (skinny,
// or a 1×1 convolution) pays for tiles that stream more than the model
// counts, and a library swaps algorithms on the far compute side (cuDNN's
// Winograd and FFT convolutions: DeepBench's 3×3 and 5×5 convolutions ran
// up to 2.5× faster than their implicit GEMM is priced, its 1×1 ones
// within 20%). The position is the kernel's compute time over its memory
// time as the uncalibrated model prices them: FLOPs per byte relative to
// the ridge, as the GPU in use sets it.
//
// Only the compute and the memory terms get ridge cells, keyed by compute
// time over memory time: a latency factor that moved with that ratio
// would fall as the compute term grew, and a compute factor keyed by
// (compute + latency) / memory would fall as the latency grew, so a
// kernel could get faster for more work. Keyed this way each term's
// factor moves only with the other side, in the direction that keeps it
// growing.

// ridgeBuckets are the cells' centres, in log2 of compute time over
// memory time, two octaves apart: a few rows fill each, and the
// interpolation between centres keeps the factor continuous.
var ridgeBuckets = []struct {
	name   string
	centre float64 // log2(compute time / memory time)
}{
	{"compute/memory 1/16", -4},
	{"compute/memory 1/4", -2},
	{"compute/memory 1", 0},
	{"compute/memory 4", 2},
	{"compute/memory 16", 4},
}

// nRidge is the number of ridge buckets.
const nRidge = 5

// maxRidgeSlope bounds |d log factor / d log(compute/memory)|. The rule
// (monotoneRidgeLog) lets the compute factor only fall as the compute
// time grows against the memory time and the memory factor only rise,
// each at most this fast. Then every calibrated term still grows with
// both: a compute term C·f(C/M) has d log/d log C = 1 + slope ≥ 0.5 (and
// with the size rule's slope, ≥ −0.5, still ≥ 0) and d log/d log M =
// −slope ≥ 0, a memory term M·g(C/M) the mirror image, and the latency
// term has no ridge factor. So a kernel that grows in FLOPs, bytes or
// fixed latency is never priced faster. A half, like minSizeSlope,
// bounds how far one octave of position can move a factor (41%).
const maxRidgeSlope = 0.5

// ridgeX is log(compute time / memory time) of a kernel's terms
// {compute, latency, memory}; ok is false when either is zero (an
// elementwise pass has no compute term in the model: it has no position
// to key).
func ridgeX(terms [3]float64) (float64, bool) {
	c, mem := terms[0], terms[2]
	if !(c > 0) || !(mem > 0) || math.IsInf(c, 0) || math.IsInf(mem, 0) {
		return 0, false
	}
	return detmath.Log(c / mem), true
}

// ridgeTerm says whether term has ridge cells: compute and memory.
func ridgeTerm(term string) bool { return term == "compute" || term == "memory" }

// ridgeCentre is bucket i's centre in natural log units.
func ridgeCentre(i int) float64 { return ridgeBuckets[i].centre * math.Ln2 }

// ridgeBucketsAt are the buckets whose centres bracket x (one beyond the
// outer centres): the cells the interpolated factor depends on.
func ridgeBucketsAt(x float64) []int {
	if x <= ridgeCentre(0) {
		return []int{0}
	}
	for i := 0; i+1 < nRidge; i++ {
		if x <= ridgeCentre(i+1) {
			return []int{i, i + 1}
		}
	}
	return []int{nRidge - 1}
}

// monotoneRidgeLog is the ridge cells' log factor at x from the raw
// values of the buckets present (the cells a calibration holds), the rule
// the fit and the application share: each present value brought within
// maxRidgeSlope per unit of x of the previous present one, falling for
// compute and rising for memory (the first one is kept), linear in x
// between present centres and constant beyond the outer ones; coef is its
// derivative with respect to each raw value. An absent cell is no
// evidence, so it takes no part (a missing cell read as factor 1 would
// cap every cell after it at 1).
func monotoneRidgeLog(raw [nRidge]float64, present [nRidge]bool, x float64, term string) (float64, [nRidge]float64) {
	var vals [nRidge]float64
	var grads [nRidge][nRidge]float64
	prev := -1
	for i := range nRidge {
		if !present[i] {
			continue
		}
		vals[i], grads[i][i] = raw[i], 1
		if prev >= 0 {
			step := maxRidgeSlope * (ridgeCentre(i) - ridgeCentre(prev))
			lo, hi := vals[prev]-step, vals[prev]
			if term == "memory" {
				lo, hi = vals[prev], vals[prev]+step
			}
			switch {
			case raw[i] > hi:
				vals[i], grads[i] = hi, grads[prev]
			case raw[i] < lo:
				vals[i], grads[i] = lo, grads[prev]
			}
		}
		prev = i
	}
	return interpolateRidge(x, vals, grads, present)
}

// freeRidgeLog is the plain interpolation of the present raw values (the
// fit's first, unconstrained pass).
func freeRidgeLog(raw [nRidge]float64, present [nRidge]bool, x float64) (float64, [nRidge]float64) {
	var grads [nRidge][nRidge]float64
	for i := range grads {
		grads[i][i] = 1
	}
	return interpolateRidge(x, raw, grads, present)
}

// interpolateRidge is linear in x between the present centres, constant
// beyond the outer ones, 0 with none present.
func interpolateRidge(x float64, vals [nRidge]float64, grads [nRidge][nRidge]float64, present [nRidge]bool) (float64, [nRidge]float64) {
	lo, hi := -1, -1
	for i := range nRidge {
		if !present[i] {
			continue
		}
		if ridgeCentre(i) <= x {
			lo = i
		} else if hi < 0 {
			hi = i
		}
	}
	switch {
	case lo < 0 && hi < 0:
		return 0, [nRidge]float64{}
	case hi < 0:
		return vals[lo], grads[lo]
	case lo < 0:
		return vals[hi], grads[hi]
	}
	f := (x - ridgeCentre(lo)) / (ridgeCentre(hi) - ridgeCentre(lo))
	var c [nRidge]float64
	for j := range c {
		c[j] = (1-f)*grads[lo][j] + f*grads[hi][j]
	}
	return vals[lo] + f*(vals[hi]-vals[lo]), c
}

func ridgeRank(s string) int {
	for i, b := range ridgeBuckets {
		if b.name == s {
			return i + 1
		}
	}
	return 0 // "*"
}
