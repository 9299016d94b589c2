package kernelrows

import (
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
)

// TestIndexSelectFit refits the two constants of PyTorch's index_select
// time (cost/perf/gather.go) on Vidur's emb fit rows (every 4th shape per
// GPU held out, as everywhere in this package): the grid point of least
// median |error| over the fit rows of the A100, H100 and A40 together must
// be the committed one, and the held-out rows must stay within their
// bound.
func TestIndexSelectFit(t *testing.T) {
	rows := vidurRefitRows(t, func(p Priced) bool {
		if p.Op != "emb" {
			return false
		}
		if p.Kernel.Indexed.Indices <= 0 {
			t.Fatalf("%s %s: the Gather has no indexed-copy view", p.GPU, p.Shape)
		}
		return true
	})
	if len(rows) < 1000 {
		t.Fatalf("%d emb rows", len(rows))
	}
	params := perf.DefaultParams()
	medErr := func(iter, chain float64, fit bool) float64 {
		var e []float64
		for _, r := range rows {
			if r.fit != fit {
				continue
			}
			lat, loop := perf.IndexSelectTimeWith(r.g, r.p.Kernel, params, iter, chain)
			pred := max(lat+loop, r.kt.MemoryS) + r.kt.RampS + r.kt.LaunchS
			e = append(e, math.Abs(pred-r.p.MeasuredS)/r.p.MeasuredS)
		}
		slices.Sort(e)
		return quantile(e, 0.5)
	}
	best, bi, bc := math.Inf(1), 0.0, 0.0
	for iter := 1500.0; iter <= 2500; iter += 25 {
		for chain := 0.30; chain <= 1.0001; chain += 0.02 {
			if e := medErr(iter, chain, true); e < best {
				best, bi, bc = e, iter, chain
			}
		}
	}
	ci, cc := perf.IndexSelectFitted()
	held := medErr(ci, cc, false)
	t.Logf("fit rows: least median |error| %.1f%% at %g cycles per iteration, %.2f gaps per chain; committed %g, %.2f: fit %.1f%%, held out %.1f%%",
		100*best, bi, bc, ci, cc, 100*medErr(ci, cc, true), 100*held)
	if math.Abs(bi-ci) > 25 || math.Abs(bc-cc) > 0.02+1e-9 {
		t.Errorf("refit gives %g cycles, %.2f gaps; committed %g, %.2f (cost/perf/gather.go)", bi, bc, ci, cc)
	}
	if held > 0.10 {
		t.Errorf("held-out emb rows: median |error| %.1f%%, bound 10%%", 100*held)
	}
}

// TestIndexSelectTPRows prices Vidur's emb rows at tensor-parallel degree
// 2, 4 and 8, which LoadVidur skips and nothing fitted: sarathi's
// VocabParallelEmbedding times only its F.embedding call (the vocab-shard
// masking kernels run outside the timer), so each is the same gather of T
// rows from a vocab/TP table.
func TestIndexSelectTPRows(t *testing.T) {
	fsys := os.DirFS(filepath.Join(root, VidurDir))
	names, err := fs.Glob(fsys, "*/*/*/mlp.csv.gz")
	if err != nil || len(names) == 0 {
		t.Fatalf("no Vidur files: %v", err)
	}
	times := map[string][]float64{}
	specs := map[string]vidurMeasure{}
	for _, name := range names {
		ms, err := readVidurFile(fsys, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if m.op != "emb" || m.cfg.tp == 1 {
				continue
			}
			k := fmt.Sprintf("%s TP%d T=%d V=%d E=%d", m.gpu, m.cfg.tp, m.cfg.tokens, m.cfg.vocab/m.cfg.tp, m.cfg.embd)
			times[k] = append(times[k], m.medianS)
			specs[k] = m
		}
	}
	errs := map[string][]float64{}
	for k, m := range specs {
		g, err := hwdb.Lookup(m.gpu)
		if err != nil {
			t.Fatal(err)
		}
		c := m.cfg
		s := nodeSpec{op: "Gather", compute: "fp16",
			ins: []tensorSpec{{ir.Float16, []int64{c.vocab / c.tp, c.embd}}, {ir.Int64, []int64{c.tokens}}},
			out: tensorSpec{ir.Float16, []int64{c.tokens, c.embd}}}
		kern, err := s.kernel(g)
		if err != nil {
			t.Fatal(err)
		}
		r := Row{Source: SourceVidur, GPU: m.gpu, Kernel: kern, Compute: "fp16", Setting: perf.InPlan, MeasuredS: median(times[k])}
		pred := Price(r, g).TimeS
		key := fmt.Sprintf("%s TP%d", m.gpu, c.tp)
		errs[key] = append(errs[key], math.Abs(pred-r.MeasuredS)/r.MeasuredS)
	}
	for _, key := range sortedKeys(errs) {
		e := errs[key]
		slices.Sort(e)
		t.Logf("%-24s %5d shapes, median |error| %.1f%%", key, len(e), 100*quantile(e, 0.5))
		if m := quantile(e, 0.5); m > 0.2 {
			t.Errorf("%s: median |error| %.1f%% over 20%%", key, 100*m)
		}
	}
}

// refitRow is one priced Vidur row of a refit test: the row, its GPU, its
// time at the committed parameters and whether it is a fit row.
type refitRow struct {
	p   Priced
	g   *hwdb.GPU
	kt  perf.KernelTime
	fit bool
}

// vidurRefitRows prices the Vidur rows keep selects, for the refit tests.
func vidurRefitRows(t *testing.T, keep func(Priced) bool) []refitRow {
	t.Helper()
	var rows []refitRow
	for _, p := range priced(t) {
		if p.Source != SourceVidur || !keep(p) {
			continue
		}
		g, err := hwdb.Lookup(p.GPU)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, refitRow{p, g, Price(p.Row, g), !p.HeldOut})
	}
	return rows
}
