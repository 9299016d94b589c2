package cost

import (
	"math"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/costtest"
	"github.com/onnxcost/onnxcost/ir"
)

// TestPipelineTimeArithmetic states the host/device pipeline by hand.
func TestPipelineTimeArithmetic(t *testing.T) {
	us := 1e-6
	nodes := func(times ...float64) []report.NodeCost {
		var out []report.NodeCost
		for _, x := range times {
			out = append(out, report.NodeCost{TimeS: x * us, Launches: 1})
		}
		return out
	}
	cases := []struct {
		name     string
		nodes    []report.NodeCost
		dispatch float64
		want     float64
	}{
		// Device-bound: 3 kernels of 10 µs, issued every 2 µs: only the
		// first issue is exposed: 2 + 30.
		{"device-bound", nodes(10, 10, 10), 2, 32},
		// Host-bound: 3 kernels of 1 µs issued every 8 µs: the last
		// kernel starts at 24 and ends at 25.
		{"host-bound", nodes(1, 1, 1), 8, 25},
		// Mixed: 8 µs issue; kernels 20, 1, 1: the second and third are
		// issued at 16 and 24, run after the first ends (28): 28+1+1 = 30.
		{"mixed", nodes(20, 1, 1), 8, 30},
		// One node of 4 launches, 4 µs of device time, 3 µs issue each:
		// host-bound, last kernel issued at 12 and runs 1 µs: 13.
		{"multi-launch", []report.NodeCost{{TimeS: 4 * us, Launches: 4}}, 3, 13},
		// No dispatch: the plain sum.
		{"graph", nodes(1, 2, 3), 0, 6},
		// The host waits for the device before the second node (it reads
		// a GPU value in host memory): issued at 2, the first kernel ends
		// at 22, the second is issued at 22 + 2 and ends at 25, not 23.
		{"host-waits", []report.NodeCost{{TimeS: 20 * us, Launches: 1}, {TimeS: 1 * us, Launches: 1, HostWaits: true}}, 2, 25},
	}
	for _, c := range cases {
		for i := range c.nodes {
			c.nodes[i].HostS = c.dispatch * us * c.nodes[i].Launches
		}
		got, _, _ := pipelineTime(c.nodes)
		if math.Abs(got-c.want*us) > 1e-12 {
			t.Errorf("%s: %g µs, want %g µs", c.name, got/us, c.want)
		}
	}
}

// TestPipelineHelperLaunchesRideTheCall: a library's helper kernel (a
// Winograd filter transform) is issued inside its call, so a node that
// gains one keeps its host timeline: issued after 10 µs of host work and
// running 5 µs, the node of one launch ends at 15, and with a helper
// (2 launches, 1 a helper) at 15 too, where splitting the host time over
// both launches ended it at 12.5 and a layer that took a helper as the
// batch grew finished its call earlier.
func TestPipelineHelperLaunchesRideTheCall(t *testing.T) {
	us := 1e-6
	one := []report.NodeCost{{TimeS: 5 * us, Launches: 1, HostS: 10 * us}}
	helped := []report.NodeCost{{TimeS: 5 * us, Launches: 2, LibraryLaunches: 1, HelperLaunches: 1, HostS: 10 * us}}
	a, _, _ := pipelineTime(one)
	b, _, _ := pipelineTime(helped)
	if math.Abs(a-15*us) > 1e-12 || math.Abs(b-a) > 1e-12 {
		t.Errorf("one launch %g µs, with a helper %g µs; want 15 both", a/us, b/us)
	}
}

// tinyChain is a model of n elementwise kernels on a 1k-element tensor:
// each kernel is launch-bound, so the runtime decides the time.
func tinyChain(t *testing.T, n int) *builder {
	b := newBuilder(t)
	x := b.Input("x", 1, 1024)
	for i := range n {
		y := b.Val("y"+string(rune('a'+i)), ir.Float32, 1, 1024)
		b.Node("Relu", []*ir.Value{x}, []*ir.Value{y})
		x = y
	}
	b.G.Outputs = append(b.G.Outputs, x)
	return b
}

// TestRuntimeDefaultIsTensorRT: no runtime and the built-in tensorrt
// profile give bit-identical reports, and the notes say how launch_us was
// scaled.
func TestRuntimeDefaultIsTensorRT(t *testing.T) {
	graph, err := hwdb.LookupRuntime(hwdb.DefaultRuntime)
	if err != nil {
		t.Fatal(err)
	}
	r0 := tinyChain(t, 4).analyze(Options{})
	r1 := tinyChain(t, 4).analyze(Options{Runtime: graph})
	if r0.Totals.TimeS != r1.Totals.TimeS || r0.Nodes[0].TimeS != r1.Nodes[0].TimeS {
		t.Fatalf("default %g s vs tensorrt %g s", r0.Totals.TimeS, r1.Totals.TimeS)
	}
	rt := r0.Runtime
	if rt == nil || rt.Name != "tensorrt" {
		t.Fatalf("runtime = %+v, want tensorrt", rt)
	}
	// ruleTestGPU launches in 5 µs; the engine's graph replay pays 0.53 of it.
	// Half of it is the kernel's own ramp (perf.KernelRamp), which the
	// node counts in its kernel time; the rest is its gap.
	n0 := r0.Nodes[0]
	if math.Abs(rt.KernelGapS-0.53*5e-6) > 1e-15 || math.Abs(n0.RampS+n0.LaunchS-rt.KernelGapS) > 1e-18 ||
		math.Abs(rt.KernelRampS-0.5*rt.KernelGapS) > 1e-18 || n0.RampS != rt.KernelRampS {
		t.Errorf("kernel gap %g s, ramp %g s (node %g + %g), want 0.53 × 5 µs, half of it the ramp", rt.KernelGapS, rt.KernelRampS, n0.RampS, n0.LaunchS)
	}
	if !strings.Contains(strings.Join(rt.Notes, "\n"), "0.53 × the GPU entry's launch_us (5 µs)") {
		t.Errorf("notes do not say how launch_us is scaled: %q", rt.Notes)
	}
	if math.Abs(rt.LatencyS-(r0.Totals.TimeS+10e-6)) > 1e-15 || rt.DeviceMemoryBytes != r0.Totals.PeakMemoryBytes+rt.MemoryFloorBytes {
		t.Errorf("latency %g / device memory %g inconsistent", rt.LatencyS, rt.DeviceMemoryBytes)
	}
}

// TestRuntimeEagerHostBound: PyTorch eager calls each tiny ReLU in a
// relu's host time (report.HostKindS × op_call_scale on nine of the ten
// calls, report.CallsScale: 15.6 µs), slower than the GPU runs it (5 µs
// gap + ns of work). One call alone is the
// 6 µs wrapper, the ten calls and the last kernel; back to back, the
// host's work per call (6 µs + 10 calls) sets the pace.
func TestRuntimeEagerHostBound(t *testing.T) {
	eager, err := hwdb.LookupRuntime("pytorch")
	if err != nil {
		t.Fatal(err)
	}
	r := tinyChain(t, 10).analyze(Options{Runtime: eager})
	rt := r.Runtime
	last := r.Nodes[len(r.Nodes)-1].TimeS
	relu := report.HostKindS(eager.DispatchS, "relu") * report.CallsScale(eager.OpCallScale, 10)
	if r.Nodes[0].HostS != relu || !(relu > eager.DispatchS) {
		t.Errorf("eager: a ReLU's host %g s, want %g s", r.Nodes[0].HostS, relu)
	}
	if want := 6e-6 + 10*relu; !rt.HostBound || math.Abs(r.Totals.TimeS-want) > 1e-12 {
		t.Errorf("eager: time %g s host-bound %v, want %g s host-bound", r.Totals.TimeS, rt.HostBound, want)
	}
	if want := 6e-6 + 10*relu + last; math.Abs(rt.LatencyS-want) > 1e-12 {
		t.Errorf("eager: latency %g s, want %g s", rt.LatencyS, want)
	}
	if n := r.Nodes[0]; n.RampS+n.LaunchS != 5e-6 || n.RampS != r.Runtime.KernelRampS {
		t.Errorf("eager kernel gap %g + ramp %g, want the full 5 µs launch", n.LaunchS, n.RampS)
	}
	// An absolute gap replaces the scaled launch, and the note says so.
	own := eager.Clone()
	own.KernelGapS = 1e-6
	r2 := tinyChain(t, 1).analyze(Options{Runtime: own})
	// Half of it is the kernel's ramp, as half of any runtime's gap is
	// (a lone kernel, repeated, pays no first load: perf.PointwiseLoadS).
	if n := r2.Nodes[0]; n.RampS+n.LaunchS != 1e-6 || n.LaunchS != 0.5e-6 || !strings.Contains(r2.Runtime.Notes[0], "fixed gap of 1 µs") {
		t.Errorf("absolute gap: node %g + ramp %g, notes %q", n.LaunchS, n.RampS, r2.Runtime.Notes)
	}
	// In a chain each pointwise kernel lasts at least the in-graph ramp
	// and its first load, which this tiny gap does not hold.
	least := perf.KernelRamp(costtest.GPU(), nil, perf.DefaultParams()) + perf.PointwiseLoadS(costtest.GPU())
	if n := tinyChain(t, 2).analyze(Options{Runtime: own}).Nodes[1]; n.LaunchS != 0.5e-6 || math.Abs(n.RampS-max(0.5e-6, least)) > 1e-15 {
		t.Errorf("absolute gap, a chain: node %g + ramp %g, want the ramp at least %g", n.LaunchS, n.RampS, least)
	}
}

// TestRuntimeKernelSum: runtime.kernel_s is the device time less the gaps
// between kernels, each kernel's ramp kept: what a profiler's kernel sum
// reads. Under a graph replay the device time is the report's time.
func TestRuntimeKernelSum(t *testing.T) {
	graph, err := hwdb.LookupRuntime("graph")
	if err != nil {
		t.Fatal(err)
	}
	r := tinyChain(t, 4).analyze(Options{Runtime: graph})
	var body, gaps, ramps float64
	for _, n := range r.Nodes {
		body += n.TimeS - n.LaunchS
		gaps += n.LaunchS
		ramps += n.RampS
	}
	rt := r.Runtime
	if math.Abs(rt.KernelS-body) > 1e-15 || math.Abs(rt.KernelS+gaps-r.Totals.TimeS) > 1e-15 || !(ramps > 0) || !(rt.KernelS > ramps) {
		t.Errorf("kernel sum %g s, want the nodes' %g s (gaps %g, ramps %g, time %g)", rt.KernelS, body, gaps, ramps, r.Totals.TimeS)
	}
}
