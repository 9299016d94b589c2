package passes

import (
	"fmt"
	"strings"

	"github.com/onnxcost/onnxcost/ir"
)

// Shape inference for the fused ops this package writes, so that a model
// written by `onnxcost optimize` can be read back and costed: each fused
// op's output is what its parts compute, inferred by the parts' own shape
// functions on phantom nodes (nodes in no graph).
func init() {
	ir.Register(
		&ir.OpSchema{Domain: Domain, Name: "FusedConv", Since: 1, MinIn: 2, MaxIn: 4, MinOut: 1, MaxOut: 1, Infer: inferFusedConv,
			Doc: "Conv + bias + residual + activation + pool in one kernel (passes/epilogue.go)"},
		&ir.OpSchema{Domain: Domain, Name: "WinogradConv", Since: 1, MinIn: 2, MaxIn: 4, MinOut: 1, MaxOut: 1, Infer: inferFusedConv,
			Doc: "F(m×m,3×3) Winograd convolution with FusedConv's epilogue (passes/winograd.go)"},
		&ir.OpSchema{Domain: Domain, Name: "FusedGemm", Since: 1, MinIn: 2, MaxIn: 4, MinOut: 1, MaxOut: 1, Infer: inferFusedGemm,
			Doc: "Gemm/MatMul + bias + residual + activation in one kernel (passes/epilogue.go)"},
	)
}

func inferFusedConv(c *ir.InferCtx) error {
	var convAttrs, poolAttrs []*ir.Attribute
	for _, a := range c.Node.Attrs {
		if name, ok := strings.CutPrefix(a.Name, "pool_"); ok {
			cp := *a
			cp.Name = name
			poolAttrs = append(poolAttrs, &cp)
		} else {
			convAttrs = append(convAttrs, a)
		}
	}
	y, err := phantomInfer(c, "Conv", []*ir.Value{c.In(0), c.In(1)}, convAttrs)
	if err != nil {
		return err
	}
	if pool := c.AttrString("pool", ""); pool != "" {
		if y, err = phantomInfer(c, pool, []*ir.Value{y}, poolAttrs); err != nil {
			return err
		}
	}
	return c.SetOut(0, y.DType, y.Shape)
}

func inferFusedGemm(c *ir.InferCtx) error {
	anchor := c.AttrString("anchor", "MatMul")
	ins := []*ir.Value{c.In(0), c.In(1)}
	if anchor == "Gemm" && c.In(2) != nil {
		ins = append(ins, c.In(2))
	}
	y, err := phantomInfer(c, anchor, ins, c.Node.Attrs)
	if err != nil {
		return err
	}
	return c.SetOut(0, y.DType, y.Shape)
}

// phantomInfer runs op's shape function on a node in no graph and returns
// its output value. A shape function that needs a fresh symbol (an
// unknown size) cannot get one here: the output is then unranked.
func phantomInfer(c *ir.InferCtx, op string, ins []*ir.Value, attrs []*ir.Attribute) (out *ir.Value, err error) {
	s := ir.LookupOp("", op)
	if s == nil {
		return nil, c.Errorf("unknown part %q", op)
	}
	out = &ir.Value{Name: c.Node.Name + ":" + op}
	n := &ir.Node{Name: c.Node.Name, OpType: op, Inputs: ins, Outputs: []*ir.Value{out}, Attrs: attrs}
	opset := int64(13)
	if c.Model != nil && c.Model.Opset("") > 0 {
		opset = c.Model.Opset("")
	}
	defer func() {
		if r := recover(); r != nil {
			out.Kind, out.DType, out.Shape, err = ir.TensorValue, c.InType(0), ir.Unranked(), nil
		}
	}()
	if e := s.Infer(&ir.InferCtx{Node: n, Opset: opset, Model: c.Model, Limits: c.Limits}); e != nil {
		return nil, fmt.Errorf("%s: %v", c.Node.Name, e)
	}
	return out, nil
}
