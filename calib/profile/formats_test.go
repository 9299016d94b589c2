package profile

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/calib"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/pipeline"
)

func runReport(t *testing.T, model, plan string) *report.Report {
	t.Helper()
	rep, err := pipeline.Run(filepath.Join("testdata", "models", model+".onnx"), pipeline.Config{GPU: "A100", Plan: plan})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestTensorRTNames reads a trtexec profile alone: layer names joined by
// " + " give the nodes; TensorRT's reformatting layer ("Reformatting
// CopyNode for Input Tensor 0 to /fc/Gemm") goes to the layer it converts
// for (it stayed unmatched: 96% of the time matched).
func TestTensorRTNames(t *testing.T) {
	p, err := Read(filepath.Join("testdata", "trt_cnn_profile.json"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Format != TensorRT || p.Runs != 10 || len(p.Events) != 7 || len(p.Events[0].Nodes) != 3 {
		t.Fatalf("got %s, %d runs, %d events, first %v", p.Format, p.Runs, len(p.Events), p.Events[0])
	}
	for _, plan := range []string{"unfused", "fused"} {
		m := MatchReport(p, runReport(t, "cnn", plan))
		checkRows(t, "trt "+plan, p, m)
		if len(m.Unmatched) != 0 || m.MatchedTimeFraction != 1 {
			t.Errorf("%s: matched %.4f, unmatched %v, want all of it", plan, m.MatchedTimeFraction, m.Unmatched)
		}
		for _, r := range m.Nodes {
			if slices.ContainsFunc(r.Profiled, func(e string) bool { return strings.HasPrefix(e, "Reformatting") }) && r.Name != "/fc/Gemm" {
				t.Errorf("%s: the reformatting layer is on %s, want /fc/Gemm, the layer it converts the input of", plan, r.Name)
			}
		}
	}
}

// TestTensorRTLayerInfo takes nodes from layer metadata, with a Myelin
// range given by its two ends.
func TestTensorRTLayerInfo(t *testing.T) {
	p, err := ReadTensorRT(filepath.Join("testdata", "trt_transformer_profile.json"), filepath.Join("testdata", "trt_transformer_layers.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Events[0].Nodes) != 9 || len(p.Events[2].Nodes) != 12 {
		t.Fatalf("nodes per layer: %d, %d", len(p.Events[0].Nodes), len(p.Events[2].Nodes))
	}
	for _, plan := range []string{"unfused", "fused"} {
		m := MatchReport(p, runReport(t, "transformer", plan))
		checkRows(t, "trt layers "+plan, p, m)
		if m.MatchedTimeFraction != 1 {
			t.Errorf("%s: matched %.4f, want 1 (unmatched %v)", plan, m.MatchedTimeFraction, m.Unmatched)
		}
	}
	m := MatchReport(p, runReport(t, "transformer", "unfused"))
	for _, r := range m.Nodes {
		if r.Name == "/attn/Softmax" && r.MeasuredS == 0 {
			t.Errorf("the Myelin range /attn/q/MatMul.../attn/out/Add does not cover /attn/Softmax")
		}
	}
}

// TestKineto charges kernels to the annotation around their launch, and
// places unannotated ops by kind and order.
func TestKineto(t *testing.T) {
	p, err := Read(filepath.Join("testdata", "kineto_cnn.json"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Format != PyTorch || p.Runs != 2 {
		t.Fatalf("format %s, runs %d", p.Format, p.Runs)
	}
	want := map[string]float64{"stem.conv": 11e-6, "aten::batch_norm": 3e-6, "aten::relu": 2e-6, "aten::linear": 4e-6}
	for _, e := range p.Events {
		if w, ok := want[e.Name]; ok && !near(e.DurS, w) {
			t.Errorf("%s: %g s, want %g", e.Name, e.DurS, w)
		}
	}
	m := MatchReport(p, runReport(t, "cnn", "unfused"))
	checkRows(t, "kineto", p, m)
	rows := map[string]float64{}
	for _, r := range m.Nodes {
		rows[r.Name] = r.MeasuredS
	}
	for node, w := range map[string]float64{"/stem/conv/Conv": 11e-6, "/stem/bn/BatchNormalization": 3e-6, "/stem/relu/Relu": 2e-6, "/fc/Gemm": 4e-6} {
		if !near(rows[node], w) {
			t.Errorf("%s measured %g, want %g", node, rows[node], w)
		}
	}
	if len(m.Unmatched) != 1 || !strings.HasPrefix(m.Unmatched[0].Name, "Memcpy") {
		t.Errorf("unmatched %v, want the memcpy", m.Unmatched)
	}
}

// TestKinetoProvenance: a Kineto trace says which device, driver and CUDA
// runtime it ran on (deviceProperties, cuda_driver_version,
// cuda_runtime_version), our H200's as cudaDeviceProp gave them;
// onnxruntime's profiles say nothing.
func TestKinetoProvenance(t *testing.T) {
	p, err := Read(filepath.Join("testdata", "kineto_h200", "bert_base_fp32_b1.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	want := calib.Provenance{Device: "NVIDIA H200", SMs: 132, MemoryGiB: 139.8, Driver: "CUDA 13.0 driver API",
		Software: "PyTorch (Kineto trace, CUDA runtime 13.0)"}
	if p.Device != want {
		t.Errorf("device %+v, want %+v", p.Device, want)
	}
	// A trace that names its device and no figures.
	if p, err := Read(filepath.Join("testdata", "kineto_cnn.json")); err != nil || p.Device != (calib.Provenance{Device: "NVIDIA A100-SXM4-40GB"}) {
		t.Errorf("kineto_cnn.json: %+v, %v", p.Device, err)
	}
	// onnxruntime names no device: a profile of its CPU provider alone is
	// a CPU's times; one with GPU kernels says nothing.
	if p, err := Read(filepath.Join("testdata", "ort_cnn.json")); err != nil || p.Device != (calib.Provenance{Device: "cpu"}) {
		t.Errorf("an onnxruntime CPU profile: %+v, %v", p.Device, err)
	}
	node := func(name, provider string, ts int) string {
		return fmt.Sprintf(`{"cat":"Node","ph":"X","name":"%s_kernel_time","ts":%d,"dur":5,"args":{"op_name":"Relu","provider":"%s"}}`, name, ts, provider)
	}
	gpuProfile := "[" + node("a", "CUDAExecutionProvider", 0) + `,{"cat":"Kernel","ph":"X","name":"relu_kernel","ts":1,"dur":2,"args":{"parent_name":"a_kernel_time"}}]`
	if p, err := Parse("gpu.json", []byte(gpuProfile)); err != nil || p.Device != (calib.Provenance{}) {
		t.Errorf("an onnxruntime GPU profile: %+v, %v", p.Device, err)
	}
	if p, err := Parse("cpu.json", []byte("["+node("a", "CPUExecutionProvider", 0)+","+node("b", "CPUExecutionProvider", 9)+"]")); err != nil || p.Device.Device != "cpu" {
		t.Errorf("an onnxruntime CPU profile: %+v, %v", p.Device, err)
	}
	// A Kineto trace with no device and no GPU kernel: a CPU run.
	p, err = Parse("cpu_trace.json", []byte(`{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 0, "tid": 0, "ts": 0, "dur": 2}]}`))
	if err != nil || p.Device.Device != "cpu" {
		t.Errorf("a CPU Kineto trace: %+v, %v", p.Device, err)
	}
	// A hostile name cannot move a terminal's cursor or fill its screen.
	p, err = Parse("hostile.json", []byte(`{"deviceProperties": [{"name": "NVIDIA\u001b[2J  H200\n`+strings.Repeat("x", 300)+`"}], "traceEvents": [`+
		`{"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 0, "tid": 0, "ts": 0, "dur": 2}]}`))
	if err != nil || !strings.HasPrefix(p.Device.Device, "NVIDIA?[2J H200 xxx") || len([]rune(p.Device.Device)) != 120 || calib.CleanField(p.Device.Device) != p.Device.Device {
		t.Errorf("hostile name read as %q, %v", p.Device.Device, err)
	}
	// Figures of the wrong kind are left unknown, not an error.
	p, err = Parse("odd.json", []byte(`{"deviceProperties": [{"name": 3, "numSms": -1}], "cuda_driver_version": "x", "traceEvents": [`+
		`{"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 0, "tid": 0, "ts": 0, "dur": 2}]}`))
	if err != nil || p.Device != (calib.Provenance{}) {
		t.Errorf("odd device fields: %+v, %v", p.Device, err)
	}
}

// TestKinetoDynamoNames: a model as the dynamo exporter names it (nodes
// "node_<i>", modules in metadata: the report's Module) is indexed by the
// same module keys a Kineto annotation names ("stem.conv"), and the trace
// charges the same nodes.
func TestKinetoDynamoNames(t *testing.T) {
	p, err := Read(filepath.Join("testdata", "kineto_cnn.json"))
	if err != nil {
		t.Fatal(err)
	}
	rep := runReport(t, "cnn", "unfused")
	was := map[string]string{}
	for i := range rep.Nodes {
		n := &rep.Nodes[i]
		n.Module = ir.NamePath(n.Name)
		renamed := fmt.Sprintf("node_%d", i)
		was[renamed], n.Name = n.Name, renamed
	}
	g := newGraph(rep)
	for key, node := range map[string]string{"stem.conv": "/stem/conv/Conv", "stem.bn": "/stem/bn/BatchNormalization"} {
		if got := g.byScope[key]; len(got) != 1 || was[rep.Nodes[got[0]].Name] != node {
			t.Errorf("module key %q indexes nodes %v, want %s alone", key, got, node)
		}
	}
	m := MatchReport(p, rep)
	rows := map[string]float64{}
	for _, r := range m.Nodes {
		rows[was[r.Name]] = r.MeasuredS
	}
	for node, w := range map[string]float64{"/stem/conv/Conv": 11e-6, "/stem/bn/BatchNormalization": 3e-6, "/stem/relu/Relu": 2e-6, "/fc/Gemm": 4e-6} {
		if !near(rows[node], w) {
			t.Errorf("%s (renamed) measured %g, want %g", node, rows[node], w)
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }

// TestBadInput: one line naming the file, never a panic.
func TestBadInput(t *testing.T) {
	ort, err := os.ReadFile(filepath.Join("testdata", "ort_cnn.json"))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"truncated":  string(ort[:len(ort)/2]),
		"empty":      "",
		"wrong":      `{"hello": 1}`,
		"not json":   "name,time\nconv,1\n",
		"huge":       `[{"cat":"Node","name":"a_kernel_time","ph":"X","ts":0,"dur":1e400,"args":{}}]`,
		"too long":   `[{"cat":"Node","name":"a_kernel_time","ph":"X","ts":0,"dur":1e300,"args":{}}]`,
		"negative":   `[{"cat":"Node","name":"a_kernel_time","ph":"X","ts":0,"dur":-5,"args":{}}]`,
		"no nodes":   `[{"cat":"Session","name":"model_run","ph":"X","ts":0,"dur":5}]`,
		"trt neg":    `[{"count": 3}, {"name": "x", "timeMs": -1, "averageMs": -0.3}]`,
		"trt count":  `[{"count": 0}]`,
		"layer info": `{"Layers": ["a"], "Bindings": []}`,
		"kineto":     `{"traceEvents": 5}`,
	}
	for what, body := range cases {
		_, err := Parse("bad.json", []byte(body))
		if err == nil {
			t.Errorf("%s: no error", what)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "bad.json: ") || strings.Contains(msg, "\n") {
			t.Errorf("%s: error %q is not one line naming the file", what, msg)
		}
	}
	if _, err := Read(filepath.Join("testdata", "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("missing file: %v", err)
	}
}

// TestGzipProfile: a gzip-compressed profile (torch.profiler's
// tensorboard_trace_handler writes *.pt.trace.json.gz) reads as its JSON
// does; a truncated one, or one that expands past the limit, is a
// one-line error naming the file.
func TestGzipProfile(t *testing.T) {
	gz := filepath.Join("testdata", "kineto_h200", "llama_hf_small_fp16_b8.json.gz")
	p, err := Read(gz)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(gz)
	js := gunzipFile(t, gz)
	want, err := Parse("plain.json", js)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Events) == 0 || len(p.Events) != len(want.Events) || p.TotalS() != want.TotalS() || p.Format != want.Format {
		t.Errorf("gzip: %d events, %g s, %s; plain JSON: %d, %g s, %s", len(p.Events), p.TotalS(), p.Format, len(want.Events), want.TotalS(), want.Format)
	}
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"cut.json.gz", raw[:len(raw)/2], "gzip: unexpected EOF"},
		{"big.json.gz", raw, "expands past"},
	} {
		if c.name == "big.json.gz" {
			defer func(n int) { maxGunzipped = n }(maxGunzipped)
			maxGunzipped = len(js) - 1
		}
		_, err := Parse(c.name, c.data)
		if err == nil || !strings.HasPrefix(err.Error(), c.name+": ") || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want one line naming the file and %q", c.name, err, c.want)
		}
	}
}

// FuzzParse: no input panics Parse or MatchReport.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"ort_cnn.json", "kineto_cnn.json", "trt_cnn_profile.json", "trt_transformer_profile.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		if name == "kineto_cnn.json" { // the gzip path
			var b bytes.Buffer
			zw := gzip.NewWriter(&b)
			zw.Write(data)
			zw.Close()
			f.Add(b.Bytes())
		}
	}
	f.Add([]byte(`[{"count": 2}, {"name": "{ForeignNode[a...b]}", "timeMs": 1}]`))
	rep := &report.Report{Nodes: []report.NodeCost{{Name: "a", OpType: "Conv", TimeS: 1e-6, Launches: 1}, {Name: "b", OpType: "Relu"}}}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("fuzz.json", data)
		if err != nil {
			return
		}
		if d := p.Device; d.SMs < 0 || !(d.MemoryGiB >= 0) || math.IsInf(d.MemoryGiB, 0) || d.Device != calib.CleanField(d.Device) {
			t.Fatalf("device %+v", d)
		}
		m := MatchReport(p, rep)
		if m.MatchedTimeFraction < 0 || m.MatchedTimeFraction > 1 {
			t.Fatalf("fraction %g", m.MatchedTimeFraction)
		}
	})
}

// TestScopeKey: torch.onnx's scope components prefix a container's
// children with the container's own component, at every level, so the
// module path follows the last component, not the whole path so far
// (mobilenet_v3's and efficientnet's nested Sequentials: CPU Kineto
// traces of torchvision models matched 35% and 43% before, 97% and 98%
// after).
func TestScopeKey(t *testing.T) {
	for name, want := range map[string]string{
		"/layer1/layer1.0/conv1/Conv":                           "layer1.0.conv1",
		"/features/features.9/block/block.0/block.0.0/Conv":     "features.9.block.0.0",
		"/features/features.9/block/block.2/fc1/Conv":           "features.9.block.2.fc1",
		"/encoder/layers/encoder_layer_0/self_attention/MatMul": "encoder.layers.encoder_layer_0.self_attention",
		"/features/features.1/features.1.0/block/block.0/Conv":  "features.1.0.block.0",
		"/classifier/classifier.3/Gemm":                         "classifier.3",
		"Conv_0":                                                "",
	} {
		if got := scopeKey(name); got != want {
			t.Errorf("scopeKey(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestKinetoFusedAtenOp: an aten op outside atenOps (a fused one, such as
// torchvision ViT's _native_multi_head_attention on the inference fast
// path) stands for every node of the module its annotation names (ViT-B/16
// matched 66% before, 100% after).
func TestKinetoFusedAtenOp(t *testing.T) {
	rep := &report.Report{Nodes: []report.NodeCost{
		{Name: "/enc/attn/MatMul", OpType: "MatMul", KernelClass: "gemm", TimeS: 2e-6},
		{Name: "/enc/attn/Softmax", OpType: "Softmax", KernelClass: "reduction", TimeS: 1e-6},
		{Name: "/enc/mlp/Gemm", OpType: "Gemm", KernelClass: "gemm", TimeS: 3e-6},
	}}
	p := &Profile{Format: PyTorch, Runs: 1, Events: []Event{
		{Name: "enc.attn", OpType: "aten::_native_multi_head_attention", DurS: 9e-6},
		{Name: "enc.mlp", OpType: "Gemm", DurS: 4e-6},
	}}
	m := MatchReport(p, rep)
	if m.MatchedTimeFraction != 1 || len(m.Profiled[0].Nodes) != 2 {
		t.Errorf("matched %g, attention event on %v; want all matched, the attention on both attn nodes", m.MatchedTimeFraction, m.Profiled[0].Nodes)
	}
}

// TestNestedControlFlow: an If's branch node run inside a Loop's body is
// charged to the Loop, the top-level node that holds both subgraphs, and
// every event is one matched row.
func TestNestedControlFlow(t *testing.T) {
	rep := &report.Report{Nodes: []report.NodeCost{
		{Name: "Loop_0", OpType: "Loop", KernelClass: "other", TimeS: 2e-6},
		{Name: "Add_1", OpType: "Add", KernelClass: "elementwise", TimeS: 1e-6},
	}}
	p := &Profile{Format: ONNXRuntime, Runs: 1, Events: []Event{
		{Name: "If_0", OpType: "If", Within: "Loop_0", DurS: 1e-6},
		{Name: "Add_1", OpType: "Add", Within: "If_0", DurS: 1e-6}, // same name as a main-graph node
		{Name: "Loop_0", OpType: "Loop", DurS: 2e-6},
		{Name: "Add_1", OpType: "Add", DurS: 3e-6},
	}}
	m := MatchReport(p, rep)
	if m.MatchedTimeFraction != 1 {
		t.Fatalf("matched %g, unmatched %v", m.MatchedTimeFraction, m.Unmatched)
	}
	for i, want := range []string{"Loop_0", "Loop_0", "Loop_0", "Add_1"} {
		if r := m.Profiled[i]; len(r.Nodes) != 1 || r.Nodes[0] != want {
			t.Errorf("event %d (%s within %q) on %v, want %s", i, r.Name, r.Within, r.Nodes, want)
		}
	}
}

// TestKernelTimeIsComparedAndFitted: a profile times kernels, not the
// idle gaps between them, so a node's prediction beside it (and the
// profiled event's share of it: profiled_nodes) and the row a
// fit takes from it are its time less its gap (launch_s), its ramp kept
// (ramp_s, the kernel's own minimum duration); the fit leaves the ramp
// unscaled (calib.NodeBody).
func TestKernelTimeIsComparedAndFitted(t *testing.T) {
	rep := &report.Report{GPU: "H100-SXM5-80GB", Nodes: []report.NodeCost{
		{Name: "/l/MatMul", OpType: "MatMul", KernelClass: "gemm", ComputeS: 8e-6, MemoryS: 2e-6, RampS: 0.6e-6, LaunchS: 0.7e-6, TimeS: 9.3e-6, Launches: 1},
	}}
	p := &Profile{Format: ONNXRuntime, Runs: 1, Events: []Event{{Name: "/l/MatMul", OpType: "MatMul", DurS: 9e-6, Kernels: 1}}}
	m := MatchReport(p, rep)
	if len(m.Nodes) != 1 || math.Abs(m.Nodes[0].PredictedS-8.6e-6) > 1e-15 {
		t.Fatalf("predicted %+v, want the node's 9.3 µs less its 0.7 µs gap", m.Nodes)
	}
	// The profiled event's row is in the same terms as its node's.
	if len(m.Profiled) != 1 || math.Abs(m.Profiled[0].PredictedS-8.6e-6) > 1e-15 {
		t.Fatalf("profiled rows %+v, want the event's share of the node's 8.6 µs kernel time", m.Profiled)
	}
	rows := m.Rows(rep)
	if len(rows) != 1 {
		t.Fatalf("%d rows", len(rows))
	}
	n := rows[0].Report.Nodes[0]
	if math.Abs(rows[0].Report.Totals.TimeS-8.6e-6) > 1e-15 || n.RampS != 0.6e-6 || n.LaunchS != 0 || math.Abs(calib.NodeBody(&n)-8e-6) > 1e-15 {
		t.Errorf("row time %g, ramp %g, gap %g, body %g; want 8.6 µs, the ramp kept, no gap, an 8 µs body", rows[0].Report.Totals.TimeS, n.RampS, n.LaunchS, calib.NodeBody(&n))
	}
}

// TestKinetoOneEventPerOpCall: every kernel one op call launches is one
// event of that call. cuBLAS runs an fp32 GEMM at batch 1 as a memset, a
// scaling kernel, a split-K GEMM and a bias epilogue under one
// aten::addmm (our H200 BERT traces); as four events of one module they
// had stood for four calls, and the three extra were placed on other
// nodes by position (BERT-base fp32 batch 1: 90.8% of the time matched,
// the norms charged with the next layer's projections).
func TestKinetoOneEventPerOpCall(t *testing.T) {
	var evs []string
	ev := func(format string, a ...any) { evs = append(evs, fmt.Sprintf(format, a...)) }
	host := func(cat, name string, ts, dur float64) {
		ev(`{"ph":"X","cat":%q,"name":%q,"pid":1,"tid":1,"ts":%g,"dur":%g}`, cat, name, ts, dur)
	}
	launch := func(corr int, ts, gpuTS, dur float64, cat, name string) {
		ev(`{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":%g,"dur":1,"args":{"correlation":%d}}`, ts, corr)
		ev(`{"ph":"X","cat":%q,"name":%q,"pid":0,"tid":7,"ts":%g,"dur":%g,"args":{"correlation":%d}}`, cat, name, gpuTS, dur, corr)
	}
	host("user_annotation", "enc.q", 0, 100)
	host("cpu_op", "aten::addmm", 10, 80)
	launch(1, 20, 200, 1, "gpu_memset", "Memset (Device)")
	launch(2, 30, 210, 1, "kernel", "scal_kernel")
	launch(3, 40, 220, 24, "kernel", "sgemm_largek_lds64")
	launch(4, 50, 250, 2, "kernel", "cublasLt::epilogue::impl::globalKernel")
	host("user_annotation", "enc.k", 100, 100)
	host("cpu_op", "aten::addmm", 110, 80)
	launch(5, 120, 300, 20, "kernel", "sm80_xmma_gemm")
	path := filepath.Join(t.TempDir(), "trace.json")
	if err := os.WriteFile(path, []byte(`{"traceEvents":[`+strings.Join(evs, ",")+`]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Events) != 2 || p.Events[0].Kernels != 4 || !near(p.Events[0].DurS, 28e-6) {
		t.Fatalf("events %+v; want enc.q as one event of 4 kernels, 28 µs, then enc.k", p.Events)
	}
	rep := &report.Report{Nodes: []report.NodeCost{
		{Name: "/enc/q/Gemm", OpType: "Gemm", KernelClass: "gemm", TimeS: 20e-6},
		{Name: "/enc/k/Gemm", OpType: "Gemm", KernelClass: "gemm", TimeS: 20e-6},
	}}
	m := MatchReport(p, rep)
	got := map[string]float64{}
	for _, r := range m.Nodes {
		got[r.Name] = r.MeasuredS
	}
	if m.MatchedTimeFraction != 1 || !near(got["/enc/q/Gemm"], 28e-6) || !near(got["/enc/k/Gemm"], 20e-6) {
		t.Errorf("matched %g: %v; want q 28 µs and k 20 µs", m.MatchedTimeFraction, got)
	}
}

// TestTRTNameNodes: the ONNX node names in TensorRT layer names, as
// trtexec prints them: fusions joined by " + ", pointwise fusions nested
// in PWN(...), a Myelin region's two ends, and a reformatting copy giving
// the layer it converts for.
func TestTRTNameNodes(t *testing.T) {
	for name, want := range map[string][]string{
		"/a/Conv + /a/Relu":                                                             {"/a/Conv", "/a/Relu"},
		"PWN(/m/Sigmoid, /m/Mul)":                                                       {"/m/Sigmoid", "/m/Mul"},
		"PWN(PWN(/m/act/Sigmoid), PWN(/m/act/Mul))":                                     {"/m/act/Sigmoid", "/m/act/Mul"},
		"{ForeignNode[/l0/MatMul.../l3/Add]}":                                           {ForeignRangePrefix + "/l0/MatMul", ForeignRangePrefix + "/l3/Add"},
		"Reformatting CopyNode for Input Tensor 0 to /fc/Gemm":                          {"/fc/Gemm"},
		"Reformatting CopyNode for Output Tensor 1 to {ForeignNode[/a/X.../b/Y]}":       {ForeignRangePrefix + "/a/X", ForeignRangePrefix + "/b/Y"},
		"Reformatting CopyNode for Input Tensor 0 to PWN(PWN(/s/Sigmoid), PWN(/s/Mul))": {"/s/Sigmoid", "/s/Mul"},
		"Reformatting CopyNode for Input Tensor 0":                                      nil,
	} {
		if got := trtNameNodes(name); !slices.Equal(got, want) {
			t.Errorf("%q: %q, want %q", name, got, want)
		}
	}
}

// TestSharedTimeIsMarked: a layer that ran two nodes as one kernel gives
// each a share of its time in proportion to their predictions, and both
// rows say so (NodeTime.Shared, the text's "*" and its footnote); a node
// matched alone does not.
func TestSharedTimeIsMarked(t *testing.T) {
	rep := &report.Report{GPU: "H100-SXM5-80GB", Nodes: []report.NodeCost{
		{Name: "/conv", OpType: "Conv", KernelClass: "conv", ComputeS: 6e-6, TimeS: 6e-6, Launches: 1},
		{Name: "/relu", OpType: "Relu", KernelClass: "elementwise", MemoryS: 2e-6, TimeS: 2e-6, Launches: 1},
		{Name: "/fc", OpType: "Gemm", KernelClass: "gemm", ComputeS: 4e-6, TimeS: 4e-6, Launches: 1},
	}}
	p := &Profile{Format: TensorRT, Runs: 1, Events: []Event{
		{Name: "conv+relu", Nodes: []string{"/conv", "/relu"}, DurS: 12e-6, Kernels: 1},
		{Name: "/fc", Nodes: []string{"/fc"}, DurS: 5e-6, Kernels: 1},
	}}
	m := MatchReport(p, rep)
	shared := map[string]int{}
	for _, n := range m.Nodes {
		shared[n.Name] = n.Shared
	}
	if shared["/conv"] != 2 || shared["/relu"] != 2 || shared["/fc"] != 0 {
		t.Fatalf("shared %v, want the fused layer's two nodes at 2 and /fc at 0", shared)
	}
	var b strings.Builder
	if err := Compare(p, m).WriteText(&b, 0); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(b.String(), "µs*"); got != 2 || !strings.Contains(b.String(), "(2 of the 3 nodes)") {
		t.Errorf("text marks %d measured times shared, want 2 and the footnote:\n%s", got, b.String())
	}
	// The fit takes the layer as one measurement: both kernels against its
	// 12 µs, not each share against the prediction it was split by.
	rows := m.Rows(rep)
	if len(rows) != 2 || len(rows[0].Report.Nodes) != 2 || math.Abs(rows[0].MeasuredS-12e-6) > 1e-15 ||
		math.Abs(rows[0].Report.Totals.TimeS-8e-6) > 1e-15 || !strings.Contains(rows[0].Name, "/conv and the 1 other") {
		t.Errorf("rows %+v, want the fused layer's two nodes as one 12 µs row (8 µs predicted) and /fc alone", rows)
	}
}

// TestElidedNodeDoesNotTakeAFusedNode: an event that names a node of the
// model the plan removed (shape arithmetic folded to a constant) is that
// node, charged to its host, before any event is placed by position:
// placed by position first, MaxViT's shape Muls (onnxruntime runs them
// at level all when the batch is symbolic) took the fused GELUs they sit
// beside, whose Mul members can stand for a Mul, and left the GELU events
// onnxruntime named itself ("Gelu_token_<n>") unmatched (0.99 of a
// MaxViT-T profile's time matched, 0.999 now).
func TestElidedNodeDoesNotTakeAFusedNode(t *testing.T) {
	gelu := []string{"/act/Div", "/act/Erf", "/act/Add", "/act/Mul", "/act/Mul_1"}
	planned := &report.Report{Nodes: []report.NodeCost{
		{Name: "/fc1/MatMul", OpType: "MatMul", KernelClass: "gemm", TimeS: 4e-6, Launches: 1, Inputs: tensorInfos("x"), Outputs: tensorInfos("h")},
		{Name: "/act/Mul_1", OpType: "Gelu", KernelClass: "elementwise", TimeS: 2e-6, Launches: 1, FusedFrom: gelu, Inputs: tensorInfos("h"), Outputs: tensorInfos("g")},
		{Name: "/fc2/MatMul", OpType: "MatMul", KernelClass: "gemm", TimeS: 4e-6, Launches: 1, Inputs: tensorInfos("g"), Outputs: tensorInfos("y")},
		{Name: "/Reshape", OpType: "Reshape", KernelClass: "view", Inputs: tensorInfos("y", "shape"), Outputs: tensorInfos("z")},
	}}
	asRead := &report.Report{Nodes: []report.NodeCost{
		planned.Nodes[0],
		{Name: "/Shape", OpType: "Shape", Inputs: tensorInfos("x"), Outputs: tensorInfos("s")},
		{Name: "/Mul", OpType: "Mul", Inputs: tensorInfos("s", "two"), Outputs: tensorInfos("shape")},
		planned.Nodes[2], planned.Nodes[3],
	}}
	for _, name := range gelu {
		asRead.Nodes = append(asRead.Nodes, report.NodeCost{Name: name, OpType: strings.SplitN(strings.TrimPrefix(name, "/act/"), "_", 2)[0]})
	}
	p := &Profile{Format: ONNXRuntime, Runs: 1, Events: []Event{
		{Name: "/fc1/MatMul", OpType: "MatMul", DurS: 4e-6},
		{Name: "/Shape", OpType: "Shape", DurS: 1e-6},
		{Name: "/Mul", OpType: "Mul", DurS: 1e-6},
		{Name: "Gelu_token_3", OpType: "Gelu", DurS: 2e-6},
		{Name: "/fc2/MatMul", OpType: "MatMul", DurS: 4e-6},
	}}
	m := MatchReportFrom(p, planned, asRead)
	if m.MatchedTimeFraction != 1 {
		t.Fatalf("matched %g, unmatched %v", m.MatchedTimeFraction, m.Unmatched)
	}
	for i, want := range []string{"/fc1/MatMul", "/Reshape", "/Reshape", "/act/Mul_1", "/fc2/MatMul"} {
		if r := m.Profiled[i]; len(r.Nodes) != 1 || r.Nodes[0] != want {
			t.Errorf("event %s on %v, want %s", r.Name, r.Nodes, want)
		}
	}
}

// TestShapeArithmeticBetweenItsHosts: a shape-arithmetic node onnxruntime
// made and named itself ("Gather_token_<n>"), between two shape events
// charged to the node their computation feeds, is charged there too; one
// between events on different nodes stays unmatched.
func TestShapeArithmeticBetweenItsHosts(t *testing.T) {
	planned := &report.Report{Nodes: []report.NodeCost{
		{Name: "/fc/MatMul", OpType: "MatMul", KernelClass: "gemm", TimeS: 4e-6, Launches: 1, Inputs: tensorInfos("x"), Outputs: tensorInfos("h")},
		{Name: "/Reshape", OpType: "Reshape", KernelClass: "view", Inputs: tensorInfos("h", "shape"), Outputs: tensorInfos("y")},
		{Name: "/out/MatMul", OpType: "MatMul", KernelClass: "gemm", TimeS: 4e-6, Launches: 1, Inputs: tensorInfos("y"), Outputs: tensorInfos("z")},
	}}
	asRead := &report.Report{Nodes: []report.NodeCost{
		planned.Nodes[0],
		{Name: "/Shape", OpType: "Shape", Inputs: tensorInfos("h"), Outputs: tensorInfos("s")},
		{Name: "/Gather", OpType: "Gather", Inputs: tensorInfos("s"), Outputs: tensorInfos("d")},
		{Name: "/Concat", OpType: "Concat", Inputs: tensorInfos("d"), Outputs: tensorInfos("shape")},
		planned.Nodes[1], planned.Nodes[2],
	}}
	p := &Profile{Format: ONNXRuntime, Runs: 1, Events: []Event{
		{Name: "/fc/MatMul", OpType: "MatMul", DurS: 4e-6},
		{Name: "Gather_token_1", OpType: "Gather", DurS: 1e-6}, // between the MatMul and the shape: left
		{Name: "/Shape", OpType: "Shape", DurS: 1e-6},
		{Name: "Gather_token_15", OpType: "Gather", DurS: 1e-6},
		{Name: "/Concat", OpType: "Concat", DurS: 1e-6},
		{Name: "/out/MatMul", OpType: "MatMul", DurS: 4e-6},
	}}
	m := MatchReportFrom(p, planned, asRead)
	for i, want := range []string{"/fc/MatMul", "", "/Reshape", "/Reshape", "/Reshape", "/out/MatMul"} {
		r := m.Profiled[i]
		if want == "" && len(r.Nodes) != 0 || want != "" && (len(r.Nodes) != 1 || r.Nodes[0] != want) {
			t.Errorf("event %s on %v, want %q", r.Name, r.Nodes, want)
		}
	}
}

// tensorInfos are report tensors of the given names (shapes left empty:
// the matcher follows data flow by name).
func tensorInfos(names ...string) []report.TensorInfo {
	var ts []report.TensorInfo
	for _, n := range names {
		ts = append(ts, report.TensorInfo{Name: n})
	}
	return ts
}
