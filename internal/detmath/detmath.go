// Package detmath computes exp, log and pow with Go arithmetic alone, so
// that an estimate has the same bits on every target. The standard
// library's Exp and Log run assembly on amd64 and Go on WebAssembly, and
// the two can differ in the last bit: the browser app (cost compiled to
// WebAssembly) then printed figures one ulp from the command's for 19 of
// 735 reports (seven fixtures on every GPU at fp32, fp16 and int8: all of
// them H100 and H200 at fp16 and int8, whose tensor-core clock goes
// through math.Pow). Accuracy is a few ulps, which no cost figure needs
// more than; what matters is that it is the same everywhere.
//
// Every product that feeds a sum is converted with float64(), which the
// Go specification says rounds it and so keeps a compiler from fusing
// it into a multiply-add on the targets that have one.
package detmath

import "math"

// ln2Hi and ln2Lo split ln 2 so that k·ln2Hi is exact for the exponents
// Exp and Log meet: ln2Hi is math.Ln2 with the low 21 bits of its
// significand cleared, ln2Lo the rest of ln 2 to double precision
// (ln 2 − ln2Hi, computed with 60 decimal digits of ln 2).
var ln2Hi = math.Float64frombits(math.Float64bits(math.Ln2) &^ (1<<21 - 1))

const ln2Lo = 1.9082149292705877e-10

// expTerms is how many Taylor terms Exp sums: for |r| ≤ ln2/2 the next
// one, r^18/18!, is below 10^-23.
const expTerms = 17

// Exp is e^x.
func Exp(x float64) float64 {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 1):
		return x
	case math.IsInf(x, -1):
		return 0
	case x > 709.79:
		return math.Inf(1)
	case x < -745.2:
		return 0
	}
	k := math.Floor(float64(x/math.Ln2) + 0.5)
	r := float64(x-float64(k*ln2Hi)) - float64(k*ln2Lo)
	// Horner over the Taylor series: 1 + r(1 + r/2(1 + r/3(...))).
	p := 1.0
	for n := expTerms; n >= 1; n-- {
		p = 1 + float64(float64(r/float64(n))*p)
	}
	return math.Ldexp(p, int(k))
}

// logTerms is how many terms of the atanh series Log sums: for
// |s| ≤ 0.1716 the next, s^(2·logTerms+1)/(2·logTerms+1), is below 10^-18
// of the first.
const logTerms = 12

// Log is the natural logarithm of x.
func Log(x float64) float64 {
	switch {
	case math.IsNaN(x) || x < 0:
		return math.NaN()
	case x == 0:
		return math.Inf(-1)
	case math.IsInf(x, 1):
		return x
	}
	m, e := math.Frexp(x) // x = m·2^e, m in [0.5, 1)
	if m < math.Sqrt2/2 {
		m, e = 2*m, e-1
	}
	// log m = 2·atanh(s), s = (m−1)/(m+1), |s| ≤ 0.1716.
	s := (m - 1) / (m + 1)
	s2 := float64(s * s)
	sum := 0.0
	for n := logTerms; n >= 0; n-- {
		sum = float64(sum*s2) + 1/float64(2*n+1)
	}
	f := float64(e)
	return float64(f*ln2Hi) + (float64(f*ln2Lo) + float64(2*float64(s*sum)))
}

// Log2 is log₂ x, exact for powers of two.
func Log2(x float64) float64 {
	if m, e := math.Frexp(x); m == 0.5 {
		return float64(e - 1)
	}
	return Log(x) / math.Ln2
}

// Pow is x^y. An integral y small enough to square its way there keeps
// math.Pow's own path (multiplications and exact scalings, the same bits
// everywhere); a positive x with any other y is Exp(y·Log x); what is
// left (zero, negative or infinite bases, NaNs) is math.Pow's special
// cases, which compute nothing.
func Pow(x, y float64) float64 {
	switch {
	case y == math.Trunc(y) && math.Abs(y) < 1<<20:
		return math.Pow(x, y)
	case x > 0 && !math.IsInf(x, 1) && !math.IsNaN(y) && !math.IsInf(y, 0):
		return Exp(float64(y * Log(x)))
	}
	return math.Pow(x, y)
}
