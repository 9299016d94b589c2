package pipeline

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// tiny writes a one-node model: inputs with the given declared shapes, a
// node of op over them (with extra constant inputs), one output declared
// with outDims; it returns the file's path.
func tiny(t *testing.T, op string, ins map[string][]ir.Dim, order []string, outDims []ir.Dim, consts ...*ir.Tensor) string {
	t.Helper()
	g := ir.NewGraph("g")
	var args []*ir.Value
	for _, name := range order {
		v, err := g.NewValue(name)
		if err != nil {
			t.Fatal(err)
		}
		v.Declared = &ir.TypeInfo{Kind: ir.TensorValue, DType: ir.Float32, Shape: ir.RankedShape(ins[name]...)}
		g.AddInput(v)
		args = append(args, v)
	}
	for i, c := range consts {
		v, err := g.NewValue(c.Name)
		if err != nil {
			t.Fatal(err)
		}
		_ = i
		g.AddInitializer(v, c)
		args = append(args, v)
	}
	out, err := g.NewValue("y")
	if err != nil {
		t.Fatal(err)
	}
	out.Declared = &ir.TypeInfo{Kind: ir.TensorValue, DType: ir.Float32, Shape: ir.RankedShape(outDims...)}
	if err := g.AddNode(&ir.Node{Name: "n", OpType: op, Inputs: args, Outputs: []*ir.Value{out}}); err != nil {
		t.Fatal(err)
	}
	g.AddOutput(out)
	p := filepath.Join(t.TempDir(), "m.onnx")
	if err := ir.WriteFile(p, &ir.Model{Graph: g, IRVersion: 8, Opsets: []ir.OpsetImport{{Version: 17}}}); err != nil {
		t.Fatal(err)
	}
	return p
}

func d(v int64) ir.Dim      { return ir.D(v) }
func s(n string) ir.Dim     { return ir.Dim{Sym: n} }
func sh(v *ir.Value) string { return v.Shape.String() }

// TestBatchByName: --batch binds the dim called batch wherever it sits,
// not the leading (sequence) dim, and keeps a --dim of another symbol.
func TestBatchByName(t *testing.T) {
	p := tiny(t, "Relu", map[string][]ir.Dim{"x": {s("seq"), s("batch"), d(4)}}, []string{"x"}, []ir.Dim{s("seq"), s("batch"), d(4)})
	l, err := Load(p, Options{Batch: 20, Dims: map[string]int64{"seq": 35}, BindAll: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := sh(l.Model.Graph.Outputs[0]); got != "[35,20,4]" {
		t.Fatalf("output %s, want [35,20,4]", got)
	}
	if l.Bindings["batch"] != 20 || l.Bindings["seq"] != 35 {
		t.Fatalf("bindings %v", l.Bindings)
	}
}

// TestBatchByRole: with no dim named batch, the symbol every input shares
// at one position is bound, and a warning says so; inputs sharing none
// are refused.
func TestBatchByRole(t *testing.T) {
	p := tiny(t, "Add", map[string][]ir.Dim{"a": {s("s0"), d(8)}, "b": {s("s0"), d(8)}}, []string{"a", "b"}, []ir.Dim{s("s0"), d(8)})
	l, err := Load(p, Options{Batch: 3, BindAll: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := sh(l.Model.Graph.Outputs[0]); got != "[3,8]" {
		t.Fatalf("output %s, want [3,8]", got)
	}
	if !strings.Contains(strings.Join(l.Warnings, "\n"), "bound symbol s0") {
		t.Fatalf("no note on the role binding: %q", l.Warnings)
	}
	// Distinct leading symbols per input (tf2onnx's unk__N): each bound.
	p = tiny(t, "Add", map[string][]ir.Dim{"a": {s("unk__0"), d(8)}, "b": {s("unk__1"), d(8)}}, []string{"a", "b"}, []ir.Dim{s("unk__0"), d(8)})
	l, err = Load(p, Options{Batch: 3, BindAll: true})
	if err != nil || l.Bindings["unk__0"] != 3 || l.Bindings["unk__1"] != 3 {
		t.Fatalf("leading symbols: %v %v", err, l)
	}
	p = tiny(t, "Add", map[string][]ir.Dim{"a": {d(8), s("s0")}, "b": {d(8), s("s1")}}, []string{"a", "b"}, []ir.Dim{d(8), s("s0")})
	if _, err := Load(p, Options{Batch: 3, BindAll: true}); err == nil || !IsInputError(err) || !strings.Contains(err.Error(), "--dim NAME=3") {
		t.Fatalf("got %v, want a refusal naming --dim", err)
	}
}

// TestBatchStatic: a static batch-1 model has its leading dim rewritten
// (with a warning naming the input); one whose graph hard-codes batch 1
// in a Reshape is refused; a static batch other than 1 is refused.
func TestBatchStatic(t *testing.T) {
	p := tiny(t, "Relu", map[string][]ir.Dim{"x": {d(1), d(4)}}, []string{"x"}, []ir.Dim{d(1), d(4)})
	l, err := Load(p, Options{Batch: 3, BindAll: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := sh(l.Model.Graph.Outputs[0]); got != "[3,4]" {
		t.Fatalf("output %s, want [3,4]", got)
	}
	if w := strings.Join(l.Warnings, "\n"); !strings.Contains(w, "input x has a static batch dim of 1") || strings.Contains(w, "declared") {
		t.Fatalf("warnings %q", w)
	}
	if l.Bindings["batch"] != 3 || !l.StaticBatch {
		t.Fatalf("bindings %v, StaticBatch %v: the rewrite is not shown", l.Bindings, l.StaticBatch)
	}
	// A sweep loads with EachBatch: the rewrite's words hold for every
	// batch, so the sweep can say it once.
	l, err = Load(p, Options{Batch: 3, BindAll: true, EachBatch: true})
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(l.Warnings, "\n"); !strings.Contains(w, "input x has a static batch dim of 1") || !strings.Contains(w, "--batch rewrote it to each batch") || strings.Contains(w, "3") {
		t.Fatalf("EachBatch warnings %q", w)
	}
	shape := ir.IntTensor([]int64{2}, []int64{1, 4})
	shape.Name = "shape"
	p = tiny(t, "Reshape", map[string][]ir.Dim{"x": {d(1), d(4)}}, []string{"x"}, []ir.Dim{d(1), d(4)}, shape)
	if _, err := Load(p, Options{Batch: 3, BindAll: true}); err == nil || !strings.Contains(err.Error(), "static batch of 1") {
		t.Fatalf("got %v, want a refusal", err)
	}
	p = tiny(t, "Relu", map[string][]ir.Dim{"x": {d(32), d(4)}}, []string{"x"}, []ir.Dim{d(32), d(4)})
	if _, err := Load(p, Options{Batch: 3, BindAll: true}); err == nil || !strings.Contains(err.Error(), "batch size is fixed") {
		t.Fatalf("got %v, want a refusal", err)
	}
}

// TestBatchStaticDynamicSeq: a batch-1 export with a dynamic sequence
// ([1,seq] inputs) has its leading 1s rewritten; seq, the symbol both
// inputs share, is not taken for the batch; --batch 1 is the export's own.
func TestBatchStaticDynamicSeq(t *testing.T) {
	p := tiny(t, "Add", map[string][]ir.Dim{"a": {d(1), s("seq")}, "b": {d(1), s("seq")}}, []string{"a", "b"}, []ir.Dim{d(1), s("seq")})
	l, err := Load(p, Options{Batch: 3, Dims: map[string]int64{"seq": 7}})
	if err != nil {
		t.Fatal(err)
	}
	if got := sh(l.Model.Graph.Outputs[0]); got != "[3,7]" || !l.StaticBatch {
		t.Fatalf("output %s (StaticBatch %v), want [3,7] from a rewrite", got, l.StaticBatch)
	}
	if w := strings.Join(l.Warnings, "\n"); !strings.Contains(w, "inputs a, b have a static batch dim of 1") || !strings.Contains(w, "--batch 3 rewrote them to 3") {
		t.Fatalf("warnings %q", w)
	}
	l, err = Load(p, Options{Batch: 1, Dims: map[string]int64{"seq": 7}})
	if err != nil {
		t.Fatal(err)
	}
	if got := sh(l.Model.Graph.Outputs[0]); got != "[1,7]" || len(l.Warnings) != 0 {
		t.Fatalf("batch 1: output %s, warnings %q", got, l.Warnings)
	}
}

// TestInputDataChecked: an input tensor of the wrong rank or dtype is
// refused before inference, naming the input and both shapes.
func TestInputDataChecked(t *testing.T) {
	p := tiny(t, "Relu", map[string][]ir.Dim{"x": {d(1), d(4)}}, []string{"x"}, []ir.Dim{d(1), d(4)})
	for want, tn := range map[string]*ir.Tensor{
		"has rank 1":       {DType: ir.Float32, Dims: []int64{4}},
		"declares float32": {DType: ir.Int64, Dims: []int64{1, 4}},
		"dim 1 differs":    {DType: ir.Float32, Dims: []int64{1, 5}},
	} {
		_, err := Load(p, Options{InputData: map[string]*ir.Tensor{"x": tn}})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "(x)") {
			t.Errorf("got %v, want %q", err, want)
		}
	}
}

// TestShortenWarning: a huge symbolic expression is cut, the rest kept.
func TestShortenWarning(t *testing.T) {
	expr := "(" + strings.Repeat("(batch*seq)+", 60) + "1)"
	w := shorten("value y has shape [" + expr + ",4]")
	if len([]rune(w)) > 120 || !strings.HasPrefix(w, "value y has shape [(") || !strings.HasSuffix(w, ",4]") {
		t.Fatalf("shortened to %q", w)
	}
}
