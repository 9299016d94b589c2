package cost

import (
	"fmt"
	"strings"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
)

// Rules for onnxruntime's newer weight-only products
// (ir/ops_contrib_matmul_fused.go). Each is one kernel: its weights
// stay packed in memory and are dequantized on the way into the product
// (DequantFLOPs, once a weight, as matMulNBitsRule counts them), so a
// decode step is priced on the packed bytes.

func init() {
	RegisterRule(msDomain, "MatMulNBitsQkv", fusedNBitsRule)
	RegisterRule(msDomain, "MatMulNBitsMlp", fusedNBitsRule)
	RegisterRule(msDomain, "MatMulBlockQuantizedFp4Weight", blockScaledRule)
	RegisterRule(msDomain, "MatMulBlockQuantizedFp8Weight", blockScaledRule)
}

// gateActivations maps MatMulNBitsMlp's activation attribute to the op
// whose count it costs.
var gateActivations = map[string]string{"silu": "Swish", "swish": "Swish", "gelu": "Gelu", "relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh"}

// fusedNBitsRule: MatMulNBitsQkv and MatMulNBitsMlp over the M rows of A
// ([..., K]) and their projections' total width W (Qkv: Nq + 2·Nkv; Mlp:
// 2·N, gate and up):
//
//	norm   (with norm_scale) the RMS norm's count: 4 an element, 1 and an
//	       rsqrt a row; with skip, 1 more an element for the residual add
//	macs   M·K·W
//	flops  2·macs + 2·K·W (each weight dequantized once) + M·width for each
//	       bias + (Mlp) the gate's activation and the product with up, per
//	       M·N
//
// The GEMM view is one M × W × K product at A's precision.
func fusedNBitsRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassGEMM)
	k, widths, ok := ir.FusedNBitsWidths(n)
	if !ok {
		return e, nil
	}
	rows := c.Numel(n.In(0)) / float64(k)
	if !(rows > 0) {
		return e, nil
	}
	var w float64
	for _, x := range widths {
		w += float64(x)
	}
	e.MACs = rows * float64(k) * w
	e.DequantFLOPs = dequantOps * float64(k) * w
	e.FLOPs = perf.FMAFLOPs*e.MACs + e.DequantFLOPs
	elems := rows * float64(k)
	if n.In(2) != nil {
		rms := normOps["SimplifiedLayerNormalization"]
		e.FLOPs += rms.inFLOPs*elems + rms.rowFLOPs*rows
		e.Transcendentals += rms.rowTrans * rows
	}
	if n.In(1) != nil {
		e.FLOPs += elems
	}
	for i, slot := range []int{5, 8, 11} {
		if i < len(widths) && n.In(slot) != nil {
			e.FLOPs += rows * float64(widths[i])
		}
	}
	if n.OpType == "MatMulNBitsMlp" {
		act := strings.ToLower(n.AttrString("activation", ""))
		op, known := gateActivations[act]
		if !known {
			op = "Swish"
			e.Note = fmt.Sprintf("gate activation %q priced as SiLU", act)
		}
		f, t, _ := OpCount(op)
		gated := rows * float64(widths[0])
		e.FLOPs += (f + 1) * gated
		e.Transcendentals += t * gated
	}
	e.M, e.N, e.K, e.Batch = clampInt(rows), clampInt(w), clampInt(float64(k)), 1
	return e, nil
}

// blockScaledRule: MatMulBlockQuantizedFp4Weight and
// MatMulBlockQuantizedFp8Weight, Y[M×N] = A[M×K]·dequant(B)ᵀ (+ bias):
//
//	macs   M·N·K
//	flops  2·macs + the weights' dequantization once (NVFP4: 2 an element,
//	       the block's E4M3 scale and the global one; FP8 weight-only: 1,
//	       the block scale) + M·N (bias)
//	W8A8   (FP8 with a_scale) A is quantized to E4M3 in the kernel (2 an
//	       element: scale, convert) and the product runs at fp8, each
//	       block's scale applied to its partial sums (M·N·ceil(K/block))
//
// NVFP4's native Blackwell path (input_scale) is not modelled: the spec
// keeps it reserved, and the weight-only path runs at A's precision.
func blockScaledRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassGEMM)
	b, ok := c.Dims(n.In(1))
	out := c.Numel(n.Out(0))
	if !ok || len(b) != 2 || !(out > 0) || !(b[0] > 0) {
		return e, nil
	}
	fp4 := n.OpType == "MatMulBlockQuantizedFp4Weight"
	nn, k := b[0], b[1]
	if fp4 {
		k *= 2
	}
	m := out / nn
	e.MACs = m * nn * k
	e.FLOPs = perf.FMAFLOPs * e.MACs
	switch {
	case fp4:
		e.DequantFLOPs = 2 * nn * k
	case n.In(3) != nil: // W8A8
		bs := float64(max(n.AttrInt("block_size", 128), 1))
		e.FLOPs += 2*m*k + m*nn*float64(int64((k+bs-1)/bs))
	default:
		e.DequantFLOPs = nn * k
	}
	e.FLOPs += e.DequantFLOPs
	bias := 4
	if fp4 {
		bias = 5
	}
	if n.In(bias) != nil {
		e.FLOPs += out
	}
	e.M, e.N, e.K, e.Batch = clampInt(m), clampInt(nn), clampInt(k), 1
	return e, nil
}
