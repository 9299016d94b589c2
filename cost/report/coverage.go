package report

import (
	"github.com/onnxcost/onnxcost/ir"
)

// Coverage measures what the fused plan leaves on the table: the kernels
// it still launches that a production runtime (onnxruntime's graph
// optimiser, TensorRT) would have folded into a neighbour. A high share
// means the fused estimate is pessimistic because a pattern is missing in
// passes/, not because the model is slow.
type Coverage struct {
	// TimeShare is TimeS over the fused plan's total time (0 when the
	// plan takes no time).
	TimeShare float64 `json:"time_share"`
	TimeS     float64 `json:"time_s"`
	Nodes     int     `json:"nodes"`
	Launches  float64 `json:"launches"`
	// Ops counts the counted nodes per (qualified) op type, so a reader
	// sees which pattern is missing (e.g. Transpose: 61).
	Ops map[string]int `json:"ops"`
}

// layoutOps are the data-movement ops a runtime folds into the GEMM or
// attention kernel next to them (head split/merge, packed projections),
// by strides or by the kernel's own indexing.
var layoutOps = map[string]bool{
	"Transpose": true, "Slice": true, "Split": true, "Reshape": true,
	"Flatten": true, "Squeeze": true, "Unsqueeze": true, "Concat": true,
}

// quantOps are the quantisation boundaries a runtime folds into the
// quantized op (Q→DQ pairs around a Conv/MatMul become its int8 input
// and output scaling).
var quantOps = map[string]bool{
	"QuantizeLinear": true, "DequantizeLinear": true,
}

// fusableKind classifies a node for UnfusedFusable: anchor is a GEMM-like
// kernel (conv, GEMM, attention) that absorbs neighbours; pointwise is an
// elementwise op; norm a normalisation or softmax; layout and quant as
// above.
type fusableKind uint8

const (
	kindNone fusableKind = iota
	kindAnchor
	kindPointwise
	kindNorm
	kindLayout
	kindQuant
)

func kindOf(n NodeCost) fusableKind {
	if (n.Domain == "" || n.Domain == "ai.onnx") && quantOps[n.OpType] {
		return kindQuant
	}
	switch ir.OpFamily(n.Domain, n.OpType) {
	case ir.FamilyConv, ir.FamilyGEMM, ir.FamilyAttention:
		return kindAnchor
	case ir.FamilyElementwise:
		return kindPointwise
	case ir.FamilyNorm:
		return kindNorm
	}
	if (n.Domain == "" || n.Domain == "ai.onnx") && layoutOps[n.OpType] {
		return kindLayout
	}
	if ir.OpHas(n.Domain, n.OpType, ir.Elementwise) { // Cast, Where: data family, pointwise kernels
		return kindPointwise
	}
	return kindNone
}

// UnfusedFusable is the coverage measure of a fused report r. A node of
// the plan counts when it launches a kernel (Launches > 0) and
//
//   - it is a DequantizeLinear read by another node or a QuantizeLinear
//     of another node's output (a runtime folds these boundaries into the
//     quantized op or into the elementwise kernel next to them; the Q of
//     a model input and the DQ of a model output stay: they are the real
//     conversions at the model's edges); or
//   - it is elementwise (ir.FamilyElementwise or the Elementwise trait)
//     and one of its neighbours is a conv/GEMM/attention kernel (an
//     epilogue or prologue), another elementwise node (a chain runtimes
//     fuse into one kernel) or a normalisation (residual Add + LayerNorm
//     is one SkipLayerNorm kernel); or
//   - it is a normalisation (ir.FamilyNorm) next to an elementwise node,
//     or a softmax next to a GEMM (attention left unfused). A norm next
//     to a GEMM alone does not count: runtimes run it as its own kernel;
//     or
//   - it is a layout op (Transpose, Slice, Split, Reshape, Flatten,
//     Squeeze, Unsqueeze, Concat) next to a conv/GEMM/attention kernel
//     (head split and merge, packed projections).
//
// Neighbours are the producers of the node's inputs and the consumers of
// its outputs, matched by tensor name. A lone pointwise node between two
// reductions, say, does not count: no runtime fuses it. The measure is an
// approximation of the runtimes' pattern lists, not a copy of them; it is
// computed from the report alone so saved reports can be measured too.
func UnfusedFusable(r *Report) Coverage {
	cov := Coverage{Ops: map[string]int{}}
	producer := make(map[string]int, len(r.Nodes))
	consumers := make(map[string][]int, len(r.Nodes))
	kinds := make([]fusableKind, len(r.Nodes))
	for i, n := range r.Nodes {
		kinds[i] = kindOf(n)
		for _, o := range n.Outputs {
			if o.Name != "" {
				producer[o.Name] = i
			}
		}
		for _, in := range n.Inputs {
			if in.Name != "" {
				consumers[in.Name] = append(consumers[in.Name], i)
			}
		}
	}
	// neighbourIs reports whether node i has a neighbour of one of the kinds.
	neighbourIs := func(i int, want ...fusableKind) bool {
		match := func(j int) bool {
			for _, k := range want {
				if j != i && kinds[j] == k {
					return true
				}
			}
			return false
		}
		for _, in := range r.Nodes[i].Inputs {
			if j, ok := producer[in.Name]; ok && match(j) {
				return true
			}
		}
		for _, o := range r.Nodes[i].Outputs {
			for _, j := range consumers[o.Name] {
				if match(j) {
					return true
				}
			}
		}
		return false
	}
	// quantInside: a Q reading a node's output or a DQ read by a node is
	// a boundary inside the model that a runtime folds into its
	// neighbour (the quantized op, or an elementwise kernel with int8 in-
	// or output); the Q of a model input and the DQ of a model output are
	// the real conversions at its edges.
	quantInside := func(i int) bool {
		n := r.Nodes[i]
		if n.OpType == "QuantizeLinear" {
			if len(n.Inputs) == 0 {
				return false
			}
			_, ok := producer[n.Inputs[0].Name]
			return ok
		}
		for _, o := range n.Outputs {
			if len(consumers[o.Name]) > 0 {
				return true
			}
		}
		return false
	}
	for i, n := range r.Nodes {
		if n.Launches <= 0 {
			continue
		}
		var counted bool
		switch kinds[i] {
		case kindQuant:
			counted = quantInside(i)
		case kindPointwise:
			counted = neighbourIs(i, kindAnchor, kindPointwise, kindNorm)
		case kindNorm:
			counted = neighbourIs(i, kindPointwise) || isSoftmax(n) && neighbourIs(i, kindAnchor)
		case kindLayout:
			counted = neighbourIs(i, kindAnchor)
		}
		if !counted {
			continue
		}
		cov.TimeS += n.TimeS
		cov.Nodes++
		cov.Launches += n.Launches
		cov.Ops[ir.QualifiedOp(n.Domain, n.OpType)]++
	}
	if r.Totals.TimeS > 0 {
		cov.TimeShare = cov.TimeS / r.Totals.TimeS
	}
	return cov
}

func isSoftmax(n NodeCost) bool {
	return n.OpType == "Softmax" || n.OpType == ir.OpFusedSoftmax && n.Domain == ir.FusedDomain
}
