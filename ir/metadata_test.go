package ir

import (
	"os"
	"path/filepath"
	"testing"
)

// TestNodeMetadataRoundTrip: NodeProto.metadata_props (field 9) is
// written and read back in order, beside the model's own metadata, and
// WriteFile leaves the file readable by others (0644).
func TestNodeMetadataRoundTrip(t *testing.T) {
	paths := fixtureModels()
	if len(paths) == 0 {
		t.Skip("no fixtures")
	}
	m, err := ReadFile(paths[0], ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []KeyValue{{"onnxcost.time", "1 µs"}, {"onnxcost.bound", "memory"}, {"k", ""}}
	m.Graph.Nodes[0].SetMetadata(want)
	m.Metadata = append(m.Metadata, KeyValue{"onnxcost.gpu", "T4"})
	out := filepath.Join(t.TempDir(), "m.onnx")
	if err := WriteFile(out, m); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(out)
	if err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v (%v), want 0644", st.Mode().Perm(), err)
	}
	m2, err := ReadFile(out, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := m2.Graph.Nodes[0].Metadata()
	if len(got) != len(want) {
		t.Fatalf("node metadata %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("node metadata %d: %v, want %v", i, got[i], want[i])
		}
	}
	if last := m2.Metadata[len(m2.Metadata)-1]; last.Key != "onnxcost.gpu" || last.Value != "T4" {
		t.Errorf("model metadata %v", m2.Metadata)
	}
	if len(m2.Graph.Nodes[1].Metadata()) != 0 {
		t.Errorf("node 1 got metadata %v", m2.Graph.Nodes[1].Metadata())
	}
}
