package calib_test

import (
	"math"
	"slices"
	"sort"
	"testing"

	"github.com/onnxcost/onnxcost/calib"
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/kernelrows"
)

// gpuRows are one GPU's measured kernels as single-node reports, the way
// the calibrate command sees a table of one-kernel models.
type gpuRows struct {
	gpu  *hwdb.GPU
	rows []calib.Row
}

// realRows loads internal/kernelrows (Vidur, DeepBench, our H100 rows)
// and prices every row on its GPU, grouped by GPU in load order.
func realRows(t *testing.T) map[string]*gpuRows {
	t.Helper()
	rows, _, err := kernelrows.LoadAll("..")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*gpuRows{}
	for _, r := range rows {
		g, ok := out[r.GPU]
		if !ok {
			gpu, err := hwdb.Lookup(r.GPU)
			if err != nil {
				t.Fatal(err)
			}
			g = &gpuRows{gpu: gpu}
			out[r.GPU] = g
		}
		kt := kernelrows.Price(r, g.gpu)
		rep := &report.Report{GPU: g.gpu.Name, Nodes: []report.NodeCost{{
			Name: r.Op, OpType: opType(r), KernelClass: string(r.Class), Bound: kt.Bound, TimeS: kt.TimeS, RampS: kt.RampS, LaunchS: kt.LaunchS, Launches: 1,
			ComputeS: kt.ComputeS, LatencyS: kt.LatencyS, MemoryS: kt.MemoryS,
		}}}
		rep.Totals.TimeS = kt.TimeS
		g.rows = append(g.rows, calib.Row{Name: r.Source + " " + r.Op + " " + r.Shape, MeasuredS: r.MeasuredS, Report: rep})
	}
	return out
}

// opType is the ONNX op type of r's one-node model, as a report of it
// names it; "" for a row with no ONNX form.
func opType(r kernelrows.Row) string {
	m, _, why, err := r.ModelDType()
	if err != nil || why != "" || len(m.Graph.Nodes) != 1 {
		return ""
	}
	return m.Graph.Nodes[0].OpType
}

// halves splits rows alternately: even positions fit, odd ones are held
// out, so both halves span every op and size the source lists in order.
func halves(rows []calib.Row) (fit, held []calib.Row) {
	for i, r := range rows {
		if i%2 == 0 {
			fit = append(fit, r)
		} else {
			held = append(held, r)
		}
	}
	return fit, held
}

// calibrated re-prices a single-node row under a as cost.Analyze does
// (perf.PoweredKernel.Calibrated, less the physical floor): each term
// times its TermFactor, the body max(fc·C + fl·L, fm·M) in place of
// max(C + L, M).
func calibrated(r calib.Row, a *calib.Applied) float64 {
	n := r.Report.Nodes[0]
	terms := [3]float64{n.ComputeS, n.LatencyS, n.MemoryS}
	f := func(term string, s float64) float64 {
		return s * a.TermFactor(n.KernelClass, n.Precision, n.OpType, n.KernelShape, term, terms)
	}
	return r.Report.Totals.TimeS - perf.BodyS(perf.KernelClass(n.KernelClass), n.ComputeS, n.LatencyS, n.MemoryS) + perf.BodyS(perf.KernelClass(n.KernelClass), f("compute", n.ComputeS), f("latency", n.LatencyS), f("memory", n.MemoryS))
}

func medianAbsErr(rows []calib.Row, a *calib.Applied) float64 {
	e := make([]float64, len(rows))
	for i, r := range rows {
		e[i] = math.Abs(calibrated(r, a)/r.MeasuredS - 1)
	}
	sort.Float64s(e)
	if len(e)%2 == 1 {
		return e[len(e)/2]
	}
	return (e[len(e)/2-1] + e[len(e)/2]) / 2
}

// sample keeps every k-th row so each GPU fits on at most n rows: Vidur
// lists tens of thousands, and the fit's answer does not need them all.
func sample(rows []calib.Row, n int) []calib.Row {
	k := max(1, len(rows)/n)
	var out []calib.Row
	for i := 0; i < len(rows); i += k {
		out = append(out, rows[i])
	}
	return out
}

// noWorse is how far a calibration may leave a held-out median above the
// uncalibrated one: half a point, 1.5 points on a set of under 100 rows,
// where one row moves the median that much, and 2 points under 50. Our
// H200 rows (38 held out, priced cold here) sit there: once the CUDA-core
// path's power need (perf.vectorPowerNeed) put their fp32 GEMMs right,
// the uncalibrated median fell from 7.5% to 5.3% and the calibrated one
// stayed at 6.2-6.4% (its fit half's attention shapes are 3-8% fast, the
// held half's 1-4% slow); since cuBLAS's CUDA-core split rule (cost/perf
// simtLargeKRatio) it is 6.9%, the held rows' errors around their
// median 4.4%, 6.1%, 8.9% uncalibrated and 6.3%, 7.5%, 7.5% calibrated:
// one row across the middle is 1.7 points. Priced warm, as they were
// timed, the same rows go from 7.6% to 5.1% (internal/kernelrows
// TestCalibrationEndToEnd).
func noWorse(held int) float64 {
	switch {
	case held < 50:
		return 0.02
	case held < 100:
		return 0.015
	}
	return 0.005
}

// Same GPU: fit on half of each GPU's rows, predict the other half.
func TestRealKernelsSameGPU(t *testing.T) {
	all := realRows(t)
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range all {
			if !yield(k) {
				return
			}
		}
	})
	for _, name := range names {
		g := all[name]
		fitRows, held := halves(sample(g.rows, 4000))
		cal, err := calib.Fit(g.gpu, fitRows, calib.Source{Measurements: "kernelrows"})
		if err != nil {
			t.Fatal(err)
		}
		before, after := medianAbsErr(held, nil), medianAbsErr(held, cal.For(g.gpu))
		t.Logf("%-16s fit %5d held %5d  median |err| %5.1f%% -> %5.1f%%  (GPU factor %.3g, %d cells)",
			name, len(fitRows), len(held), 100*before, 100*after, cal.GPUFactor, len(cal.Cells))
		// Vidur's PyTorch kernels (A100, A40, H100) meet the 8%;
		// DeepBench's library calls (cuDNN picks an algorithm per shape)
		// do not: there the guard is only that calibration helps.
		if after > before+noWorse(len(held)) || (slices.Contains([]string{"A100-SXM4-80GB", "A40", "H100-SXM5-80GB"}, name) && after > 0.08) {
			t.Errorf("%s: held-out median |error| %.1f%% -> %.1f%%", name, 100*before, 100*after)
		}
	}
}

// Transfer: fit on all of one GPU's rows, predict the other GPU's
// held-out half, which the fit never saw.
func TestRealKernelsTransfer(t *testing.T) {
	all := realRows(t)
	for _, p := range []struct{ from, to string }{
		{"A100-SXM4-80GB", "H100-SXM5-80GB"},
		{"A100-SXM4-80GB", "A40"},
		{"H100-SXM5-80GB", "A100-SXM4-80GB"},
		{"P100-PCIe-16GB", "T4"},
		{"Titan-X-Pascal", "T4"},
	} {
		src, dst := all[p.from], all[p.to]
		if src == nil || dst == nil {
			t.Logf("%s -> %s: no rows", p.from, p.to)
			continue
		}
		cal, err := calib.Fit(src.gpu, sample(src.rows, 4000), calib.Source{Measurements: "kernelrows"})
		if err != nil {
			t.Fatal(err)
		}
		_, held := halves(sample(dst.rows, 4000))
		a := cal.For(dst.gpu)
		before, after := medianAbsErr(held, nil), medianAbsErr(held, a)
		t.Logf("%s -> %s: held %d  median |err| %5.1f%% -> %5.1f%%", p.from, p.to, len(held), 100*before, 100*after)
		// A regression guard at the values measured when the rule was
		// chosen (DefaultTransfer), plus a point.
		if after > before+0.025 {
			t.Errorf("%s -> %s: transfer made the target worse: %.1f%% -> %.1f%%", p.from, p.to, 100*before, 100*after)
		}
	}
}
