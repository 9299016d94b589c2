package pipeline

import (
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
)

// TestORTOnlyOps: a model's operators only onnxruntime runs are its
// com.microsoft ones (sub-domains too) and the default domain's integer
// ops no TensorRT operator table supports, counted apart and named by
// count; a standard op or a QDQ pair is neither, and a model of those
// keeps the default runtime.
func TestORTOnlyOps(t *testing.T) {
	node := func(domain, op string) *ir.Node { return &ir.Node{Domain: domain, OpType: op} }
	l := func(nodes ...*ir.Node) *Loaded {
		g := &ir.Graph{Nodes: nodes}
		ld := &Loaded{Model: &ir.Model{Graph: g}}
		ld.contrib, ld.integer, ld.plugin = ortOnlyOps(g)
		return ld
	}
	mixed := l(node("", "DynamicQuantizeLinear"), node("", "MatMulInteger"), node("ai.onnx", "MatMulInteger"),
		node("com.microsoft", "QAttention"), node("com.microsoft.nchwc", "ReorderInput"), node("", "MatMul"))
	if got, want := mixed.ORTOnlyOps(), "com.microsoft: QAttention ×1, ReorderInput ×1; MatMulInteger ×2, DynamicQuantizeLinear ×1"; got != want {
		t.Errorf("ORTOnlyOps = %q, want %q", got, want)
	}
	integer := l(node("", "QLinearConv"), node("", "Relu"))
	if got := ModelRuntime(integer); got != ContribRuntime {
		t.Errorf("a QLinearConv model: ModelRuntime = %s, want %s", got, ContribRuntime)
	}
	qdq := l(node("", "QuantizeLinear"), node("", "DequantizeLinear"), node("", "Conv"))
	if got := ModelRuntime(qdq); got != "tensorrt" || qdq.ORTOnlyOps() != "" {
		t.Errorf("a QDQ model: ModelRuntime = %s, ops %q; want tensorrt and none", got, qdq.ORTOnlyOps())
	}
	unique := l(node("", "Unique"), node("", "SplitToSequence"), node("", "Unique"))
	if got := ModelRuntime(unique); got != "tensorrt" {
		t.Errorf("a model with Unique: ModelRuntime = %s, want tensorrt (PyTorch and onnxruntime run it)", got)
	}
	if w := ContribWarning(unique, nil, true); !strings.Contains(w, "list Unique ×2, SplitToSequence ×1 as unsupported: an engine of this model needs a plugin") {
		t.Errorf("under tensorrt: %q, want the plugin warning", w)
	}
	for _, name := range []string{"onnxruntime", "pytorch"} {
		rt, err := hwdb.LookupRuntime(name)
		if err != nil {
			t.Fatal(err)
		}
		if w := ContribWarning(unique, rt, false); w != "" {
			t.Errorf("under %s: %q, want none", name, w)
		}
	}
}
