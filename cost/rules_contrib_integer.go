package cost

import (
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
)

// Cost rules for onnxruntime's integer and tensor contrib ops
// (ir/ops_contrib_integer.go, ir/ops_contrib_tensor.go). Each is the
// standard op it extends, run on a probe node:
//
//	MatMulInteger16    MatMulInteger's count; 16-bit operands have no
//	                   int8 path, so the GEMM runs on the fp32 one (as its
//	                   CUDA-core integer multiply-adds would)
//	MulInteger         1 flop a product, + 1 per zero point subtracted
//	ReduceSumInteger   ReduceSum's count over the axes attribute
//	QLinearReduceMean  ReduceMean's, + the dequantize of each element read
//	                   and the quantize of each written
//	Range              Range's (delta optional)
//	UnfoldTensor       a copy: input read once, every window written
//	TorchEmbedding     Gather's of weight rows (an indexed copy)
//
// com.microsoft Unique has no rule, as the standard Unique: its output
// size and its sort depend on the data (NoCostRule).

func init() {
	RegisterRule(msDomain, "MatMulInteger16", matmulRule(0, 1))
	RegisterRule(msDomain, "MulInteger", mulIntegerRule)
	RegisterRule(msDomain, "ReduceSumInteger", reduceByAttrRule("ReduceSum", false))
	RegisterRule(msDomain, "QLinearReduceMean", reduceByAttrRule("ReduceMean", true))
	RegisterRule(msDomain, "Range", writeRule) // Range's count: the op type is the same
	RegisterRule(msDomain, "UnfoldTensor", copyRule)
	RegisterRule(msDomain, "TorchEmbedding", torchEmbeddingRule)
}

// mulIntegerRule: one elementwise kernel, a multiply per output and a
// subtract per output for each zero point given.
func mulIntegerRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassElementwise)
	per := 1.0
	for _, zp := range []int{1, 3} {
		if n.In(zp) != nil {
			per++
		}
	}
	e.FLOPs = per * c.Numel(n.Out(0))
	return e, nil
}

// reduceByAttrRule is op's reduction rule over n's data with the axes and
// keepdims attributes (read at opset 11, where axes is one); quantized
// adds the dequantize and quantize arithmetic and reads the scales and
// zero points.
func reduceByAttrRule(op string, quantized bool) Rule {
	return func(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
		saved := c.Opset
		c.Opset = 11
		defer func() { c.Opset = saved }()
		if quantized {
			return quantizedPart(n, c, op, n.Attrs)
		}
		part := &ir.Node{Name: n.Name, OpType: op, Inputs: n.Inputs[:1], Outputs: n.Outputs, Attrs: n.Attrs}
		return c.Estimate(part)
	}
}

// torchEmbeddingRule: Gather of weight's rows at indices; padding_idx and
// scale_grad_by_freq (scalars) are read too.
func torchEmbeddingRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	probe := &ir.Node{Name: n.Name, OpType: "Gather", Inputs: []*ir.Value{n.In(0), n.In(1)}, Outputs: n.Outputs}
	e, err := gatherRule(probe, c)
	if err == nil {
		c.Read(n, &e, 2, 3)
	}
	return e, err
}
