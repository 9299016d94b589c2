package measured

import (
	"math"
	"slices"
)

// TransferTie is how much a transferred calibration may leave the
// target's median |error| above the uncalibrated one and still count as
// no worse, at the least: where the sorted errors are sparse at the
// median, one row crossing it moves it further (OneRowStep).
const TransferTie = 0.0005

// PairedTie is the rows' median change in |log error| (PairedChange)
// that counts as none: our H100's calibration moves 77 of the H200's 120
// whole-model rows, 43 not at all, and the median change came out
// +1.2e-6 (calib/loop TestOwnTransferH100ToH200).
const PairedTie = 1e-4

// Tie is how far after's median |error| against meas may sit above
// before's and still count as no worse: TransferTie, or, where the rows
// themselves did not get worse (PairedChange at most PairedTie), one
// row's step at the median (OneRowStep). It returns the paired change
// too.
func Tie(before, after, meas []float64) (tie, paired float64) {
	tie, paired = TransferTie, PairedChange(before, after, meas)
	if paired <= PairedTie {
		errs := make([]float64, len(meas))
		for i := range meas {
			errs[i] = math.Abs(before[i]/meas[i] - 1)
		}
		tie = max(tie, OneRowStep(errs))
	}
	return tie, paired
}

// PairedChange is the median over rows of how much a calibration moved
// each row's |log(predicted/measured)|: above 0, more rows got worse
// than better.
func PairedChange(before, after, meas []float64) float64 {
	d := make([]float64, len(meas))
	for i := range meas {
		d[i] = math.Abs(math.Log(after[i]/meas[i])) - math.Abs(math.Log(before[i]/meas[i]))
	}
	return Median(d)
}

// OneRowStep is how far the median of errs moves when one row below it
// crosses to above it: the step a transfer that barely moves any row can
// make. T4's 239 held-out kernel rows have 0.78 points between the two
// errors at their median; P100 -> T4 moves a handful of fp32 GEMMs by
// 0.04-2.6% and every other row by nothing, and one of them crossing
// read as 9.59% -> 10.01%. Taken as a tie only where the rows themselves
// did not get worse (PairedChange): the H200's 37 kernel rows step 3.2
// points at their median, and the H100's calibration moves most of them.
func OneRowStep(errs []float64) float64 {
	s := slices.Clone(errs)
	if len(s) < 2 {
		return 0
	}
	slices.Sort(s)
	base := Median(s)
	s[0] = math.Inf(1)
	slices.Sort(s)
	return Median(s) - base
}

// Median of xs (the mean of the middle two for an even count); 0 for
// none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
