package main

import (
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/models"
)

var (
	scaleOnce sync.Once
	scaleDir  string // removed by TestMain
	scalePath string
	scaleErr  error
)

// scaleModel writes the generated graph-only model once per test binary.
func scaleModel(b *testing.B) string {
	scaleOnce.Do(func() {
		m, err := models.ScaleLlama()
		if err != nil {
			scaleErr = err
			return
		}
		scaleDir, scaleErr = os.MkdirTemp("", "onnxcost-scale-")
		if scaleErr != nil {
			return
		}
		scalePath = filepath.Join(scaleDir, "llama-112k.onnx")
		models.SetDataFile(m, "llama-112k.onnx.data")
		scaleErr = ir.WriteFile(scalePath, m)
	})
	if scaleErr != nil {
		b.Fatal(scaleErr)
	}
	return scalePath
}

func benchCLI(b *testing.B, args ...string) {
	path := scaleModel(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if code := run(append([]string{args[0], path}, args[1:]...), io.Discard, io.Discard); code != 0 {
			b.Fatalf("%v: exit %d", args, code)
		}
	}
}

// BenchmarkScaleShapes is `onnxcost shapes` on a 112k-node LLaMA-shaped graph.
func BenchmarkScaleShapes(b *testing.B) { benchCLI(b, "shapes") }

// BenchmarkScaleShapesJSON is `onnxcost shapes --format json` on it.
func BenchmarkScaleShapesJSON(b *testing.B) { benchCLI(b, "shapes", "--format", "json") }

// BenchmarkScaleReport is `onnxcost report --gpu A100` on it.
func BenchmarkScaleReport(b *testing.B) { benchCLI(b, "report", "--gpu", "A100") }

// TestMain removes the scale benchmarks' model after the run.
func TestMain(m *testing.M) {
	code := m.Run()
	if scaleDir != "" {
		os.RemoveAll(scaleDir)
	}
	os.Exit(code)
}
