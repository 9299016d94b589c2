package ir

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// fixtureModels lists testdata/models/*.onnx (exported by
// scripts/export_fixtures.py), sorted.
func fixtureModels() []string {
	paths, _ := filepath.Glob("../testdata/models/*.onnx")
	sort.Strings(paths)
	return paths
}

// featureModels lists testdata/roundtrip/*.onnx, made by gen.py there:
// sparse initializers, typed data fields, fp16/bf16/string tensors,
// functions and external data.
func featureModels() []string {
	paths, _ := filepath.Glob("testdata/roundtrip/*.onnx")
	sort.Strings(paths)
	return paths
}

// roundTrip writes m to a temporary file and reads it back.
func roundTrip(t testing.TB, m *Model) *Model {
	t.Helper()
	out := filepath.Join(t.TempDir(), "rt.onnx")
	if err := WriteFile(out, m); err != nil {
		t.Fatalf("write: %v", err)
	}
	m2, err := ReadFile(out, ReadOptions{})
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	return m2
}

// TestRoundTrip checks read → write → read gives the same canonical dump,
// on every conformance model and every committed fixture.
func TestRoundTrip(t *testing.T) {
	paths := append(append(conformanceModelsOrNone(), fixtureModels()...), featureModels()...)
	dir := t.TempDir()
	for i, p := range paths {
		m, err := ReadFile(p, ReadOptions{})
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		out := filepath.Join(dir, "m.onnx")
		if err := WriteFile(out, m); err != nil {
			t.Errorf("%s: write: %v", p, err)
			continue
		}
		m2, err := ReadFile(out, ReadOptions{})
		if err != nil {
			t.Errorf("%s: read back: %v", p, err)
			continue
		}
		if a, b := DumpModel(m), DumpModel(m2); a != b {
			t.Errorf("%s: dump differs after round trip:\n--- before\n%s\n--- after\n%s", p, a, b)
		}
		if err := VerifyModel(m2); err != nil {
			t.Errorf("%s: verify after round trip: %v", p, err)
		}
		_ = i
		os.Remove(out)
	}
}

func conformanceModelsOrNone() []string {
	paths, _ := filepath.Glob("/usr/share/libonnx-testdata/data/*/*/model.onnx")
	sort.Strings(paths)
	return paths
}
