package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/viz"
)

// checkTraceTotals checks a written trace against the reports it draws:
// per process, one X event per launch, back to back, their durations
// adding up to the total time.
func checkTraceTotals(t *testing.T, name string, data []byte, plans ...*report.Report) {
	t.Helper()
	sums, err := viz.SummarizeTrace(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(sums) != len(plans) {
		t.Fatalf("%s: %d processes with kernels, want %d", name, len(sums), len(plans))
	}
	for i, r := range plans {
		s := sums[i]
		launches, lumped := traceWant(r)
		if float64(s.Kernels) != launches || s.Lumped != lumped {
			t.Errorf("%s plan %s: %d kernel events + %d lumped, want %v launches + %d", name, r.Plan, s.Kernels, s.Lumped, launches, lumped)
		}
		// Slice boundaries are on the nanosecond grid (viz.Trace): the
		// total holds to half a nanosecond.
		want := r.Totals.TimeS * 1e6
		if math.Abs(s.BusyUS-want) > 1e-9*want+5e-4 || s.IdleUS > 1e-9*want || math.Abs(s.EndUS-want) > 1e-9*want+5e-4 {
			t.Errorf("%s plan %s: launches %v µs + idle %v µs (end %v), want %v", name, r.Plan, s.BusyUS, s.IdleUS, s.EndUS, want)
		}
	}
}

// traceWant is what viz.Trace's doc comment says the stream holds: the
// kernel launches of the run (under --train the whole step: forward,
// the assumed loss head's two, backward, optimizer) and the events that
// are not one launch (an all-reduce per communicating node, one
// recompute, a kernel-less node's training forward work).
func traceWant(r *report.Report) (launches float64, lumped int) {
	launches = r.Totals.Launches
	for i := range r.Nodes {
		if r.Nodes[i].CommunicationS > 0 {
			lumped++
		}
	}
	tr := r.Totals.Train
	if tr == nil {
		return launches, lumped
	}
	if l, k, ok := trainDispatchWant(r); ok {
		return l, k
	}
	for i := range r.Nodes {
		n := &r.Nodes[i]
		if b := n.Backward; b != nil {
			launches += b.Launches
			if n.TimeS <= 0 && n.Launches <= 0 && b.ForwardExtraS > 0 {
				lumped++
			}
		}
	}
	launches += tr.OptimizerLaunches
	for _, n := range tr.Notes {
		if strings.Contains(n, "softmax cross-entropy loss on output") {
			launches += 2
		}
	}
	if tr.RecomputeTimeS > 0 {
		lumped++
	}
	if tr.GradAccum > 1 {
		lumped++
	}
	if tr.GradAllReduceExposedS > 0 {
		lumped++
	}
	return launches, lumped
}

// TestTraceTrainRuntimeGPUs: --trace under --train (with and without
// checkpointing), --runtime and --gpus still draws one X event per
// launch (plus the documented lumped ones) adding up to time_s, and
// under --train the phase track encloses forward, backward, optimizer.
func TestTraceTrainRuntimeGPUs(t *testing.T) {
	dir := t.TempDir()
	// --train runs under PyTorch eager by default: its host track is the
	// step's own dispatch sequence (viz/trace_train.go).
	for _, c := range []struct {
		model, gpu string
		args       []string
	}{
		{"resnet50.onnx", "A100-SXM4-40GB", []string{"--train", "--batch", "8"}},
		{"resnet50.onnx", "A100-SXM4-40GB", []string{"--train", "--batch", "8", "--checkpoint", "sqrt", "--optimizer", "sgd"}},
		{"resnet50.onnx", "A100-SXM4-40GB", []string{"--train", "--batch", "8", "--checkpoint", "blocks", "--grad-accum", "4", "--data-parallel", "8"}},
		{"resnet50.onnx", "A100-SXM4-40GB", []string{"--runtime", "pytorch"}},
		{"transformer_seq2seq.onnx", "H100-SXM5-80GB", []string{"--runtime", "pytorch"}}, // host-bound
		{"resnet50.onnx", "A100-SXM4-40GB", []string{"--gpus", "2"}},
		{"bert_base.onnx", "A100-SXM4-40GB", []string{"--train", "--gpus", "2"}},
		{"resnet50.onnx", "A100-SXM4-40GB", []string{"--train", "--batch", "8", "--runtime", "graph", "--power-cap", "200"}},
	} {
		tr := filepath.Join(dir, "t.json")
		var r report.Report
		runJSON(t, &r, append([]string{"report", fixture(t, c.model), "--gpu", c.gpu, "--format", "json", "--trace", tr}, c.args...)...)
		data, err := os.ReadFile(tr)
		if err != nil {
			t.Fatal(err)
		}
		name := c.model + " " + strings.Join(c.args, " ")
		checkTraceTotals(t, name, data, &r)
		sums, err := viz.SummarizeTrace(data)
		if err != nil {
			t.Fatal(err)
		}
		if rt := r.Runtime; rt != nil && rt.DispatchS > 0 {
			if r.Totals.Train == nil && !bytes.Contains(data, []byte(`"cat":"host","ph":"B"`)) {
				t.Errorf("%s: no host dispatch slices", name)
			}
			idle := r.Totals.TimeS - rt.DeviceS
			if (idle > 1e-9*r.Totals.TimeS) != (sums[0].Waits > 0) {
				t.Errorf("%s: %d idle events for %v s of device idle", name, sums[0].Waits, idle)
			}
			if rt.HostBound && !bytes.Contains(data, []byte("(host-bound)")) {
				t.Errorf("%s: host-bound report without the closing idle event", name)
			}
		}
		if r.Totals.Train != nil {
			if r.Totals.TimeS != r.Totals.Train.StepTimeS {
				t.Errorf("%s: time_s %v is not step_time_s %v", name, r.Totals.TimeS, r.Totals.Train.StepTimeS)
			}
			for _, want := range []string{`"name":"forward","cat":"phase"`, `"name":"backward","cat":"phase"`, `"name":"optimizer","cat":"phase"`, ` (backward)"`} {
				if !bytes.Contains(data, []byte(want)) {
					t.Errorf("%s: trace lacks %s", name, want)
				}
			}
		}
		if r.Totals.GPUs > 1 && r.Totals.CommunicationTimeS > 0 && !bytes.Contains(data, []byte(`"cat":"communication"`)) {
			t.Errorf("%s: no all-reduce slice", name)
		}
	}
}

func readReport(t *testing.T, path string) *report.Report {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r report.Report
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// TestTraceAndProfileEveryFixture writes --trace and --pprof for every
// fixture and checks them against the JSON report of the same run.
func TestTraceAndProfileEveryFixture(t *testing.T) {
	dir := t.TempDir()
	for _, m := range vizFixtures(t) {
		name := strings.TrimSuffix(filepath.Base(m), ".onnx")
		tr, pp, js := filepath.Join(dir, name+".json"), filepath.Join(dir, name+".pb.gz"), filepath.Join(dir, name+".report.json")
		code, out, errs := runCLI(t, "report", m, "--gpu", "A100-SXM4-80GB", "--format", "json", "--trace", tr, "--pprof", pp)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errs)
		}
		if err := os.WriteFile(js, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		r := readReport(t, js)
		data, err := os.ReadFile(tr)
		if err != nil {
			t.Fatal(err)
		}
		checkTraceTotals(t, name, data, r)
		pdata, err := os.ReadFile(pp)
		if err != nil {
			t.Fatal(err)
		}
		p, err := profile.Parse(bytes.NewReader(pdata))
		if err != nil {
			t.Fatalf("%s: profile.Parse: %v", name, err)
		}
		var sums [3]float64
		for _, s := range p.Sample {
			for i, v := range s.Value {
				sums[i] += float64(v)
			}
		}
		tot := r.Totals
		for i, want := range []float64{tot.TimeS * 1e9, tot.FLOPs, tot.BytesRead + tot.BytesWritten} {
			if math.Abs(sums[i]-want) > 0.5*float64(len(p.Sample))+1e-9*want {
				t.Errorf("%s: pprof %s sums to %v, want %v", name, p.SampleType[i].Type, sums[i], want)
			}
		}
		for _, f := range []string{tr, pp} {
			if st, err := os.Stat(f); err != nil || st.Mode().Perm() != 0o644 {
				t.Errorf("%s: mode %v (%v), want 0644", f, st.Mode().Perm(), err)
			}
		}
	}
}

// TestCompareTrace: compare --trace writes one process per plan, each
// adding up to its own plan's totals.
func TestCompareTrace(t *testing.T) {
	m := fixture(t, "resnet50.onnx")
	dir := t.TempDir()
	tr := filepath.Join(dir, "cmp.json")
	var cmp report.Comparison
	runJSON(t, &cmp, "compare", m, "--gpu", "A100-SXM4-80GB", "--format", "json", "--trace", tr)
	data, err := os.ReadFile(tr)
	if err != nil {
		t.Fatal(err)
	}
	uf := &report.Report{Plan: "unfused", Totals: report.Totals{TimeS: cmp.Unfused.TimeS, Launches: cmp.Unfused.Launches}}
	fu := &report.Report{Plan: "fused", Totals: report.Totals{TimeS: cmp.Fused.TimeS, Launches: cmp.Fused.Launches}}
	checkTraceTotals(t, "compare", data, uf, fu)
	if !bytes.Contains(data, []byte("runtime tensorrt, plan unfused (estimate)")) || !bytes.Contains(data, []byte("runtime tensorrt, plan fused (estimate)")) ||
		!bytes.Contains(data, []byte(`"runtime":"tensorrt"`)) {
		t.Error("process names and otherData do not name the runtime and plans")
	}
}

// TestPprofTopIsCostliestNode runs the real `go tool pprof -top` on a
// written profile: its first row must be the costliest node's leaf frame.
func TestPprofTopIsCostliestNode(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not on PATH")
	}
	m := fixture(t, "bert_base.onnx")
	dir := t.TempDir()
	pp := filepath.Join(dir, "p.pb.gz")
	var r report.Report
	runJSON(t, &r, "report", m, "--gpu", "A100-SXM4-80GB", "--format", "json", "--pprof", pp)
	best := 0.0
	costliest := map[string]bool{} // nodes within rounding of the maximum
	for _, n := range r.Nodes {
		best = math.Max(best, math.Round(n.TimeS*1e9))
	}
	for _, n := range r.Nodes {
		if math.Round(n.TimeS*1e9) == best {
			costliest[n.Name] = true
		}
	}
	cmd := exec.Command(goBin, "tool", "pprof", "-top", "-nodecount=5", pp)
	cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+dir)
	top, err := cmd.CombinedOutput()
	if err != nil {
		t.Skipf("go tool pprof unavailable: %v: %s", err, top)
	}
	// Rows follow the header line "flat  flat%   sum%   cum   cum%".
	lines := strings.Split(string(top), "\n")
	for i, l := range lines {
		if strings.Contains(l, "flat%") && i+1 < len(lines) {
			f := strings.Fields(lines[i+1])
			if len(f) < 6 || !costliest[f[len(f)-1]] {
				t.Fatalf("top row %q is not the costliest node (%v); pprof said:\n%s", lines[i+1], costliest, top)
			}
			return
		}
	}
	t.Fatalf("no table in pprof -top output:\n%s", top)
}
