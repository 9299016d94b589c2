package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// smallModel writes x -> Conv -> BatchNormalization -> Relu -> MaxPool
// with inline weights (so the BN fold computes real values) to dir.
func smallModel(t *testing.T, dir string) string {
	t.Helper()
	g := ir.NewGraph("small")
	m := &ir.Model{IRVersion: 8, Opsets: []ir.OpsetImport{{Domain: "", Version: 13}}, Graph: g}
	val := func(name string) *ir.Value {
		v, err := g.NewValue(name)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	init := func(name string, dims []int64, x float64) *ir.Value {
		n := int64(1)
		for _, d := range dims {
			n *= d
		}
		vals := make([]float64, n)
		for i := range vals {
			vals[i] = x + float64(i%7)/10
		}
		v := val(name)
		tt := ir.FloatTensor(ir.Float32, dims, vals)
		tt.Name = name
		g.AddInitializer(v, tt)
		return v
	}
	x := val("x")
	x.Kind, x.DType, x.Shape = ir.TensorValue, ir.Float32, ir.RankedShape(ir.S("N"), ir.D(3), ir.D(8), ir.D(8))
	g.AddInput(x)
	add := func(op string, ins []*ir.Value, out string, attrs ...*ir.Attribute) *ir.Value {
		o := val(out)
		if err := g.AddNode(&ir.Node{Name: out, OpType: op, Inputs: ins, Outputs: []*ir.Value{o}, Attrs: attrs}); err != nil {
			t.Fatal(err)
		}
		return o
	}
	y := add("Conv", []*ir.Value{x, init("w", []int64{4, 3, 3, 3}, -0.3)}, "conv",
		&ir.Attribute{Name: "pads", Type: ir.AttrInts, Ints: []int64{1, 1, 1, 1}})
	y = add("BatchNormalization", []*ir.Value{y, init("s", []int64{4}, 1), init("b", []int64{4}, 0), init("m", []int64{4}, 0.1), init("v", []int64{4}, 1)}, "bn")
	y = add("Relu", []*ir.Value{y}, "relu")
	y = add("MaxPool", []*ir.Value{y}, "pool", &ir.Attribute{Name: "kernel_shape", Type: ir.AttrInts, Ints: []int64{2, 2}},
		&ir.Attribute{Name: "strides", Type: ir.AttrInts, Ints: []int64{2, 2}})
	g.AddOutput(y)
	p := filepath.Join(dir, "small.onnx")
	if err := ir.WriteFile(p, m); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestOptimizeSmallModel(t *testing.T) {
	dir := t.TempDir()
	in := smallModel(t, dir)
	out := filepath.Join(dir, "out.onnx")
	code, _, errs := runCLI(t, "optimize", in, "-o", out, "--check")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	m, err := ir.ReadFile(out, ir.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Opset("onnxcost") != 1 {
		t.Errorf("model does not import onnxcost version 1: %v", m.Opsets)
	}
	if len(m.Graph.Nodes) != 1 {
		t.Fatalf("want one fused node, got:\n%s", ir.Dump(m.Graph))
	}
	n := m.Graph.Nodes[0]
	if n.Domain != "onnxcost" || n.OpType != "FusedConv" || strings.Join(n.FusedFrom, ",") != "conv,bn,relu,pool" {
		t.Errorf("got %s", ir.NodeText(n))
	}
	if len(m.Graph.Initializers) != 2 {
		t.Errorf("%d initializers, want 2 (folded weight and bias)", len(m.Graph.Initializers))
	}
	if m.Graph.Inputs[0].Shape.Dims[0].Sym != "N" {
		t.Errorf("symbolic batch lost: %s", m.Graph.Inputs[0].Shape)
	}
	checkWithONNX(t, out)
}

// checkWithONNX runs onnx.checker on path when Debian's python3-onnx is
// installed (custom-domain ops are skipped by the checker because the
// model imports their domain).
func checkWithONNX(t *testing.T, path string) {
	t.Helper()
	py := pythonONNX(t)
	script := "import onnx, sys; onnx.checker.check_model(onnx.load(sys.argv[1], load_external_data=False))"
	if out, err := exec.Command(py, "-c", script, path).CombinedOutput(); err != nil {
		t.Errorf("onnx.checker rejects %s: %v\n%s", path, err, out)
	}
}

func TestOptimizeResNet50(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r50.onnx")
	code, _, errs := runCLI(t, "optimize", fixture(t, "resnet50.onnx"), "-o", out, "--batch", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	m, err := ir.ReadFile(out, ir.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fused := 0
	for _, n := range m.Graph.Nodes {
		if n.Domain == "onnxcost" {
			fused++
			if len(n.FusedFrom) == 0 {
				t.Errorf("%s has no fused_from", n.Name)
			}
		}
		if n.OpType == "Relu" {
			t.Errorf("Relu %s left unfused", n.Name)
		}
	}
	if fused < 49 {
		t.Errorf("%d fused nodes, want ≥ 49 (one per Relu)", fused)
	}
	// The written model reads back with its fused ops' shapes inferred and
	// costs as the fused plan of the original does.
	code, js, errs := runCLI(t, "report", out, "--gpu", "T4", "--batch", "1", "--plan", "unfused", "--format", "json")
	if code != 0 {
		t.Fatalf("report of the optimized model: exit %d: %s", code, errs)
	}
	var r struct {
		Totals         struct{ Launches, FLOPs float64 }
		UnsupportedOps []any `json:"unsupported_ops"`
	}
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		t.Fatal(err)
	}
	c := compareJSON(t, fixture(t, "resnet50.onnx"), "--gpu", "T4", "--batch", "1")
	if r.Totals.Launches != c.Fused.Launches || r.Totals.FLOPs != c.Fused.FLOPs || len(r.UnsupportedOps) != 0 {
		t.Errorf("re-read model: launches %v flops %v unsupported %v; fused plan: %v %v",
			r.Totals.Launches, r.Totals.FLOPs, r.UnsupportedOps, c.Fused.Launches, c.Fused.FLOPs)
	}
}

func TestOptimizeUsage(t *testing.T) {
	m := fixture(t, "alexnet.onnx")
	if code, _, _ := runCLI(t, "optimize", m); code != 2 {
		t.Errorf("no -o: exit %d, want 2", code)
	}
	if code, _, _ := runCLI(t, "optimize", m, "-o", m); code != 2 {
		t.Errorf("-o over the input: exit %d, want 2", code)
	}
	code, out, _ := runCLI(t, "optimize", "--list")
	if code != 0 || !strings.Contains(out, "fold-bn") || !strings.Contains(out, "winograd") {
		t.Errorf("--list: exit %d\n%s", code, out)
	}
}
