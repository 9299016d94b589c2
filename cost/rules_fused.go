package cost

import (
	"fmt"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

// Cost rules for the nodes written by the epilogue and Winograd passes
// (passes/epilogue.go, passes/winograd.go); their inputs and attributes are documented there.
// Each is one kernel: the arithmetic of its parts, the bytes of its own
// inputs and outputs (FusedEstimate), one launch.

func init() {
	RegisterRule(ir.FusedDomain, ir.OpFusedConv, fusedConvRule)
	RegisterRule(ir.FusedDomain, ir.OpFusedGemm, fusedGemmRule)
	RegisterRule(ir.FusedDomain, ir.OpWinogradConv, winogradConvRule)
	RegisterRule(ir.FusedDomain, ir.OpGroupedGemm, groupedGemmRule)
}

// fusedConvRule: conv (+bias) + residual add + activation + pool.
//
//	flops = 2*macs + numel(convOut)*(bias + residual + activation) + pool work
func fusedConvRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	convOut := convOutput(n, c)
	conv, err := c.Estimate(&ir.Node{Name: n.Name, OpType: "Conv",
		Inputs: []*ir.Value{n.In(0), n.In(1), n.In(2)}, Outputs: []*ir.Value{convOut}, Attrs: n.Attrs})
	if err != nil {
		return NodeEstimate{}, err
	}
	var buf [maxFusedParts]NodeEstimate
	parts := appendEpilogueParts(append(buf[:0], conv), n, c, convOut)
	pool, err := poolPart(n, c, convOut)
	if err != nil {
		return NodeEstimate{}, err
	}
	return FusedEstimate(n, c, append(parts, pool)...), nil
}

// fusedGemmRule: Gemm or MatMul (+bias) + residual add + activation.
//
//	flops = 2*macs + numel(Y)*(bias + residual + activation + gate)   (Gemm: its C terms as gemmRuleAt counts them)
func fusedGemmRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	y := n.Out(0)
	anchor := ir.AnchorOf(n)
	ins := []*ir.Value{n.In(0), n.In(1)}
	var bias NodeEstimate
	switch anchor {
	case "Gemm":
		ins = append(ins, n.In(2))
	case "MatMul":
		if n.In(2) != nil {
			bias.FLOPs = c.Numel(y) // one add per output element
		}
	default:
		c.Warnf("unknown anchor %q; costed as MatMul", anchor)
	}
	if anchor != "Gemm" {
		anchor = "MatMul"
	}
	prod, err := c.Estimate(&ir.Node{Name: n.Name, OpType: anchor, Inputs: ins, Outputs: []*ir.Value{y}, Attrs: n.Attrs})
	if err != nil {
		return NodeEstimate{}, err
	}
	var buf [maxFusedParts]NodeEstimate
	parts := appendEpilogueParts(append(buf[:0], prod, bias), n, c, y)
	return FusedEstimate(n, c, parts...), nil
}

// groupedGemmRule: X·W1 | ... | X·Wn (passes/qkv.go) as one GEMM over the
// packed weights [K × (N1+...+Nn)], bias adds in its epilogue.
//
//	macs  = Σ numel(Yi)·K        (= M·(N1+...+Nn)·K, M = numel(X)/K)
//	flops = 2·macs + numel(Yi) per branch with a bias
//	bytes = X once, every weight and bias, every output (FusedEstimate)
//
// GEMM view for the time model: M = numel(X)/K, N = N1+...+Nn, K.
func groupedGemmRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	gemm := NodeEstimate{Class: perf.ClassGEMM}
	k, ok := c.Dim(n.In(0), -1)
	if !ok || k <= 0 {
		return FusedEstimate(n, c, gemm), nil
	}
	m := c.Numel(n.In(0)) / k
	cols := 0.0
	for i, y := range n.Outputs {
		if y == nil {
			continue
		}
		out := c.Numel(y)
		gemm.MACs += out * k
		if n.In(2+2*i) != nil {
			gemm.FLOPs += out // bias add
		}
		if m > 0 {
			cols += out / m
		}
	}
	gemm.FLOPs += perf.FMAFLOPs * gemm.MACs
	gemm.M, gemm.N, gemm.K, gemm.Batch = clampInt(m), clampInt(cols), clampInt(k), 1
	return FusedEstimate(n, c, gemm), nil
}

// maxFusedParts is the most parts a fused GEMM or convolution has: its
// product, a bias or pool, and the three epilogue parts. The fused rules
// collect their parts in an array of this size on the stack; the slices
// they built instead were 5 MB of Analyze's 42 MB (after the other cuts)
// on a 112k-node LLaMA-shaped graph.
const maxFusedParts = 5

// appendEpilogueParts appends the pointwise work a fused node applies to
// its accumulator y, from its attributes: the residual add (attribute
// residual=1: 1 flop per element), the activation (attribute activation,
// counted from the elementwise table; Silu = x*sigmoid(x)) and the gating
// Mul (attribute gate=1: 1 flop per element).
func appendEpilogueParts(parts []NodeEstimate, n *ir.Node, c *RuleCtx, y *ir.Value) []NodeEstimate {
	if n.AttrInt(ir.KeyResidual, 0) != 0 {
		parts = append(parts, NodeEstimate{Counts: report.Counts{FLOPs: c.Numel(y)}})
	}
	act := n.AttrString(ir.KeyActivation, "")
	if act == "Silu" {
		act = "Swish" // x*sigmoid(x): the same count
	}
	if act == "Gelu" && n.AttrString(ir.KeyActivationPrefix+"approximate", "none") == "tanh" {
		out := c.Numel(y)
		parts = append(parts, NodeEstimate{Counts: report.Counts{FLOPs: geluTanhCounts.flops * out, Transcendentals: geluTanhCounts.trans * out}, Class: perf.ClassElementwise})
	} else if p, ok := ElementwisePart(c, act, y); ok {
		parts = append(parts, p)
	}
	if n.AttrInt(ir.KeyGate, 0) != 0 {
		parts = append(parts, NodeEstimate{Counts: report.Counts{FLOPs: c.Numel(y)}})
	}
	return parts
}

// poolPart is the pooling of a FusedConv (attribute pool), costed by the
// pool op's own rule over the fused node's output; zero when not pooled.
func poolPart(n *ir.Node, c *RuleCtx, convOut *ir.Value) (NodeEstimate, error) {
	op := n.AttrString(ir.KeyPool, "")
	if op == "" {
		return NodeEstimate{}, nil
	}
	_, attrs := ir.SplitPoolAttrs(n)
	return c.Estimate(&ir.Node{Name: n.Name, OpType: op, Inputs: []*ir.Value{convOut}, Outputs: []*ir.Value{n.Out(0)}, Attrs: attrs})
}

// convOutput is the value the convolution of a FusedConv/WinogradConv
// writes into its epilogue: the node's output when it does not pool, else
// a phantom value (in no graph) with the convolution's output shape.
func convOutput(n *ir.Node, c *RuleCtx) *ir.Value {
	y := n.Out(0)
	if n.AttrString(ir.KeyPool, "") == "" || y == nil {
		return y
	}
	v := &ir.Value{Name: y.Name + ":conv", Kind: ir.TensorValue, DType: y.DType, Shape: ir.Unranked()}
	xd, ok1 := c.Dims(n.In(0))
	wd, ok2 := c.Dims(n.In(1))
	if !ok1 || !ok2 || len(xd) != len(wd) || len(xd) < 3 {
		return v
	}
	dims := []ir.Dim{ir.D(clampInt(xd[0])), ir.D(clampInt(wd[0]))}
	for i := 2; i < len(xd); i++ {
		d, ok := convOutDim(n, i-2, len(xd)-2, clampInt(xd[i]), clampInt(wd[i]))
		if !ok {
			c.Warnf("cannot work out the convolution's output size before pooling")
			return v
		}
		dims = append(dims, ir.D(d))
	}
	v.Shape = ir.RankedShape(dims...)
	return v
}

// convOutDim is the output size along spatial axis i of node's
// convolution with n spatial axes (ir.ConvOutDim over its attributes).
func convOutDim(node *ir.Node, i, n int, in, k int64) (int64, bool) {
	at := func(name string, idx int, def int64) int64 {
		v, ok := node.AttrInts(name)
		if !ok || idx >= len(v) {
			return def
		}
		return v[idx]
	}
	return ir.ConvOutDim(in, k, at("strides", i, 1), at("dilations", i, 1), at("pads", i, 0), at("pads", i+n, 0), node.AttrString("auto_pad", "NOTSET"))
}

// winogradConvRule: F(m×m,3×3) Winograd convolution (m = winograd_tile)
// with FusedConv's epilogue. Its macs and flops are the convolution's
// (the direct Conv rule's: the model's arithmetic does not depend on the
// algorithm); what the kernel executes, with T = N·⌈P/m⌉·⌈Q/m⌉ tiles and
// α = m+2, is
//
//	executed_macs  = α²·T·C·K                      (the batched elementwise GEMMs)
//	executed_flops = 2·executed_macs + T·C·inputOps(m) + T·K·outputOps(m) + bias + epilogue
//
// inputOps/outputOps are the adds and non-unit multiplies of B^T·d·B and
// A^T·M·A (WinogradTransformOps). The filter transform is offline, so the
// weights read are the transformed filter, α²·C·K elements, instead of
// 9·C·K. Winograd runs on the vector units; at a compute dtype that has
// tensor cores (fp16, bf16, fp8, int8), implicit GEMM on tensor cores is
// faster, so the node is costed as the direct FusedConv (noted).
func winogradConvRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	// TF32 is stored as fp32, so the storage dtype alone would keep it
	// on Winograd's fp32 vector kernels: 8× below A100's TF32 tensor rate
	// (19.5 vs 156 TFLOP/s), the cause of ResNet-50 at TF32 coming out
	// 1.8× too slow. cuDNN's Winograd kernels have no tensor-core form,
	// and with TF32 allowed its heuristics pick tensor-core implicit GEMM.
	// A GPU without a tensor path for a float dtype (Pascal at fp16, in
	// fp32 math) runs cuDNN's Winograd as at fp32; integer convolutions
	// have no Winograd kernel anywhere.
	if (tensorCoreDType(c.DType) || c.Compute == "tf32") && (!c.NoConvTensorCores || !c.DType.IsFloat()) {
		e, err := fusedConvRule(n, c)
		e.Note = "Winograd not used at this compute dtype: tensor-core implicit GEMM is faster (costed as direct convolution)"
		return e, err
	}
	m := n.AttrInt(ir.KeyWinogradTile, 0)
	if m != 2 && m != 4 {
		m = 0 // also keeps ceilDiv below away from a zero divisor
	}
	_, _, ok := WinogradTransformOps(m)
	convOut := convOutput(n, c)
	xd, ok1 := c.Dims(n.In(0))
	yd, ok2 := c.Dims(convOut)
	if !ok || !ok1 || !ok2 || len(xd) != 4 || len(yd) != 4 {
		if !ok {
			c.Warnf("winograd_tile %d is not 2 or 4; costed as direct convolution", m)
		}
		return fusedConvRule(n, c)
	}
	alpha := float64(m + 2)
	N, C, K, P, Q := xd[0], xd[1], yd[1], yd[2], yd[3]
	tiles := perf.WinogradTileCount(N, P, Q, m)
	// The model's arithmetic is the convolution's, whatever algorithm
	// runs it: the direct Conv rule counts it.
	direct, err := c.Estimate(&ir.Node{Name: n.Name, OpType: "Conv",
		Inputs: []*ir.Value{n.In(0), n.In(1), n.In(2)}, Outputs: []*ir.Value{convOut}, Attrs: n.Attrs})
	if err != nil {
		return NodeEstimate{}, err
	}
	var wino NodeEstimate
	wino.Class = perf.ClassWinograd
	wino.WinogradFused = winogradFused(m)
	wino.MACs, wino.FLOPs = direct.MACs, direct.FLOPs
	wino.ExecutedMACs, wino.ExecutedFLOPs, _ = winogradArith(m, tiles, C, K)
	if n.In(2) != nil {
		wino.ExecutedFLOPs += c.Numel(convOut) // bias, added in the output transform's epilogue
	}
	// The GEMM view holds the rows the kernel runs: the fused kernel's
	// padded tile blocks (winogradArith), so that the time model prices
	// the padding once, in the view, not again through FLOPs.
	wino.M, wino.N, wino.K, wino.Batch = clampInt(winogradRows(m, tiles)), clampInt(K), clampInt(C), clampInt(alpha*alpha)
	var buf [maxFusedParts]NodeEstimate
	parts := appendEpilogueParts(append(buf[:0], wino), n, c, convOut)
	pool, err := poolPart(n, c, convOut)
	if err != nil {
		return NodeEstimate{}, err
	}
	e := FusedEstimate(n, c, append(parts, pool)...)
	if !winogradFused(m) {
		// Transformed filter instead of the 3×3 weights (the fused
		// kernel reads the 3×3 weights and transforms them itself).
		e.BytesRead += (alpha*alpha/9 - 1) * c.Bytes(n.In(1))
	}
	e.Note = fmt.Sprintf("Winograd F(%dx%d,3x3) %s: transforms counted", m, m, winogradVariant(m))
	return e, nil
}

// tensorCoreDType: compute dtypes whose convolutions run on tensor cores.
func tensorCoreDType(dt ir.DType) bool {
	switch dt {
	case ir.Float16, ir.BFloat16, ir.Int8, ir.Uint8, ir.Float8E4M3FN, ir.Float8E4M3FNUZ, ir.Float8E5M2, ir.Float8E5M2FNUZ:
		return true
	}
	return false
}

// WinogradTransforms returns the F(m×m,3×3) matrices of Lavin & Gray
// (arXiv:1509.09308), m = 2 or 4: Y = Aᵀ[(G·g·Gᵀ) ⊙ (Bᵀ·d·B)]A for an
// (m+2)×(m+2) input tile d and a 3×3 filter g. ok is false for other m.
func WinogradTransforms(m int64) (at, g, bt [][]float64, ok bool) {
	switch m {
	case 2:
		return [][]float64{
				{1, 1, 1, 0},
				{0, 1, -1, -1},
			}, [][]float64{
				{1, 0, 0},
				{0.5, 0.5, 0.5},
				{0.5, -0.5, 0.5},
				{0, 0, 1},
			}, [][]float64{
				{1, 0, -1, 0},
				{0, 1, 1, 0},
				{0, -1, 1, 0},
				{0, 1, 0, -1},
			}, true
	case 4:
		return [][]float64{
				{1, 1, 1, 1, 1, 0},
				{0, 1, -1, 2, -2, 0},
				{0, 1, 1, 4, 4, 0},
				{0, 1, -1, 8, -8, 1},
			}, [][]float64{
				{1.0 / 4, 0, 0},
				{-1.0 / 6, -1.0 / 6, -1.0 / 6},
				{-1.0 / 6, 1.0 / 6, -1.0 / 6},
				{1.0 / 24, 1.0 / 12, 1.0 / 6},
				{1.0 / 24, -1.0 / 12, 1.0 / 6},
				{0, 0, 1},
			}, [][]float64{
				{4, 0, -5, 0, 1, 0},
				{0, -4, -4, 1, 1, 0},
				{0, 4, -4, -1, 1, 0},
				{0, -2, -1, 2, 1, 0},
				{0, 2, -1, -2, 1, 0},
				{0, 4, 0, -5, 0, 1},
			}, true
	}
	return nil, nil, nil, false
}

// WinogradTransformOps counts the arithmetic of the per-tile transforms of
// F(m×m,3×3): inOps per input tile and channel (Bᵀ·d·B: the 1-D
// transform applied to α columns, then α rows) and outOps per output tile
// and output channel (Aᵀ·M·A: α columns, then m rows). A 1-D transform
// by matrix T costs, per row, (nonzeros − 1) adds plus one multiply per
// coefficient other than ±1; common subexpressions are not shared, so
// this is what a straightforward kernel does.
func WinogradTransformOps(m int64) (inOps, outOps float64, ok bool) {
	at, _, bt, ok := WinogradTransforms(m)
	if !ok {
		return 0, 0, false
	}
	alpha := float64(m + 2)
	inOps = 2 * alpha * matOps(bt)
	outOps = (alpha + float64(m)) * matOps(at)
	return inOps, outOps, true
}

// matOps is the arithmetic of multiplying a vector by t (see WinogradTransformOps).
func matOps(t [][]float64) float64 {
	ops := 0.0
	for _, row := range t {
		nz := 0
		for _, x := range row {
			if x == 0 {
				continue
			}
			nz++
			if x != 1 && x != -1 {
				ops++
			}
		}
		if nz > 1 {
			ops += float64(nz - 1)
		}
	}
	return ops
}
