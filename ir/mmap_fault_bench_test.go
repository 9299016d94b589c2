package ir_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// BenchmarkScaleReadFile reads the 112k-node graph from a file, memory
// mapped as the command reads it: the cost of guarding the mapping
// against faults shows here and in BenchmarkScaleRead.
func BenchmarkScaleReadFile(b *testing.B) {
	data := scaleModel(b)
	path := filepath.Join(b.TempDir(), "scale.onnx")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ir.ReadFile(path, ir.ReadOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
