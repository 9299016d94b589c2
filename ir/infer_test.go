package ir

import (
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
