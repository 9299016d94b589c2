package calibrate

import (
	"math"

	"gonum.org/v1/gonum/optimize"
)

// nelderMead minimises f from x0 with gonum's Nelder-Mead simplex (the
// fitted parameters are few and the loss is not differentiable: it takes
// medians and caps), starting from a simplex of size step around x0, for at
// most maxEvals evaluations. It returns the best point and value; a method
// failure leaves the best point found so far.
func nelderMead(f func([]float64) float64, x0 []float64, step float64, maxEvals int) ([]float64, float64) {
	p := optimize.Problem{Func: f}
	settings := &optimize.Settings{FuncEvaluations: maxEvals, Converger: &optimize.FunctionConverge{Absolute: 1e-10, Iterations: 200}}
	res, err := optimize.Minimize(p, x0, settings, &optimize.NelderMead{SimplexSize: step})
	if res == nil || (err != nil && math.IsInf(res.F, 0)) {
		return append([]float64(nil), x0...), f(x0)
	}
	return res.X, res.F
}
