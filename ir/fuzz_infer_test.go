package ir_test

import (
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/internal/fuzzgraph"
	"github.com/onnxcost/onnxcost/ir"
)

// FuzzInferShapes decodes the fuzz bytes into a graph of common ops with
// random shapes and attributes (internal/fuzzgraph) and infers it
// (checkFuzzInference).
func FuzzInferShapes(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{2, 0, 3, 4, 4, 0, 5, 0, 1, 2, 1, 0, 0, 1, 0, 1, 1, 1, 1, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, _ := fuzzgraph.Build(data)
		checkFuzzInference(t, m)
	})
}

// FuzzInferQuantized: the same properties on graphs of onnxruntime's
// QOperator ops (fuzzgraph.BuildQuantized: QLinearConv in either domain
// and layout, QGemm, the com.microsoft QLinear* ops).
func FuzzInferQuantized(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{2, 0, 3, 4, 4, 0, 5, 0, 1, 9, 1, 0, 0, 1, 0, 1, 6, 1, 8, 1, 7, 1, 10, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, _ := fuzzgraph.BuildQuantized(data)
		checkFuzzInference(t, m)
	})
}

// checkFuzzInference infers m. Properties: no panic; an error is one line
// that names the op and node; an accepted graph verifies, and inferring
// it again gives the same dump (inference is deterministic and
// idempotent).
func checkFuzzInference(t *testing.T, m *ir.Model) {
	t.Helper()
	_, err := ir.InferShapes(m, ir.InferOptions{})
	if err != nil {
		msg := err.Error()
		if msg == "" || strings.Contains(msg, "\n") {
			t.Fatalf("error is not one line: %q", msg)
		}
		if !strings.Contains(msg, " node \"") {
			t.Fatalf("error does not name the node: %q", msg)
		}
		return
	}
	if err := ir.VerifyInferred(m.Graph); err != nil {
		t.Fatalf("inferred graph does not verify: %v\n%s", err, ir.Dump(m.Graph))
	}
	first := ir.Dump(m.Graph)
	if _, err := ir.InferShapes(m, ir.InferOptions{}); err != nil {
		t.Fatalf("second inference fails: %v", err)
	}
	if second := ir.Dump(m.Graph); second != first {
		t.Fatalf("second inference differs:\n%s\n---\n%s", first, second)
	}
}
