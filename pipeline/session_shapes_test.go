package pipeline

import (
	"strings"
	"testing"
)

// TestSessionShapesWarning: priced under onnxruntime, a model whose batch
// is symbolic in the file and bound here is priced as onnxruntime builds
// it, before the batch is known (passes.ORTSession), and says what
// that leaves unfused; a model exported with static dims, and the other
// runtimes, say nothing of it.
func TestSessionShapesWarning(t *testing.T) {
	for _, c := range []struct {
		model, runtime string
		batch          int64
		want           bool
	}{
		{"../testdata/models/bert_base.onnx", "onnxruntime", 8, true},
		{"../testdata/models/bert_base.onnx", "tensorrt", 8, false},
		{"zoo:gpt2-small?layers=2", "onnxruntime", 0, false},          // static dims
		{"../testdata/models/resnet50.onnx", "onnxruntime", 8, false}, // no MatMul of rank 3
	} {
		r, err := Run(c.model, Config{GPU: "A100", Runtime: c.runtime, Batch: c.batch})
		if err != nil {
			t.Fatal(err)
		}
		got := false
		for _, w := range r.Warnings {
			if strings.Contains(w, "priced as onnxruntime builds the graph") {
				got = true
				if !strings.Contains(w, "with batch symbolic") || !strings.Contains(w, "72 MatMul+bias pairs stay apart") {
					t.Errorf("%s: %q: want the bound symbol and BERT's 72 MatMul+bias pairs named", c.model, w)
				}
			}
		}
		if got != c.want {
			t.Errorf("%s under %s: warning %v, want %v (warnings %q)", c.model, c.runtime, got, c.want, r.Warnings)
		}
	}
}
