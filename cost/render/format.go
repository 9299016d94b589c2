package render

import (
	"math"
	"strconv"
)

// Each formatter has an append form that the text table formats into
// (table.go), and a string form for everything else. strconv's 'f'
// format with a precision is exactly what fmt's %.Nf prints (fmt calls it),
// NaN and ±Inf included.

// Seconds renders a duration with a unit that keeps 3 significant digits
// ("812 ns", "1.42 µs", "12.3 ms", "2.05 s").
func Seconds(s float64) string { return string(appendSeconds(nil, s)) }

func appendSeconds(b []byte, s float64) []byte {
	switch a := math.Abs(s); {
	case a == 0:
		return append(b, '0')
	case a < 1e-6:
		return append(appendSig(b, s*1e9), " ns"...)
	case a < 1e-3:
		return append(appendSig(b, s*1e6), " µs"...)
	case a < 1:
		return append(appendSig(b, s*1e3), " ms"...)
	}
	return append(appendSig(b, s), " s"...)
}

// FLOPs renders a FLOP count in decimal units (MFLOP, GFLOP, TFLOP).
func FLOPs(f float64) string { return string(appendFLOPs(nil, f)) }

func appendFLOPs(b []byte, f float64) []byte { return appendDecimal(b, f, "FLOP") }

// Bytes renders a byte count in decimal units (kB, MB, GB): the unit of
// bandwidth figures, so bytes/bandwidth reads off directly.
func Bytes(n float64) string { return string(appendBytes(nil, n)) }

func appendBytes(b []byte, n float64) []byte { return appendDecimal(b, n, "B") }

// Count renders a plain count with decimal prefixes (12.3 M).
func Count(n float64) string {
	if math.Abs(n) < 1000 && n == math.Trunc(n) {
		return strconv.FormatFloat(n, 'f', 0, 64)
	}
	return string(appendDecimal(nil, n, ""))
}

// decimalPrefixes are the prefixes appendDecimal picks from, largest
// first.
var decimalPrefixes = []struct {
	scale float64
	p     string
}{{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}}

func appendDecimal(b []byte, v float64, unit string) []byte {
	a := math.Abs(v)
	for _, p := range decimalPrefixes {
		if a >= p.scale {
			b = append(appendSig(b, v/p.scale), ' ')
			return append(append(b, p.p...), unit...)
		}
	}
	b = appendSig(b, v)
	if unit == "" {
		return b
	}
	return append(append(b, ' '), unit...)
}

// sig formats with 3 significant digits, no exponent for normal ranges.
func sig(v float64) string { return string(appendSig(nil, v)) }

func appendSig(b []byte, v float64) []byte {
	a := math.Abs(v)
	switch {
	case a == 0:
		return append(b, '0')
	case a >= 100:
		return strconv.AppendFloat(b, v, 'f', 0, 64)
	case a >= 10:
		return strconv.AppendFloat(b, v, 'f', 1, 64)
	}
	return strconv.AppendFloat(b, v, 'f', 2, 64)
}

// Percent renders a fraction as a percentage.
func Percent(f float64) string { return string(appendPercent(nil, f)) }

func appendPercent(b []byte, f float64) []byte {
	if f == 0 {
		return append(b, "0%"...)
	}
	if f < 0.001 {
		return append(b, "<0.1%"...)
	}
	return append(strconv.AppendFloat(b, f*100, 'f', 1, 64), '%')
}
