package cost

import (
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
)

// ONNX Runtime's weight-only quantized kernels (ir/ops_contrib_quant.go).
// Their weights stay packed in memory and are dequantized in registers on
// the way into the product, so what they move is the packed bytes while
// what they compute runs at the activation's precision.

func init() {
	RegisterRule("com.microsoft", "MatMulNBits", matMulNBitsRule)
	RegisterRule("com.microsoft", "GatherBlockQuantized", gatherBlockQuantizedRule)
	RegisterRule("com.microsoft", "MatMulBnb4", matMulBnb4Rule)
}

// dequantOps is the arithmetic of dequantizing one weight value,
// (q − zero_point)·scale: a subtract and a multiply. MatMulNBits always
// has a zero point (the given one, else the spec's 2^(bits−1) for its
// unsigned packing), so it always pays both.
const dequantOps = 2

// matMulNBitsRule: Y[M×N] = A[M×K] · dequant(B)ᵀ (+ bias), B a constant
// [N, K] weight packed at bits per value, M the product of A's leading
// dims (a decode step's M is the batch).
//
//	macs  = M·N·K
//	flops = 2·macs + 2·N·K (dequantize each weight once: subtract the zero
//	        point, multiply by the block scale) + M·N (bias, when present)
//	bytes = A + packed B (N·ceil(K/block)·block·bits/8) + scales + zero
//	        points + g_idx + bias, read once; Y written once
//
// The fused kernels (ORT's GEMV for small M, the fpA_intB tiled GEMM for
// prefill) dequantize a weight tile in registers and reuse it across the
// tile's rows, so the dequantize is counted per weight, not per MAC. The
// GEMM view is one [M×K]·[K×N] product at A's precision (fp16 tensor
// cores for an fp16 model; the small-M GEMV path for a decode step), so a
// decode step is priced on its packed weight bytes: about a quarter of
// the fp16 weights' at 4 bits.
func matMulNBitsRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassGEMM)
	y := n.Out(0)
	k := float64(n.AttrInt("K", 0))
	if k <= 0 {
		d, ok := c.Dim(n.In(0), -1)
		if !ok {
			return e, nil
		}
		k = d
	}
	nn := float64(n.AttrInt("N", 0))
	if nn <= 0 {
		d, ok := c.Dim(y, -1)
		if !ok {
			return e, nil
		}
		nn = d
	}
	outElems := c.Numel(y)
	if outElems == 0 || nn <= 0 || k <= 0 {
		return e, nil
	}
	m := outElems / nn
	e.MACs = m * nn * k
	e.DequantFLOPs = dequantOps * nn * k
	e.FLOPs = perf.FMAFLOPs*e.MACs + e.DequantFLOPs
	if n.In(5) != nil {
		e.FLOPs += outElems
	}
	e.M, e.N, e.K, e.Batch = clampInt(m), clampInt(nn), clampInt(k), 1
	return e, nil
}

// matMulBnb4Rule: bitsandbytes' 4-bit MatMul, priced as MatMulNBits is
// (the weight dequantized once in the fused kernel, a GEMV for a decode
// step's rows, the packed bytes read), with 1 flop a weight: an FP4/NF4
// value is a table entry times its block's absmax, no zero point.
//
//	macs  = M·N·K;  flops = 2·macs + N·K
//	bytes = A + packed B (N·K/2) + absmax, read once; Y written once
func matMulBnb4Rule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassGEMM)
	k, nn := float64(n.AttrInt("K", 0)), float64(n.AttrInt("N", 0))
	if n.AttrInt("transB", 1) == 0 {
		k, nn = nn, k
	}
	out := c.Numel(n.Out(0))
	if !(k > 0) || !(nn > 0) || !(out > 0) {
		return e, nil
	}
	m := out / nn
	e.MACs = m * nn * k
	e.DequantFLOPs = nn * k
	e.FLOPs = perf.FMAFLOPs*e.MACs + e.DequantFLOPs
	e.M, e.N, e.K, e.Batch = clampInt(m), clampInt(nn), clampInt(k), 1
	return e, nil
}

// gatherBlockQuantizedRule: an embedding lookup from a block-quantized
// table, dequantizing each gathered value.
//
//	flops = numel(Y) · (1 multiply by the scale, + 1 subtract when a zero
//	        point applies: given, or uint8 data's default 2^(bits−1); int4,
//	        uint4 and float8/float4 tables default to none)
//	bytes = the gathered share of the table, scales and zero points
//	        (numel(Y) / the table's value count, at most all of them, of
//	        each, at their stored sizes) + indices; Y written once
//
// A decode step reads one packed row and its scales, not the table.
func gatherBlockQuantizedRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := NodeEstimate{Class: perf.ClassData, Launches: 1}
	out := c.Numel(n.Out(0))
	data := n.In(0)
	values := c.Numel(data)
	bits := n.AttrInt("bits", 4)
	if data != nil && data.DType == ir.Uint8 && bits >= 1 && bits < 8 {
		values *= float64(8 / bits) // a uint8 table packs 8/bits values per byte
	}
	share := 0.0
	if values > 0 {
		share = min(out/values, 1)
	}
	for _, i := range []int{0, 2, 3} {
		v := n.In(i)
		if v == nil {
			continue
		}
		e.BytesRead += share * storedBytes(c, v, i != 2)
		c.param(v, &e)
	}
	c.readOne(n.In(1), &e)
	c.Write(n, &e)
	perValue := 1.0
	if n.In(3) != nil || (data != nil && data.DType == ir.Uint8) {
		perValue++
	}
	e.FLOPs = perValue * out
	return e, nil
}

// storedBytes is v's size as costed; quantized storage (own true) keeps
// its own element size under a --dtype override, which resizes only the
// floating-point tensors a kernel computes in (an fp8 or fp4 table stays
// 8 or 4 bits when the scales are costed at fp16).
func storedBytes(c *RuleCtx, v *ir.Value, own bool) float64 {
	if !own {
		return c.Bytes(v)
	}
	return c.Numel(v) * float64(v.DType.Bits()) / 8
}
