package render

import (
	"fmt"
	"math"
)

// Seconds renders a duration with a unit that keeps 3 significant digits
// ("812 ns", "1.42 µs", "12.3 ms", "2.05 s").
func Seconds(s float64) string {
	switch a := math.Abs(s); {
	case a == 0:
		return "0"
	case a < 1e-6:
		return sig(s*1e9) + " ns"
	case a < 1e-3:
		return sig(s*1e6) + " µs"
	case a < 1:
		return sig(s*1e3) + " ms"
	}
	return sig(s) + " s"
}

// FLOPs renders a FLOP count in decimal units (MFLOP, GFLOP, TFLOP).
func FLOPs(f float64) string { return decimal(f, "FLOP") }

// Bytes renders a byte count in decimal units (kB, MB, GB): the unit of
// bandwidth figures, so bytes/bandwidth reads off directly.
func Bytes(b float64) string { return decimal(b, "B") }

// Count renders a plain count with decimal prefixes (12.3 M).
func Count(n float64) string {
	if math.Abs(n) < 1000 && n == math.Trunc(n) {
		return fmt.Sprintf("%.0f", n)
	}
	return decimal(n, "")
}

func decimal(v float64, unit string) string {
	a := math.Abs(v)
	prefixes := []struct {
		scale float64
		p     string
	}{{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}}
	for _, p := range prefixes {
		if a >= p.scale {
			return sig(v/p.scale) + " " + p.p + unit
		}
	}
	if unit == "" {
		return sig(v)
	}
	return sig(v) + " " + unit
}

// sig formats with 3 significant digits, no exponent for normal ranges.
func sig(v float64) string {
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// Percent renders a fraction as a percentage.
func Percent(f float64) string {
	if f == 0 {
		return "0%"
	}
	if f < 0.001 {
		return "<0.1%"
	}
	return fmt.Sprintf("%.1f%%", f*100)
}
