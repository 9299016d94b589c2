package pipeline_test

import (
	"math"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/pipeline"
	"github.com/onnxcost/onnxcost/train"
)

// contribWarnings are a report's warnings about the operators only
// onnxruntime runs and the runtime pricing them.
func contribWarnings(r *report.Report) []string {
	var out []string
	for _, w := range r.Warnings {
		if strings.Contains(w, "only onnxruntime runs") {
			out = append(out, w)
		}
	}
	return out
}

// TestModelRuntime: with no runtime named, a model holding operators only
// onnxruntime runs (its contrib domain, the integer ops TensorRT lacks)
// is priced as onnxruntime runs it (a decoder with a
// key/value cache as onnxruntime-genai does, its cache bound on the
// device), and the report says why; any other model keeps TensorRT with
// no such word. A runtime named that cannot run the operators is kept and
// says so; onnxruntime named says nothing.
func TestModelRuntime(t *testing.T) {
	for _, c := range []struct {
		path, runtime, want, warn string
	}{
		{"../testdata/models/contrib/llama_int4_gqa.onnx", "", "onnxruntime-iobinding", "the default for a model holding operators only onnxruntime runs (com.microsoft: MatMulNBits ×"},
		{"../testdata/models/contrib/bert_ms_attention.onnx", "", "onnxruntime", "the default for a model holding"},
		{"../testdata/models/qoperator/qbert.onnx", "", "onnxruntime", "; DynamicQuantizeLinear ×2, MatMulInteger ×1)"},
		{"../testdata/models/qoperator/qdq_attn_ort_all.onnx", "", "onnxruntime", "QLinearSoftmax ×1; QLinearMatMul ×2)"},
		{"../testdata/models/qoperator/qdq_attn.onnx", "", "tensorrt", ""},
		{"../testdata/models/resnet50.onnx", "", "tensorrt", ""},
		{"zoo:gpt2-small?decode=1&past=16", "", "tensorrt", ""},
		{"../testdata/models/contrib/llama_int4_gqa.onnx", "tensorrt", "tensorrt", "TensorRT's ONNX parser does not import them"},
		{"../testdata/models/contrib/llama_int4_gqa.onnx", "graph", "graph", "PyTorch has no kernels for them; each is priced as onnxcost's kernel for it, as a plugin would run it; --runtime onnxruntime-iobinding prices"},
		{"../testdata/models/contrib/bert_ms_attention.onnx", "onnxruntime-cudagraph", "onnxruntime-cudagraph", ""},
	} {
		r, err := pipeline.Run(c.path, pipeline.Config{GPU: "A100", Runtime: c.runtime})
		if err != nil {
			t.Fatalf("%s --runtime %q: %v", c.path, c.runtime, err)
		}
		if r.Runtime == nil || r.Runtime.Name != c.want {
			t.Errorf("%s --runtime %q: priced under %+v, want %s", c.path, c.runtime, r.Runtime, c.want)
			continue
		}
		if want := map[string]string{"onnxruntime": "onnxruntime", "onnxruntime-iobinding": "onnxruntime", "onnxruntime-cudagraph": "onnxruntime", "tensorrt": "fused", "graph": "eager"}[c.want]; r.Plan != want {
			t.Errorf("%s --runtime %q: plan %s, want %s (the runtime's own)", c.path, c.runtime, r.Plan, want)
		}
		ws := contribWarnings(r)
		switch {
		case c.warn == "" && len(ws) > 0:
			t.Errorf("%s --runtime %q: warned %q", c.path, c.runtime, ws)
		case c.warn != "" && (len(ws) != 1 || !strings.Contains(ws[0], c.warn)):
			t.Errorf("%s --runtime %q: warnings %q, want one containing %q", c.path, c.runtime, ws, c.warn)
		}
	}
}

// TestModelRuntimeWithTraining: a training step keeps PyTorch, its own
// runtime, whatever operators the model holds, and says PyTorch has no
// kernels for the contrib ones; ORTOnlyOps names the most frequent first.
func TestModelRuntimeWithTraining(t *testing.T) {
	const path = "../testdata/models/contrib/bert_ms_attention.onnx"
	r, err := pipeline.Run(path, pipeline.Config{GPU: "A100", Train: &train.Options{}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Runtime == nil || r.Runtime.Name != train.Runtime {
		t.Errorf("training step priced under %+v, want %s", r.Runtime, train.Runtime)
	}
	if ws := contribWarnings(r); len(ws) != 1 || !strings.Contains(ws[0], "PyTorch has no kernels for them") {
		t.Errorf("warnings %q, want one saying PyTorch has no kernels for them", ws)
	}
	l, err := pipeline.Load(path, pipeline.Options{BindAll: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := l.ORTOnlyOps(); got != "com.microsoft: SkipLayerNormalization ×4, Attention ×2, BiasGelu ×2, EmbedLayerNormalization ×1" {
		t.Errorf("ORTOnlyOps = %q", got)
	}
}

// TestRequestedRuntimeInRun: pipeline.Run (what calibrate's measurement
// rows, sweeps and library users call) settles a runtime left unnamed as
// every command does: PyTorch for an autocast dtype and for a training
// step, found among Config.Runtimes, where a user's profile of that name
// replaces the built-in one; a named runtime wins. An autocast row of a
// measurements table without a runtime column was priced under
// TensorRT.
func TestRequestedRuntimeInRun(t *testing.T) {
	const path = "../testdata/models/resnet50.onnx"
	db, err := hwdb.RuntimesWithUserData("rt.yaml", []byte("- name: pytorch\n  base: pytorch\n  dispatch_us: 40\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cfg  pipeline.Config
		want string
		user bool // priced under the file's profile
	}{
		{pipeline.Config{DType: "fp16-amp"}, "pytorch", false},
		{pipeline.Config{DType: "bf16-amp", Runtime: "graph"}, "graph", false},
		{pipeline.Config{DType: "fp16"}, "tensorrt", false},
		{pipeline.Config{DType: "fp16-amp", Runtimes: db}, "pytorch", true},
		{pipeline.Config{Train: &train.Options{}, Runtimes: db}, "pytorch", true},
	} {
		cfg := c.cfg
		cfg.GPU, cfg.Batch = "A100", 2
		r, err := pipeline.Run(path, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if r.Runtime == nil || r.Runtime.Name != c.want || (math.Abs(r.Runtime.DispatchS-40e-6) < 1e-12) != c.user {
			t.Errorf("dtype %q runtime %q train %v: priced under %+v, want %s (the file's: %v)", c.cfg.DType, c.cfg.Runtime, c.cfg.Train != nil, r.Runtime, c.want, c.user)
		}
	}
}
