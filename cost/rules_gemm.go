package cost

import (
	"strings"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
)

func init() {
	RegisterRule("", "Conv", convRule(0, 1, 2))
	RegisterRule("", "ConvInteger", convRule(0, 1, -1))
	RegisterRule("", "QLinearConv", convRule(0, 3, 8))
	RegisterRule("", "DeformConv", convRule(0, 1, 2))
	RegisterRule("", "ConvTranspose", convTransposeRule)
	RegisterRule("", "Gemm", gemmRuleAt(0, 2))
	RegisterRule("", "MatMul", matmulRule(0, 1))
	RegisterRule(msDomain, "FusedMatMul", fusedMatMulRule)
	RegisterRule(msDomain, "TransposeMatMul", fusedMatMulRule)
	RegisterRule(msDomain, "FusedMatMulActivation", withActivation(fusedMatMulRule, -1))
	RegisterRule(ir.FusedDomain, ir.OpFusedMatMul, fusedMatMulRule)
	RegisterRule("", "MatMulInteger", matmulRule(0, 1))
	RegisterRule("", "QLinearMatMul", matmulRule(0, 3))
	RegisterRule("", "Einsum", einsumRule)
	RegisterRule("", "Attention", attentionRule)
	RegisterRule(msDomain, "FusedConv", withActivation(convRule(0, 1, 2), 3))
	RegisterRule(msDomain, "FusedGemm", withActivation(gemmRuleAt(0, 2), -1))
	RegisterRule(msDomain, "GemmFastGelu", gemmFastGeluRule)
	RegisterRule(msDomain, "GemmFloat8", gemmFloat8Rule)
	RegisterRule(msDomain, "MatMulIntegerToFloat", dequantizedMatMulRule(6))
	RegisterRule(msDomain, "DynamicQuantizeMatMul", dequantizedMatMulRule(4))
}

// withActivation prices onnxruntime's FusedConv, FusedGemm,
// FusedMatMulActivation and NhwcFusedConv: the op's
// rule, plus per output element the add of the residual input at slot z
// (FusedConv's Z; z < 0: none) and the activation attribute's count
// (OpCount: Relu 1, LeakyRelu 2, Sigmoid 3 with an exp ...), in the same
// kernel.
func withActivation(r Rule, z int) Rule {
	return func(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
		e, err := r(n, c)
		if err != nil {
			return e, err
		}
		out := c.Numel(n.Out(0))
		if z >= 0 && n.In(z) != nil {
			e.FLOPs += out
		}
		if act := n.AttrString("activation", ""); act != "" {
			f, tr, ok := OpCount(act)
			if !ok {
				c.Warnf("activation %q has no count; its arithmetic is not counted", act)
			}
			e.FLOPs += f * out
			e.Transcendentals += tr * out
		}
		return e, nil
	}
}

// gemmFloat8Rule: GemmFloat8 is Gemm's count at its operands' precision
// (float8 on the GPUs that have a rate for it), every input read (its
// scales too), alpha folded into the scales (no pass of its own), C added
// when beta is not 0 (its default), and the epilogue's RELU or GELU
// (cuBLASLt's) on every output element.
func gemmFloat8Rule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e, err := gemmRuleAt(0, -1)(n, c)
	if err != nil {
		return e, err
	}
	out := c.Numel(n.Out(0))
	if n.AttrFloat("alpha", 1) != 1 {
		e.FLOPs -= out // gemmRuleAt's pass for alpha: here the scales carry it
	}
	if n.In(2) != nil && n.AttrFloat("beta", 0) != 0 {
		e.FLOPs += 2 * out // beta·C added
	}
	if act, ok := map[string]string{"RELU": "Relu", "GELU": "Gelu"}[n.AttrString("activation", "NONE")]; ok {
		f, tr, _ := OpCount(act)
		e.FLOPs += f * out
		e.Transcendentals += tr * out
	}
	return e, nil
}

// gemmFastGeluRule: GemmFastGelu is MatMul (every input read, the bias
// too) with FastGelu (its count with the bias add, less that add when
// there is no bias) on every output element in the GEMM's epilogue.
func gemmFastGeluRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e, err := matmulRule(0, 1)(n, c)
	if err != nil {
		return e, err
	}
	out := c.Numel(n.Out(0))
	fg := msElementwise["FastGelu"]
	f := fg.flops
	if n.In(2) == nil {
		f--
	}
	e.FLOPs += f * out
	e.Transcendentals += fg.trans * out
	return e, nil
}

// dequantizedMatMulRule prices onnxruntime's 8-bit MatMuls with a float
// result: MatMulIntegerToFloat (8-bit A) and DynamicQuantizeMatMul (float
// A, quantized in a pass of its own first: DynamicQuantizeLinear's count
// per element, A written at 8 bits and read back by the product, a second
// launch). Per output element the product is scaled (1) and, with the
// bias at slot bias, biased (1).
func dequantizedMatMulRule(bias int) Rule {
	mm := matmulRule(0, 1)
	return func(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
		e, err := mm(n, c)
		if err != nil {
			return e, err
		}
		out := c.Numel(n.Out(0))
		e.FLOPs += out
		if n.In(bias) != nil {
			e.FLOPs += out
		}
		if n.OpType == "DynamicQuantizeMatMul" {
			a := c.Numel(n.In(0))
			q, _, _ := OpCount("DynamicQuantizeLinear")
			e.FLOPs += q * a
			e.BytesWritten += a
			e.BytesRead += a
			e.Launches++
		}
		return e, nil
	}
}

// convRule costs a convolution whose data, weight and bias inputs are at
// slots x, w, b (b < 0: no bias slot).
//
//	macs = numel(Y) * (C/group) * R * S   (= numel(Y) * numel(W) / K)
//	flops = 2*macs + numel(Y) if a bias is present
func convRule(x, w, b int) Rule {
	return func(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
		e := kernel(n, c, perf.ClassConv)
		y := n.Out(0)
		outElems := c.Numel(y)
		wd, ok := c.Dims(n.In(w))
		if !ok || len(wd) < 2 || wd[0] == 0 {
			return e, nil
		}
		perOut := prod(wd[1:]) // (C/group) * kernel volume
		e.MACs = outElems * perOut
		e.FLOPs = perf.FMAFLOPs * e.MACs
		if b >= 0 && n.In(b) != nil {
			e.FLOPs += outElems // bias: one add per output element
		}
		// Implicit-GEMM view: per group, M = N*P*Q, N = K/group, K = C/group*R*S.
		group := float64(max(n.AttrInt("group", 1), 1))
		if yd, ok := c.Dims(y); ok && len(yd) >= 2 {
			e.Batch = clampInt(group)
			e.M = clampInt(outElems / yd[1])
			e.N = clampInt(yd[1] / group)
			e.K = clampInt(perOut)
			e.ConvChannels = clampInt(wd[1])
		}
		return e, nil
	}
}

// convTransposeRule: every input element is multiplied into a
// (M/group) x kernel patch of the output.
//
//	macs = numel(X) * (M/group) * R * S   (= numel(X) * numel(W) / C)
func convTransposeRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassConv)
	xElems := c.Numel(n.In(0))
	wd, ok := c.Dims(n.In(1))
	if !ok || len(wd) < 2 {
		return e, nil
	}
	perIn := prod(wd[1:])
	e.MACs = xElems * perIn
	e.FLOPs = perf.FMAFLOPs * e.MACs
	if n.In(2) != nil {
		e.FLOPs += c.Numel(n.Out(0))
	}
	group := float64(max(n.AttrInt("group", 1), 1))
	if xd, ok := c.Dims(n.In(0)); ok && len(xd) >= 2 && xd[1] > 0 {
		e.Batch = clampInt(group)
		e.M = clampInt(xElems / xd[1])
		e.N = clampInt(perIn)
		e.K = clampInt(wd[0] / group)
	}
	return e, nil
}

// gemmRuleAt costs Y = alpha*A'*B' + beta*C whose A and C are at slots a
// and bias (Gemm: 0 and 2; QGemm, whose int32 C follows the scales and
// zero points of A and B: 0 and 6).
//
//	macs = M*N*K
//	flops = 2*macs + M*N (alpha != 1) + M*N (C present) + M*N (C present, beta != 1)
func gemmRuleAt(a, bias int) Rule {
	return func(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
		e := kernel(n, c, perf.ClassGEMM)
		ad, ok := c.Dims(n.In(a))
		if !ok || len(ad) != 2 {
			return e, nil
		}
		k := ad[1]
		if n.AttrInt("transA", 0) != 0 {
			k = ad[0]
		}
		y, ok := c.Dims(n.Out(0))
		if !ok || len(y) != 2 {
			return e, nil
		}
		mn := y[0] * y[1]
		e.MACs = mn * k
		e.FLOPs = perf.FMAFLOPs * e.MACs
		if n.AttrFloat("alpha", 1) != 1 {
			e.FLOPs += mn
		}
		if n.In(bias) != nil {
			e.FLOPs += mn // add C (the bias)
			if n.AttrFloat("beta", 1) != 1 {
				e.FLOPs += mn
			}
		}
		e.M, e.N, e.K, e.Batch = clampInt(y[0]), clampInt(y[1]), clampInt(k), 1
		return e, nil
	}
}

// matmulRule costs a (batched, broadcast) matrix product whose operands
// are at slots a and b.
//
//	macs = numel(Y) * K   (= batch*M*N*K; also right for 1-D operands)
func matmulRule(a, b int) Rule {
	return func(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
		e := kernel(n, c, perf.ClassGEMM)
		k, ok := c.Dim(n.In(a), -1)
		if !ok {
			return e, nil
		}
		bd, bok := c.Dims(n.In(b))
		matmulCounts(n, c, &e, k, len(bd), bok)
		return e, nil
	}
}

// matmulCounts sets a matrix product's MACs, FLOPs and GEMM view from its
// contraction size k, the rank of its right operand (bRank, when known:
// bok) and its output.
func matmulCounts(n *ir.Node, c *RuleCtx, e *NodeEstimate, k float64, bRank int, bok bool) {
	y := n.Out(0)
	outElems := c.Numel(y)
	e.MACs = outElems * k
	e.FLOPs = perf.FMAFLOPs * e.MACs
	yd, _ := c.Dims(y)
	if len(yd) == 0 || !bok || outElems == 0 {
		return
	}
	nn := 1.0
	if bRank >= 2 {
		nn = yd[len(yd)-1]
	}
	m := outElems / nn // rows of the output
	batch := 1.0
	if bRank > 2 && len(yd) >= 2 {
		// B carries batch dims: independent GEMMs of the last two dims.
		m = yd[len(yd)-2]
		batch = outElems / (m * nn)
	}
	// When B is a plain matrix (a weight), A's batch dims fold into M:
	// one [batch·M × K]·[K × N] GEMM, as libraries run it.
	e.M, e.N, e.K, e.Batch = clampInt(m), clampInt(nn), clampInt(k), clampInt(batch)
}

// fusedMatMulRule: onnxruntime's FusedMatMul, one cuBLAS call: MatMul's
// counts over the operands as its transposes leave them. alpha and the
// transposes are the GEMM's own arguments (cublasGemmStridedBatchedHelper
// takes both), so they add no FLOPs, bytes or kernel.
func fusedMatMulRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassGEMM)
	ad, ok := c.Dims(n.In(0))
	if !ok || len(ad) == 0 {
		return e, nil
	}
	perm := ir.FusedMatMulOperand(n, 0, len(ad))
	bd, bok := c.Dims(n.In(1))
	matmulCounts(n, c, &e, ad[perm[len(perm)-1]], len(bd), bok)
	return e, nil
}

// einsumRule: with two or more operands, macs = product of the sizes of
// every distinct label (ellipsis dims included) per pairwise contraction,
// taken left to right without reordering (the naive order; noted). With
// one operand it is a transpose/reduction: 1 FLOP per input element.
func einsumRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassGEMM)
	eq := strings.ReplaceAll(n.AttrString("equation", ""), " ", "")
	lhs := eq
	if i := strings.Index(eq, "->"); i >= 0 {
		lhs = eq[:i]
	}
	terms := strings.Split(lhs, ",")
	if len(terms) != len(n.Inputs) || len(terms) == 0 {
		c.Warnf("equation %q does not match %d inputs; macs not counted", eq, len(n.Inputs))
		return e, nil
	}
	if len(terms) == 1 {
		e.Class = perf.ClassReduction
		e.FLOPs = c.Numel(n.In(0))
		return e, nil
	}
	sizes := map[byte]float64{}
	ellipsis := 1.0
	for i, t := range terms {
		dims, ok := c.Dims(n.In(i))
		if !ok {
			return e, nil
		}
		pre, post, hasEll := strings.Cut(t, "...")
		if !hasEll {
			pre, post = t, ""
		}
		if len(pre)+len(post) > len(dims) {
			c.Warnf("equation term %q has more labels than input %d has dims", t, i)
			return e, nil
		}
		for j := 0; j < len(pre); j++ {
			sizes[pre[j]] = max(sizes[pre[j]], dims[j])
		}
		for j := 0; j < len(post); j++ {
			sizes[post[j]] = max(sizes[post[j]], dims[len(dims)-len(post)+j])
		}
		if hasEll {
			ellipsis = max(ellipsis, prod(dims[len(pre):len(dims)-len(post)]))
		}
	}
	all := ellipsis
	for _, s := range sizes {
		all *= s
	}
	e.MACs = all * float64(len(terms)-1)
	e.FLOPs = perf.FMAFLOPs * e.MACs
	if len(terms) > 2 {
		e.Note = "Einsum with more than two operands: naive left-to-right contraction, upper bound"
	}
	return e, nil
}

// attentionRule (ONNX opset 23 Attention): Q·Kᵀ and P·V batched GEMMs plus
// a softmax over the scores; Lk counts the past_key's keys too.
//
//	macs = B*H*Lq*Lk*(dk + dv); softmax 4 flops + 1 exp per score
func attentionRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassAttention)
	q, ok1 := c.Dims(n.In(0))
	k, ok2 := c.Dims(n.In(1))
	v, ok3 := c.Dims(n.In(2))
	if !ok1 || !ok2 || !ok3 || len(q) < 3 || len(k) < 3 || len(v) < 3 {
		return e, nil
	}
	var bh, lq, lk, dk, dv, kvh float64
	if len(q) == 4 { // [B, H, L, d]
		bh, lq, dk = q[0]*q[1], q[2], q[3]
		lk, dv, kvh = k[2], v[3], k[1]
	} else { // [B, L, H*d]: heads split the hidden size, the product is the same
		heads := float64(max(n.AttrInt("q_num_heads", 1), 1))
		bh, lq, dk = q[0]*heads, q[1], q[2]/heads
		kvh = float64(max(n.AttrInt("kv_num_heads", 1), 1))
		lk, dv = k[1], v[2]/kvh
	}
	// past_key ([B, kvH, P, d]): the keys attended are the past's and
	// the new ones (present = concat(past, K)).
	if pk, ok := c.Dims(n.In(4)); ok && len(pk) == 4 {
		lk += pk[2]
	}
	e.Decode = decodeView(lq, q[0]*kvh, lk, dk)
	scores := bh * lq * lk
	e.MACs = scores * (dk + dv)
	e.FLOPs = perf.FMAFLOPs*e.MACs + 4*scores
	e.Transcendentals = scores
	e.M, e.N, e.K, e.Batch = clampInt(lq), clampInt(lk), clampInt(dk), clampInt(bh)
	return e, nil
}
