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
//   - An all-reduce of B bytes costs α(n) + 2·(n−1)/n · B / (f(n) ·
//     PeerBW(n)), fitted to NCCL timings per link kind (NVLink within the
//     domain, else PCIe; perf.AllReduceNVLink and perf.AllReducePCIe,
//     internal/calibrate/CALIBRATION.md): a latency that grows by a hop per
//     peer and a bus bandwidth at a fraction of the link's. It is on the
//     critical path (not overlapped with compute); its time is added to the
//     node's time and listed in report.Totals.CommunicationTimeS. Its
//     energy is not counted.
//   - Activations are not divided in memory (an upper bound: the
//     residual stream is replicated on every GPU, the MLP intermediate and
//     attention heads are not), so the per-GPU peak is weights/n for the
//     split weights, the replicated weights whole, and the peak of live
//     activations whole.
//   - The report is one GPU's: time_s is the model's time (the GPUs run in
//     lockstep), energy_j is one GPU's kernels (multiply by n for the
//     group; all-reduce energy not counted), while node and total FLOPs,
//     bytes and params stay the whole model's arithmetic.

// allReduceModel is the fitted all-reduce of n GPUs of gpu's kind: the
// link kind is the one GPU.PeerBW(n) prices.
func allReduceModel(gpu *hwdb.GPU, n int) perf.AllReduceFit {
	if gpu.NVLinkBW > 0 && n <= gpu.NVLinkDomain {
		return perf.AllReduceNVLink
	}
	return perf.AllReducePCIe
}

// AllReduceTime is one all-reduce of bytes over n GPUs of gpu's kind (the
// tensor-parallel model above); 0 for one GPU, +Inf with no link figure.
func AllReduceTime(gpu *hwdb.GPU, n int, bytes float64) float64 {
	return allReduceModel(gpu, n).Time(n, bytes, gpu.PeerBW(n))
}

// AllReduceLatencyS is the part of AllReduceTime that does not grow with
// the bytes: what each extra call (a data-parallel gradient bucket) adds.
func AllReduceLatencyS(gpu *hwdb.GPU, n int) float64 {
	return allReduceModel(gpu, n).Latency(n)
}

// tensorParallel is the state of a tensor-parallel analysis.
type tensorParallel struct {
	n       int
	peerBW  float64
	ar      perf.AllReduceFit
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
	return &tensorParallel{n: n, peerBW: bw, ar: allReduceModel(gpu, n), sharded: map[*ir.Value]bool{}}, nil
}

// shardKernel divides a GEMM-like kernel n ways (see the assumptions).
func (tp *tensorParallel) shardKernel(k *perf.Kernel) {
	n := int64(tp.n)
	f := float64(tp.n)
	k.FLOPs /= f
	k.DequantFLOPs /= f
	k.Bytes /= f
	k.WorkingSet /= f
	k.DRAMBytes /= f
	// A saturated size stays saturated: it stands for one past int64,
	// which a share may still be; the rounded-up division below would
	// wrap on it.
	switch {
	case k.N == math.MaxInt64, k.Batch == math.MaxInt64:
	case k.N >= n:
		k.N = (k.N + n - 1) / n
	case k.Batch >= n:
		k.Batch = (k.Batch + n - 1) / n
	}
	if k.Decode.Heads >= n { // the heads are what tensor parallelism splits
		k.Decode.Heads = (k.Decode.Heads + n - 1) / n
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

// allReduceTime is the all-reduce time of bytes over the n GPUs.
func (tp *tensorParallel) allReduceTime(bytes float64) float64 {
	return tp.ar.Time(tp.n, bytes, tp.peerBW)
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
		if a.tiedCopy(v) && a.holdsTiedOnce() {
			continue
		}
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
	a.warnf("tensor-parallel over %d GPUs: GEMM-like kernels and their weights split %d ways, other kernels and activations replicated; %d all-reduces over %.4g GB/s links per GPU (ring, %.3g µs latency each and %.0f%% of the link, fitted to NCCL timings); see cost/parallel.go", tp.n, tp.n, tp.reduces, tp.peerBW/1e9, tp.ar.Latency(tp.n)*1e6, 100*tp.ar.BusFraction(tp.n))
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
