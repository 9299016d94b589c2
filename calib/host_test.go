package calib

import (
	"math"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
)

// hostRow is a call the host bounds: a small kernel issued by a host that
// takes host seconds (the runtime's figures), measured at meas.
func hostRow(gpu, name, rt string, host, meas float64) Row {
	rep := synthReport(gpu, kern{"elementwise", "Add", "memory", 10e-6})
	rep.Runtime = &report.Runtime{Name: rt, DispatchS: 8e-6, HostS: host, DeviceS: 12e-6}
	rep.Totals.TimeS = host + 5e-6
	return Row{Name: name, MeasuredS: meas, Report: rep}
}

// A machine whose host issues eager work 0.8× as long as the runtime
// profile says: the calibration learns a host factor near 0.8 for that
// runtime from the host-bound rows (shrunk toward 1 by hostPull), leaves
// the kernel cells alone, and applies it on the GPU fitted, to the
// profile's host figures, and nowhere else.
func TestHostFactorLearnsTheMachinesHost(t *testing.T) {
	gpu := mustGPU(t, "H100-SXM5-80GB")
	rows := mixRows(gpu.Name, func(kern) float64 { return 1 }, 0, 1)
	for i, host := range []float64{1e-3, 2e-3, 3e-3, 4e-3, 5e-3, 6e-3, 7e-3, 8e-3} {
		rows = append(rows, hostRow(gpu.Name, "h"+string(rune('a'+i)), "pytorch", host, 0.8*(host+5e-6)))
	}
	cal, err := Fit(gpu, rows, Source{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cal.Hosts) != 1 || cal.Hosts[0].Runtime != "pytorch" || cal.Hosts[0].N != 8 {
		t.Fatalf("hosts %+v, want one pytorch factor from 8 rows", cal.Hosts)
	}
	want := math.Exp(math.Log(0.8) * 8 / (8 + hostPull))
	if f := cal.Hosts[0].Factor; math.Abs(f-want) > 1e-3 {
		t.Errorf("host factor %g, want %g (0.8 shrunk by %d rows of pull)", f, want, hostPull)
	}
	for _, term := range termNames {
		if f := cal.For(gpu).TermFactor("elementwise", "", "Add", "", term, only(term, 10e-6)); math.Abs(f-1) > 0.01 {
			t.Errorf("elementwise %s factor %g from host-bound rows, want 1", term, f)
		}
	}
	rt := &hwdb.Runtime{Name: "pytorch-nhwc", DispatchS: 8e-6, ModuleS: 20e-6, CallS: 6e-6, AutogradS: 38e-6, OptimParamS: 3e-6, CudnnS: 24e-6}
	s := cal.For(gpu).ScaleHost(rt, false)
	f := cal.Hosts[0].Factor
	for name, v := range map[string][2]float64{"dispatch": {s.DispatchS, rt.DispatchS}, "module": {s.ModuleS, rt.ModuleS},
		"call": {s.CallS, rt.CallS}, "autograd": {s.AutogradS, rt.AutogradS}, "optim": {s.OptimParamS, rt.OptimParamS}, "cudnn": {s.CudnnS, rt.CudnnS}} {
		if math.Abs(v[0]-f*v[1]) > 1e-15 {
			t.Errorf("%s: %g, want %g × %g (pytorch's factor on its layout variant)", name, v[0], f, v[1])
		}
	}
	if rt.DispatchS != 8e-6 {
		t.Error("ScaleHost changed the runtime it was given")
	}
	if got := cal.For(mustGPU(t, "H200-SXM-141GB")).ScaleHost(rt, false); got != rt {
		t.Error("a host factor applied on another GPU (another machine)")
	}
	if got := cal.For(gpu).ScaleHost(&hwdb.Runtime{Name: "onnxruntime", DispatchS: 5e-6}, false); got.DispatchS != 5e-6 {
		t.Error("a host factor applied to a runtime it was not fitted for")
	}
	if d := cal.For(gpu).Describe(); !strings.Contains(d, "host ×") {
		t.Errorf("header %q does not say the host factor is applied", d)
	}
	out := writeString(t, cal)
	back, err := Parse("h.yaml", []byte(out))
	if err != nil || writeString(t, back) != out || len(back.Hosts) != 1 {
		t.Errorf("hosts do not round-trip (%v):\n%s", err, out)
	}
}

// trainingRow is hostRow as a training step.
func trainingRow(gpu, name, rt string, host, meas float64) Row {
	r := hostRow(gpu, name, rt, host, meas)
	r.Report.Totals.Train = &report.Train{}
	return r
}

// A machine whose host issues eager inference at 0.8× the profile's host
// figures and training steps at 0.6×: each kind of call fits its own
// factor, the training one pulled toward the inference one; a training
// estimate takes the training factor, an inference call the inference
// one, and a training step with no training factor fitted the
// inference factor. Both kinds round-trip through the file.
func TestTrainingHostFactorApart(t *testing.T) {
	gpu := mustGPU(t, "H100-SXM5-80GB")
	rows := mixRows(gpu.Name, func(kern) float64 { return 1 }, 0, 1)
	for i, host := range []float64{1e-3, 2e-3, 3e-3, 4e-3, 5e-3, 6e-3, 7e-3, 8e-3} {
		rows = append(rows, hostRow(gpu.Name, "h"+string(rune('a'+i)), "pytorch", host, 0.8*(host+5e-6)))
	}
	for i, host := range []float64{10e-3, 20e-3, 30e-3, 40e-3} {
		rows = append(rows, trainingRow(gpu.Name, "t"+string(rune('a'+i)), "pytorch-nhwc", host, 0.6*(host+5e-6)))
	}
	cal, err := Fit(gpu, rows, Source{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cal.Hosts) != 2 || cal.Hosts[0].Training || cal.Hosts[0].N != 8 || !cal.Hosts[1].Training || cal.Hosts[1].N != 4 {
		t.Fatalf("hosts %+v, want an inference factor from 8 rows and a training one from 4", cal.Hosts)
	}
	inf := math.Exp(math.Log(0.8) * 8 / (8 + hostPull))
	tr := math.Exp(math.Log(inf) + (math.Log(0.6)-math.Log(inf))*4/(4+hostPull))
	a := cal.For(gpu)
	for _, c := range []struct {
		rt       string
		training bool
		want     float64
	}{{"pytorch", false, inf}, {"pytorch-nhwc", false, inf}, {"pytorch-nhwc", true, tr}, {"pytorch", true, tr}} {
		if f := a.HostFactor(c.rt, c.training); math.Abs(f-c.want) > 1e-3 {
			t.Errorf("%s training=%v: factor %g, want %g", c.rt, c.training, f, c.want)
		}
	}
	// A fitted host factor says the host is measured (the interval's host
	// band then narrows): a runtime with one, its layout variant, a
	// training step through the inference factor; not another runtime,
	// nor another GPU's machine.
	for _, c := range []struct {
		rt       string
		training bool
		want     bool
	}{{"pytorch", false, true}, {"pytorch-nhwc", true, true}, {"pytorch", true, true}, {"pytorch-compile", false, false}, {"", false, false}} {
		if got := a.MeasuredHost(c.rt, c.training); got != c.want {
			t.Errorf("MeasuredHost(%q, %v) = %v, want %v", c.rt, c.training, got, c.want)
		}
	}
	if cal.For(mustGPU(t, "A100-SXM4-80GB")).MeasuredHost("pytorch", false) {
		t.Error("another GPU's machine: host taken as measured")
	}
	onlyInference := &Calibration{Hosts: cal.Hosts[:1], Source: cal.Source}
	if f := hostFactorFor(onlyInference.Hosts, "pytorch-nhwc", true); math.Abs(f-inf) > 1e-3 {
		t.Errorf("a training step without a training factor: %g, want the inference factor %g", f, inf)
	}
	rt := &hwdb.Runtime{Name: "pytorch-nhwc", DispatchS: 8e-6, AutogradS: 38e-6}
	if s := a.ScaleHost(rt, true); math.Abs(s.AutogradS/(tr*38e-6)-1) > 1e-3 || math.Abs(s.DispatchS/(tr*8e-6)-1) > 1e-3 {
		t.Errorf("training ScaleHost: autograd %g dispatch %g, want × %g", s.AutogradS, s.DispatchS, tr)
	}
	if d := a.Describe(); !strings.Contains(d, "(training)") {
		t.Errorf("header %q does not name the training factor", d)
	}
	out := writeString(t, cal)
	back, err := Parse("h.yaml", []byte(out))
	if err != nil || writeString(t, back) != out || len(back.Hosts) != 2 || !back.Hosts[1].Training || !strings.Contains(out, "training: true") {
		t.Errorf("training hosts do not round-trip (%v):\n%s", err, out)
	}
}

// A hosts section that names no runtime, repeats one or is out of range
// is an error of one line naming the file.
func TestParseRejectsBadHosts(t *testing.T) {
	head := "format: 1\nsource: {gpu: \"H100-SXM5-80GB\", family: \"Hopper\", measurements: \"t\", rows: 1, date: \"\", driver: \"\", runtime: \"\"}\n" +
		"fit: {gpu_factor: 1, median_abs_err_before: 0, median_abs_err_after: 0}\ntransfer: {same_family: 0.15, other_family: 0.15}\ncells: []\nbands: []\n"
	for body, want := range map[string]string{
		"hosts:\n  - {runtime: \"\", n: 3, factor: 0.9}\n":                                                                                     "not a runtime",
		"hosts:\n  - {runtime: \"a\\x01\", n: 3, factor: 0.9}\n":                                                                               "not a runtime",
		"hosts:\n  - {runtime: \"pytorch\", n: 3, factor: 90}\n":                                                                               "outside",
		"hosts:\n  - {runtime: \"pytorch\", n: 3, factor: 0.9}\n  - {runtime: \"pytorch\", n: 2, factor: 1}\n":                                 "twice",
		"hosts:\n  - {runtime: \"pytorch\", training: true, n: 3, factor: 0.9}\n  - {runtime: \"pytorch\", training: true, n: 2, factor: 1}\n": "twice (training)",
	} {
		_, err := Parse("h.yaml", []byte(head+body))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "calibration h.yaml:") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want one line naming h.yaml and %q", body, err, want)
		}
	}
	both := "hosts:\n  - {runtime: \"pytorch\", n: 3, factor: 0.9}\n  - {runtime: \"pytorch\", training: true, n: 3, factor: 0.7}\n"
	if c, err := Parse("h.yaml", []byte(head+both)); err != nil || len(c.Hosts) != 2 {
		t.Errorf("an inference and a training factor of one runtime: %v", err)
	}
	if c, err := Parse("h.yaml", []byte(head)); err != nil || len(c.Hosts) != 0 {
		t.Errorf("a file without hosts: %v, %+v", err, c)
	}
}

// A graph replay issues no per-kernel host work, but its one launch and
// synchronize (call_us) still floor a call: a kernel measured inside a
// CUDA graph of many calls, or from a profiler's durations, takes 1-3 µs
// where the profile's 10 µs call would price it at 10. Rows faster than
// that floor teach the call's factor like any host-bound row; before,
// the floor sat in the fixed rest and no calibration could price such a
// kernel under it (our H100's 65,536-element fp16 Add, measured 1.6 µs,
// stayed at 10 µs calibrated: internal/kernelrows TestCalibrationEndToEnd).
func TestCallFloorLearnedFromFastRows(t *testing.T) {
	gpu := mustGPU(t, "H100-SXM5-80GB")
	rows := mixRows(gpu.Name, func(kern) float64 { return 1 }, 0, 1)
	const call = 10e-6
	for i, dev := range []float64{1e-6, 1.5e-6, 2e-6, 2.5e-6, 3e-6, 3.5e-6, 4e-6, 4.5e-6} {
		rep := synthReport(gpu.Name, kern{"elementwise", "Add", "memory", dev - testLaunch/2})
		rep.Runtime = &report.Runtime{Name: "graph", CallS: call, HostS: call, DeviceS: rep.Totals.TimeS}
		rep.Totals.TimeS = max(call, rep.Totals.TimeS)
		rows = append(rows, Row{Name: "g" + string(rune('a'+i)), MeasuredS: 1.1 * dev, Report: rep})
	}
	cal, err := Fit(gpu, rows, Source{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cal.Hosts) != 1 || cal.Hosts[0].Runtime != "graph" || cal.Hosts[0].N < 3 {
		t.Fatalf("hosts %+v, want a graph factor from the rows under the call floor", cal.Hosts)
	}
	if f := cal.Hosts[0].Factor; !(f < 0.6) {
		t.Errorf("graph call factor %g, want well under 1: every row ran in under half the call floor", f)
	}
	rt := &hwdb.Runtime{Name: "graph", CallS: call}
	if s := cal.For(gpu).ScaleHost(rt, false); !(s.CallS < 0.6*call) {
		t.Errorf("calibrated call %g s, want under %g", s.CallS, 0.6*call)
	}
}

// Kernels timed inside a CUDA graph of repeats measure near their device
// time, below the runtime's per-call floor (10 µs here): the host factor
// takes the floor down until the rows are the device's, not to the
// median of measured over floor, which left the smallest rows priced at
// the floor's remainder (up to 1.6× here). Rows the host really bounds
// still give their ratio (the median rule's answer), and a factor the
// rows cannot tell apart is the prior.
func TestHostLogFactorStopsAtTheDevice(t *testing.T) {
	var graph []boundRow
	var ratios []float64
	for _, dev := range []float64{1.5e-6, 2e-6, 2.5e-6, 3e-6, 3.5e-6, 4e-6, 5e-6, 6e-6} {
		graph = append(graph, boundRow{meas: 1.05 * dev, host: 10e-6, dev: dev})
		ratios = append(ratios, math.Log(1.05*dev/10e-6))
	}
	lf := hostLogFactor(graph, 0)
	// Below f·host = 1.575 µs every row is its device's, 5% under; at
	// it the smallest row is met exactly.
	if want := math.Log(1.575e-6 / 10e-6); math.Abs(lf-want) > 2*hostLogFactorStep {
		t.Errorf("graph rows: log factor %.4f, want %.4f (the floor at the smallest row)", lf, want)
	}
	miss := func(lf float64) (worst float64) {
		for _, r := range graph {
			worst = max(worst, math.Abs(math.Log(r.meas/max(math.Exp(lf)*r.host, r.dev))))
		}
		return worst
	}
	if old := quantile(ratios, 0.5); miss(lf) > 0.06 || miss(old) < 0.5 {
		t.Errorf("worst row missed by %.3f in log (want ≤ 0.06), by %.3f under the median rule (want ≥ 0.5)", miss(lf), miss(old))
	}
	var eager []boundRow
	for _, host := range []float64{1e-3, 2e-3, 4e-3, 8e-3} {
		eager = append(eager, boundRow{meas: 0.8 * host, host: host, dev: 0.1 * host})
	}
	if lf := hostLogFactor(eager, 0); math.Abs(lf-math.Log(0.8)) > hostLogFactorStep {
		t.Errorf("host-bound rows: log factor %.4f, want log 0.8", lf)
	}
	flat := []boundRow{{meas: 1e-6, host: 10e-6, dev: 1e-6}, {meas: 1e-6, host: 10e-6, dev: 1e-6}}
	if lf := hostLogFactor(flat, -0.05); math.Abs(lf-math.Log(0.1)) > hostLogFactorStep {
		t.Errorf("rows met by any factor up to 0.1: log factor %.4f, want log 0.1, the one nearest the prior", lf)
	}
}
