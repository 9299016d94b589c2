package ir

import (
	"fmt"
	"slices"
	"strings"
)

// Weights exported as graph inputs (issue 27, item 8).
//
// torch.onnx.export(..., export_params=False) writes every parameter as a
// graph input instead of an initializer. The graph is the same network,
// but everything that recognises a weight by its being constant (the
// parameter count, Conv+BN folding, Winograd's offline filter transform,
// GEMM bias epilogues) saw none: such an export reported 0 parameters and
// cost 13% more than the same network with initializers, with no
// warning. InferShapes therefore marks the graph inputs that can only be
// weights as initializers whose contents are not in the file (Const with
// no data, as in a graph-only export), leaves them among the graph inputs
// (the file is written back as it was read), and says so in one warning.

// weightSlots are, per default-domain op, the input slots that hold
// trained parameters in exported models: filters and biases,
// normalisation scales, shifts and running statistics, recurrent
// weights, PRelu's slope. MatMul, Gemm, Gather and Add are decided by
// weightUse.
var weightSlots = map[string][]int{
	"Conv":                  {1, 2},
	"ConvTranspose":         {1, 2},
	"BatchNormalization":    {1, 2, 3, 4},
	"InstanceNormalization": {1, 2},
	"LayerNormalization":    {1, 2},
	"GroupNormalization":    {1, 2},
	"LSTM":                  {1, 2, 3},
	"GRU":                   {1, 2, 3},
	"RNN":                   {1, 2, 3},
	"PRelu":                 {1},
}

// weightPassThrough are the one-input ops an exporter leaves between a
// weight it could not constant-fold (it had no value) and the slot that
// reads it: Linear's W^T for a MatMul, a dtype cast.
var weightPassThrough = map[string]bool{"Transpose": true, "Cast": true, "Identity": true}

// isWeightSlot reports whether n reads v (a float tensor of known static
// shape) as a parameter in input slot i.
func isWeightSlot(n *Node, i int, v *Value) bool {
	op := n.OpType
	switch n.Domain {
	case "":
	case FusedDomain:
		// The fused plan as `onnxcost optimize` writes it, read back: a
		// convolution's filter and bias, a GEMM's B and bias.
		switch op {
		case OpFusedConv, OpWinogradConv:
			op = "Conv"
		case OpFusedGemm:
			op = "Gemm"
		default:
			return false
		}
	default:
		return false
	}
	if slices.Contains(weightSlots[op], i) {
		return true
	}
	rank := len(v.Shape.Dims)
	switch op {
	case "MatMul", "Gemm":
		// B (and Gemm's C): a 2-D B that a node does not produce, beside
		// an A that is not itself constant (W·x with x an input is data).
		a := n.In(0)
		if i == 2 && op == "Gemm" {
			return rank <= 2
		}
		return i == 1 && rank == 2 && a != nil && a.Const == nil
	case "Gather":
		// An embedding table: rows of a 2-D float matrix picked by ids.
		return i == 0 && rank == 2 && n.AttrInt("axis", 0) == 0
	case "Add":
		// The bias of a MatMul exported as MatMul + Add.
		if i > 1 {
			return false
		}
		o := n.In(1 - i)
		return rank == 1 && o != nil && o.Producer != nil && o.Producer.OpType == "MatMul" && o.Producer.Domain == ""
	}
	return false
}

// onlyWeightUses reports whether every read of v is a weight slot, through
// pass-through ops, and there is at least one.
func onlyWeightUses(v *Value, depth int) bool {
	if len(v.Consumers) == 0 || depth > 4 {
		return false
	}
	for _, n := range v.Consumers {
		for i, in := range n.Inputs {
			if in != v {
				continue
			}
			if weightPassThrough[n.OpType] && n.Domain == "" && len(n.Outputs) == 1 && n.Outputs[0] != nil {
				if !onlyWeightUses(n.Outputs[0], depth+1) {
					return false
				}
				continue
			}
			if !isWeightSlot(n, i, v) {
				return false
			}
		}
	}
	return true
}

// promoteWeightInputs marks the main graph's weight-like inputs as
// initializers without data and returns the warning to give ("" when
// none): float inputs of fully known shape, given no input data, read
// only in weight slots.
func promoteWeightInputs(g *Graph) string {
	var names []string
	for _, v := range g.Inputs {
		if v == nil || v.IsInitializer || v.Const != nil || v.Kind != TensorValue || !v.DType.IsFloat() || g.IsGraphOutput(v) {
			continue
		}
		dims, static := v.Shape.Ints()
		if !static || slices.ContainsFunc(dims, func(d int64) bool { return d < 0 }) || !onlyWeightUses(v, 0) {
			continue
		}
		v.IsInitializer = true
		v.Const = &Tensor{Name: v.Name, DType: v.DType, Dims: dims}
		names = append(names, v.Name)
	}
	if len(names) == 0 {
		return ""
	}
	shown := names
	if len(shown) > 3 {
		shown = append(shown[:3:3], fmt.Sprintf("… %d more", len(names)-3))
	}
	what := "graph inputs look like weights"
	if len(names) == 1 {
		what = "graph input looks like a weight"
	}
	return fmt.Sprintf("%d %s (export_params=False?): counted as parameters (%s)", len(names), what, strings.Join(shown, ", "))
}
