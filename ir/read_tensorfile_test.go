package ir

import (
	"path/filepath"
	"sort"
	"testing"
)

// TestReadTensorFile decodes the conformance inputs and outputs: known
// shape for test_add, and for every file either an error (sequence and
// optional files are not TensorProtos) or values matching the dims.
func TestReadTensorFile(t *testing.T) {
	paths, _ := filepath.Glob("/usr/share/libonnx-testdata/data/*/*/test_data_set_0/*.pb")
	if len(paths) == 0 {
		t.Skip("libonnx-testdata is not installed")
	}
	sort.Strings(paths)
	add, err := ReadTensorFile("/usr/share/libonnx-testdata/data/node/test_add/test_data_set_0/input_0.pb")
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 * 4 * 5; add.DType != Float32 || len(add.Floats) != want || !add.HasData { // dims [3,4,5]
		t.Fatalf("test_add input_0: %s %v, %d values", add.DType, add.Dims, len(add.Floats))
	}
	decoded := 0
	for _, p := range paths {
		tn, err := ReadTensorFile(p)
		if err != nil || !tn.HasData {
			continue
		}
		n := int(tn.NumElements())
		got := len(tn.Ints) + len(tn.Floats) + len(tn.Strings)
		if tn.DType == Complex64 || tn.DType == Complex128 {
			continue
		}
		if got != n {
			t.Errorf("%s: %s %v has %d values, want %d", p, tn.DType, tn.Dims, got, n)
		}
		decoded++
	}
	t.Logf("decoded %d of %d files", decoded, len(paths))
}
