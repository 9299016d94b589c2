package cost

import (
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

// TestSessionHostNodesAndCopies: under onnxruntime, a node its CUDA
// provider computes on the host (ir.Session.Host) launches nothing and
// costs the runtime's host_node_us of host time; a GPU kernel that reads
// such a value pays its MemcpyFromHost (one launch more); one that reads
// a GPU value in host memory makes the host wait (host_waits).
func TestSessionHostNodesAndCopies(t *testing.T) {
	rt := testRuntime(t, "onnxruntime")
	if rt.HostNodeS <= 0 {
		t.Fatal("onnxruntime has no host_node_us")
	}
	build := func(session bool, down bool) *report.Report {
		b := newBuilder(t)
		x := b.Input("x", 4, 64)
		sh, n, sc, y := b.Val("sh", ir.Int64, 2), b.Val("n", ir.Int64), b.Val("sc", ir.Float32), b.Val("y", ir.Float32, 4, 64)
		b.G.AddOutput(y)
		b.Node("Shape", []*ir.Value{x}, []*ir.Value{sh})
		b.Node("Gather", []*ir.Value{sh, b.Ints("i", 0)}, []*ir.Value{n}, ir.IntAttr("axis", 0))
		b.Node("Cast", []*ir.Value{n}, []*ir.Value{sc}, ir.IntAttr("to", int64(ir.Float32)))
		mul := b.Node("Mul", []*ir.Value{x, sc}, []*ir.Value{y})
		if session {
			s := &ir.Session{Host: map[*ir.Value]bool{sh: true, n: true, sc: true}, Uploads: map[*ir.Node][]*ir.Value{mul: {sc}}}
			if down {
				s.Downloads = map[*ir.Node][]*ir.Value{mul: {sc}}
			}
			b.G.Session = s
		}
		return b.analyze(Options{Runtime: rt})
	}
	plain, placed, waits := build(false, false), build(true, false), build(true, true)
	for _, n := range placed.Nodes {
		host := n.OpType != "Mul"
		if n.OnHost != host || host && (n.Launches != 0 || n.HostS != rt.HostNodeS) {
			t.Errorf("%s: on_host %v, %g launches, host %g s; want on_host %v with no launch and host_node_us", n.OpType, n.OnHost, n.Launches, n.HostS, host)
		}
	}
	mp, mq := nodeByOp(t, plain, "Mul"), nodeByOp(t, placed, "Mul")
	if mq.Launches != mp.Launches+1 || !(mq.TimeS > mp.TimeS) || !strings.Contains(mq.Note, "MemcpyFromHost") {
		t.Errorf("Mul reading a host scalar: %g launches, %g s, note %q; want one launch more than %g, slower than %g s, the copy named", mq.Launches, mq.TimeS, mq.Note, mp.Launches, mp.TimeS)
	}
	if mq.HostWaits || !nodeByOp(t, waits, "Mul").HostWaits {
		t.Error("host_waits: want it only where a GPU value is read in host memory")
	}
	if notes := strings.Join(placed.Runtime.Notes, "; "); !strings.Contains(notes, "3 nodes run on the host") {
		t.Errorf("runtime notes %q: want the host nodes counted", notes)
	}
	if notes := strings.Join(waits.Runtime.Notes, "; "); !strings.Contains(notes, "waits for the GPU 1 times a call") {
		t.Errorf("runtime notes %q: want the host's waits counted", notes)
	}
	if got, want := placed.Runtime.HostS, rt.CallS+2*rt.DispatchS+3*rt.HostNodeS; got < want*0.999 || got > want*1.001 {
		t.Errorf("host work %g s, want the call, the Mul and its copy issued, three host nodes: %g s", got, want)
	}
}
