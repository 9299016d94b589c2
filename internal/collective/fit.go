package collective

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/hwdb"
)

// Shape is how the latency grows with the GPU count: g(N) in
// α0 + α1·g(N).
type Shape string

const (
	Ring Shape = "ring" // N−1: one hop per peer
	Tree Shape = "tree" // log2 N
)

func (s Shape) g(n int) float64 {
	if s == Tree {
		return math.Log2(float64(n))
	}
	return float64(n - 1)
}

// fracN are the GPU counts AllReduceFit.Fraction holds.
var fracN = [3]int{2, 4, 8}

// LinkBW is the hwdb link bandwidth the row's all-reduce is priced over.
func LinkBW(r Row) (float64, error) {
	g, err := hwdb.Lookup(r.GPU)
	if err != nil {
		return 0, err
	}
	bw := g.PeerBW(r.N)
	if bw <= 0 {
		return 0, fmt.Errorf("%s: no link bandwidth for %d GPUs", r.GPU, r.N)
	}
	return bw, nil
}

// Model prices a row.
type Model func(r Row, link float64) float64

// Before is the model these parameters replace: the ring at the full link
// bandwidth plus a fixed 8 µs.
func Before(r Row, link float64) float64 {
	f := float64(r.N)
	return 2*(f-1)/f*r.Bytes/link + 8e-6
}

// Fitted prices a row with one fit per kind (Shape Ring is what
// perf.AllReduceFit.Latency computes; Tree is priced here).
func Fitted(nv, pc perf.AllReduceFit, s Shape) Model {
	return func(r Row, link float64) float64 {
		m := nv
		if r.Kind == PCIe {
			m = pc
		}
		t := m.Time(r.N, r.Bytes, link)
		if s == Tree {
			t += m.Alpha1S * (s.g(r.N) - Ring.g(r.N))
		}
		return t
	}
}

// Fit fits one kind on its training rows: weighted least squares on the
// relative error, each (file, N) series weighted equally, solved linearly
// in (α0, α1, 1/f(N)). With one GPU count (PCIe) α0 is fixed at 0, the
// latency a per-hop figure, and f is one number.
func Fit(rows []Row, kind Kind, s Shape) (perf.AllReduceFit, error) {
	var train []Row
	var links []float64
	count := map[string]int{}
	ns := map[int]bool{}
	for _, r := range rows {
		if r.Kind != kind || r.Holdout {
			continue
		}
		l, err := LinkBW(r)
		if err != nil {
			return perf.AllReduceFit{}, err
		}
		train, links = append(train, r), append(links, l)
		count[r.Group()]++
		ns[r.N] = true
	}
	if len(train) == 0 {
		return perf.AllReduceFit{}, fmt.Errorf("no %s training rows", kind)
	}
	// Columns: α0, α1, then one 1/f per fitted GPU count.
	var fit []int
	for _, n := range fracN {
		if ns[n] {
			fit = append(fit, n)
		}
	}
	useA0 := len(fit) > 1
	for n := range ns {
		if !contains(fit, n) {
			return perf.AllReduceFit{}, fmt.Errorf("%s: GPU count %d is not one of %v", kind, n, fracN)
		}
	}
	cols := 2 + len(fit)
	a := mat.NewDense(len(train), cols, nil)
	b := mat.NewVecDense(len(train), nil)
	for i, r := range train {
		w := math.Sqrt(1/float64(count[r.Group()])) / r.TimeS
		f := float64(r.N)
		if useA0 {
			a.Set(i, 0, w)
		}
		a.Set(i, 1, w*s.g(r.N))
		for j, n := range fit {
			if r.N == n {
				a.Set(i, 2+j, w*2*(f-1)/f*r.Bytes/links[i])
			}
		}
		b.SetVec(i, w*r.TimeS)
	}
	if !useA0 {
		a = a.Slice(0, len(train), 1, cols).(*mat.Dense)
	}
	var x mat.VecDense
	if err := x.SolveVec(a, b); err != nil {
		return perf.AllReduceFit{}, fmt.Errorf("%s: %w", kind, err)
	}
	p := x.RawVector().Data
	if !useA0 {
		p = append([]float64{0}, p...)
	}
	m := perf.AllReduceFit{Alpha0S: p[0], Alpha1S: p[1]}
	if m.Alpha0S < 0 || m.Alpha1S < 0 {
		return m, fmt.Errorf("%s: negative latency α0 %g α1 %g", kind, m.Alpha0S, m.Alpha1S)
	}
	// f at the fitted counts; a count not fitted takes the nearest fitted
	// one (PCIe: one figure for all).
	for k, n := range fracN {
		best := 0
		for j, fn := range fit {
			if math.Abs(math.Log2(float64(fn))-math.Log2(float64(n))) < math.Abs(math.Log2(float64(fit[best]))-math.Log2(float64(n))) {
				best = j
			}
		}
		m.Fraction[k] = math.Min(1/p[2+best], 1)
	}
	return m, nil
}

// Errors is each row's |predicted/measured − 1|, for rows with keep.
func Errors(rows []Row, m Model, keep func(Row) bool) ([]float64, error) {
	var e []float64
	for _, r := range rows {
		if !keep(r) {
			continue
		}
		l, err := LinkBW(r)
		if err != nil {
			return nil, err
		}
		e = append(e, math.Abs(m(r, l)/r.TimeS-1))
	}
	sort.Float64s(e)
	return e, nil
}

// Quantile of sorted values (nearest rank); NaN when empty.
func Quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
