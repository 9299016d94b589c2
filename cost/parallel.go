package cost

import (
	"fmt"
	"math"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
)

// Tensor parallelism (Options.GPUs > 1): the model runs Megatron-style
// over n GPUs of one kind, and the report is what one of them does.
//
// Assumptions (each an approximation, chosen to be simple and stated):
//   - GEMM-like kernels (Gemm, MatMul, Conv, fused GEMMs, attention, RNN)
//     are split n ways: each GPU runs 1/n of the FLOPs and moves 1/n of the
//     bytes, with the GEMM's N (output columns) divided by n, or its batch
//     (attention heads) when N is too small to split. Their weights are
//     divided by n in memory.
//   - Every other kernel (elementwise, normalisations, data movement) runs
//     on the full, replicated activation on every GPU: not divided. In
//     Megatron the pointwise ops between a column- and a row-parallel GEMM
//     do run on shards, so this over-states their time; their weights
//     (norm scales, embeddings) are replicated too.
//   - One all-reduce of the output follows each row-parallel GEMM, found
//     by a residual rule: a GEMM-like node with an initializer weight whose
//     output is (or, through one bias Add, feeds) a residual sum, that is
//     the node has a second activation input (the residual Add fused into
//     it) or its output meets an Add whose other input is an activation.
//     A transformer layer so gets two (after the attention output
//     projection and after the MLP down projection).
//   - A ring all-reduce of B bytes costs 2·(n−1)/n · B / PeerBW(n) plus a
//     fixed allReduceLatencyS, on the critical path (not overlapped with
//     compute); its time is added to the node's time and listed in
//     report.Totals.CommunicationTimeS. Its energy is not counted.
//   - Activations are not divided in memory (an upper bound: the
//     residual stream is replicated on every GPU, the MLP intermediate and
//     attention heads are not), so the per-GPU peak is weights/n for the
//     split weights, the replicated weights whole, and the peak of live
//     activations whole.
//   - The report is one GPU's: time_s is the model's time (the GPUs run in
//     lockstep), energy_j is one GPU's kernels (multiply by n for the
//     group; all-reduce energy not counted), while node and total FLOPs,
//     bytes and params stay the whole model's arithmetic.

// allReduceLatencyS is the fixed cost of one all-reduce call: ESTIMATE,
// the order of NCCL's small-message all-reduce latency within one NVLink
// node (a few to ten microseconds); not measured here.
const allReduceLatencyS = 8e-6

// tensorParallel is the state of a tensor-parallel analysis.
type tensorParallel struct {
	n       int
	peerBW  float64
	sharded map[*ir.Value]bool // weights split n ways
	commS   float64            // sum of all-reduce times
	reduces int
	// trainPeak is one GPU's training peak (package train), 0 for
	// inference.
	trainPeak float64
}

// share is the fraction of parameter v one GPU holds.
func (tp *tensorParallel) share(v *ir.Value) float64 {
	if tp.sharded[v] {
		return 1 / float64(tp.n)
	}
	return 1
}

// newTensorParallel checks the GPU count and the interconnect; nil for
// one GPU, so a one-GPU analysis takes no new path.
func newTensorParallel(gpu *hwdb.GPU, n int) (*tensorParallel, error) {
	switch {
	case n < 0:
		return nil, fmt.Errorf("analyze: --gpus %d: want 1 or more", n)
	case n <= 1:
		return nil, nil
	}
	bw := gpu.PeerBW(n)
	if bw <= 0 {
		return nil, fmt.Errorf("analyze: --gpus %d: GPU %s has no NVLink or PCIe bandwidth in its hwdb entry to cost all-reduces with", n, gpu.Name)
	}
	return &tensorParallel{n: n, peerBW: bw, sharded: map[*ir.Value]bool{}}, nil
}

// shardKernel divides a GEMM-like kernel n ways (see the assumptions).
func (tp *tensorParallel) shardKernel(k *perf.Kernel) {
	n := int64(tp.n)
	f := float64(tp.n)
	k.FLOPs /= f
	k.Bytes /= f
	k.WorkingSet /= f
	k.DRAMBytes /= f
	switch {
	case k.N >= n:
		k.N = (k.N + n - 1) / n
	case k.Batch >= n:
		k.Batch = (k.Batch + n - 1) / n
	}
}

// markWeights records the initializer inputs of a split node.
func (tp *tensorParallel) markWeights(n *ir.Node) {
	for _, in := range n.Inputs {
		if in != nil && in.IsInitializer {
			tp.sharded[in] = true
		}
	}
}

// allReduceTime is the ring all-reduce time of bytes over n GPUs.
func (tp *tensorParallel) allReduceTime(bytes float64) float64 {
	f := float64(tp.n)
	return 2*(f-1)/f*bytes/tp.peerBW + allReduceLatencyS
}

// gateInput is FusedGemm's gate operand slot (passes/epilogue.go).
const gateInput = 4

// needsAllReduce applies the residual rule to a GEMM-like node.
func needsAllReduce(n *ir.Node) bool {
	weight, acts := false, 0
	for i, in := range n.Inputs {
		switch {
		case in == nil:
		case i == gateInput && ir.IsFused(n, ir.OpFusedGemm) && n.AttrInt(ir.KeyGate, 0) != 0:
			// A gated MLP's other branch (SwiGLU's up projection): it is
			// column-parallel like this GEMM, not a residual sum.
		case in.IsInitializer:
			weight = weight || in.Shape.Ranked && len(in.Shape.Dims) >= 2
		case in.Const == nil || !in.Const.HasData:
			acts++
		}
	}
	if !weight || len(n.Outputs) == 0 || n.Outputs[0] == nil {
		return false
	}
	if acts >= 2 {
		return true // the residual Add is fused into the node
	}
	out := n.Outputs[0]
	for _, c := range out.Consumers {
		if c.Domain != "" || c.OpType != "Add" {
			continue
		}
		if residualAdd(c, out) {
			return true
		}
		// One bias Add between the GEMM and the residual sum.
		if other := ir.OtherOperand(c, out); other != nil && other.IsInitializer && len(c.Outputs) > 0 && c.Outputs[0] != nil {
			for _, c2 := range c.Outputs[0].Consumers {
				if c2.Domain == "" && c2.OpType == "Add" && residualAdd(c2, c.Outputs[0]) {
					return true
				}
			}
		}
	}
	return false
}

// residualAdd: the Add's other operand is a run-time activation other
// than v. v+v is no residual sum: it doubles the sharded output where it
// is, as an epilogue does (passes/epilogue.go), and needs no all-reduce.
func residualAdd(add *ir.Node, v *ir.Value) bool {
	o := ir.OtherOperand(add, v)
	return o != nil && o != v && !o.IsInitializer && (o.Const == nil || !o.Const.HasData)
}

// applyParallel fills the tensor-parallel totals: GPU count,
// communication time and the per-GPU peak memory.
func (a *analyzer) applyParallel(r *report.Report) {
	tp := a.tp
	t := &r.Totals
	t.GPUs = tp.n
	t.CommunicationTimeS = tp.commS
	var per float64
	for _, v := range a.paramOrder {
		b := a.paramBytes(v)
		if tp.sharded[v] {
			b /= float64(tp.n)
		}
		per += b
	}
	t.PerGPUPeakMemoryBytes = per + t.PeakActivationBytes
	if t.Train != nil {
		// The training peak already holds the runtime floor.
		t.PerGPUPeakMemoryBytes = tp.trainPeak
	}
	if math.IsNaN(t.PerGPUPeakMemoryBytes) || math.IsInf(t.PerGPUPeakMemoryBytes, 0) {
		t.PerGPUPeakMemoryBytes = t.PeakMemoryBytes
	}
	if r.Runtime != nil && t.Train == nil {
		// The runtime's floor sits on every GPU, beside its share.
		r.Runtime.DeviceMemoryBytes = t.PerGPUPeakMemoryBytes + r.Runtime.MemoryFloorBytes
	}
	a.warnf("tensor-parallel over %d GPUs: GEMM-like kernels and their weights split %d ways, other kernels and activations replicated; %d all-reduces at %.4g GB/s per GPU (ring, %g µs latency each, ESTIMATE); see cost/parallel.go", tp.n, tp.n, tp.reduces, tp.peerBW/1e9, allReduceLatencyS*1e6)
}

// outBytes is the size of n's first output as costed (the all-reduced
// tensor).
func (a *analyzer) outBytes(n *ir.Node) float64 {
	if len(n.Outputs) == 0 || n.Outputs[0] == nil {
		return 0
	}
	c := a.sizer(n)
	return c.Bytes(n.Outputs[0])
}
