package kernelrows

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"

	"github.com/onnxcost/onnxcost/hwdb"
)

// Priced is a row with its prediction.
type Priced struct {
	Row
	PredictedS float64
	// Family is the GPU's architecture family (Family).
	Family string
}

// PriceAll prices every row on its own GPU with the committed parameters.
func PriceAll(rows []Row) ([]Priced, error) {
	return priceOn(rows, func(g *hwdb.GPU) (*hwdb.GPU, string) { return g, Family(g) })
}

// priceOn prices every row on the GPU, and under the family, that as
// gives for the row's own GPU; a row whose GPU as maps to nil is left out.
func priceOn(rows []Row, as func(*hwdb.GPU) (*hwdb.GPU, string)) ([]Priced, error) {
	type on struct {
		g      *hwdb.GPU
		family string
	}
	gpus := map[string]on{}
	out := make([]Priced, 0, len(rows))
	for _, r := range rows {
		o, ok := gpus[r.GPU]
		if !ok {
			g, err := lookupGPU(r.GPU, r.Source)
			if err != nil {
				return nil, err
			}
			o.g, o.family = as(g)
			gpus[r.GPU] = o
		}
		if o.g == nil {
			continue
		}
		t := Price(r, o.g)
		if !(t.TimeS > 0) {
			return nil, fmt.Errorf("%s %s %s %s: predicted time %g is not positive", r.Source, r.GPU, r.Op, r.Shape, t.TimeS)
		}
		out = append(out, Priced{Row: r, PredictedS: t.TimeS, Family: o.family})
	}
	return out, nil
}

// Ratio is measured/predicted: above 1 the model is too fast.
func (p Priced) Ratio() float64 { return p.MeasuredS / p.PredictedS }

// Err is the signed relative error (predicted − measured)/measured.
func (p Priced) Err() float64 { return (p.PredictedS - p.MeasuredS) / p.MeasuredS }

// ErrStat summarises the errors of a group of rows.
type ErrStat struct {
	Key            []string
	N              int
	MedianAbs, P90 float64 // of |Err|
	MedianSigned   float64 // of Err: negative is too fast
	Q10, Q50, Q90  float64 // of Ratio
}

// Stats groups rows by key (rows whose key is nil are left out) and
// summarises each group, in key order.
func Stats(rows []Priced, key func(Priced) []string) []ErrStat {
	groups := map[string][]Priced{}
	keys := map[string][]string{}
	for _, r := range rows {
		k := key(r)
		if k == nil {
			continue
		}
		s := fmt.Sprint(k)
		groups[s] = append(groups[s], r)
		keys[s] = k
	}
	var out []ErrStat
	for _, s := range slices.Sorted(maps.Keys(groups)) {
		out = append(out, stat(keys[s], groups[s]))
	}
	sort.SliceStable(out, func(i, j int) bool { return slices.Compare(out[i].Key, out[j].Key) < 0 })
	return out
}

func stat(key []string, g []Priced) ErrStat {
	abs, signed, ratio := make([]float64, len(g)), make([]float64, len(g)), make([]float64, len(g))
	for i, r := range g {
		abs[i], signed[i], ratio[i] = math.Abs(r.Err()), r.Err(), r.Ratio()
	}
	slices.Sort(abs)
	slices.Sort(signed)
	slices.Sort(ratio)
	return ErrStat{Key: key, N: len(g), MedianAbs: quantile(abs, 0.5), P90: quantile(abs, 0.9),
		MedianSigned: quantile(signed, 0.5),
		Q10:          quantile(ratio, 0.1), Q50: quantile(ratio, 0.5), Q90: quantile(ratio, 0.9)}
}

// quantile of sorted a, linear between ranks (as internal/calibrate's).
func quantile(a []float64, q float64) float64 {
	if len(a) == 0 {
		return math.NaN()
	}
	pos := q * float64(len(a)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(a)-1)
	return a[lo] + (pos-float64(lo))*(a[hi]-a[lo])
}

// median of unsorted a.
func median(a []float64) float64 {
	s := slices.Clone(a)
	slices.Sort(s)
	return quantile(s, 0.5)
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.SortedFunc(maps.Keys(m), cmp.Compare[string])
}
