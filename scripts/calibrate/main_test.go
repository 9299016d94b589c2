package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/onnxcost/onnxcost/cost/perf"
)

// TestWriteParamsReproducesCommittedFile: the generator, given the
// committed parameters, writes the committed file byte for byte, so
// cost/perf/calibration_params.go is what -fit -write produces.
func TestWriteParamsReproducesCommittedFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "calibration_params.go")
	if err := writeParams(out, perf.DefaultParams()); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("..", "..", paramsFile))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("writeParams output differs from %s:\n%s", paramsFile, got)
	}
}
