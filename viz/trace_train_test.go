package viz

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/train"
)

// TestTraceTrainHost: a training step under a runtime that dispatches
// from the host draws its own dispatch sequence (Train.Dispatch): one
// host slice per kernel in the sequence's order, a flow from each to
// its kernel, the gradient scaler's wait, the device's waits for the
// host, and a stream that ends at step_time_s with nothing Perfetto
// would drop.
func TestTraceTrainHost(t *testing.T) {
	r := multiLaunchReport()
	var seq []report.TrainDispatch
	for i, n := range r.Nodes {
		seq = append(seq, report.TrainDispatch{Phase: "forward", Node: i, Name: n.Name, DeviceS: n.TimeS, Launches: max(n.Launches, 1), HostS: 3e-5 * max(n.Launches, 1)})
	}
	for i := len(r.Nodes) - 1; i >= 0; i-- {
		n := &r.Nodes[i]
		n.Backward = &report.Backward{TimeS: 2 * n.TimeS, Launches: 2}
		seq = append(seq, report.TrainDispatch{Phase: "backward", Node: i, Name: n.Name + " (backward)", DeviceS: 2 * n.TimeS, Launches: 2, HostS: 9e-5})
	}
	seq = append(seq,
		report.TrainDispatch{Phase: "optimizer", Node: -1, Name: "unscale and inf check (GradScaler)", DeviceS: 4e-6, Launches: 2, HostS: 1.6e-5},
		report.TrainDispatch{Phase: "optimizer", Node: -1, Name: "optimizer Python", HostS: 5e-5, Sync: true},
		report.TrainDispatch{Phase: "optimizer", Node: -1, Name: "optimizer step (adam)", DeviceS: 2e-5, Launches: 7, HostS: 5.6e-5})
	tr := &report.Train{Optimizer: "adam", GradAccum: 1, Dispatch: seq}
	var device, kernels float64
	for _, e := range seq {
		device += e.DeviceS
		kernels += e.Launches
	}
	rt := &report.Runtime{Name: "pytorch", DispatchS: 8e-6, CallS: 6e-6}
	finish, issued := train.TrainPipeline(seq, rt.CallS)
	tr.StepTimeS = max(finish, rt.CallS+issued)
	tr.HostWaitS = tr.StepTimeS - device
	r.Runtime, r.Totals.Train, r.Totals.TimeS = rt, tr, tr.StepTimeS
	data, s := traceOne(t, r)
	if err := PerfettoOverlaps(data); err != nil {
		t.Fatal(err)
	}
	if float64(s.Kernels) != kernels || s.Flows != s.Kernels || s.Waits == 0 {
		t.Errorf("%d kernels, %d flows, %d waits; want %v kernels, a flow each and waits", s.Kernels, s.Flows, s.Waits, kernels)
	}
	if want := tr.StepTimeS * 1e6; math.Abs(s.EndUS-want) > 1e-9*want+5e-4 {
		t.Errorf("stream ends at %v µs, want step_time_s %v µs", s.EndUS, want)
	}
	var parsed parsedTrace
	if err := json.Unmarshal(data, &parsed); err != nil {
		t.Fatal(err)
	}
	var hosts []string
	for _, e := range parsed.TraceEvents {
		if e.Ph == "B" && *e.Tid == TraceHostTID && (len(hosts) == 0 || hosts[len(hosts)-1] != e.Name) {
			hosts = append(hosts, e.Name)
		}
	}
	first, last := "dispatch "+r.Nodes[0].Name, "dispatch optimizer step (adam)"
	if len(hosts) < 3 || hosts[0] != first || hosts[len(hosts)-1] != last || !strings.Contains(strings.Join(hosts, "|"), "wait: device drains") {
		t.Errorf("host track %q: want %q first, the scaler's wait, %q last", hosts, first, last)
	}
}
