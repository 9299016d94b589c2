package session

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/calib"
	"github.com/onnxcost/onnxcost/generate"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/pipeline"
)

func open(t *testing.T, name string) *Session {
	t.Helper()
	p := filepath.Join("..", "..", "testdata", "models", name)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(p, data, "test")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSymbols lists the symbolic dims the page offers inputs for.
func TestSymbols(t *testing.T) {
	syms := open(t, "bert_base.onnx").Symbols()
	if len(syms) == 0 {
		t.Fatal("bert_base has symbolic input dims; none listed")
	}
	leading := false
	for _, s := range syms {
		if s.Name == "" || len(s.Inputs) == 0 {
			t.Errorf("symbol %+v: no name or no inputs", s)
		}
		leading = leading || s.Leading
	}
	if !leading {
		t.Errorf("no symbol is a leading dim: %+v", syms)
	}
}

// TestGPUsRowPerGPU: one row per database GPU; a GPU that cannot run
// the settings gets an error row, not a missing one or a zero.
func TestGPUsRowPerGPU(t *testing.T) {
	s := open(t, "resnet50.onnx")
	for _, dtype := range []string{"", "fp8"} {
		rows, err := s.GPUs(Settings{DType: dtype})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(s.GPUList()) {
			t.Fatalf("dtype %q: %d rows for %d GPUs", dtype, len(rows), len(s.GPUList()))
		}
		for _, r := range rows {
			if (r.Totals == nil) == (r.Err == "") {
				t.Errorf("dtype %q, %s: totals %v, error %q: want exactly one", dtype, r.GPU, r.Totals, r.Err)
			}
			if r.Totals != nil && r.Totals.TimeS <= 0 {
				t.Errorf("dtype %q, %s: time %v", dtype, r.GPU, r.Totals.TimeS)
			}
		}
	}
}

// TestSettingsRefusedLikeCLI: bad settings get the CLI's messages.
func TestSettingsRefusedLikeCLI(t *testing.T) {
	s := open(t, "alexnet.onnx")
	for _, c := range []struct {
		st   Settings
		want string
	}{
		{Settings{}, "--gpu is required (see 'onnxcost gpus' for the list)"},
		{Settings{GPU: "T4", DType: "fp64"}, `--dtype "fp64": want one of fp32|tf32|fp16|bf16|fp8|int8|fp16-amp|bf16-amp`},
		{Settings{GPU: "T4", Plan: "both"}, `--plan "both": want one of fused|unfused|eager|inductor|onnxruntime`},
		{Settings{GPU: "T4", Batch: -1}, "--batch must be positive, got -1"},
		{Settings{GPU: "T4", Train: true, Warm: true}, "--warm prices an inference call repeated back to back; a training step's traffic is priced as its own (drop --warm or --train)"},
		{Settings{GPU: "T4", Train: true, GradAccum: -2}, "--grad-accum -2: want 1 or more micro-batches per optimizer step"},
		{Settings{GPU: "T4", Train: true, DataParallel: -1}, "--data-parallel -1: want 1 or more replicas"},
	} {
		_, err := s.Estimate(c.st)
		if err == nil || err.Error() != c.want {
			t.Errorf("%+v: error %v, want %q", c.st, err, c.want)
		}
	}
}

// TestModelRuntime: a page that names no runtime prices the model under
// its own (onnxruntime for one holding onnxruntime's contrib operators),
// and a training step or a call under autocast under PyTorch, as
// `report` does.
func TestModelRuntime(t *testing.T) {
	for _, c := range []struct {
		model string
		st    Settings
		want  string
	}{
		{"contrib/bert_ms_attention.onnx", Settings{GPU: "A100"}, "onnxruntime"},
		{"resnet50.onnx", Settings{GPU: "A100"}, "tensorrt"},
		{"resnet50.onnx", Settings{GPU: "A100", DType: "fp16-amp"}, "pytorch"},
		{"resnet50.onnx", Settings{GPU: "A100", DType: "bf16-amp", Runtime: "graph"}, "graph"},
		{"resnet50.onnx", Settings{GPU: "A100", Train: true}, "pytorch"},
	} {
		r, err := open(t, c.model).Estimate(c.st)
		if err != nil {
			t.Fatal(err)
		}
		if r.Runtime == nil || r.Runtime.Name != c.want {
			t.Errorf("%s %+v: priced under %+v, want %s", c.model, c.st, r.Runtime, c.want)
		}
	}
}

// TestRuntimeFile: a runtime file given by its text adds its profiles as
// --runtime-file does: an estimate under one of them is report's with
// the file, a profile of a built-in name replaces it (under training and
// as the model's default too), the menu (runtimeList) lists them, and a
// bad file gets --runtime-file's line.
func TestRuntimeFile(t *testing.T) {
	p := filepath.Join("..", "..", "testdata", "runtimes", "my-runtimes.yaml")
	text, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	// The fixture with a replaced built-in: the model's default
	// (tensorrt) and training's (pytorch) are then the file's.
	over := string(text) + "\n- name: tensorrt\n  base: tensorrt\n  call_us: 40\n- name: pytorch\n  base: pytorch\n  dispatch_us: 30\n"
	overPath := filepath.Join(t.TempDir(), "over.yaml")
	if err := os.WriteFile(overPath, []byte(over), 0o644); err != nil {
		t.Fatal(err)
	}
	s := open(t, "resnet50.onnx")
	g, err := hwdb.Lookup("A100")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path, text string
		st         Settings
		want       string // the profile report prices under
		base       string // the built-in profile it starts from
	}{
		{p, string(text), Settings{Runtime: "pytorch-lab"}, "pytorch-lab", "pytorch"},
		{p, string(text), Settings{Runtime: "trt86-enqueue"}, "trt86-enqueue", "tensorrt-enqueue"},
		{overPath, over, Settings{}, "tensorrt", "tensorrt"},
		{overPath, over, Settings{Train: true}, "pytorch", "pytorch"},
	} {
		st := c.st
		st.GPU, st.Batch, st.RuntimeFile = "A100", 4, &File{Name: c.path, Text: c.text}
		got, err := s.Estimate(st)
		if err != nil {
			t.Fatal(err)
		}
		db, err := hwdb.RuntimesWithUserFile(c.path)
		if err != nil {
			t.Fatal(err)
		}
		rt, err := db.Lookup(c.want)
		if err != nil {
			t.Fatal(err)
		}
		// The settings as check resolves them without the file (the
		// plan the file's profile runs), then that profile given to
		// pipeline directly.
		plain := st
		plain.RuntimeFile, plain.Runtime = nil, ""
		if plain.Plan, err = pipeline.ResolvePlan("", rt, plain.train()); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.check(&plain); err != nil {
			t.Fatal(err)
		}
		l, err := s.load(plain)
		if err != nil {
			t.Fatal(err)
		}
		plain.Runtime = c.st.Runtime
		want, err := pipeline.Estimate(l, g, s.options(&plain, rt))
		if err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(got)
		b, _ := json.Marshal(want)
		if string(a) != string(b) {
			t.Errorf("%s %+v: the page's report differs from pipeline's with hwdb.RuntimesWithUserFile:\n%.600s\n%.600s", c.path, c.st, a, b)
		}
		plain.Runtime, plain.Plan = c.base, c.st.Plan
		without, err := s.Estimate(plain)
		if w, _ := json.Marshal(without); err != nil || string(w) == string(a) {
			t.Errorf("%s %+v: the file's profile changes nothing (error %v)", c.path, c.st, err)
		}
	}
	if _, err := s.Estimate(Settings{GPU: "A100", Runtime: "pytorch-lab"}); err == nil {
		t.Error("a file's runtime priced without the file")
	}
	menu := Call("runtimeList", nil, []byte(`{"runtime_file":{"name":"r.yaml","text":`+strconvQuote(string(text))+`}}`))
	for _, name := range []string{"pytorch-lab", "trt86-enqueue", "tensorrt"} {
		if !strings.Contains(menu, `"name":"`+name+`"`) {
			t.Errorf("runtimeList does not offer %s", name)
		}
	}
	_, err = s.Estimate(Settings{GPU: "A100", RuntimeFile: &File{Name: "bad.yaml", Text: "- name: x\n  base: nosuch\n"}})
	if err == nil || !strings.HasPrefix(err.Error(), "--runtime-file bad.yaml") {
		t.Errorf("a bad runtime file: error %v", err)
	}
}

// TestCalibration: a calibration given by its text (a hand-written one
// of the A100) prices as
// --calibration does with the same file (pipeline.Estimate with
// calib.Parse's reading), on its GPU and transferred to another, in the
// GPUs table too, and the report's interval line names it; a bad file
// gets --calibration's one-line error naming it.
func TestCalibration(t *testing.T) {
	s := open(t, "resnet50.onnx")
	text, err := os.ReadFile(filepath.Join("..", "..", "testdata", "calibrations", "a100_hand.cal.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	f := &File{Name: "a100.yaml", Text: string(text)}
	cal, err := calib.Parse("a100.yaml", text)
	if err != nil {
		t.Fatal(err)
	}
	for _, gpu := range []string{"A100-SXM4-80GB", "H100-SXM5-80GB"} {
		plain, err := s.Estimate(Settings{GPU: gpu, Batch: 8})
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Estimate(Settings{GPU: gpu, Batch: 8, Calibration: f})
		if err != nil {
			t.Fatal(err)
		}
		l, err := s.load(Settings{Batch: 8})
		if err != nil {
			t.Fatal(err)
		}
		g, rt, err := s.check(&Settings{GPU: gpu, Batch: 8})
		if err != nil {
			t.Fatal(err)
		}
		opt := s.options(&Settings{GPU: gpu, Batch: 8}, rt)
		opt.Calibration = cal
		want, err := pipeline.Estimate(l, g, opt)
		if err != nil {
			t.Fatal(err)
		}
		if got.Totals.TimeS != want.Totals.TimeS || got.Totals.TimeS == plain.Totals.TimeS {
			t.Errorf("%s: calibrated %g, pipeline with the file %g, uncalibrated %g", gpu, got.Totals.TimeS, want.Totals.TimeS, plain.Totals.TimeS)
		}
		if line := Text(got)["interval_line"]; !strings.Contains(line, "a100.yaml") {
			t.Errorf("%s: the interval line does not name the calibration: %q", gpu, line)
		}
		if got.CalibrationFile != "a100.yaml" {
			t.Errorf("%s: calibration_file %q", gpu, got.CalibrationFile)
		}
	}
	rows, err := s.GPUs(Settings{Batch: 8, Calibration: f})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := s.GPUs(Settings{Batch: 8})
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		if rows[i].GPU == "A100-SXM4-80GB" && rows[i].Totals.TimeS == plain[i].Totals.TimeS {
			t.Errorf("the GPUs table's A100 row ignores the calibration")
		}
	}
	_, err = s.Estimate(Settings{GPU: "A100", Calibration: &File{Name: "bad.yaml", Text: "format: 9\n"}})
	if want := "--calibration: calibration bad.yaml: format 9, this onnxcost reads format 1"; err == nil || err.Error() != want {
		t.Errorf("a bad calibration: error %v, want %q", err, want)
	}
}

// TestGenerate: a decoder's generation on its bytes is `generate` on its
// file under the same settings, the page's default lengths when it sets
// none; a model without a cache is no decoder and gets generate's line.
func TestGenerate(t *testing.T) {
	s := open(t, filepath.Join("contrib", "llama_int4_gqa.onnx"))
	if !s.Decoder() {
		t.Fatal("llama_int4_gqa.onnx takes a key/value cache: a decoder")
	}
	g, err := hwdb.Lookup("A100")
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []Settings{
		{GPU: "A100", Batch: 2, Prompt: 64, Output: 16, Concurrency: "1..4"},
		{GPU: "A100"},
		{GPU: "A100", Runtime: "onnxruntime", DType: "fp16", PowerCap: 300},
	} {
		got, err := s.Generate(st)
		if err != nil {
			t.Fatal(err)
		}
		cfg := generate.Config{Model: s.name, GPU: g, DType: st.DType, Batch: st.Batch, Prompt: st.Prompt, Output: st.Output,
			Power: st.power(), ToolVersion: "test"}
		if st.Concurrency != "" {
			cfg.Concurrency = []int64{1, 2, 4}
		}
		if st.Runtime != "" {
			if cfg.Runtime, err = hwdb.LookupRuntime(st.Runtime); err != nil {
				t.Fatal(err)
			}
		}
		if cfg.Prompt == 0 {
			cfg.Prompt, cfg.Output = DefaultPrompt, DefaultOutput
		}
		want, err := generate.Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(got.Result)
		b, _ := json.Marshal(want)
		if string(a) != string(b) {
			t.Errorf("%+v: the page's generation differs from generate's:\n%s\n%s", st, a, b)
		}
		if !strings.Contains(got.Text, "time to first token") {
			t.Errorf("%+v: text %q", st, got.Text)
		}
	}
	if _, err := s.Generate(Settings{GPU: "A100", Concurrency: "1,x"}); err == nil || !strings.HasPrefix(err.Error(), "--concurrency: ") {
		t.Errorf("a bad concurrency list: error %v", err)
	}
	if _, err := s.Generate(Settings{GPU: "A100", Train: true}); err == nil {
		t.Error("a generation priced as a training step")
	}
	cnn := open(t, "resnet50.onnx")
	if cnn.Decoder() {
		t.Error("resnet50.onnx is no decoder")
	}
	if _, err := cnn.Generate(Settings{GPU: "A100"}); err == nil || !strings.Contains(err.Error(), "no key/value cache input") {
		t.Errorf("a CNN's generation: error %v", err)
	}
}

// TestGPUFile: a GPU file given by its text adds its GPUs as --gpu-file
// does: an estimate on one of them is report's with the file, the GPUs
// table and the menu list them, and a bad file gets --gpu-file's line.
func TestGPUFile(t *testing.T) {
	p := filepath.Join("..", "..", "testdata", "gpus", "my-gpus.yaml")
	text, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	f := &File{Name: p, Text: string(text)}
	db, err := hwdb.WithUserFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := open(t, "resnet50.onnx")
	for _, name := range []string{"MyInferenceCard", "lab"} {
		got, err := s.Estimate(Settings{GPU: name, GPUFile: f, Batch: 4})
		if err != nil {
			t.Fatal(err)
		}
		g, err := db.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		l, err := s.load(Settings{Batch: 4})
		if err != nil {
			t.Fatal(err)
		}
		// The settings as check resolves them (plan, runtime), on a GPU
		// of the database; the file's GPU is given to pipeline directly.
		st := Settings{GPU: "A100", Batch: 4}
		_, rt, err := s.check(&st)
		if err != nil {
			t.Fatal(err)
		}
		want, err := pipeline.Estimate(l, g, s.options(&st, rt))
		if err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(got)
		b, _ := json.Marshal(want)
		if got.GPU != g.Name || string(a) != string(b) {
			t.Errorf("%s: the page's report on the file's GPU differs from pipeline's with hwdb.WithUserFile:\n%.600s\n%.600s", name, a, b)
		}
	}
	if _, err := s.Estimate(Settings{GPU: "MyInferenceCard"}); err == nil {
		t.Error("a file's GPU priced without the file")
	}
	rows, err := s.GPUs(Settings{GPUFile: f})
	if err != nil {
		t.Fatal(err)
	}
	menu := Call("gpuList", nil, []byte(`{"gpu_file":{"name":"g.yaml","text":`+strconvQuote(string(text))+`}}`))
	for _, name := range []string{"A100-lab", "MyInferenceCard"} {
		if !slices.ContainsFunc(rows, func(r GPURow) bool { return r.GPU == name && r.Totals != nil }) {
			t.Errorf("the GPUs table has no priced row for %s", name)
		}
		if !strings.Contains(menu, `"name":"`+name+`"`) {
			t.Errorf("gpuList does not offer %s", name)
		}
	}
	_, err = s.Estimate(Settings{GPU: "A100", GPUFile: &File{Name: "bad.yaml", Text: "- name: x\n  vendor: Acme\n"}})
	if err == nil || !strings.HasPrefix(err.Error(), "--gpu-file bad.yaml:1: x: arch is required") {
		t.Errorf("a bad GPU file: error %v", err)
	}
}

// strconvQuote is s as a JSON string.
func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
