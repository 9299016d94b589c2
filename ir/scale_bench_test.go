package ir_test

import (
	"bytes"
	"sync"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/models"
)

var (
	scaleOnce  sync.Once
	scaleBytes []byte
	scaleErr   error
)

// scaleModel encodes the generated graph-only model once per test binary.
func scaleModel(b *testing.B) []byte {
	scaleOnce.Do(func() {
		m, err := models.ScaleLlama()
		if err != nil {
			scaleErr = err
			return
		}
		var buf bytes.Buffer
		scaleErr = ir.Write(&buf, m)
		scaleBytes = buf.Bytes()
	})
	if scaleErr != nil {
		b.Fatal(scaleErr)
	}
	return scaleBytes
}

// startScaleBench returns the model's bytes with the timer reset and
// throughput and allocations reported per decoded byte.
func startScaleBench(b *testing.B) []byte {
	data := scaleModel(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	return data
}

// BenchmarkScaleRead decodes the 112k-node graph (bytes in memory).
func BenchmarkScaleRead(b *testing.B) {
	data := startScaleBench(b)
	for i := 0; i < b.N; i++ {
		if _, err := ir.Read(data, ir.ReadOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScaleReadInfer decodes the 112k-node graph and infers every
// shape: what `onnxcost shapes` does before printing.
func BenchmarkScaleReadInfer(b *testing.B) {
	data := startScaleBench(b)
	for i := 0; i < b.N; i++ {
		m, err := ir.Read(data, ir.ReadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ir.InferShapes(m, ir.InferOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteScale encodes the generated 112k-node graph, its weights
// external references as `onnxcost zoo` writes them: the writer's cost
// alone, without the disk.
func BenchmarkWriteScale(b *testing.B) {
	m, err := models.ScaleLlama()
	if err != nil {
		b.Fatal(err)
	}
	models.SetDataFile(m, "llama-112k.onnx.data")
	var n countWriter
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := ir.Write(&n, m); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(n.n / int64(b.N))
}

// countWriter counts the bytes written to it.
type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}
