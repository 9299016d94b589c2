package ir

import (
	"path/filepath"
	"sort"
	"testing"
)

// conformanceModels lists the ONNX conformance models installed by
// Debian's libonnx-testdata, sorted; the test using it skips when absent.
func conformanceModels(t testing.TB) []string {
	paths, _ := filepath.Glob("/usr/share/libonnx-testdata/data/*/*/model.onnx")
	if len(paths) == 0 {
		t.Skip("libonnx-testdata is not installed (/usr/share/libonnx-testdata/data)")
	}
	sort.Strings(paths)
	return paths
}

// TestReadConformance reads every conformance model and verifies it.
func TestReadConformance(t *testing.T) {
	for _, p := range conformanceModels(t) {
		m, err := ReadFile(p, ReadOptions{})
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if err := VerifyModel(m); err != nil {
			t.Errorf("%s: verify: %v", p, err)
		}
		_ = DumpModel(m)
	}
}
