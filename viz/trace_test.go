package viz

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/onnxcost/onnxcost/cost/report"
)

// parsedTrace is a trace file read back generically, as a viewer would.
type parsedTrace struct {
	TraceEvents []struct {
		Name string          `json:"name"`
		Cat  string          `json:"cat"`
		Ph   string          `json:"ph"`
		Ts   *float64        `json:"ts"`
		Dur  *float64        `json:"dur"`
		Pid  *int            `json:"pid"`
		Tid  *int            `json:"tid"`
		Args json.RawMessage `json:"args"`
	} `json:"traceEvents"`
	DisplayTimeUnit string `json:"displayTimeUnit"`
}

// traceOne traces the single plan r without ceilings and returns the trace
// with its summary, failing the test if either step fails.
func traceOne(t *testing.T, r *report.Report) ([]byte, TraceSummary) {
	t.Helper()
	data, err := Trace([]*report.Report{r}, Ceilings{})
	if err != nil {
		t.Fatal(err)
	}
	sums, err := SummarizeTrace(data)
	if err != nil {
		t.Fatal(err)
	}
	return data, sums[0]
}

// checkTrace checks a trace with SummarizeTrace and then, per plan, that
// the kernel track has one event per launch, back to back, whose
// durations add up to the plan's total time, that the launch gaps drawn
// add up to its launch time, and that every kernel event has full args.
func checkTrace(t *testing.T, data []byte, plans []*report.Report) {
	t.Helper()
	sums, err := SummarizeTrace(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) != len(plans) {
		t.Fatalf("%d processes with kernels, want %d", len(sums), len(plans))
	}
	for i, r := range plans {
		s := sums[i]
		if s.Pid != i+1 || float64(s.Kernels) != r.Totals.Launches {
			t.Errorf("plan %d: pid %d with %d kernel events, want pid %d with %v launches", i+1, s.Pid, s.Kernels, i+1, r.Totals.Launches)
		}
		// Boundaries are on the nanosecond grid: the total holds to half
		// a nanosecond, each launch gap to one.
		want := r.Totals.TimeS * 1e6
		if d := math.Abs(s.BusyUS - want); d > 1e-9*want+5e-4 || s.IdleUS > 1e-9*want {
			t.Errorf("plan %d: launch slices %v µs + idle %v µs, want durations alone to make the total %v µs", i+1, s.BusyUS, s.IdleUS, want)
		}
		if d := math.Abs(s.EndUS - want); d > 1e-9*want+5e-4 {
			t.Errorf("plan %d: last kernel ends at %v µs, want %v", i+1, s.EndUS, want)
		}
		var launchS float64
		for _, n := range r.Nodes {
			launchS += n.LaunchS
		}
		if d := math.Abs(s.LaunchGapUS - launchS*1e6); d > 1e-9*want+1e-3*float64(s.Kernels) {
			t.Errorf("plan %d: launch gaps %v µs, want the launch time %v µs", i+1, s.LaunchGapUS, launchS*1e6)
		}
	}
	var tr parsedTrace
	if err := json.Unmarshal(data, &tr); err != nil {
		t.Fatal(err)
	}
	if tr.DisplayTimeUnit != "ns" {
		t.Errorf("displayTimeUnit %q, want ns", tr.DisplayTimeUnit)
	}
	for i, e := range tr.TraceEvents {
		if e.Ph == "B" || e.Ph == "E" {
			if e.Name != "launch gap" || *e.Tid != TraceGPU0GapsTID {
				t.Errorf("%s event %d (%s) on tid %d", e.Ph, i, e.Name, *e.Tid)
			}
		}
		if e.Ph != "X" {
			continue
		}
		var a kernelArgs
		if err := json.Unmarshal(e.Args, &a); err != nil || a.Op == "" || a.Launch == "" || a.FusedFrom == nil || e.Cat != "kernel" {
			t.Errorf("X event %d (%s): cat %q, args incomplete: %s", i, e.Name, e.Cat, e.Args)
		}
	}
}

// multiLaunchReport is smallReport plus a node with four launches.
func multiLaunchReport() *report.Report {
	r := smallReport()
	r.Nodes = append(r.Nodes, report.NodeCost{Name: "/rnn/LSTM", OpType: "LSTM", Counts: report.Counts{FLOPs: 4e6, BytesRead: 4e5}, Bound: "compute",
		Precision: "fp32", ComputeS: 3e-5, MemoryS: 1e-6, LaunchS: 8e-6, TimeS: 3.8e-5, Launches: 4})
	r.Totals = report.Totals{}
	for _, n := range r.Nodes {
		r.Totals.TimeS += n.TimeS
		r.Totals.Launches += n.Launches
		r.Totals.FLOPs += n.FLOPs
		r.Totals.BytesRead += n.BytesRead
		r.Totals.BytesWritten += n.BytesWritten
	}
	return r
}

func TestTraceKernelsAddUpToTotal(t *testing.T) {
	r := multiLaunchReport()
	c := CeilingsOf(testGPU())
	data, err := Trace([]*report.Report{r}, c)
	if err != nil {
		t.Fatal(err)
	}
	checkTrace(t, data, []*report.Report{r})
	again, _ := Trace([]*report.Report{r}, c)
	if !bytes.Equal(data, again) {
		t.Error("trace is not deterministic")
	}
	// The LSTM's four launches are equal quarters of its time.
	var tr parsedTrace
	_ = json.Unmarshal(data, &tr)
	var lstm []float64
	for _, e := range tr.TraceEvents {
		if e.Name == "/rnn/LSTM" {
			lstm = append(lstm, *e.Dur)
		}
	}
	if len(lstm) != 4 || math.Abs(lstm[0]-9.5) > 1e-9 {
		t.Errorf("LSTM launches %v, want four of 9.5 µs", lstm)
	}
	// Two plans: two processes, each checked on its own.
	two, err := Trace([]*report.Report{r, smallReport()}, c)
	if err != nil {
		t.Fatal(err)
	}
	s := smallReport()
	s.Totals.Launches = 4
	checkTrace(t, two, []*report.Report{r, s})
}

func TestTraceArgs(t *testing.T) {
	r := smallReport()
	r.Totals.Launches = 4
	data, err := Trace([]*report.Report{r}, CeilingsOf(testGPU()))
	if err != nil {
		t.Fatal(err)
	}
	var tr parsedTrace
	_ = json.Unmarshal(data, &tr)
	for _, e := range tr.TraceEvents {
		if e.Name != "/block/conv/Conv" {
			continue
		}
		var a kernelArgs
		if err := json.Unmarshal(e.Args, &a); err != nil {
			t.Fatal(err)
		}
		if a.Op != "onnxcost.FusedConv" || len(a.FusedFrom) != 2 || a.Bound != "compute" || a.RooflineFrac == nil {
			t.Fatalf("args %+v", a)
		}
		// Achieved FLOP/s over the fp16 tensor roof (100 TFLOP/s; the
		// node's intensity puts the L2 diagonal above it).
		n := r.Nodes[0]
		if want := n.FLOPs / n.TimeS / 100e12; math.Abs(*a.RooflineFrac-want) > 1e-12 {
			t.Errorf("roofline fraction %v, want %v", *a.RooflineFrac, want)
		}
		if *e.Ts != 0 || math.Abs(*e.Dur-42) > 1e-9 || a.GapUS != 2 || math.Abs(a.KernelUS-40) > 1e-9 {
			t.Errorf("first launch at %v for %v µs (gap %v, kernel %v), want at 0 for 42 (2 + 40)", *e.Ts, *e.Dur, a.GapUS, a.KernelUS)
		}
		return
	}
	t.Fatal("no event for the fused conv")
}

func TestScopeFrames(t *testing.T) {
	for _, c := range []struct {
		name, op string
		want     []string
	}{
		{"/layer3/layer3.0/conv2/Conv", "Conv", []string{"layer3", "layer3.0", "conv2", "/layer3/layer3.0/conv2/Conv"}},
		{"/Add", "Add", []string{"Add", "/Add"}},
		{"conv_17", "Conv", []string{"Conv", "conv_17"}},
		{"", "Relu", []string{"Relu"}},
		{"//a//b", "X", []string{"a", "//a//b"}},
	} {
		got := ScopeFrames(c.name, c.op)
		if len(got) != len(c.want) {
			t.Errorf("%q: %q, want %q", c.name, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%q: %q, want %q", c.name, got, c.want)
				break
			}
		}
	}
}

func TestProfileSumsToTotals(t *testing.T) {
	r := multiLaunchReport()
	data, err := Profile(r)
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("profile.Parse: %v", err)
	}
	CheckProfile(t, p, r)
	again, _ := Profile(r)
	if !bytes.Equal(data, again) {
		t.Error("profile is not deterministic")
	}
	// The fused conv's stack, root first: block → conv → node.
	for _, s := range p.Sample {
		leaf := s.Location[0].Line[0].Function.Name
		if leaf != "/block/conv/Conv" {
			continue
		}
		var names []string
		for i := len(s.Location) - 1; i >= 0; i-- {
			names = append(names, s.Location[i].Line[0].Function.Name)
		}
		if len(names) != 3 || names[0] != "block" || names[1] != "conv" {
			t.Errorf("stack %q", names)
		}
		if got := s.Label["fused_from"]; len(got) != 2 {
			t.Errorf("fused_from label %q", got)
		}
	}
}

// CheckProfile checks a parsed profile's sample types and that each
// type's samples sum to the report's total (within the rounding of each
// sample to a whole unit).
func CheckProfile(t *testing.T, p *profile.Profile, r *report.Report) {
	t.Helper()
	if len(p.SampleType) != 3 || p.SampleType[0].Type != "time" || p.SampleType[0].Unit != "nanoseconds" ||
		p.SampleType[1].Type != "flops" || p.SampleType[2].Type != "bytes" {
		t.Fatalf("sample types %v", p.SampleType)
	}
	var sums [3]float64
	for _, s := range p.Sample {
		for i, v := range s.Value {
			sums[i] += float64(v)
		}
	}
	tot := r.Totals
	n := float64(len(p.Sample))
	for i, want := range []float64{tot.TimeS * 1e9, tot.FLOPs, tot.BytesRead + tot.BytesWritten} {
		if d := math.Abs(sums[i] - want); d > 0.5*n+1e-9*want {
			t.Errorf("%s: samples sum to %v, want %v", p.SampleType[i].Type, sums[i], want)
		}
	}
}

// TestSummarizeTraceRejects: the validator fails on the defects a viewer
// would choke on or a count would miss.
func TestSummarizeTraceRejects(t *testing.T) {
	head := `{"traceEvents":[{"name":"thread_name","ph":"M","pid":1,"tid":3,"args":{"name":"s"}},{"name":"thread_name","ph":"M","pid":1,"tid":4,"args":{"name":"g"}},`
	for name, body := range map[string]string{
		"overlap":      `{"name":"a","ph":"X","ts":0,"dur":5,"pid":1,"tid":3},{"name":"b","ph":"X","ts":4,"dur":1,"pid":1,"tid":3}`,
		"unnamed":      `{"name":"a","ph":"X","ts":0,"dur":5,"pid":1,"tid":7}`,
		"no dur":       `{"name":"a","ph":"X","ts":0,"pid":1,"tid":3}`,
		"negative dur": `{"name":"a","ph":"X","ts":0,"dur":-1,"pid":1,"tid":3}`,
		"open B":       `{"name":"g","ph":"B","ts":0,"pid":1,"tid":4}`,
		"E first":      `{"name":"g","ph":"E","ts":0,"pid":1,"tid":4}`,
		"no name":      `{"ph":"X","ts":0,"dur":1,"pid":1,"tid":3}`,
		"odd phase":    `{"name":"a","ph":"Q","ts":0,"pid":1,"tid":3}`,
	} {
		if _, err := SummarizeTrace([]byte(head + body + `]}`)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	s, err := SummarizeTrace([]byte(head + `{"name":"a","ph":"X","ts":0,"dur":5,"pid":1,"tid":3},{"name":"g","ph":"B","ts":0,"pid":1,"tid":4},{"name":"g","ph":"E","ts":1,"pid":1,"tid":4},{"name":"b","ph":"X","ts":6,"dur":1,"pid":1,"tid":3}]}`))
	if err != nil || len(s) != 1 || s[0].Kernels != 2 || s[0].BusyUS != 6 || s[0].IdleUS != 1 || s[0].EndUS != 7 || s[0].LaunchGapUS != 1 {
		t.Errorf("summary %+v, %v", s, err)
	}
}

// TestTraceSlicesNeverOverlap: on every fixture-like sequence of odd
// durations, each slice ends at or before the next one starts in float64
// (as viewers compute it), so none is read as nested in the previous.
func TestTraceSlicesNeverOverlap(t *testing.T) {
	r := &report.Report{Model: "m", GPU: "g", Plan: "fused"}
	for i := 0; i < 2000; i++ {
		ts := 1e-7 * (1 + math.Mod(float64(i)*0.7310585786300049, 3.3))
		r.Nodes = append(r.Nodes, report.NodeCost{Name: fmt.Sprintf("/n%d", i), OpType: "Add", TimeS: ts, LaunchS: ts / 7, Launches: float64(1 + i%3)})
		r.Totals.TimeS += ts
		r.Totals.Launches += float64(1 + i%3)
	}
	data, err := Trace([]*report.Report{r}, Ceilings{})
	if err != nil {
		t.Fatal(err)
	}
	if err := PerfettoOverlaps(data); err != nil {
		t.Fatal(err)
	}
	checkTrace(t, data, []*report.Report{r})
}

// TestTraceTrainStep: under --train the stream is the whole step, in the
// documented order, one X per launch, adding up to step_time_s.
func TestTraceTrainStep(t *testing.T) {
	r := multiLaunchReport()
	var fwd, bwd, bwdLaunches float64
	for i := range r.Nodes {
		n := &r.Nodes[i]
		n.Backward = &report.Backward{TimeS: 2 * n.TimeS, Launches: 2, ForwardExtraS: 1e-7}
		fwd += n.TimeS + 1e-7
		bwd += 2 * n.TimeS
		bwdLaunches += 2
	}
	loss := 3e-6
	tr := &report.Train{Optimizer: "adam", ForwardTimeS: fwd + loss, BackwardTimeS: bwd + loss, OptimizerTimeS: 5e-6, OptimizerLaunches: 3}
	tr.StepTimeS = tr.ForwardTimeS + tr.BackwardTimeS + tr.OptimizerTimeS
	r.Totals.Train, r.Totals.TimeS = tr, tr.StepTimeS
	data, s := traceOne(t, r)
	// The kernel-less Reshape's training forward work is the one lumped
	// event; the loss head adds a launch each way.
	if want := r.Totals.Launches + bwdLaunches + 3 + 2; float64(s.Kernels) != want || s.Lumped != 1 || s.Waits != 0 {
		t.Errorf("%d kernels (+%d lumped, %d waits), want %v", s.Kernels, s.Lumped, s.Waits, want)
	}
	if want := tr.StepTimeS * 1e6; math.Abs(s.BusyUS-want) > 1e-9*want || s.IdleUS > 1e-9*want {
		t.Errorf("busy %v µs idle %v, want %v", s.BusyUS, s.IdleUS, want)
	}
	var parsed parsedTrace
	if err := json.Unmarshal(data, &parsed); err != nil {
		t.Fatal(err)
	}
	var order, phases []string
	for _, e := range parsed.TraceEvents {
		if e.Ph == "X" && (len(order) == 0 || order[len(order)-1] != e.Name) {
			order = append(order, e.Name)
		}
		if e.Ph == "B" && *e.Tid == TracePhasesTID {
			phases = append(phases, e.Name)
		}
	}
	last := r.Nodes[len(r.Nodes)-1].Name
	want := append(append([]string{}, nodeNames(r)...), "loss head (forward)", "loss head (backward)", last+" (backward)")
	if len(order) < len(want) || strings.Join(order[:len(want)], "|") != strings.Join(want, "|") || order[len(order)-1] != "optimizer step (adam)" {
		t.Errorf("stream order %q, want it to start %q and end with the optimizer", order, want)
	}
	if strings.Join(phases, ",") != "forward,backward,optimizer" {
		t.Errorf("phases %q", phases)
	}
}

func nodeNames(r *report.Report) []string {
	var out []string
	for _, n := range r.Nodes {
		if n.TimeS <= 0 && n.Launches <= 0 {
			n.Name += " (training forward work)"
		}
		out = append(out, n.Name)
	}
	return out
}

// TestTraceHostBound: a host-bound --runtime report draws a host track
// and an idle event closing the stream at time_s.
func TestTraceHostBound(t *testing.T) {
	r := multiLaunchReport()
	dev := r.Totals.TimeS
	r.Runtime = &report.Runtime{Name: "pytorch", DispatchS: 1e-4, CallS: 1e-5, HostBound: true}
	for i := range r.Nodes {
		r.Nodes[i].HostS = r.Nodes[i].Launches * r.Runtime.DispatchS
	}
	// A view: a host call and no kernel.
	const view = 2e-6
	r.Nodes = append(r.Nodes, report.NodeCost{Name: "/rnn/Reshape", OpType: "Reshape", HostS: view})
	r.Runtime.HostS = r.Runtime.CallS + r.Totals.Launches*r.Runtime.DispatchS + view
	r.Totals.TimeS = r.Runtime.HostS
	data, s := traceOne(t, r)
	if float64(s.Kernels) != r.Totals.Launches || s.Waits < 2 {
		t.Errorf("%d kernels, %d waits; want %v kernels and waits", s.Kernels, s.Waits, r.Totals.Launches)
	}
	if want := r.Totals.TimeS * 1e6; math.Abs(s.BusyUS-want) > 1e-9*want || s.IdleUS > 1e-9*want || dev >= r.Totals.TimeS {
		t.Errorf("busy %v µs idle %v, want %v", s.BusyUS, s.IdleUS, want)
	}
	if !strings.Contains(string(data), `"name":"dispatch `) || !strings.Contains(string(data), "(host-bound)") {
		t.Error("no host dispatch slices or closing idle event")
	}
	if !strings.Contains(string(data), `"name":"call /rnn/Reshape"`) {
		t.Error("no host slice for the view's call")
	}
}

// TestTraceHostCopies: a call fed host arrays (onnxruntime's session run)
// opens its stream with the inputs' copy, before any kernel or dispatch,
// and closes it with the outputs' copy and, as each call waits for its
// kernels, the call's fixed host work: the stream ends at time_s.
func TestTraceHostCopies(t *testing.T) {
	r := multiLaunchReport()
	const in, out, call, dispatch = 20e-6, 3e-6, 30e-6, 1e-7
	r.Runtime = &report.Runtime{Name: "onnxruntime", DispatchS: dispatch, CallS: call, SyncEachCall: true, InputCopyS: in, OutputCopyS: out}
	for i := range r.Nodes {
		r.Nodes[i].HostS = r.Nodes[i].Launches * dispatch
	}
	r.Totals.TimeS += call + in + out + dispatch
	data, s := traceOne(t, r)
	if want := r.Totals.TimeS * 1e6; math.Abs(s.EndUS-want) > 1e-9*want || s.Lumped != 2 {
		t.Errorf("stream ends at %v µs with %d lumped slices, want %v µs and the two copies", s.EndUS, s.Lumped, want)
	}
	text := string(data)
	first := strings.Index(text, `"cat":"kernel"`)
	if i := strings.Index(text, "(MemcpyHtoD)"); i < 0 || i > first || !strings.Contains(text, "(MemcpyDtoH)") {
		t.Error("no input copy before the first kernel, or no output copy")
	}
	if !strings.Contains(text, "fixed host work (call_s)") {
		t.Error("no closing wait for the call's fixed work")
	}
}
