package cost

import (
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
)

// Rules for onnxruntime's position-bias ops (ir/ops_contrib_posbias.go),
// as its CUDA kernels (contrib_ops/cuda/bert) run them.

func init() {
	RegisterRule(msDomain, "RelativePositionBias", relativePositionBiasRule)
	RegisterRule(msDomain, "GatedRelativePositionBias", gatedRelativePositionBiasRule)
}

// relPosBucketFLOPs is the arithmetic of one bucket index in
// buildRelativeAttentionBias: the relative position, its sign and
// magnitude, the small/large test, the log-spaced bucket of a large one
// (a divide, a scale, an add) and the clamp; one logf.
const relPosBucketFLOPs = 8

// relativePositionBiasRule: one kernel writes every element of the bias
// [1, heads, q, k], each a bucket computed from its position (8 FLOPs
// and a log) and looked up in the table; the table is read once.
func relativePositionBiasRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := NodeEstimate{Class: perf.ClassElementwise, Launches: 1}
	c.Read(n, &e, 0)
	c.Write(n, &e)
	out := c.Numel(n.Out(0))
	e.FLOPs = relPosBucketFLOPs * out
	e.Transcendentals = out
	return e, nil
}

// gatedRelativePositionBiasRule: WavLM's gate, as onnxruntime's CUDA
// kernel runs it: the query's bias added as it is laid out per head
// [batch, heads, seq, head size] (a kernel), the gate projection a GEMM
// of batch·heads·seq rows by head size into D, then one kernel (the
// Trailer) summing each row's D/2 pairs, the two sigmoids and the gate
// (gate_u·(gate_r·eco_a − 1) + 2), and multiplying rel_pos by it into
// the output [batch, heads, seq, seq].
func gatedRelativePositionBiasRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	x, w, y := n.In(0), n.In(3), n.Out(0)
	heads := float64(n.AttrInt("num_heads", 0))
	hidden, ok1 := c.Dim(x, -1)
	d, ok2 := c.Dim(w, 1)
	out := c.Numel(y)
	dims, ok3 := c.Dims(y)
	if !ok1 || !ok2 || !ok3 || !(heads > 0) || !(d > 0) || !(out > 0) {
		return kernel(n, c, perf.ClassGEMM), nil
	}
	rows := dims[0] * dims[1] * dims[2] // batch · heads · seq
	headSize := hidden / heads
	eb := c.elemBytes(y)

	gemm := NodeEstimate{Class: perf.ClassGEMM, Launches: 2}
	c.Read(n, &gemm, 0, 1, 3, 4)
	gemm.MACs = rows * headSize * d
	gemm.FLOPs = perf.FMAFLOPs*gemm.MACs + rows*headSize + rows*d // + query bias, + gate bias
	gemm.BytesWritten += rows*headSize*eb + rows*d*eb             // the biased query, the projection
	gemm.BytesRead += rows * headSize * eb
	gemm.M, gemm.N, gemm.K = clampInt(rows), clampInt(d), clampInt(headSize)

	sig, sigT, _ := OpCount("Sigmoid")
	gate := NodeEstimate{Class: perf.ClassElementwise, Launches: 1}
	gate.BytesRead += rows * d * eb
	c.Read(n, &gate, 2, 5)
	c.Write(n, &gate)
	gate.FLOPs = rows*(d-2+2*sig+3) + out // the pair sums, sigmoids, gate; × rel_pos
	gate.Transcendentals = 2 * sigT * rows
	return gemm.withTrailer(gate), nil
}
