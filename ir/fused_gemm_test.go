package ir_test

import (
	"testing"

	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/ir/irtest"
)

// TestFusedGemmGemmAnchorShape: a FusedGemm built around Gemm infers its
// output from known operands. Gemm's rule used to ask for fresh symbols
// before looking at the operands, which marks a detached inference as
// resting on an unknown size: the pooler of a re-read BERT lost its shape
// and its cost.
func TestFusedGemmGemmAnchorShape(t *testing.T) {
	b := irtest.New(t, 13)
	b.M.Opsets = append(b.M.Opsets, ir.OpsetImport{Domain: ir.FusedDomain, Version: 1})
	x := b.Input("x", ir.Float32, 2, 768)
	w := b.Input("w", ir.Float32, 1000, 768)
	bias := b.Input("b", ir.Float32, 1000)
	n := b.Node(ir.OpFusedGemm, []*ir.Value{x, w, bias}, 1,
		&ir.Attribute{Name: ir.KeyAnchor, Type: ir.AttrString, S: "Gemm"},
		ir.IntAttr("transB", 1),
		&ir.Attribute{Name: ir.KeyActivation, Type: ir.AttrString, S: "Tanh"})
	n.Domain = ir.FusedDomain
	b.Output(n.Out(0))
	b.Infer()
	if got := n.Out(0).Shape.String(); got != "[2,1000]" {
		t.Errorf("FusedGemm output %s, want [2,1000]", got)
	}
}
