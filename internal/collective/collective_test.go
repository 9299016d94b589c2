package collective

import (
	"math"
	"testing"

	"github.com/onnxcost/onnxcost/cost/perf"
)

// TestCommittedIsTheFit: the committed parameters are the refit of
// testdata, to the three digits they are written with, so the constants
// and the data cannot drift apart.
func TestCommittedIsTheFit(t *testing.T) {
	rows, err := Load("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		kind Kind
		want perf.AllReduceFit
	}{{NVLink, perf.AllReduceNVLink}, {PCIe, perf.AllReducePCIe}} {
		got, err := Fit(rows, c.kind, Ring)
		if err != nil {
			t.Fatal(err)
		}
		g := []float64{got.Alpha0S, got.Alpha1S, got.Fraction[0], got.Fraction[1], got.Fraction[2]}
		w := []float64{c.want.Alpha0S, c.want.Alpha1S, c.want.Fraction[0], c.want.Fraction[1], c.want.Fraction[2]}
		for i := range g {
			if math.Abs(g[i]-w[i]) > 5e-3*math.Abs(w[i])+1e-12 {
				t.Errorf("%s: refit %+v, committed %+v", c.kind, got, c.want)
				break
			}
		}
	}
}

// TestHoldoutImproves: on the held-out rows the fitted model beats the
// one it replaced, in median and P90, for each link kind.
func TestHoldoutImproves(t *testing.T) {
	rows, err := Load("testdata")
	if err != nil {
		t.Fatal(err)
	}
	train, held := 0, 0
	for _, r := range rows {
		if r.Holdout {
			held++
		} else {
			train++
		}
	}
	if train < 5000 || held < 2000 {
		t.Fatalf("%d training and %d held-out rows", train, held)
	}
	after := Fitted(perf.AllReduceNVLink, perf.AllReducePCIe, Ring)
	for _, k := range []Kind{NVLink, PCIe} {
		keep := func(r Row) bool { return r.Holdout && r.Kind == k }
		b, err := Errors(rows, Before, keep)
		if err != nil {
			t.Fatal(err)
		}
		a, err := Errors(rows, after, keep)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []float64{0.5, 0.9} {
			if Quantile(a, q) >= Quantile(b, q) {
				t.Errorf("%s hold-out q%.1f: fitted %.3f, before %.3f", k, q, Quantile(a, q), Quantile(b, q))
			}
		}
	}
}

// TestHoldoutIsEveryFourthSize: the split is fixed by size order within a
// series, so a refit cannot choose its test rows.
func TestHoldoutIsEveryFourthSize(t *testing.T) {
	rows := []Row{{Source: "a", N: 2, Bytes: 4}, {Source: "a", N: 2, Bytes: 1}, {Source: "a", N: 2, Bytes: 3}, {Source: "a", N: 2, Bytes: 2}, {Source: "a", N: 4, Bytes: 1}}
	markHoldout(rows)
	for i, want := range []bool{true, false, false, false, false} {
		if rows[i].Holdout != want {
			t.Errorf("row %d (%g B, N=%d): holdout %v", i, rows[i].Bytes, rows[i].N, rows[i].Holdout)
		}
	}
}
