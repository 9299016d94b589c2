package calib

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
)

// useBands replaces builtinBands with bands for the rest of test t.
func useBands(t *testing.T, bands []ErrorBand) {
	t.Helper()
	saved := builtinBands
	t.Cleanup(func() { builtinBands = saved })
	builtinBands = bands
}

func near(a, b, rel float64) bool { return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b)) }

func TestIntervalCombinesBands(t *testing.T) {
	t4 := mustGPU(t, "T4")
	// One kernel and no rest: the band's own centre and spread, widened
	// by the whole-model term.
	one := synthReport(t4.Name, kern{"gemm", "MatMul", "compute", 1e-3})
	one.Nodes[0].LaunchS, one.Nodes[0].TimeS, one.Totals.TimeS = 0, 1e-3, 1e-3
	g := builtinBand("gemm", "", "Turing")
	mu, sg := logBand(g)
	s := math.Sqrt(sg*sg + modelSpread*modelSpread)
	lo, hi := Interval(one, t4, nil)
	// 1e-8: the bounds keep intervalDigits (9) significant digits.
	if !near(lo, math.Min(1e-3, 1e-3*math.Exp(mu-z80*s)), 1e-8) || !near(hi, math.Max(1e-3, 1e-3*math.Exp(mu+z80*s)), 1e-8) {
		t.Errorf("one kernel: [%g, %g], want exp(%g ± %g·%g) × 1 ms", lo, hi, mu, z80, s)
	}
	// Two kernels: narrower (in log width) than fully correlated bands,
	// wider than independent ones, and always around the estimate.
	rep := synthReport(t4.Name, kern{"gemm", "MatMul", "compute", 1e-3}, kern{"elementwise", "Add", "memory", 1e-3})
	lo, hi = Interval(rep, t4, nil)
	tt := rep.Totals.TimeS
	if !(lo <= tt && tt <= hi && lo < hi) {
		t.Fatalf("interval [%g, %g] does not contain the estimate %g", lo, hi, tt)
	}
	e := builtinBand("elementwise", "", "Turing")
	_, se := logBand(e)
	w := 1e-3 / tt
	full := math.Sqrt(math.Pow(w*sg+w*se, 2) + modelSpread*modelSpread)
	ind := math.Sqrt(w*w*(sg*sg+se*se) + modelSpread*modelSpread)
	if width := math.Log(hi / lo); width > 2*z80*full+1e-9 || width < 2*z80*ind*0.5 {
		t.Errorf("log width %g outside (%g, %g]", width, 2*z80*ind*0.5, 2*z80*full)
	}
}

// TestIntervalDigits: the bounds keep intervalDigits significant digits,
// so that an architecture whose math.Exp differs in the last bit (the
// browser's WebAssembly build against amd64's assembly) prints the same
// interval.
func TestIntervalDigits(t *testing.T) {
	t4 := mustGPU(t, "T4")
	rep := synthReport(t4.Name, kern{"gemm", "MatMul", "compute", 1.234567891234e-3}, kern{"elementwise", "Add", "memory", 0.98765432123e-3})
	lo, hi := Interval(rep, t4, nil)
	for _, b := range []float64{lo, hi} {
		if b == rep.Totals.TimeS {
			continue
		}
		digits := strings.TrimLeft(strings.Replace(strings.Split(strconv.FormatFloat(b, 'e', -1, 64), "e")[0], ".", "", 1), "0")
		if len(digits) > intervalDigits {
			t.Errorf("interval bound %v has %d significant digits, want at most %d", b, len(digits), intervalDigits)
		}
	}
}

// On the GPU it was fitted on, a calibration's held-out residual bands
// replace the family's; elsewhere the family's stand.
func TestCalibratedIntervalIsNarrowerOnTheFittedGPU(t *testing.T) {
	a100, h100 := mustGPU(t, "A100-SXM4-80GB"), mustGPU(t, "H100-SXM5-80GB")
	f := func(kern) float64 { return 1.2 }
	rows := append(mixRows(a100.Name, f, 0.05, 9), mixRows(a100.Name, f, 0.05, 10)...)
	cal, err := Fit(a100, rows, Source{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cal.Bands) < 2 {
		t.Fatalf("bands %+v: want the overall band and per-class ones", cal.Bands)
	}
	rep := synthReport(a100.Name, kern{"gemm", "MatMul", "compute", 1e-3}, kern{"reduction", "Softmax", "memory", 1e-4})
	ulo, uhi := Interval(rep, a100, nil)
	clo, chi := Interval(rep, a100, cal.For(a100))
	if !(chi/clo < uhi/ulo) {
		t.Errorf("calibrated width %g not narrower than uncalibrated %g", chi/clo, uhi/ulo)
	}
	if chi/clo > 1.25 {
		t.Errorf("calibrated width %g on ±5%% noise rows, want under 1.25", chi/clo)
	}
	rep.GPU = h100.Name
	tlo, thi := Interval(rep, h100, cal.For(h100))
	ulo, uhi = Interval(rep, h100, nil)
	if tlo != ulo || thi != uhi {
		t.Errorf("transferred interval [%g, %g] differs from the family's [%g, %g]: the target has no measurements", tlo, thi, ulo, uhi)
	}
}

func TestIntervalOfNothing(t *testing.T) {
	if lo, hi := Interval(nil, nil, nil); lo != 0 || hi != 0 {
		t.Errorf("nil report: [%g, %g]", lo, hi)
	}
	if lo, hi := Interval(&report.Report{CountOnly: true}, nil, nil); lo != 0 || hi != 0 {
		t.Errorf("count-only report: [%g, %g]", lo, hi)
	}
	// Launch gaps and host overhead alone still get the rest band.
	rep := &report.Report{Totals: report.Totals{TimeS: 1e-4}}
	mu, sg := logBand(restBand)
	s := math.Sqrt(sg*sg + modelSpread*modelSpread)
	if lo, hi := Interval(rep, nil, nil); !near(lo, 1e-4*math.Exp(mu-z80*s), 1e-9) || !near(hi, 1e-4*math.Exp(mu+z80*s), 1e-9) {
		t.Errorf("overhead only: [%g, %g]", lo, hi)
	}
}

// The family's own band for every class comes before another family's
// band for the class (builtinBand's order).
func TestBuiltinBandFallsBackInOrder(t *testing.T) {
	useBands(t, []ErrorBand{
		{Family: "Turing", Class: "gemm", Q10: 0.9, Q90: 1.1},
		{Family: "*", Class: "conv", Q10: 0.8, Q90: 1.2},
		{Family: "Turing", Class: "*", Q10: 0.7, Q90: 1.3},
		{Family: "*", Class: "*", Q10: 0.65, Q90: 1.4},
	})
	for _, c := range []struct {
		class, fam string
		q10        float64
	}{{"gemm", "Turing", 0.9}, {"conv", "Turing", 0.7}, {"data", "Turing", 0.7}, {"conv", "Hopper", 0.8}, {"data", "Hopper", 0.65}, {"gemm", "Hopper", 0.65}} {
		if b := builtinBand(c.class, "", c.fam); b.Q10 != c.q10 {
			t.Errorf("%s on %s: band %+v, want q10 %g", c.class, c.fam, b, c.q10)
		}
	}
	// A precision group's band comes first where the family has one, and
	// its parent's before the parent's band for every precision.
	builtinBands = append(builtinBands,
		ErrorBand{Family: "Turing", Class: "conv", Precision: "8bit", Q10: 0.3, Q90: 1.9},
		ErrorBand{Family: "Ampere", Class: "gemm", Precision: "fp32", Q10: 0.85, Q90: 1.2},
		ErrorBand{Family: "Ampere", Class: "gemm", Q10: 0.95, Q90: 1.05})
	for _, c := range []struct {
		class, prec, fam string
		q10              float64
	}{{"conv", "8bit", "Turing", 0.3}, {"conv", "16bit", "Turing", 0.7}, {"conv", "", "Turing", 0.7}, {"gemm", "8bit", "Turing", 0.9},
		{"gemm", "fp32", "Ampere", 0.85}, {"gemm", "16bit", "Ampere", 0.95}} {
		if b := builtinBand(c.class, c.prec, c.fam); b.Q10 != c.q10 {
			t.Errorf("%s %q on %s: band %+v, want q10 %g", c.class, c.prec, c.fam, b, c.q10)
		}
	}
	if b := builtinBand("gemm", "fp32", "Ada Lovelace"); b.Precision != "fp32" || b.Family != "Ada Lovelace" {
		t.Errorf("Ada fp32 gemm: %+v, want Ampere's fp32 band carried to Ada", b)
	}
	builtinBands = nil
	if b := builtinBand("gemm", "", "Turing"); b != defaultBand {
		t.Errorf("no bands: %+v, want the default", b)
	}
}

// A family with no band of its own takes its parent's (familyParent),
// widened in quadrature by the spread between consecutive generations'
// centres, before any family's band for the class.
func TestLineageBand(t *testing.T) {
	useBands(t, []ErrorBand{
		{Family: "Pascal", Class: "*", Q10: 0.8, Q50: 0.9, Q90: 1.2},
		{Family: "Ampere", Class: "*", Q10: 0.9, Q50: 1.0, Q90: 1.1},
		{Family: "Hopper", Class: "*", Q10: 0.95, Q50: 1.2, Q90: 1.3},
		{Family: "*", Class: "conv", Q10: 0.5, Q90: 2.5},
	})
	// Pascal→Ampere and Ampere→Hopper: ln(1/0.9) and ln(1.2).
	want := math.Sqrt((math.Pow(math.Log(1/0.9), 2) + math.Pow(math.Log(1.2), 2)) / 2)
	if got := lineageSpread(); !near(got, want, 1e-12) {
		t.Fatalf("lineageSpread = %g, want %g", got, want)
	}
	ada := builtinBand("conv", "", "Ada Lovelace")
	_, sa := logBand(builtinBands[1])
	mu, sg := logBand(ada)
	if !near(mu, 0, 1e-12) || !near(sg, math.Sqrt(sa*sa+want*want), 1e-12) || ada.Family != "Ada Lovelace" {
		t.Errorf("Ada conv: %+v (centre %g, spread %g), want Ampere's centre 0 and spread %g", ada, mu, sg, math.Sqrt(sa*sa+want*want))
	}
	if b := builtinBand("conv", "", "CDNA 3"); b.Q10 != 0.5 {
		t.Errorf("CDNA 3 (no parent) conv: %+v, want any family's conv band", b)
	}
	if b := builtinBand("conv", "", "Hopper"); b.Q10 != 0.95 {
		t.Errorf("Hopper conv: %+v, want its own family's band", b)
	}
	builtinBands = builtinBands[3:]
	if lineageSpread() != 0 || builtinBand("conv", "", "Ada Lovelace").Q10 != 0.5 {
		t.Errorf("no family bands: spread %g, Ada conv %+v", lineageSpread(), builtinBand("conv", "", "Ada Lovelace"))
	}
}

// A family with no band of its own carries its parent's, and the
// lineage spread that carrying adds is one shift of the whole family:
// in a model of many kernels it adds in full, where each kernel's own
// scatter partly averages away. Widened per kernel instead, as before,
// eight equal kernels kept only part of it.
func TestLineageShiftAddsInFull(t *testing.T) {
	useBands(t, []ErrorBand{
		{Family: "Ampere", Class: "*", Q10: 0.9, Q50: 1.0, Q90: 1.1},
		{Family: "Hopper", Class: "*", Q10: 0.8, Q50: 1.25, Q90: 1.5},
	})
	tau := lineageSpread() // ln 1.25
	l4 := mustGPU(t, "L4")
	ks := make([]kern, 8)
	for i := range ks {
		ks[i] = kern{"gemm", "MatMul", "compute", 1e-3}
	}
	rep := synthReport(l4.Name, ks...)
	for i := range rep.Nodes {
		rep.Nodes[i].LaunchS, rep.Nodes[i].TimeS = 0, 1e-3
	}
	rep.Totals.TimeS = 8e-3
	_, sa := logBand(builtinBands[0])
	w := 1.0 / 8
	corr, ind := 8*w*sa, 8*w*w*sa*sa
	want := math.Sqrt(kernelCorrelation*corr*corr + (1-kernelCorrelation)*ind + modelSpread*modelSpread + tau*tau)
	lo, hi := Interval(rep, l4, nil)
	if got := math.Log(hi/lo) / (2 * z80); !near(got, want, 1e-6) {
		t.Errorf("Ada model of 8 Ampere-band kernels: log spread %g, want %g (lineage %g in full)", got, want, tau)
	}
	// One kernel alone sees the same band as before: its own spread and
	// the lineage's in quadrature.
	if b := builtinBand("gemm", "", "Ada Lovelace"); !near(math.Log(b.Q90/b.Q10)/(2*z80), math.Sqrt(sa*sa+tau*tau), 1e-9) {
		t.Errorf("Ada gemm band %+v, want Ampere's spread widened by %g", b, tau)
	}
}

// TestIntervalBasis: the interval line says whose measured kernels an
// interval rests on where they are not the GPU family's own: a family
// with none takes its parent's (Ada Lovelace: Ampere's), one with no
// parent every family's together (AMD's CDNA 3); a family with bands of
// its own keeps the default wording (""). The pipeline sets it on every
// uncalibrated report.
func TestIntervalBasis(t *testing.T) {
	useBands(t, []ErrorBand{
		{Family: "Ampere", Class: "*", Q10: 0.9, Q50: 1.0, Q90: 1.1},
		{Family: "Hopper", Class: "*", Q10: 0.8, Q50: 1.25, Q90: 1.5},
		{Family: "*", Class: "*", Q10: 0.7, Q90: 1.6},
	})
	if b := IntervalBasis(mustGPU(t, "H100")); b != "" {
		t.Errorf("H100: %q, want the default wording", b)
	}
	if b := IntervalBasis(mustGPU(t, "L4")); !strings.Contains(b, "on Ampere GPUs") || !strings.Contains(b, "no Ada Lovelace kernel is measured here") {
		t.Errorf("L4: %q, want Ampere's kernels named and Ada's absence said", b)
	}
	if b := IntervalBasis(mustGPU(t, "MI300X")); !strings.Contains(b, "every measured family together") {
		t.Errorf("MI300X: %q, want every family's bands", b)
	}
	// A user's entry with no arch takes every family's bands too.
	custom := *mustGPU(t, "H100")
	custom.Arch = ""
	if b := IntervalBasis(&custom); !strings.Contains(b, "names no architecture") {
		t.Errorf("no arch: %q, want every family's bands and why", b)
	}
}

// A kernel's band follows its compute path: on a T4, DeepBench's
// held-out int8 convolutions (some falling back to fp32 math, the
// sheet's smallest at a floor of its own) scatter more about the model
// than its fp16 tensor-core ones, so the same convolution's interval is
// wider at int8 than at fp16, each its own band's, and the fp16 one
// narrower than the band of every precision together. (Before cuDNN's
// IMMA tile and filter reorder were priced, cost/perf cudnnIMMAKernels,
// the int8 interval was also the wider of the two: 2.90 against 2.82;
// now 2.30 against 2.31, fp16 1.84.)
func TestIntervalFollowsPrecision(t *testing.T) {
	t4 := mustGPU(t, "T4")
	width := func(prec string) float64 {
		rep := synthReport(t4.Name, kern{"conv", "Conv", "compute", 1e-3})
		rep.Nodes[0].Precision = prec
		lo, hi := Interval(rep, t4, nil)
		return hi / lo
	}
	i8, f16, any := width("int8_tensor"), width("fp16_tensor"), width("")
	if !(i8 > f16 && any > f16) || i8 == any {
		t.Errorf("T4 conv interval widths: int8 %.2f, every precision %.2f, fp16 %.2f; want int8 and every > fp16, int8 its own band", i8, any, f16)
	}
}

// TestIntervalHostWait: the time a call waits on an eager host takes
// hostBand's spread, the rest of the overhead restBand's, so a host-bound
// call's interval is wider than the same overhead spent in launch gaps.
func TestIntervalHostWait(t *testing.T) {
	gaps := &report.Report{Totals: report.Totals{TimeS: 1e-3}, Runtime: &report.Runtime{}}
	host := &report.Report{Totals: report.Totals{TimeS: 1e-3}, Runtime: &report.Runtime{DispatchS: 10e-6, OpCallScale: 1.35, WaitS: 0.75e-3}}
	glo, ghi := Interval(gaps, nil, nil)
	hlo, hhi := Interval(host, nil, nil)
	if !(hhi/hlo > ghi/glo) {
		t.Errorf("host-bound [%g, %g] is no wider than launch gaps [%g, %g]", hlo, hhi, glo, ghi)
	}
	// A runtime with no per-kernel dispatch waits on its per-call work,
	// overhead like the gaps: restBand's spread, not the eager host's.
	call := &report.Report{Totals: report.Totals{TimeS: 1e-3}, Runtime: &report.Runtime{CallS: 0.8e-3, WaitS: 0.75e-3}}
	if clo, chi := Interval(call, nil, nil); clo != glo || chi != ghi {
		t.Errorf("per-call wait [%g, %g], want the gaps' [%g, %g]", clo, chi, glo, ghi)
	}
	// Three quarters host, one quarter gaps: the weighted spreads add as
	// Interval says (ρ = kernelCorrelation).
	mh, sh := logBand(hostBand)
	mr, sr := logBand(restBand)
	mu := 0.75*mh + 0.25*mr
	corr, ind := 0.75*sh+0.25*sr, (0.75*sh)*(0.75*sh)+(0.25*sr)*(0.25*sr)
	s := math.Sqrt(kernelCorrelation*corr*corr + (1-kernelCorrelation)*ind + modelSpread*modelSpread)
	if !near(hlo, 1e-3*math.Exp(mu-z80*s), 1e-8) || !near(hhi, 1e-3*math.Exp(mu+z80*s), 1e-8) {
		t.Errorf("host-bound: [%g, %g], want [%g, %g]", hlo, hhi, 1e-3*math.Exp(mu-z80*s), 1e-3*math.Exp(mu+z80*s))
	}
	// A runtime whose host figures are estimates (no op_call_scale fitted
	// on measured eager calls: onnxruntime's executor, a compiled
	// wrapper, TensorRT's enqueue) waits with estimatedHostBand's wider
	// spread.
	est := &report.Report{Totals: report.Totals{TimeS: 1e-3}, Runtime: &report.Runtime{DispatchS: 5e-6, WaitS: 0.75e-3}}
	if elo, ehi := Interval(est, nil, nil); !(ehi/elo > hhi/hlo) {
		t.Errorf("estimated host [%g, %g] is no wider than the fitted eager host's [%g, %g]", elo, ehi, hlo, hhi)
	}
}

// TestUnscaledBoardTakesUnscaledBands: a Pascal board DeepBench did not
// time has no vector_gemm_scale, so its fp32 products are priced as the
// measured boards' were before their scales; its interval takes their
// errors priced that way, while the P100 PCIe, with its own scale, takes
// its family's.
func TestUnscaledBoardTakesUnscaledBands(t *testing.T) {
	scaled, plain := mustGPU(t, "P100-PCIe-16GB"), mustGPU(t, "P100-SXM2-16GB")
	if scaled.VectorGEMMScale == 0 || plain.VectorGEMMScale != 0 {
		t.Fatalf("vector_gemm_scale: P100 PCIe %g, SXM2 %g; want set, unset", scaled.VectorGEMMScale, plain.VectorGEMMScale)
	}
	if f := bandFamily(scaled); f != "Pascal" {
		t.Errorf("P100 PCIe bands: %q, want Pascal", f)
	}
	if f := bandFamily(plain); f != UnscaledFamily("Pascal") {
		t.Errorf("P100 SXM2 bands: %q, want %q", f, UnscaledFamily("Pascal"))
	}
	if f := bandFamily(&hwdb.GPU{Arch: "Hopper (GH100)"}); f != "Hopper" {
		t.Errorf("a family with no scaled board: %q, want its own", f)
	}
	a, b := builtinBand("gemm", "fp32", bandFamily(scaled)), builtinBand("gemm", "fp32", bandFamily(plain))
	if !(a.Q50 > b.Q50) {
		t.Errorf("fp32 GEMM band centres: scaled %g, unscaled %g; the unscaled boards' products measure faster than priced", a.Q50, b.Q50)
	}
}
