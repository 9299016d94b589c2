package ir

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// TestUnusedBindingWarningsSorted binds more symbols than the model has:
// each unused binding is a warning, and the warnings come sorted by name
// on every run (they are printed and written into reports).
func TestUnusedBindingWarningsSorted(t *testing.T) {
	bindings := map[string]int64{"batch": 2}
	var unused []string
	for _, name := range []string{"zeta", "alpha", "mu", "kappa", "omega", "delta", "pi", "sigma"} {
		bindings[name] = 1
		unused = append(unused, name)
	}
	slices.Sort(unused)
	for run := 0; run < 20; run++ { // map order differs between runs
		g := NewGraph("main")
		x, err := g.NewValue("x")
		if err != nil {
			t.Fatal(err)
		}
		x.Declared = &TypeInfo{Kind: TensorValue, DType: Float32, Shape: RankedShape(S("batch"), D(3))}
		g.AddInput(x)
		g.AddOutput(x)
		res, err := InferShapes(&Model{Opsets: []OpsetImport{{Version: 13}}, Graph: g}, InferOptions{Bindings: bindings})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, w := range res.Warnings {
			if name, _, ok := strings.Cut(strings.TrimPrefix(w, "binding "), "="); ok && strings.HasPrefix(w, "binding ") {
				got = append(got, name)
			}
		}
		if !slices.Equal(got, unused) {
			t.Fatalf("run %d: unused-binding warnings name %v, want %v (sorted)", run, got, unused)
		}
	}
}

// reluNegGraph is x[2,3] (declared) -> Relu -> mid -> Neg -> y (output).
func reluNegGraph(t *testing.T) (g *Graph, mid, y *Value) {
	t.Helper()
	g = NewGraph("main")
	x, _ := g.NewValue("x")
	x.Declared = &TypeInfo{Kind: TensorValue, DType: Float32, Shape: KnownShape(2, 3)}
	g.AddInput(x)
	mid, _ = g.NewValue("mid")
	y, _ = g.NewValue("y")
	for _, n := range []*Node{
		{Name: "r", OpType: "Relu", Inputs: []*Value{x}, Outputs: []*Value{mid}},
		{Name: "n", OpType: "Neg", Inputs: []*Value{mid}, Outputs: []*Value{y}},
	} {
		if err := g.AddNode(n); err != nil {
			t.Fatal(err)
		}
	}
	g.AddOutput(y)
	return g, mid, y
}

// TestDeclaredTypesAreCheckedNotUsed: a value_info entry and a graph
// output that declare wrong shapes do not change the inferred shapes; each
// disagreement is a warning naming the value.
func TestDeclaredTypesAreCheckedNotUsed(t *testing.T) {
	g, mid, y := reluNegGraph(t)
	g.ValueInfo["mid"] = TypeInfo{Kind: TensorValue, DType: Float32, Shape: KnownShape(2, 4)} // wrong
	y.Declared = &TypeInfo{Kind: TensorValue, DType: Float16, Shape: KnownShape(2, 3)}        // wrong dtype
	res, err := InferShapes(&Model{Opsets: []OpsetImport{{Version: 13}}, Graph: g}, InferOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !mid.Shape.Equal(KnownShape(2, 3)) || y.DType != Float32 {
		t.Errorf("declared types leaked into inference: mid %s, y %s", mid.Shape, y.DType)
	}
	all := strings.Join(res.Warnings, "\n")
	for _, want := range []string{`value_info "mid": inferred shape [2,3], declared [2,4]`, `output "y": inferred dtype float32, declared float16`} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings %q lack %q", all, want)
		}
	}
}

// TestReadValueInfoChecked: a value_info entry read from a file is kept
// on its value (not also in Graph.ValueInfo), is still checked against
// inference, and is written back.
func TestReadValueInfoChecked(t *testing.T) {
	g, _, y := reluNegGraph(t)
	y.Declared = &TypeInfo{Kind: TensorValue, DType: Float32, Shape: KnownShape(2, 3)}
	g.ValueInfo["mid"] = TypeInfo{Kind: TensorValue, DType: Float32, Shape: KnownShape(2, 4)} // wrong
	var buf bytes.Buffer
	if err := Write(&buf, &Model{IRVersion: 8, Opsets: []OpsetImport{{Version: 13}}, Graph: g}); err != nil {
		t.Fatal(err)
	}
	m, err := Read(buf.Bytes(), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, inMap := m.Graph.ValueInfo["mid"]; inMap {
		t.Errorf("value_info of mid is held twice: in Graph.ValueInfo and on the value")
	}
	if d := m.Graph.DeclaredInfo("mid"); d == nil || !d.Shape.Equal(KnownShape(2, 4)) {
		t.Fatalf("DeclaredInfo(mid) = %v, want [2,4]", d)
	}
	var again bytes.Buffer
	if err := Write(&again, m); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Errorf("value_info not written back as read")
	}
	res, err := InferShapes(m, InferOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if all, want := strings.Join(res.Warnings, "\n"), `value_info "mid": inferred shape [2,3], declared [2,4]`; !strings.Contains(all, want) {
		t.Errorf("warnings %q lack %q", all, want)
	}
	m.Graph.DropValueInfo()
	if m.Graph.DeclaredInfo("mid") != nil {
		t.Errorf("DropValueInfo kept mid's declaration")
	}
}
