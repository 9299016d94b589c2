package sweep

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Fit is a least-squares polynomial y ≈ Coef[0] + Coef[1]·x (+ Coef[2]·x²).
type Fit struct {
	// Coef holds the baseline, the slope and, for a quadratic fit, the
	// quadratic term.
	Coef []float64
	// R2 is the coefficient of determination (1 for an exact fit).
	R2 float64
	// MaxRelResidual is the largest |y - fit| / |y| over the points: 0
	// (to rounding) when the cost is exactly polynomial in x.
	MaxRelResidual float64
}

// Degree names a fit's degree: "linear" is 1, "quadratic" 2.
func Degree(name string) (int, error) {
	switch name {
	case "linear":
		return 1, nil
	case "quadratic":
		return 2, nil
	}
	return 0, fmt.Errorf("fit %q: want linear or quadratic", name)
}

// PolyFit fits a polynomial of the given degree to (xs, ys) by least
// squares (QR). It needs more distinct x values than the degree. Columns
// are scaled by the largest |x|^k before solving, so that x² of a
// sequence length in the thousands does not ruin the conditioning.
func PolyFit(xs, ys []float64, degree int) (Fit, error) {
	if len(xs) != len(ys) {
		return Fit{}, fmt.Errorf("fit: %d x values, %d y values", len(xs), len(ys))
	}
	distinct := map[float64]bool{}
	for _, x := range xs {
		distinct[x] = true
	}
	if len(distinct) <= degree {
		return Fit{}, fmt.Errorf("fit: a degree-%d fit needs at least %d distinct values of the swept dimension, got %d", degree, degree+1, len(distinct))
	}
	xmax := 0.0
	for _, x := range xs {
		xmax = math.Max(xmax, math.Abs(x))
	}
	if xmax == 0 {
		xmax = 1
	}
	n, k := len(xs), degree+1
	a := mat.NewDense(n, k, nil)
	b := mat.NewDense(n, 1, nil)
	for i, x := range xs {
		for j := 0; j < k; j++ {
			a.Set(i, j, math.Pow(x/xmax, float64(j)))
		}
		b.Set(i, 0, ys[i])
	}
	var qr mat.QR
	qr.Factorize(a)
	var sol mat.Dense
	if err := qr.SolveTo(&sol, false, b); err != nil {
		return Fit{}, fmt.Errorf("fit: %w", err)
	}
	f := Fit{Coef: make([]float64, k)}
	for j := 0; j < k; j++ {
		f.Coef[j] = sol.At(j, 0) / math.Pow(xmax, float64(j))
	}
	mean := 0.0
	for _, y := range ys {
		mean += y
	}
	mean /= float64(n)
	var ssRes, ssTot float64
	for i, x := range xs {
		r := ys[i] - f.Eval(x)
		ssRes += r * r
		ssTot += (ys[i] - mean) * (ys[i] - mean)
		if ys[i] != 0 {
			f.MaxRelResidual = math.Max(f.MaxRelResidual, math.Abs(r/ys[i]))
		}
	}
	f.R2 = 1
	if ssTot > 0 {
		f.R2 = 1 - ssRes/ssTot
	}
	return f, nil
}

// Eval evaluates the fitted polynomial at x.
func (f Fit) Eval(x float64) float64 {
	y, p := 0.0, 1.0
	for _, c := range f.Coef {
		y += c * p
		p *= x
	}
	return y
}
