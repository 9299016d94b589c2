package sweep

// KneeShare is the share of the best throughput that defines the knee.
const KneeShare = 0.9

// Knee returns the smallest batch whose throughput reaches KneeShare of
// the best throughput among the points, and false when there are no
// points with a positive throughput. batches and throughput are parallel.
// Past the knee a larger batch buys little but latency and memory.
func Knee(batches []int64, throughput []float64) (int64, bool) {
	best := 0.0
	for _, t := range throughput {
		if t > best {
			best = t
		}
	}
	if best <= 0 {
		return 0, false
	}
	knee, found := int64(0), false
	for i, t := range throughput {
		if t >= KneeShare*best && (!found || batches[i] < knee) {
			knee, found = batches[i], true
		}
	}
	return knee, found
}
