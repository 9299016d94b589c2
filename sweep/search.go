package sweep

import (
	"fmt"
)

// MaxBatchLimit is the largest batch FindMaxBatch tries: a model that
// still fits at 2^24 has a batch that does not grow its memory.
const MaxBatchLimit = 1 << 24

// Probe costs one batch: its peak memory and whether that fits.
type Probe func(batch int64) (peakBytes float64, fits bool, err error)

// MaxBatch is the result of FindMaxBatch.
type MaxBatch struct {
	// Batch is the largest batch that fits; 0 when batch 1 does not.
	Batch int64
	// Unbounded is set when every batch up to MaxBatchLimit fits (then
	// Batch = MaxBatchLimit).
	Unbounded bool
	// Probes lists every batch tried, in the order tried, with its peak.
	Probes []ProbePoint
}

// ProbePoint is one batch FindMaxBatch tried.
type ProbePoint struct {
	Batch int64
	Peak  float64
	Fits  bool
}

// PeakTolerance is how far (relative) a larger batch's peak may fall below
// a smaller one's before FindMaxBatch calls the peak not monotone: room
// for a figure that wobbles while its trend rises. The sweep gives it
// figures that should not wobble at all (a training step's live tensors,
// not the caching allocator's reserve over them: searchPeak), so the
// allowance only keeps a rounding from being called an error.
const PeakTolerance = 0.02

// PeakToleranceBytes is the same allowance in bytes, for small models
// where 2% is less than the allocator's unit (a handful of its 20 MiB
// large-pool segments, train/allocator.go).
const PeakToleranceBytes = 8 * 20 << 20

// FindMaxBatch finds the largest integer batch that fits: it doubles from
// 1 until a batch does not fit, then bisects between the last batch that
// fits and the first that does not. That is exact only if fitting is
// monotone in batch (peak memory never falls as batch grows, within
// PeakTolerance), so every probe is checked against the others: a larger
// batch with a smaller peak (beyond PeakTolerance and
// PeakToleranceBytes), or a fitting batch above one that does not
// fit, is an error rather than a wrong answer.
func FindMaxBatch(probe Probe) (MaxBatch, error) {
	var res MaxBatch
	try := func(b int64) (bool, error) {
		peak, fits, err := probe(b)
		if err != nil {
			return false, err
		}
		pt := ProbePoint{b, peak, fits}
		for _, q := range res.Probes {
			// Two batches that both fail to fit need not order their
			// peaks: past the device the figure is where an allocator
			// gave up (train/allocator.go), not what the batch needs.
			falls := (q.Batch < b && q.Peak > max(peak*(1+PeakTolerance), peak+PeakToleranceBytes)) ||
				(q.Batch > b && max(q.Peak*(1+PeakTolerance), q.Peak+PeakToleranceBytes) < peak)
			if falls && (q.Fits || fits) {
				return false, fmt.Errorf("peak memory is not monotone in batch (%g B at batch %d, %g B at batch %d): the largest batch cannot be found by search", q.Peak, q.Batch, peak, b)
			}
			if (q.Batch < b && !q.Fits && fits) || (q.Batch > b && q.Fits && !fits) {
				return false, fmt.Errorf("fitting is not monotone in batch (batch %d and %d)", q.Batch, b)
			}
		}
		res.Probes = append(res.Probes, pt)
		return fits, nil
	}
	ok, err := try(1)
	if err != nil || !ok {
		return res, err
	}
	lo := int64(1) // fits
	hi := int64(0) // first known not to fit; 0 = none yet
	for b := int64(2); b <= MaxBatchLimit; b *= 2 {
		ok, err := try(b)
		if err != nil {
			return res, err
		}
		if !ok {
			hi = b
			break
		}
		lo = b
	}
	if hi == 0 {
		res.Batch, res.Unbounded = lo, true
		return res, nil
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		ok, err := try(mid)
		if err != nil {
			return res, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	res.Batch = lo
	return res, nil
}
