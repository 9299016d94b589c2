package cost

import (
	"github.com/onnxcost/onnxcost/ir"
)

// rowPasses is how many times a multi-pass kernel reads each row of a
// row-wise op that does not fit on chip (the time model's RowPasses; see
// cost/perf/rows.go): softmax reads for the maximum, the sum of
// exponentials and the normalisation; the normalisations read for their
// statistics and to normalise; a plain reduction reads once whatever the
// row length.
var rowPasses = map[string]float64{
	"Softmax": 3, "LogSoftmax": 3,
	"LayerNormalization": 2, "RMSNormalization": 2, "SimplifiedLayerNormalization": 2,
	"MeanVarianceNormalization": 2, "InstanceNormalization": 2, "GroupNormalization": 2,
	"LpNormalization": 2,
}

// setRows gives e the row view of node n costed as op (a default-domain
// row-wise op, which fixes the axis default): rows = elements / row length,
// the row being the normalised axes. Ops without rows (BatchNorm, Hardmax)
// and shapes that are not known leave e as it is.
func setRows(e *NodeEstimate, n *ir.Node, c *RuleCtx, op string) {
	passes, ok := rowPasses[op]
	if !ok {
		return
	}
	probe := *n
	probe.OpType = op
	rows := rowsOf(&probe, c)
	in := c.Numel(n.In(0))
	if rows <= 0 || in <= 0 {
		return
	}
	e.Rows, e.RowLen, e.RowPasses = clampInt(rows), clampInt(in/rows), passes
	e.RowInSample = leadingAxisInRows(&probe, c)
	e.RowShared = rowShared(n, c, in/rows)
}

// rowShared is the bytes of n's inputs after the first that are no longer
// than a row (a norm's scale and bias, broadcast over the rows): every
// row's CTA reads them, from L2 but the first.
func rowShared(n *ir.Node, c *RuleCtx, rowLen float64) float64 {
	var b float64
	for i := 1; i < len(n.Inputs); i++ {
		if v := n.In(i); v != nil && c.Numel(v) <= rowLen {
			b += c.Bytes(v)
		}
	}
	return b
}

// leadingAxisInRows reports whether rowsOf's rows span the input's
// leading axis, so that no row crosses it: instance and group norms
// always, an op normalising from an axis only from axis 1 on (axis 0
// makes the whole tensor one row, which a batch lengthens), mean-variance
// normalisation never.
func leadingAxisInRows(n *ir.Node, c *RuleCtx) bool {
	dims, ok := c.Dims(n.In(0))
	if !ok || len(dims) < 2 {
		return false
	}
	switch n.OpType {
	case "InstanceNormalization", "GroupNormalization":
		return true
	case "BatchNormalization", "Hardmax", "MeanVarianceNormalization":
		// MVN's default axes (0, 2, 3) normalise across the batch.
		return false
	}
	axis, ok := normAxis(n, c, len(dims))
	return ok && axis >= 1 && axis < int64(len(dims))
}

// setReduceRows gives a reduction over the trailing axes (ReduceSum/Mean
// over the last axis, the row-wise case) its row view: one pass, so only
// grid under-fill applies. A reduction over leading or interior axes is a
// column reduction whose parallelism is the kept elements, not rows; it
// keeps the plain memory time.
func setReduceRows(e *NodeEstimate, n *ir.Node, c *RuleCtx) {
	in, out := c.Numel(n.In(0)), c.Numel(n.Out(0))
	dims, ok := c.Dims(n.In(0))
	if !ok || in <= 0 || out <= 0 || len(dims) == 0 || !reducesTrailing(n, c, len(dims)) {
		return
	}
	e.Rows, e.RowLen, e.RowPasses = clampInt(out), clampInt(in/out), 1
	reduced, _ := trailingAxes(n, len(dims))
	e.RowInSample = reduced < len(dims)
}

// reducesTrailing reports whether a Reduce* node reduces only a suffix of
// its input's axes (axes from the attribute, or the second input since
// opset 18; no axes means all, which is one row).
func reducesTrailing(n *ir.Node, c *RuleCtx, rank int) bool {
	_, ok := trailingAxes(n, rank)
	return ok
}

// trailingAxes is how many trailing axes a Reduce* node reduces, and
// whether it reduces only a suffix of its input's axes.
func trailingAxes(n *ir.Node, rank int) (int, bool) {
	axes, ok := n.AttrInts("axes")
	if !ok && len(n.Inputs) > 1 && n.In(1) != nil {
		v := n.In(1)
		if v.Const == nil {
			return 0, false // axes known only at run time
		}
		axes = v.Const.Ints
	}
	if len(axes) == 0 {
		return rank, n.AttrInt("noop_with_empty_axes", 0) == 0
	}
	seen := map[int64]bool{}
	for _, a := range axes {
		if a < 0 {
			a += int64(rank)
		}
		if a < 0 || a >= int64(rank) {
			return 0, false
		}
		seen[a] = true
	}
	for a := int64(rank) - int64(len(seen)); a < int64(rank); a++ {
		if !seen[a] {
			return 0, false
		}
	}
	return len(seen), true
}

// rowWise gives a fused row-wise op's estimate the row view of op, the
// default-domain op it computes (its axis attribute is the same).
func rowWise(r Rule, op string) Rule {
	return func(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
		e, err := r(n, c)
		if err == nil {
			setRows(&e, n, c, op)
		}
		return e, err
	}
}

// vectorizedOps are the ops every runtime runs as a vectorized library
// kernel whose speed does not follow its arithmetic (perf.Kernel
// Vectorized): PyTorch's layer norm (vectorized_layer_norm_kernel) and
// GELU (its vectorized elementwise loop), measured so in Vidur's phi-2
// rows, and the contrib and fused forms of the same kernels (onnxruntime's
// LayerNorm and Gelu kernels, a fused GELU chain). RMSNormalization is
// left out: the only timings of it are sarathi's scalar kernel, and what
// an eager runtime runs for it depends on its version.
var vectorizedOps = map[string]bool{
	"LayerNormalization": true, "SkipLayerNormalization": true,
	"Gelu": true, "FastGelu": true, "BiasGelu": true, "QuickGelu": true,
}

// VectorizedOp reports whether nodes of opType are priced as vectorized
// library kernels (perf.Kernel Vectorized), for harnesses that build
// kernels the way Analyze does.
func VectorizedOp(opType string) bool { return vectorizedOps[opType] }

// StreamOp reports whether a node of opType in domain runs as a plain
// elementwise kernel of a runtime's own library (perf.Kernel Stream): a
// standard elementwise op outside the vectorized set. The analyzer marks
// such a kernel a stream only when no operand is broadcast or strided
// (perf.Kernel Strided: PyTorch's non-vectorized loop, whose index
// arithmetic keeps it at the scalar rate). Fused chains and contrib ops
// (onnxruntime's RotaryEmbedding, sarathi's kernels in Vidur's rows) keep
// the scalar rate too: what their code does per element is not known here.
func StreamOp(domain, opType string) bool {
	return domain == "" && !vectorizedOps[opType] && ir.OpHas("", opType, ir.Elementwise)
}
