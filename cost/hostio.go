package cost

import (
	"fmt"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
)

// callIO is what one call moves between host and device memory when its
// runtime is fed host arrays and returns host arrays
// (hwdb.Runtime.HostIO): each graph input a GPU kernel reads, copied in
// before the first kernel, and each graph output a GPU kernel wrote,
// copied back after the last.
type callIO struct {
	in, out           []*ir.Value
	inBytes, outBytes float64
	// skipped says why no copies are priced although the runtime makes
	// them ("" when they are, or when it makes none).
	skipped string
}

// hostIO returns the copies a call under rt makes of g's inputs and
// outputs. A training step and a generation loop keep theirs on the
// device (a framework's tensors, onnxruntime-genai's bound buffers), so
// they make none.
func hostIO(g *ir.Graph, rt *hwdb.Runtime, opt Options) callIO {
	var io callIO
	switch {
	case rt == nil || rt.HostIO <= 0:
		return io
	case opt.Train != nil:
		io.skipped = "a training step's inputs are on the device"
		return io
	case opt.AppendKVCache:
		io.skipped = "a generation loop keeps its inputs, cache and logits in device memory (onnxruntime-genai binds them)"
		return io
	}
	read, wrote := map[*ir.Value]bool{}, map[*ir.Value]bool{}
	for _, n := range g.Nodes {
		if !g.Session.OnDevice(n) {
			continue
		}
		markReads(n, read)
		for _, v := range n.Outputs {
			wrote[v] = true
		}
	}
	for _, v := range g.Inputs {
		if read[v] {
			io.in = append(io.in, v)
			io.inBytes += hostBytes(v)
		}
	}
	for _, v := range g.Outputs {
		if wrote[v] {
			io.out = append(io.out, v)
			io.outBytes += hostBytes(v)
		}
	}
	return io
}

// markReads marks in read every value n reads: its inputs and, for a
// control-flow node, the outer values its bodies read (a graph input a
// Loop's body captures).
func markReads(n *ir.Node, read map[*ir.Value]bool) {
	for _, v := range n.Inputs {
		read[v] = true
	}
	for _, sg := range n.Subgraphs() {
		for _, v := range sg.OuterReads() {
			read[v] = true
		}
	}
}

// price records io's copies in ri, each over gpu's host link
// (perf.HostCopyS), and returns their time: the inputs' copies before
// the first kernel and the outputs' after the last, the host blocked
// on each (onnxruntime's CopyTensor synchronizes after a pageable copy).
// warning is non-empty when the copies are made but cannot be priced.
func (io callIO) price(ri *report.Runtime, gpu *hwdb.GPU) (s float64, warning string) {
	if io.skipped != "" {
		ri.Notes = append(ri.Notes, "no host copies of inputs and outputs: "+io.skipped)
		return 0, ""
	}
	if len(io.in)+len(io.out) == 0 {
		return 0, ""
	}
	p := perf.DefaultParams()
	if _, ok := perf.HostCopyS(gpu, 0, p); !ok {
		w := fmt.Sprintf("runtime %s copies %d input(s) (%s) to the GPU and %d output(s) (%s) back each call, not priced: %s has no host link (pcie_gbps) in its hwdb entry; time_s and latency_s leave them out",
			ri.Name, len(io.in), render.Bytes(io.inBytes), len(io.out), render.Bytes(io.outBytes), gpu.Name)
		ri.Notes = append(ri.Notes, w)
		return 0, w
	}
	var times [2]float64
	for i, set := range [][]*ir.Value{io.in, io.out} {
		for _, v := range set {
			s, _ := perf.HostCopyS(gpu, hostBytes(v), p)
			times[i] += s
		}
	}
	ri.InputCopyBytes, ri.OutputCopyBytes = io.inBytes, io.outBytes
	ri.InputCopyS, ri.OutputCopyS = times[0], times[1]
	total := ri.HostCopyS()
	ri.Notes = append(ri.Notes, fmt.Sprintf("each call copies %d input(s) (%s) from host memory to the GPU before its first kernel and %d output(s) (%s) back after its last, each copy a launch and its bytes at %g of the host link's %s a direction (pinned-buffer rate: pageable arrays may copy slower): %s (input_copy_s + output_copy_s); bind them on the device (onnxruntime-iobinding) to price none",
		len(io.in), render.Bytes(io.inBytes), len(io.out), render.Bytes(io.outBytes), perf.HostLinkShare, render.Bytes(gpu.PCIeBW)+"/s", usText(total)))
	return total, ""
}

// hostBytes is v's size as a runtime copies it: elements of at least a
// byte each, an unknown dim counted as 1.
func hostBytes(v *ir.Value) float64 {
	size := RuleCtx{unknown: true}
	return size.Numel(v) * float64(max(v.DType.Bits(), 8)) / 8
}
