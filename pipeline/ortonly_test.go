package pipeline

import (
	"slices"
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
		ld.contrib, ld.ortDefault, ld.trt = ortOnlyOps(g)
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
	if w := ContribWarning(unique, nil, true); !strings.Contains(w, "TensorRT 10.1's ONNX parser does not import Unique ×2, SplitToSequence ×1 (onnx/onnx-tensorrt at that release): an engine of this model needs a plugin") {
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

// TestPluginWarningByRelease: the ops an engine needs a plugin for are
// the ones the runtime's TensorRT release does not import, read from the
// nearest release's table at or below it; a runtime that does not parse
// with TensorRT says nothing.
func TestPluginWarningByRelease(t *testing.T) {
	g := &ir.Graph{Nodes: []*ir.Node{{OpType: "NonZero"}, {OpType: "LayerNormalization"}, {OpType: "LayerNormalization"},
		{OpType: "Unique"}, {OpType: "Relu"}, {Domain: "ai.onnx", OpType: "Trilu"}}}
	l := &Loaded{Model: &ir.Model{Graph: g}}
	l.contrib, l.ortDefault, l.trt = ortOnlyOps(g)
	trt := func(v string) *hwdb.Runtime { return &hwdb.Runtime{Name: "trt", Plan: "fused", TensorRTVersion: v} }
	for _, c := range []struct {
		rt   *hwdb.Runtime
		want string
	}{
		{nil, "TensorRT 10.1's ONNX parser does not import Unique ×1 ("},
		{trt(""), "TensorRT 10.1's ONNX parser does not import Unique ×1 ("},
		{trt("8.4"), "TensorRT 8.4's ONNX parser does not import LayerNormalization ×2, NonZero ×1, Trilu ×1, Unique ×1 ("},
		{trt("8.5.3"), "TensorRT 8.5.3's ONNX parser does not import LayerNormalization ×2, Unique ×1 ("},
		{trt("8.6"), "TensorRT 8.6's ONNX parser does not import Unique ×1 ("},
		{trt("8.3"), "TensorRT 8.3's ONNX parser (8.2's, the nearest release read) does not import LayerNormalization ×2, NonZero ×1, Trilu ×1, Unique ×1 ("},
		{trt("7.2"), "TensorRT 7.2's ONNX parser (8.0's, the nearest release read) does not import"},
		{trt("10.8"), "TensorRT 10.8's ONNX parser (10.1's, the newest read here; a later release may import more) does not import Unique ×1 ("},
		{&hwdb.Runtime{Name: "pytorch", Plan: "eager"}, ""},
	} {
		w := pluginWarning(l, c.rt)
		if c.want == "" && w != "" || !strings.HasPrefix(w, c.want) {
			name := "no runtime"
			if c.rt != nil {
				name = c.rt.Name + " " + c.rt.TensorRTVersion
			}
			t.Errorf("%s: %q, want it to start %q", name, w, c.want)
		}
	}
	imported := &Loaded{Model: &ir.Model{Graph: &ir.Graph{Nodes: []*ir.Node{{OpType: "NonZero"}}}}}
	imported.contrib, imported.ortDefault, imported.trt = ortOnlyOps(imported.Model.Graph)
	if w := ContribWarning(imported, nil, true); w != "" {
		t.Errorf("NonZero under the default TensorRT: %q, want none (imported since 8.5)", w)
	}
}

// TestTRTTablesNameKnownOps: every op the release tables name is one
// onnxcost reads in the default domain (a misspelt name would never
// match a node), and each release named is one read.
func TestTRTTablesNameKnownOps(t *testing.T) {
	for op, first := range trtFirstImported {
		if ir.LookupOp("", op) == nil {
			t.Errorf("trtFirstImported names %s, which onnxcost does not read in the default domain", op)
		}
		if first != "" && !slices.Contains(trtReleases, first) {
			t.Errorf("%s first imported in %s, not a release read (%v)", op, first, trtReleases)
		}
	}
	for i := 1; i < len(trtReleases); i++ {
		a, _ := parseTRTVersion(trtReleases[i-1])
		b, err := parseTRTVersion(trtReleases[i])
		if err != nil || !a.less(b) {
			t.Errorf("releases out of order at %s", trtReleases[i])
		}
	}
	if !slices.Contains(trtReleases, DefaultTensorRTVersion) {
		t.Errorf("DefaultTensorRTVersion %s is not a release read", DefaultTensorRTVersion)
	}
	rt, err := hwdb.LookupRuntime("tensorrt-enqueue")
	if err != nil || rt.TensorRTVersion != DefaultTensorRTVersion {
		t.Errorf("tensorrt-enqueue parses with %q (%v), want the built-in tensorrt's %s", rt.TensorRTVersion, err, DefaultTensorRTVersion)
	}
}
