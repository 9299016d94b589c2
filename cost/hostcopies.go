package cost

import (
	"slices"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
)

// sessionCopies adds to node n the copies its runtime makes between the
// host and the device for it (ir.Session.Uploads, Downloads): onnxruntime's
// MemcpyFromHost of a host-computed value a GPU kernel reads (Swin's and
// GPT-2's query scale, head_dim ** -0.5 of a dim read from a Shape, which
// its CUDA provider computes on the CPU), and MemcpyToHost of a GPU value a kernel reads in host memory,
// after which the host waits for the device (nc.HostWaits). Each is
// priced as a small copy: a launch and the value's bytes read and
// written once.
func (a *analyzer) sessionCopies(nc *report.NodeCost, n *ir.Node, g *ir.Graph, est *NodeEstimate, agg *aggregate) {
	s := g.Session
	if s == nil {
		return
	}
	up, down := s.Uploads[n], s.Downloads[n]
	if len(up)+len(down) == 0 {
		return
	}
	for _, v := range slices.Concat(up, down) {
		b := hostBytes(v)
		k := perf.Kernel{
			Class: perf.ClassElementwise, Bytes: 2 * b, WorkingSet: 2 * b,
			Precision: hwdb.FP32, ElemBytes: 4, Launches: 1, Resident: true, DRAMBytes: 2 * b,
		}
		a.priceExtra(k, b, b, est, agg)
	}
	nc.Counts, nc.Launches = est.Counts, est.Launches
	if len(up) > 0 {
		nc.Note = appendNote(nc.Note, "with the runtime's copy of a host-computed input to the GPU (MemcpyFromHost)")
	}
	if len(down) > 0 {
		nc.HostWaits = true
		nc.Note = appendNote(nc.Note, "after a copy of a GPU-computed operand to the host (MemcpyToHost): the host waits for the GPU")
	}
}
