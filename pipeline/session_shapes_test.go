package pipeline

import (
	"strings"
	"testing"
)

// TestSessionShapesWarning: priced under onnxruntime, a model whose batch
// is symbolic in the file and bound here says that onnxruntime, which
// builds its graph before the batch is known, fuses less than the plan
// prices; a model exported with static dims, and the other runtimes, say
// nothing of it.
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
			if strings.Contains(w, "onnxruntime builds its graph with") {
				got = true
				if !strings.Contains(w, "batch symbolic") || !strings.Contains(w, "(72 here)") {
					t.Errorf("%s: %q: want the bound symbol and BERT's 72 MatMul+bias pairs named", c.model, w)
				}
			}
		}
		if got != c.want {
			t.Errorf("%s under %s: warning %v, want %v (warnings %q)", c.model, c.runtime, got, c.want, r.Warnings)
		}
	}
}
