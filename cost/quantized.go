package cost

import (
	"strings"

	"github.com/onnxcost/onnxcost/ir"
)

// A quantized model runs its matrix products at the quantized type, not
// at the float type its scales (QLinearConv) or its dequantized tensors
// (a Q/DQ graph) carry. With no --dtype, such a node is costed at the
// quantized compute dtype: its path (int8 tensor cores) and, for a
// Q/DQ-wrapped op, its float tensors at the quantized element size, as
// the fused int8 kernel an engine runs reads and writes them. An integer
// op's tensors keep their own types (analyzer.computeFor): its data is
// already 8-bit, and its float scales, biases and outputs are float.
// Two forms are recognised:
//
//   - integer ops (QLinearConv, QLinearMatMul, ConvInteger, MatMulInteger
//     and the com.microsoft QLinear*, QOrdered*, DequantizeWithOrder, QGemm
//     and MatMulIntegerToFloat ops,
//     and QAttention, whose float attention is priced apart: trailer.go)
//     whose data input is an 8-bit integer, and DynamicQuantizeMatMul and
//     DynamicQuantizeLSTM, whose float input they quantize per call for
//     their 8-bit weights, and MatMulBlockQuantizedFp8Weight with an
//     a_scale (W8A8: A quantized to E4M3 in the kernel);
//   - Q/DQ-wrapped ops: a node whose data input and weight (inputs 0 and
//     1) are both DequantizeLinear outputs of a quantized type, the
//     pattern Q/DQ exporters write around Conv, MatMul and Gemm (and the
//     fused nodes the passes build from them keep it). A node with only a
//     dequantized weight (weight-only quantization) computes in float and
//     is not one.
//
// Removing the Q/DQ kernels themselves is a fusion pass's business; this
// only decides what the wrapped op runs at.

// quantizedDType is the compute dtype (a name of computeDTypes and its
// storage dtype) node n runs at as a quantized op, or ok false.
func quantizedDType(n *ir.Node) (name string, dt ir.DType, ok bool) {
	x := n.In(0)
	if x == nil {
		return "", ir.Undefined, false
	}
	if n.OpType == "MatMulBlockQuantizedFp8Weight" && n.Domain == "com.microsoft" && n.In(3) != nil {
		// W8A8: its a_scale quantizes A to E4M3 in the kernel, and the
		// product runs at fp8.
		if b := n.In(1); b != nil {
			return quantName(b.DType)
		}
	}
	if integerQuantOp(n) {
		if n.OpType == "DynamicQuantizeMatMul" || n.OpType == "DynamicQuantizeLSTM" {
			// Its float A is quantized per call: B's type is the product's.
			if b := n.In(1); b != nil {
				return quantName(b.DType)
			}
		}
		return quantName(x.DType)
	}
	w := n.In(1)
	if w == nil {
		return "", ir.Undefined, false
	}
	xn, xdt, xok := dequantizedFrom(x)
	_, _, wok := dequantizedFrom(w)
	if !xok || !wok {
		return "", ir.Undefined, false
	}
	return xn, xdt, true
}

// integerQuantOp reports whether n is an integer-arithmetic quantized op.
func integerQuantOp(n *ir.Node) bool {
	switch n.Domain {
	case "", "com.microsoft":
	default:
		return false
	}
	op := n.OpType
	return strings.HasPrefix(op, "QLinear") || strings.HasPrefix(op, "QOrdered") || op == "DequantizeWithOrder" ||
		op == "ConvInteger" || op == "MatMulInteger" || op == "QGemm" ||
		op == "MatMulIntegerToFloat" || op == "DynamicQuantizeMatMul" || op == "QAttention" || op == "DynamicQuantizeLSTM"
}

// dequantizedFrom is the quantized compute dtype of v when v is a
// DequantizeLinear output of a quantized tensor.
func dequantizedFrom(v *ir.Value) (string, ir.DType, bool) {
	p := v.Producer
	if p == nil || p.OpType != "DequantizeLinear" || (p.Domain != "" && p.Domain != "com.microsoft") {
		return "", ir.Undefined, false
	}
	q := p.In(0)
	if q == nil {
		return "", ir.Undefined, false
	}
	return quantName(q.DType)
}

// quantName maps a quantized storage type to its compute dtype: 8-bit
// (and narrower) integers run as int8, 8-bit floats as fp8.
func quantName(dt ir.DType) (string, ir.DType, bool) {
	switch dt {
	case ir.Int8, ir.Uint8, ir.Int4, ir.Uint4:
		return "int8", ir.Int8, true
	case ir.Float8E4M3FN, ir.Float8E4M3FNUZ, ir.Float8E5M2, ir.Float8E5M2FNUZ:
		return "fp8", ir.Float8E4M3FN, true
	}
	return "", ir.Undefined, false
}

// modelQuantized is the quantized compute dtype of g's quantized nodes
// (the first found, in topological order; subgraphs included), or "".
func modelQuantized(g *ir.Graph) string {
	for _, n := range g.Nodes {
		if name, _, ok := quantizedDType(n); ok {
			return name
		}
		for _, sg := range n.Subgraphs() {
			if q := modelQuantized(sg); q != "" {
				return q
			}
		}
	}
	return ""
}
