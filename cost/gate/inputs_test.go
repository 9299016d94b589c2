package gate

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestBudgetInputs: the budget, the base report and each model with its
// side files, relative paths resolved against the budget's folder.
func TestBudgetInputs(t *testing.T) {
	b := &Budget{File: filepath.Join("ci", "b.yaml"), Models: []ModelBudget{{Path: "m.onnx", Settings: Settings{GPUFile: "gpus.yaml", Calibration: "h100.cal.yaml"}}}}
	got := b.Inputs("ci/b.yaml", "base.json")
	want := []string{"ci/b.yaml", "base.json", filepath.Join("ci", "m.onnx"), filepath.Join("ci", "gpus.yaml"), "", filepath.Join("ci", "h100.cal.yaml")}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}
