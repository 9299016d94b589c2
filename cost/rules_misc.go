package cost

import (
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
)

// Rules for contrib (com.microsoft), training-preview and legacy ops that
// shape inference supports.

const (
	msDomain       = "com.microsoft"
	trainingDomain = "ai.onnx.preview.training"
)

// msElementwise are contrib activations: per output element counts.
var msElementwise = map[string]opCount{
	"Gelu":     {5, 1, "as ai.onnx Gelu"},
	"BiasGelu": {6, 1, "bias add + Gelu"},
	"FastGelu": {8, 1, "tanh approximation: 0.5x(1+tanh(0.7979(x+0.0447x^3))): 3 mul for x^3 term, add, mul, tanh, add, mul (+1 with bias, counted)"},
}

// optimizerOps are per-parameter-element update counts of the training
// preview optimizers (each of the node's tensors updated elementwise).
var optimizerOps = map[string]opCount{
	"Momentum": {4, 0, "v = alpha*v + beta*g; x -= lr*v (with decay: +1)"},
	"Adagrad":  {7, 1, "h += g^2 (2), x -= lr*g/(sqrt(h)+eps) (4 + sqrt), decay"},
	"Adam":     {12, 1, "two moment updates (6), bias corrections and the step (5 + sqrt)"},
}

func init() {
	for op := range msElementwise {
		RegisterRule(msDomain, op, countsRule(msElementwise[op]))
	}
	// passes/quickgelu.go's QuickGelu is onnxruntime's, or at alpha 1
	// SiLU (the eager plan's fuse-silu, onnxruntime's fusion of one).
	RegisterRule(msDomain, "QuickGelu", quickGeluRule(1.702))
	RegisterRule(ir.FusedDomain, ir.OpFusedQuickGelu, quickGeluRule(1.702))
	for op := range optimizerOps {
		RegisterRule(trainingDomain, op, optimizerRule(optimizerOps[op]))
	}
	RegisterRule(msDomain, "SimplifiedLayerNormalization", normRuleWith(perElem{inFLOPs: 4, rowFLOPs: 1, rowTrans: 1}))
	RegisterRule(msDomain, "BiasSoftmax", biasSoftmaxRule)
	// Skip variants add the residual first (+1 per element).
	RegisterRule(msDomain, "SkipLayerNormalization", normRuleWith(perElem{inFLOPs: 9, rowFLOPs: 1, rowTrans: 1}))
	RegisterRule(msDomain, "SkipSimplifiedLayerNormalization", normRuleWith(perElem{inFLOPs: 5, rowFLOPs: 1, rowTrans: 1}))
	RegisterRule("", "ImageScaler", countsRule(opCount{2, 0, "scale multiply + per-channel bias add"}))
	RegisterRule("", "NegativeLogLikelihoodLoss", lossRule(0))
	// Softmax over the classes (4 flops + 1 exp per input element, as
	// Softmax) and a log per picked element, then the NLL reduction.
	RegisterRule("", "SoftmaxCrossEntropyLoss", lossRule(4))
}

// quickGeluRule counts x·sigmoid(α·x) as its ops do: sigmoid (3) and the
// gate multiply, plus the scale multiply unless α is 1 (SiLU, which the
// Sigmoid and Mul it was written as count 4 for). def is the op's
// default α.
func quickGeluRule(def float64) Rule {
	return func(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
		e := kernel(n, c, perf.ClassElementwise)
		out := c.Numel(n.Out(0))
		f := 4.0
		if n.AttrFloat("alpha", def) != 1 {
			f++
		}
		e.FLOPs = f * out
		e.Transcendentals = out
		return e, nil
	}
}

// countsRule is an elementwise kernel with fixed per-output-element counts.
func countsRule(cnt opCount) Rule {
	return func(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
		e := kernel(n, c, perf.ClassElementwise)
		out := c.Numel(n.Out(0))
		e.FLOPs = cnt.flops * out
		e.Transcendentals = cnt.trans * out
		return e, nil
	}
}

// normRuleWith is normRule with explicit counts and rows over the last
// axis (the contrib layer norms normalise the hidden dim).
func normRuleWith(p perElem) Rule {
	return func(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
		e := kernel(n, c, perf.ClassReduction)
		in := c.Numel(n.In(0))
		rows := 0.0
		if last, ok := c.Dim(n.In(0), -1); ok && last > 0 {
			rows = in / last
		}
		e.FLOPs = p.inFLOPs*in + p.rowFLOPs*rows
		e.Transcendentals = p.inTrans*in + p.rowTrans*rows
		return e, nil
	}
}

// optimizerRule: every output (updated tensors) costs the per-element
// update count.
func optimizerRule(cnt opCount) Rule {
	return func(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
		e := kernel(n, c, perf.ClassElementwise)
		var elems float64
		for _, o := range n.Outputs {
			elems += c.Numel(o)
		}
		e.FLOPs = cnt.flops * elems
		e.Transcendentals = cnt.trans * elems
		return e, nil
	}
}

// lossRule: softmaxFLOPs per input element (0 for plain NLL), then per
// target element a gather, a negate, an optional weight multiply and the
// reduction add (4 flops); a log per target for the softmax variant.
func lossRule(softmaxFLOPs float64) Rule {
	return func(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
		e := kernel(n, c, perf.ClassReduction)
		in, targets := c.Numel(n.In(0)), c.Numel(n.In(1))
		e.FLOPs = softmaxFLOPs*in + 4*targets
		if softmaxFLOPs > 0 {
			e.Transcendentals = in + targets
		}
		return e, nil
	}
}

// biasSoftmaxRule: onnxruntime's BiasSoftmax, one kernel: Softmax's counts
// over data at its axis (the contrib op's default, 1, when absent), one
// add per element for the bias, and the bias read once.
func biasSoftmaxRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	sm := &ir.Node{Name: n.Name, OpType: "Softmax", Inputs: n.Inputs[:1], Outputs: n.Outputs,
		Attrs: []*ir.Attribute{ir.IntAttr("axis", n.AttrInt("axis", 1))}}
	e, err := c.Estimate(sm)
	if err != nil {
		return e, err
	}
	add := c.Numel(n.Out(0))
	e.FLOPs += add
	e.ExecutedFLOPs += add // Estimate filled it in before the add
	c.Read(n, &e, 1)
	return e, nil
}
