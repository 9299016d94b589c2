package calib

import (
	"math"
	"math/rand/v2"
	"testing"

	"fmt"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
)

func mustGPU(t testing.TB, name string) *hwdb.GPU {
	t.Helper()
	g, err := hwdb.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// kern is one synthetic kernel node: class, op type, the term that
// bounds it and its body time, plus a launch gap.
type kern struct {
	class, op, bound string
	body             float64
}

const testLaunch = 5e-6

// terms are k's compute, latency and memory seconds, body =
// perf.BodyS(class, C, L, M) as perf.KernelTime prices it: the bounding
// term most of the body, the other overlapped one less. A compute-bound
// kernel's memory is a tenth of its body: a GEMM's terms combine as a
// 4-norm, and at that share the memory term moves its time by 10⁻⁴, so
// the compute factors the test checks are told apart from it (at 0.4 the
// memory factors, collinear with the compute ones, took 1% of them). A compute-bound
// kernel's latency is a fixed 2 µs at most, so its share falls with size
// and the compute and latency factors can be told apart; a memory-bound
// one (the test's are pointwise, reduction and data kernels) has none,
// as in the time model, where only GEMM-like kernels and gathers have a
// fixed latency (in series with the stream, it would be inseparable from
// the memory term on rows of one shape).
func (k kern) terms() (c, l, m float64) {
	if k.bound == "memory" {
		return 0.2 * k.body, 0, k.body
	}
	l = min(0.3*k.body, 2e-6)
	return k.body - l, l, 0.1 * k.body
}

// synthReport is a report of gpu with one node per kernel, each paying
// testLaunch of launch gap, and totals their sum.
func synthReport(gpu string, ks ...kern) *report.Report {
	rep := &report.Report{GPU: gpu}
	for _, k := range ks {
		c, l, m := k.terms()
		n := report.NodeCost{Name: k.op, OpType: k.op, KernelClass: k.class, Bound: k.bound, ComputeS: c, LatencyS: l, MemoryS: m,
			TimeS: k.body + testLaunch, LaunchS: testLaunch, Launches: 1}
		rep.Nodes = append(rep.Nodes, n)
		rep.Totals.TimeS += n.TimeS
	}
	return rep
}

// calibratedTime is rep's time with a applied to each node as
// cost.Analyze applies it (perf.PoweredKernel.Calibrated, less the
// physical floor): each term times its TermFactor, the body
// perf.BodyS(fc·C, fl·L, fm·M) in place of the uncalibrated one.
func calibratedTime(rep *report.Report, a *Applied) float64 {
	t := rep.Totals.TimeS
	for i := range rep.Nodes {
		n := &rep.Nodes[i]
		if n.KernelClass == "" {
			continue
		}
		terms := [3]float64{n.ComputeS, n.LatencyS, n.MemoryS}
		f := func(term string, s float64) float64 {
			return s * a.TermFactor(n.KernelClass, n.Precision, n.OpType, n.KernelShape, term, terms)
		}
		t += perf.BodyS(perf.KernelClass(n.KernelClass), f("compute", n.ComputeS), f("latency", n.LatencyS), f("memory", n.MemoryS)) - perf.BodyS(perf.KernelClass(n.KernelClass), n.ComputeS, n.LatencyS, n.MemoryS)
	}
	return t
}

// measuredAs is what a report measures when each kernel's body is off by
// factor(k), times a noise factor.
func measuredAs(ks []kern, factor func(kern) float64, noise float64) float64 {
	var t float64
	for _, k := range ks {
		t += testLaunch + factor(k)*k.body
	}
	return t * noise
}

// testOps are the synthetic rows' kernels: five classes, two ops in
// three of them.
var testOps = []kern{
	{"gemm", "MatMul", "compute", 0}, {"gemm", "Gemm", "compute", 0}, {"conv", "Conv", "compute", 0},
	{"elementwise", "Add", "memory", 0}, {"elementwise", "Sigmoid", "memory", 0},
	{"reduction", "ReduceMean", "memory", 0}, {"reduction", "Softmax", "memory", 0}, {"data", "Transpose", "memory", 0},
}

// testSizes are the body times of each op's rows: three decades.
var testSizes = []float64{5e-6, 20e-6, 50e-6, 200e-6, 600e-6, 3e-3}

// mixRows are single-kernel rows of testOps over testSizes, measured
// with factor(k) and a deterministic ±noise spread.
func mixRows(gpu string, factor func(kern) float64, noise float64, seed uint64) []Row {
	r := rand.New(rand.NewPCG(seed, 1))
	var rows []Row
	for _, o := range testOps {
		for _, body := range testSizes {
			k := o
			k.body = body
			ns := math.Exp(noise * (2*r.Float64() - 1))
			rows = append(rows, Row{Name: k.op, MeasuredS: measuredAs([]kern{k}, factor, ns), Report: synthReport(gpu, k)})
		}
	}
	return rows
}

// rowErr is the largest |calibrated/measured − 1| over rows under a.
func rowErr(rows []Row, a *Applied) (worst float64, at string) {
	for _, r := range rows {
		if e := math.Abs(calibratedTime(r.Report, a)/r.MeasuredS - 1); e > worst {
			worst, at = e, r.Name
		}
	}
	return worst, at
}

// Every level of the hierarchy is recovered from noiseless rows: class,
// op within class, term within class, and a size effect (small GEMMs'
// compute slower, interpolated over log time as the size rule does).
func TestFitRecoversKnownFactorsOnNoiselessRows(t *testing.T) {
	gpu := mustGPU(t, "A100-SXM4-80GB")
	truth := func(k kern, term string, s float64) float64 {
		f := map[string]float64{"gemm": 1.3, "conv": 0.9, "elementwise": 0.8, "reduction": 1.1, "data": 1.0}[k.class]
		f *= map[string]float64{"Sigmoid": 1.25, "Softmax": 0.85, "Gemm": 1.1}[k.op] + map[bool]float64{true: 1}[k.op != "Sigmoid" && k.op != "Softmax" && k.op != "Gemm"]
		if k.class == "conv" && term == "latency" {
			f *= 1.4
		}
		if k.class == "gemm" && term == "compute" {
			v, _ := monotoneSizeLog([nSize]float64{math.Log(1.5), 0, 0, 0}, s)
			f *= math.Exp(v)
		}
		return f
	}
	rows := mixRows(gpu.Name, func(kern) float64 { return 1 }, 0, 1)
	for i := range rows {
		n := rows[i].Report.Nodes[0]
		k := kern{n.KernelClass, n.OpType, n.Bound, 0}
		rows[i].MeasuredS = testLaunch + perf.BodyS(perf.KernelClass(n.KernelClass), n.ComputeS*truth(k, "compute", n.ComputeS), n.LatencyS*truth(k, "latency", n.LatencyS), n.MemoryS*truth(k, "memory", n.MemoryS))
	}
	cal, err := fit(gpu, rows, Source{}, penalties{})
	if err != nil {
		t.Fatal(err)
	}
	// The file keeps 4 significant digits of each of up to six factors:
	// recovery is exact to that.
	if worst, at := rowErr(rows, cal.For(gpu)); worst > 2e-3 {
		t.Errorf("noiseless rows: calibrated time off by %.2g%% at %s", 100*worst, at)
	}
	if cal.MedianErrAfter > 2e-3 {
		t.Errorf("noiseless rows: held-out median error %g after calibration", cal.MedianErrAfter)
	}
	if cal.MedianErrBefore < 0.05 {
		t.Errorf("median error before %g: the test rows are not off", cal.MedianErrBefore)
	}
	// The dominant terms' factors are the truth's.
	for _, r := range rows {
		n := r.Report.Nodes[0]
		k := kern{n.KernelClass, n.OpType, n.Bound, 0}
		term, s := "memory", n.MemoryS
		if n.Bound == "compute" {
			term, s = "compute", n.ComputeS
		}
		if got, want := cal.For(gpu).TermFactor(k.class, "", k.op, "", term, [3]float64{n.ComputeS, n.LatencyS, n.MemoryS}), truth(k, term, s); math.Abs(got/want-1) > 3e-3 {
			t.Errorf("%s %s %.3g s: factor %g, want %g", k.op, term, s, got, want)
		}
	}
}

func TestFitShrinksSparseCellsTowardTheirParent(t *testing.T) {
	gpu := mustGPU(t, "A100-SXM4-80GB")
	rows := mixRows(gpu.Name, func(kern) float64 { return 1 }, 0, 1)
	// One lone attention row 2x slow: with no penalty it would get 2;
	// with the default it borrows from the GPU-wide level (1).
	att := kern{"attention", "Attention", "compute", 300e-6}
	rows = append(rows, Row{Name: "attn", MeasuredS: measuredAs([]kern{att}, func(kern) float64 { return 2 }, 1), Report: synthReport(gpu.Name, att)})
	// One lone LayerNormalization row 2x slow in a class whose other
	// rows are exact: its op cell borrows from the class (1).
	ln := kern{"reduction", "LayerNormalization", "memory", 300e-6}
	rows = append(rows, Row{Name: "ln", MeasuredS: measuredAs([]kern{ln}, func(kern) float64 { return 2 }, 1), Report: synthReport(gpu.Name, ln)})
	ratio := func(a *Applied, k kern) float64 {
		rep := synthReport(gpu.Name, k)
		return (calibratedTime(rep, a) - testLaunch) / k.body
	}
	cal, err := Fit(gpu, rows, Source{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []kern{att, ln} {
		if f := ratio(cal.For(gpu), k); !(f > 1.1 && f < 1.9) {
			t.Errorf("lone %s row 2x off: factor %g, want shrunk strictly between 1 and 2", k.op, f)
		}
	}
	for _, k := range []kern{{"gemm", "MatMul", "compute", 300e-6}, {"reduction", "Softmax", "memory", 300e-6}} {
		if f := ratio(cal.For(gpu), k); math.Abs(f-1) > 0.02 {
			t.Errorf("%s rows exact: factor %g, want 1", k.op, f)
		}
	}
	raw, err := fit(gpu, rows, Source{}, penalties{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []kern{att, ln} {
		// 3e-3: each cell is written to 4 digits, and a term's factor is
		// the product of up to eight (with the ridge cells).
		if f := ratio(raw.For(gpu), k); math.Abs(f-2) > 3e-3 {
			t.Errorf("no penalty: lone %s row's factor %g, want 2", k.op, f)
		}
	}
}

// The GPU-wide offset is what the source's peaks were off by: a uniform
// 1.5x teaches nothing about kernels, so it applies in full on the GPU
// fitted and not at all on another.
func TestUniformOffsetDoesNotTransfer(t *testing.T) {
	a100, h100 := mustGPU(t, "A100-SXM4-80GB"), mustGPU(t, "H100-SXM5-80GB")
	cal, err := Fit(a100, mixRows(a100.Name, func(kern) float64 { return 1.5 }, 0, 1), Source{})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(cal.GPUFactor-1.5) > 2e-3 {
		t.Errorf("GPU factor %g, want 1.5", cal.GPUFactor)
	}
	for _, o := range append(testOps, kern{"attention", "Attention", "compute", 0}) {
		for _, term := range termNames {
			if f := cal.For(a100).TermFactor(o.class, "", o.op, "", term, only(term, 50e-6)); o.class != "attention" && math.Abs(f-1.5) > 0.01 {
				t.Errorf("%s %s on the fitted GPU: factor %g, want 1.5", o.op, term, f)
			}
			if f := cal.For(h100).TermFactor(o.class, "", o.op, "", term, only(term, 50e-6)); math.Abs(f-1) > 0.01 {
				t.Errorf("%s %s transferred: factor %g, want 1 (the source's offset is not the target's)", o.op, term, f)
			}
		}
	}
}

// Scaling the source's rows of one class (all GEMMs) or one op (all
// Softmaxes) must move the target's estimates of those kernels, and
// more than its others': the GPU factor is what all classes share, so a
// class's own offset stays in its cells, which transfer.
func TestTransferMovesTheScaledKernelsMost(t *testing.T) {
	a100, h100 := mustGPU(t, "A100-SXM4-80GB"), mustGPU(t, "H100-SXM5-80GB")
	base := func(kern) float64 { return 1.1 }
	c1, err := Fit(a100, mixRows(a100.Name, base, 0.05, 7), Source{})
	if err != nil {
		t.Fatal(err)
	}
	for _, scaled := range []func(kern) bool{
		func(k kern) bool { return k.class == "gemm" },
		func(k kern) bool { return k.op == "Softmax" },
	} {
		c2, err := Fit(a100, mixRows(a100.Name, func(k kern) float64 { return base(k) * map[bool]float64{true: 2, false: 1}[scaled(k)] }, 0.05, 7), Source{})
		if err != nil {
			t.Fatal(err)
		}
		move := func(gpu *hwdb.GPU, k kern) float64 {
			k.body = 100e-6
			rep := synthReport(gpu.Name, k)
			return math.Log((calibratedTime(rep, c2.For(gpu)) - testLaunch) / (calibratedTime(rep, c1.For(gpu)) - testLaunch))
		}
		var in, out float64 // the largest |move| of the scaled kernels' and of the others'
		in = math.Inf(1)
		for _, k := range testOps {
			if m := math.Abs(move(h100, k)); scaled(k) {
				in = min(in, m)
			} else {
				out = max(out, m)
			}
			if s := move(a100, k); scaled(k) && math.Abs(s-math.Log(2)) > 0.1 {
				t.Errorf("%s on the GPU fitted moved by log %g, want about log 2", k.op, s)
			}
		}
		// At most the transfer weight of 2x; at least half of it (the
		// class's share of the GPU factor and the size cells' keep the rest).
		if want := DefaultTransfer.OtherFamily * math.Log(2); in < 0.5*want || in > want*1.01 {
			t.Errorf("H100's scaled kernels moved by log %g, want between %g and %g", in, 0.5*want, want)
		}
		if out >= in/2 {
			t.Errorf("H100's other kernels moved by up to log %g, the scaled ones by %g: want the scaled ones to move most", out, in)
		}
	}
}

func TestFitRejectsBadRows(t *testing.T) {
	gpu := mustGPU(t, "A100-SXM4-80GB")
	ok := synthReport(gpu.Name, kern{"gemm", "MatMul", "compute", 1e-4})
	for name, rows := range map[string][]Row{
		"none":        nil,
		"no report":   {{Name: "m", MeasuredS: 1e-3}},
		"zero ms":     {{Name: "m", MeasuredS: 0, Report: ok}},
		"NaN ms":      {{Name: "m", MeasuredS: math.NaN(), Report: ok}},
		"other GPU":   {{Name: "m", MeasuredS: 1e-3, Report: synthReport("T4", kern{"gemm", "MatMul", "compute", 1e-4})}},
		"no kernels":  {{Name: "m", MeasuredS: 1e-3, Report: &report.Report{GPU: gpu.Name, Totals: report.Totals{TimeS: 1e-5}}}},
		"no estimate": {{Name: "m", MeasuredS: 1e-3, Report: &report.Report{GPU: gpu.Name}}},
	} {
		if _, err := Fit(gpu, rows, Source{}); err == nil {
			t.Errorf("%s: Fit accepted it", name)
		}
	}
	if _, err := Fit(nil, []Row{{MeasuredS: 1, Report: ok}}, Source{}); err == nil {
		t.Error("nil GPU accepted")
	}
}

// A host-bound row cannot teach the kernels anything: its prediction is
// the host's time whatever the factors.
func TestHostBoundRowDoesNotMoveFactors(t *testing.T) {
	gpu := mustGPU(t, "A100-SXM4-80GB")
	rows := mixRows(gpu.Name, func(kern) float64 { return 1 }, 0, 1)
	att := kern{"attention", "Attention", "compute", 10e-6}
	rep := synthReport(gpu.Name, att)
	rep.Runtime = &report.Runtime{DispatchS: 5e-6, HostS: 100e-6}
	rep.Totals.TimeS = 100e-6
	rows = append(rows, Row{Name: "host", MeasuredS: 100e-6, Report: rep})
	cal, err := Fit(gpu, rows, Source{})
	if err != nil {
		t.Fatal(err)
	}
	for _, term := range termNames {
		if f := cal.For(gpu).TermFactor(att.class, "", att.op, "", term, only(term, 10e-6)); math.Abs(f-1) > 0.01 {
			t.Errorf("attention %s factor %g from a host-bound row, want 1", term, f)
		}
	}
}

func TestNilCalibrationIsIdentity(t *testing.T) {
	var a *Applied
	if f := a.TermFactor("gemm", "", "MatMul", "", "compute", only("compute", 1e-3)); f != 1 {
		t.Errorf("nil Applied: factor %g", f)
	}
	var c *Calibration
	if c.For(mustGPU(t, "T4")) != nil {
		t.Error("nil calibration bound to a GPU")
	}
	if a.Describe() != "no calibration" {
		t.Errorf("nil Describe: %q", a.Describe())
	}
}

func TestFitIsDeterministicAndDescribed(t *testing.T) {
	a100, h100 := mustGPU(t, "A100-SXM4-80GB"), mustGPU(t, "H100-SXM5-80GB")
	src := Source{Measurements: "bench.csv", Date: "2025-06-01"}
	c1, _ := Fit(a100, mixRows(a100.Name, func(kern) float64 { return 1.2 }, 0.1, 3), src)
	c2, _ := Fit(a100, mixRows(a100.Name, func(kern) float64 { return 1.2 }, 0.1, 3), src)
	if a, b := writeString(t, c1), writeString(t, c2); a != b {
		t.Errorf("same rows, different files:\n%s\n%s", a, b)
	}
	full := c1.For(a100).Describe()
	tr := c1.For(h100).Describe()
	for _, want := range []string{"A100-SXM4-80GB", fmt.Sprintf("%d rows", len(testOps)*len(testSizes)), "bench.csv", "2025-06-01", "in full"} {
		if !contains(full, want) {
			t.Errorf("Describe %q lacks %q", full, want)
		}
	}
	for _, want := range []string{"transferred to H100-SXM5-80GB", fmt.Sprintf("weight %.2g", DefaultTransfer.OtherFamily), "dropped"} {
		if !contains(tr, want) {
			t.Errorf("Describe %q lacks %q", tr, want)
		}
	}
}

func TestPrintExample(t *testing.T) {
	if testing.Short() {
		t.Skip()
	}
	gpu := mustGPU(t, "A100-SXM4-80GB")
	rows := mixRows(gpu.Name, func(k kern) float64 {
		return map[string]float64{"gemm": 1.3, "conv": 1.1, "Sigmoid": 0.3}[k.class+k.op] + 0.9
	}, 0.08, 2)
	cal, _ := Fit(gpu, rows, Source{Measurements: "a100_kernels.csv", Date: "2025-06-01", Runtime: "torch"})
	t.Log("\n" + writeString(t, cal))
}

// Kernels a row repeats (a transformer's layers) are fitted once, times
// their count: the fit is the one it would be with each kept apart (here
// kept apart by a change in their last bits), cell for cell.
func TestRepeatedKernelsFitAsOne(t *testing.T) {
	gpu := mustGPU(t, "A100-SXM4-80GB")
	factor := func(k kern) float64 { return map[string]float64{"gemm": 1.3, "elementwise": 0.8}[k.class] }
	build := func(apart bool) []Row {
		var rows []Row
		for i, body := range testSizes {
			var ks []kern
			for j := range 3 {
				k := kern{"gemm", "MatMul", "compute", body}
				if apart {
					k.body *= 1 + float64(j)*1e-13
				}
				ks = append(ks, k)
			}
			ks = append(ks, kern{"elementwise", "Add", "memory", body / 4})
			rows = append(rows, Row{Name: fmt.Sprint("r", i), MeasuredS: measuredAs(ks, factor, 1), Report: synthReport(gpu.Name, ks...)})
		}
		return rows
	}
	merged, err := prepareRows(gpu, build(false))
	if err != nil {
		t.Fatal(err)
	}
	if k := merged[0].kernels; len(k) != 2 || k[0].n != 3 || k[1].n != 1 {
		t.Fatalf("kernels %+v, want the three GEMMs as one of n=3 and the Add", k)
	}
	one, err := Fit(gpu, build(false), Source{})
	if err != nil {
		t.Fatal(err)
	}
	apart, err := Fit(gpu, build(true), Source{})
	if err != nil {
		t.Fatal(err)
	}
	if len(one.Cells) != len(apart.Cells) || math.Abs(one.GPUFactor-apart.GPUFactor) > 1e-4 || math.Abs(one.MedianErrAfter-apart.MedianErrAfter) > 1e-6 {
		t.Fatalf("fitted once: %d cells, G %g, after %g; kept apart: %d cells, G %g, after %g",
			len(one.Cells), one.GPUFactor, one.MedianErrAfter, len(apart.Cells), apart.GPUFactor, apart.MedianErrAfter)
	}
	for i := range one.Cells {
		if a, b := one.Cells[i], apart.Cells[i]; a.key() != b.key() || math.Abs(a.Factor-b.Factor) > 1e-4 {
			t.Errorf("cell %s %g, kept apart %s %g", a.key(), a.Factor, b.key(), b.Factor)
		}
	}
}
