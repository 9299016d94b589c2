package cost

import "sort"

// nelderMead minimises f from x0 with the Nelder-Mead simplex (standard
// coefficients: reflection 1, expansion 2, contraction 1/2, shrink 1/2),
// starting from a simplex of x0 plus step along each axis, for at most
// maxEvals evaluations. It returns the best point and value.
//
// gonum's optimize.NelderMead would do, but its package pulls in
// stat/distmv and with it golang.org/x/tools, which is not in go.sum; the
// method is short enough to own.
func nelderMead(f func([]float64) float64, x0 []float64, step float64, maxEvals int) ([]float64, float64) {
	n := len(x0)
	type vertex struct {
		x []float64
		v float64
	}
	evals := 0
	eval := func(x []float64) vertex { evals++; return vertex{x, f(x)} }
	simplex := []vertex{eval(append([]float64(nil), x0...))}
	for i := range n {
		x := append([]float64(nil), x0...)
		x[i] += step
		simplex = append(simplex, eval(x))
	}
	// combine returns c + t·(c - w), c the centroid of all but the worst.
	combine := func(c, w []float64, t float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = c[i] + t*(c[i]-w[i])
		}
		return out
	}
	for evals < maxEvals {
		sort.SliceStable(simplex, func(i, j int) bool { return simplex[i].v < simplex[j].v })
		best, worst := simplex[0], simplex[n]
		if worst.v-best.v < 1e-9 {
			break
		}
		c := make([]float64, n)
		for _, s := range simplex[:n] {
			for i := range c {
				c[i] += s.x[i] / float64(n)
			}
		}
		r := eval(combine(c, worst.x, 1))
		switch {
		case r.v < best.v:
			if e := eval(combine(c, worst.x, 2)); e.v < r.v {
				simplex[n] = e
			} else {
				simplex[n] = r
			}
		case r.v < simplex[n-1].v:
			simplex[n] = r
		default:
			var k vertex
			if r.v < worst.v {
				k = eval(combine(c, worst.x, 0.5)) // outside contraction
			} else {
				k = eval(combine(c, worst.x, -0.5)) // inside contraction
			}
			if k.v < min(r.v, worst.v) {
				simplex[n] = k
				continue
			}
			for i := 1; i <= n; i++ { // shrink towards the best
				x := make([]float64, n)
				for j := range x {
					x[j] = best.x[j] + 0.5*(simplex[i].x[j]-best.x[j])
				}
				simplex[i] = eval(x)
			}
		}
	}
	sort.SliceStable(simplex, func(i, j int) bool { return simplex[i].v < simplex[j].v })
	return simplex[0].x, simplex[0].v
}
