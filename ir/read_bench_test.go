package ir

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkReadFile reads the model named by ONNXCOST_BENCH_MODEL (for
// instance a VGG-16 with its 553 MB of weights) and runs shape inference.
func BenchmarkReadFile(b *testing.B) {
	p := os.Getenv("ONNXCOST_BENCH_MODEL")
	if p == "" {
		b.Skip("set ONNXCOST_BENCH_MODEL to a .onnx file")
	}
	benchRead(b, p)
}

// BenchmarkReadFixtures reads each committed fixture model.
func BenchmarkReadFixtures(b *testing.B) {
	paths := fixtureModels()
	if len(paths) == 0 {
		b.Skip("no fixtures in testdata/models")
	}
	for _, p := range paths {
		b.Run(filepath.Base(p), func(b *testing.B) { benchRead(b, p) })
	}
}

func benchRead(b *testing.B, path string) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		m, err := ReadFile(path, ReadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := InferShapes(m, InferOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
