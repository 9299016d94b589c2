package cost

import (
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
)

// Rules for the com.microsoft ops of a Stable Diffusion UNet optimized by
// onnxruntime's transformers optimizer (ir/ops_contrib_diffusion.go).

func init() {
	RegisterRule(msDomain, "GroupNorm", msGroupNormRule)
	RegisterRule(msDomain, "SkipGroupNorm", msGroupNormRule)
	RegisterRule(msDomain, "NhwcConv", nhwcConvRule)
	RegisterRule(msDomain, "NhwcFusedConv", withActivation(nhwcConvRule, 3))
	RegisterRule(msDomain, "BiasSplitGelu", biasSplitGeluRule)
	RegisterRule(msDomain, "BiasAdd", biasAddRule)
}

// msGroupNormRule: GroupNorm and SkipGroupNorm are one kernel over rows of
// one (sample, group) each, its channels strided through the NHWC pixels:
// GroupNormalization's count (8 an element, 1 and an rsqrt a row), SiLU's
// (Swish: 4 and an exp an element) when activation is 1, and for
// SkipGroupNorm the adds of skip and bias (1 an element each) before it.
// Every input read once, Y (and S) written once; two passes over a row
// that does not fit on chip, as GroupNormalization.
func msGroupNormRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassReduction)
	out := c.Numel(n.Out(0))
	batch, ok := c.Dim(n.In(0), 0)
	groups := float64(n.AttrInt("groups", 0))
	if !ok || !(batch > 0) || !(groups > 0) || !(out > 0) {
		return e, nil
	}
	rows := batch * groups
	norm := normOps["GroupNormalization"]
	e.FLOPs = norm.inFLOPs*out + norm.rowFLOPs*rows
	e.Transcendentals = norm.rowTrans * rows
	if n.AttrInt("activation", 0) == 1 {
		f, t, _ := OpCount("Swish")
		e.FLOPs += f * out
		e.Transcendentals += t * out
	}
	if n.OpType == "SkipGroupNorm" {
		e.FLOPs += out // + skip
		if n.In(4) != nil {
			e.FLOPs += out // + bias
		}
	}
	e.Rows, e.RowLen, e.RowPasses = clampInt(rows), clampInt(out/rows), rowPasses["GroupNormalization"]
	e.RowInSample = true
	e.RowShared = rowShared(n, c, out/rows)
	return e, nil
}

// nhwcConvRule: NhwcConv is Conv's arithmetic and traffic (its MACs read
// the weight's element count, whatever its layout) over the NHWC output's
// implicit GEMM.
func nhwcConvRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e, err := convRule(0, 1, 2)(n, c)
	if err != nil {
		return e, err
	}
	channelsLastConvView(&e, n, c)
	return e, nil
}

// biasSplitGeluRule: per output element (half of X's), the bias added to
// both halves (2), the right half's Gelu, the product (1); X and bias
// read, Y written, one kernel.
func biasSplitGeluRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassElementwise)
	out := c.Numel(n.Out(0))
	g, t, _ := OpCount("Gelu")
	e.FLOPs = (2 + g + 1) * out
	e.Transcendentals = t * out
	return e, nil
}

// biasAddRule: X + bias + skip, 2 adds an element, one kernel.
func biasAddRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassElementwise)
	e.FLOPs = 2 * c.Numel(n.Out(0))
	return e, nil
}
