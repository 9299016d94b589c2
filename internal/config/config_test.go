package config

import (
	"strings"
	"testing"
)

// TestGPUSourceMarker: the source is added to the first line however the
// rendering's writes split it, and only there.
func TestGPUSourceMarker(t *testing.T) {
	for _, c := range []struct {
		writes []string
		want   string
	}{
		{[]string{"onnxcost · GPU T4 · fp32\nGPU T4 again\n"}, "onnxcost · GPU T4 (from src) · fp32\nGPU T4 again\n"},
		{[]string{"onnxcost · G", "PU T", "4 · fp32", "\nGPU T4", " again\n"}, "onnxcost · GPU T4 (from src) · fp32\nGPU T4 again\n"},
		{[]string{"GPU T4", " only"}, "GPU T4 (from src) only"},
		{[]string{"no gpu here\nGPU T4\n"}, "no gpu here\nGPU T4\n"},
	} {
		var out strings.Builder
		m := &SourceMarker{W: &out, GPU: "T4", Source: "src"}
		for _, w := range c.writes {
			if n, err := m.Write([]byte(w)); err != nil || n != len(w) {
				t.Fatalf("%q: Write = %d, %v", c.writes, n, err)
			}
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		if out.String() != c.want {
			t.Errorf("%q: got %q, want %q", c.writes, out.String(), c.want)
		}
	}
}
