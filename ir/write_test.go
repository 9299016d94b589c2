package ir

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
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

// TestWriteCopiesWeights writes a model with a 400 KB initializer, reads
// it, and writes it again: the second write copies the weight from the
// first file in several buffer-sized pieces and must give the same bytes.
// Then the source file is replaced by a shorter one, and writing must
// fail, naming the file, without leaving an output.
func TestWriteCopiesWeights(t *testing.T) {
	dir := t.TempDir()
	vals := make([]float64, 100_000)
	for i := range vals {
		vals[i] = float64(i)
	}
	data := buildModel(t, func(g *Graph) {
		w := mustValue(t, g, "w")
		g.AddInitializer(w, FloatTensor(Float32, []int64{int64(len(vals))}, vals))
		g.AddOutput(w)
	})
	src := filepath.Join(dir, "src.onnx")
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := ReadFile(src, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w := m.Graph.Initializers[0].Const; w.Loc.Length != 4*int64(len(vals)) {
		t.Fatalf("weight location %+v: not copied from the file", w.Loc)
	}
	var again bytes.Buffer
	if err := Write(&again, m); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), data) {
		t.Fatalf("rewritten model differs: %d bytes, first write %d", again.Len(), len(data))
	}

	// Renamed over, so the reader's view of the old file stays intact.
	short := filepath.Join(dir, "short.onnx")
	if err := os.WriteFile(short, data[:len(data)-1000], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(short, src); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.onnx")
	err = WriteFile(out, m)
	if err == nil || !strings.Contains(err.Error(), src) || !strings.Contains(err.Error(), "changed since it was read") {
		t.Fatalf("got %v, want an error naming %s", err, src)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("files left after the failed write: %v", entries)
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestWriteError checks the output's error is returned.
func TestWriteError(t *testing.T) {
	m, err := Read(reluModel(t), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(failWriter{}, m); err == nil || err.Error() != "disk full" {
		t.Fatalf("got %v", err)
	}
}
