package cost

import (
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// TestOpaqueEngineIsReported: a QNN-style context model, an EPContext
// node whose output [1, 1000] is declared, then a Softmax: the
// EPContext node takes its declared type and is reported unsupported
// with its reason, and the Softmax after it is still costed.
func TestOpaqueEngineIsReported(t *testing.T) {
	b := msBuilder(t, 17)
	n := b.Node("EPContext", []*ir.Value{b.Input("pixels", ir.Float32, 1, 3, 224, 224)}, 1,
		ir.IntAttr("embed_mode", 1), ir.StringAttr("source", "QNN"))
	n.Domain = "com.microsoft"
	n.Out(0).Declared = &ir.TypeInfo{DType: ir.Float32, Shape: ir.KnownShape(1, 1000)}
	sm := b.Node("Softmax", []*ir.Value{n.Out(0)}, 1)
	sm.Name = "softmax"
	b.Output(sm.Out(0))
	b.Infer()
	if s := sm.Out(0).Shape; !s.Equal(ir.KnownShape(1, 1000)) {
		t.Fatalf("softmax after the engine has shape %s, want [1,1000]", s)
	}
	r := analyzeOn(t, b, "A100", "")
	if len(r.UnsupportedOps) != 1 || r.UnsupportedOps[0].OpType != "EPContext" {
		t.Errorf("unsupported ops %v, want EPContext alone", r.UnsupportedOps)
	}
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "precompiled engine") {
		t.Errorf("no warning gives the reason: %q", r.Warnings)
	}
	if r.Totals.Partial == nil {
		t.Errorf("a total without the engine's cost is not marked partial")
	}
	if nc := nodeNamed(t, r, "softmax"); !(nc.FLOPs > 0) || !(nc.TimeS > 0) {
		t.Errorf("softmax after the engine: %g FLOPs, %g s", nc.FLOPs, nc.TimeS)
	}
}
