package pipeline_test

import (
	"testing"

	"github.com/onnxcost/onnxcost/pipeline"
)

// TestORTOptimizedModel: the graph onnxruntime saves after its own
// optimizer (calib/profile/testdata/models/transformer_ort_all.onnx, from
// transformer.onnx at level all) is costed whole, with the same MACs as
// the model it came from: its FusedMatMul (the attention scores with the
// 1/√d scale folded in, MatMulScaleFusion) has a shape and a cost rule.
func TestORTOptimizedModel(t *testing.T) {
	const dir = "../calib/profile/testdata/models/"
	orig, err := pipeline.Run(dir+"transformer.onnx", pipeline.Config{GPU: "A100"})
	if err != nil {
		t.Fatal(err)
	}
	opt, err := pipeline.Run(dir+"transformer_ort_all.onnx", pipeline.Config{GPU: "A100"})
	if err != nil {
		t.Fatal(err)
	}
	if len(opt.UnsupportedOps) != 0 || opt.Totals.Partial != nil {
		t.Errorf("onnxruntime's optimized graph not costed whole: unsupported %v, partial %+v", opt.UnsupportedOps, opt.Totals.Partial)
	}
	fused := 0
	for _, n := range opt.Nodes {
		if n.OpType == "FusedMatMul" {
			fused++
			if !(n.MACs > 0) || n.KernelClass != "gemm" {
				t.Errorf("%s: %g MACs, class %q: want a costed GEMM", n.Name, n.MACs, n.KernelClass)
			}
		}
	}
	if fused != 1 {
		t.Errorf("%d FusedMatMul nodes, want the 1 onnxruntime wrote", fused)
	}
	if a, b := orig.Totals.MACs, opt.Totals.MACs; a != b || !(a > 0) {
		t.Errorf("MACs: %g as exported, %g after onnxruntime's optimizer; want equal", a, b)
	}
}
