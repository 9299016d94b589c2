package pipeline

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// TestSessionShapesWarning: priced under onnxruntime, a model whose batch
// is symbolic in the file and bound here is priced as onnxruntime builds
// it, before the batch is known (passes.ORTSession), and says what
// that leaves unfused; a model exported with static dims, and the other
// runtimes, say nothing of it.
func TestSessionShapesWarning(t *testing.T) {
	for _, c := range []struct {
		model, runtime string
		batch          int64
		want           bool
	}{
		{"../testdata/models/bert_base.onnx", "onnxruntime", 8, true},
		{"../testdata/models/bert_base.onnx", "tensorrt", 8, false},
		{"zoo:gpt2-small?layers=2", "onnxruntime", 0, false},          // static dims
		{"../testdata/models/resnet50.onnx", "onnxruntime", 8, false}, // no MatMul of rank 3
	} {
		r, err := Run(c.model, Config{GPU: "A100", Runtime: c.runtime, Batch: c.batch})
		if err != nil {
			t.Fatal(err)
		}
		got := false
		for _, w := range r.Warnings {
			if strings.Contains(w, "priced as onnxruntime builds the graph") {
				got = true
				if !strings.Contains(w, "with batch symbolic") || !strings.Contains(w, "72 MatMul+bias pairs stay apart") {
					t.Errorf("%s: %q: want the bound symbol and BERT's 72 MatMul+bias pairs named", c.model, w)
				}
			}
		}
		if got != c.want {
			t.Errorf("%s under %s: warning %v, want %v (warnings %q)", c.model, c.runtime, got, c.want, r.Warnings)
		}
	}
}

// TestSessionShapesWarningComputedDims: a model whose dims are all
// static in the file but whose MatMul reads rows a Slice computes at run
// time (its end a graph input) is priced with that bias apart too, and
// the warning says the dims are computed, naming no symbol and no
// override (which cannot give onnxruntime such a dim).
func TestSessionShapesWarningComputedDims(t *testing.T) {
	g := ir.NewGraph("computed")
	m := &ir.Model{Opsets: []ir.OpsetImport{{Domain: "", Version: 17}}, Graph: g}
	val := func(name string, dt ir.DType, dims ...int64) *ir.Value {
		v, err := g.NewValue(name)
		if err != nil {
			t.Fatal(err)
		}
		v.Kind, v.DType, v.Shape = ir.TensorValue, dt, ir.KnownShape(dims...)
		return v
	}
	input := func(v *ir.Value) *ir.Value {
		v.Declared = &ir.TypeInfo{Kind: ir.TensorValue, DType: v.DType, Shape: v.Shape}
		g.AddInput(v)
		return v
	}
	init := func(v *ir.Value, ints []int64, floats []float64) *ir.Value {
		dims, _ := v.Shape.Ints()
		g.AddInitializer(v, &ir.Tensor{DType: v.DType, Dims: dims, Ints: ints, Floats: floats, HasData: true})
		return v
	}
	x := input(val("x", ir.Float32, 2, 16, 64))
	end := input(val("end", ir.Int64, 1))
	start := init(val("start", ir.Int64, 1), []int64{0}, nil)
	axes := init(val("axes", ir.Int64, 1), []int64{1}, nil)
	w := init(val("w", ir.Float32, 64, 64), nil, make([]float64, 64*64))
	b := init(val("b", ir.Float32, 64), nil, make([]float64, 64))
	rows, mm, y := val("rows", ir.Float32), val("mm", ir.Float32), val("y", ir.Float32)
	for _, n := range []*ir.Node{
		{Name: "slice", OpType: "Slice", Inputs: []*ir.Value{x, start, end, axes}, Outputs: []*ir.Value{rows}},
		{Name: "matmul", OpType: "MatMul", Inputs: []*ir.Value{rows, w}, Outputs: []*ir.Value{mm}},
		{Name: "bias", OpType: "Add", Inputs: []*ir.Value{mm, b}, Outputs: []*ir.Value{y}},
	} {
		if err := g.AddNode(n); err != nil {
			t.Fatal(err)
		}
	}
	g.AddOutput(y)
	path := filepath.Join(t.TempDir(), "computed.onnx")
	if err := ir.WriteFile(path, m); err != nil {
		t.Fatal(err)
	}
	r, err := Run(path, Config{GPU: "A100", Runtime: "onnxruntime"})
	if err != nil {
		t.Fatal(err)
	}
	var got string
	for _, w := range r.Warnings {
		if strings.Contains(w, "priced as onnxruntime builds the graph") {
			got = w
		}
	}
	if !strings.Contains(got, "the dims the model computes at run time unknown to it: 1 MatMul+bias pairs stay apart") ||
		strings.Contains(got, "symbolic") || strings.Contains(got, "overrides") {
		t.Errorf("warning %q: want the computed dims named, no symbol and no override (warnings %q)", got, r.Warnings)
	}
}
