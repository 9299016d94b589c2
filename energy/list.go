package energy

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseList reads the value of a list flag (--power-cap, --sm-clock): a
// comma list or LO..HI[:STEP] of positive numbers, at most 1000 of them.
func ParseList(flag, s string, step float64) ([]float64, error) {
	s = strings.TrimSpace(s)
	if lo, rest, ok := strings.Cut(s, ".."); ok {
		hi := rest
		if h, st, ok := strings.Cut(rest, ":"); ok {
			hi = h
			v, err := strconv.ParseFloat(strings.TrimSpace(st), 64)
			if err != nil || !(v > 0) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%s: bad step %q in %q (want a positive number)", flag, st, s)
			}
			step = v
		}
		a, err1 := strconv.ParseFloat(strings.TrimSpace(lo), 64)
		b, err2 := strconv.ParseFloat(strings.TrimSpace(hi), 64)
		if err1 != nil || err2 != nil || !(a > 0) || !(b >= a) || math.IsInf(b, 0) {
			return nil, fmt.Errorf("%s: bad range %q (want LO..HI[:STEP] with 0 < LO ≤ HI)", flag, s)
		}
		if (b-a)/step > 1000 {
			return nil, fmt.Errorf("%s: range %q has more than 1000 values", flag, s)
		}
		var out []float64
		for i := 0; a+float64(i)*step <= b+1e-9; i++ {
			out = append(out, a+float64(i)*step)
		}
		return out, nil
	}
	var out []float64
	for _, p := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s: bad value %q in %q (want positive numbers, comma-separated)", flag, p, s)
		}
		out = append(out, v)
	}
	return out, nil
}
