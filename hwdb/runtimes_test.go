package hwdb

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

func TestBuiltinRuntimes(t *testing.T) {
	rs := Runtimes()
	var names []string
	for _, r := range rs {
		names = append(names, r.Name)
		have := runtimeFigureNames(r)
		for _, f := range have {
			if strings.TrimSpace(r.Sources[f]) == "" {
				t.Errorf("%s: %s has no source", r.Name, f)
			}
		}
		for f := range r.Sources {
			if !strings.Contains(strings.Join(have, " "), f) {
				t.Errorf("%s: source for absent figure %s", r.Name, f)
			}
		}
		if (r.KernelGapS > 0) == (r.KernelGapScale > 0) {
			t.Errorf("%s: exactly one kernel-gap form expected", r.Name)
		}
		if r.MemoryFloor() < 100*mib || r.MemoryFloor() > 4096*mib {
			t.Errorf("%s: memory floor %g MiB out of the published 200-700 MB context range", r.Name, r.MemoryFloor()/mib)
		}
	}
	want := "graph graph-nhwc onnxruntime onnxruntime-cudagraph onnxruntime-iobinding pytorch pytorch-compile pytorch-compile-graph pytorch-nhwc tensorrt tensorrt-enqueue"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("runtimes = %s, want %s", got, want)
	}
	if _, err := LookupRuntime(DefaultRuntime); err != nil {
		t.Errorf("default runtime: %v", err)
	}
}

// The profiles' relations that the time model leans on: a graph replay
// (graph, and TensorRT's engine in one) has no per-kernel host cost and a
// shorter device gap than stream launches (onnxruntime); eager PyTorch
// pays more per op on the host than onnxruntime's C++ executor;
// torch.compile pays more per call than eager.
func TestRuntimeRelations(t *testing.T) {
	get := func(n string) *Runtime {
		r, err := LookupRuntime(n)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a100 := mustGPU(t, "A100-SXM4-80GB")
	g, trt, ort, pt, ptc := get("graph"), get("TensorRT"), get("onnxruntime"), get("pytorch"), get("pytorch_compile")
	for _, r := range []*Runtime{g, trt} {
		if r.DispatchS != 0 || !(r.KernelGap(a100) < ort.KernelGap(a100)) {
			t.Errorf("%s: dispatch %g, gap %g vs stream %g", r.Name, r.DispatchS, r.KernelGap(a100), ort.KernelGap(a100))
		}
	}
	if want := 0.53 * 2.6e-6; !near(g.KernelGap(a100), want, 1e-9) {
		t.Errorf("graph gap on A100 = %g, want %g", g.KernelGap(a100), want)
	}
	if ort.KernelGap(a100) != a100.LaunchS {
		t.Errorf("stream-launch gap %g, want the GPU's launch_s %g", ort.KernelGap(a100), a100.LaunchS)
	}
	// Each graph replay and its stream-launched twin run the same plan;
	// the twin pays the stream gap and issues every kernel from the host.
	for _, pair := range [][2]*Runtime{{trt, get("tensorrt-enqueue")}, {get("onnxruntime-cudagraph"), get("onnxruntime-iobinding")}, {get("pytorch-compile-graph"), ptc}} {
		replay, stream := pair[0], pair[1]
		if replay.PlanOrFused() != stream.PlanOrFused() || replay.DispatchS != 0 || !(stream.DispatchS > 0) || stream.KernelGap(a100) != a100.LaunchS || !(replay.KernelGap(a100) < stream.KernelGap(a100)) {
			t.Errorf("%s (plan %s, dispatch %g, gap %g) against %s (plan %s, dispatch %g, gap %g): want one plan, no dispatch and the in-graph gap replayed, dispatch and the stream gap streamed",
				replay.Name, replay.PlanOrFused(), replay.DispatchS, replay.KernelGap(a100), stream.Name, stream.PlanOrFused(), stream.DispatchS, stream.KernelGap(a100))
		}
	}
	if !(pt.DispatchS > ort.DispatchS) || !(ptc.CallS > pt.CallS) {
		t.Errorf("dispatch pytorch %g vs onnxruntime %g; call compile %g vs eager %g", pt.DispatchS, ort.DispatchS, ptc.CallS, pt.CallS)
	}
	abs := &Runtime{KernelGapS: 1e-6}
	if abs.KernelGap(a100) != 1e-6 {
		t.Error("absolute kernel gap ignored")
	}
}

func TestLookupRuntimeUnknown(t *testing.T) {
	_, err := LookupRuntime("jax")
	if err == nil || !strings.Contains(err.Error(), `unknown runtime "jax" (known: graph, graph-nhwc, onnxruntime, onnxruntime-cudagraph, onnxruntime-iobinding, pytorch, pytorch-compile, pytorch-compile-graph, pytorch-nhwc, tensorrt, tensorrt-enqueue)`) {
		t.Errorf("error = %v", err)
	}
}

func TestRuntimeUserFile(t *testing.T) {
	body := `# our serving stack, measured
- name: pytorch-lab
  base: pytorch
  dispatch_us: 12
  sources:
    dispatch_us: "torch.profiler, 2025-03-01"
- name: pytorch
  base: pytorch
  call_us: 20
- name: mygraph
  description: "abs gap"
  kernel_gap_us: 0.8
  dispatch_us: 0
  call_us: 5
  context_mib: 250
`
	path := writeTemp(t, "rt.yaml", body)
	db, err := RuntimesWithUserFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lab, err := db.Lookup("pytorch-lab")
	if err != nil {
		t.Fatal(err)
	}
	builtin, _ := LookupRuntime("pytorch")
	if !near(lab.DispatchS, 12e-6, 1e-12) || lab.Sources["dispatch_s"] != "torch.profiler, 2025-03-01" || lab.CallS != builtin.CallS {
		t.Errorf("pytorch-lab = %+v", lab)
	}
	over, _ := db.Lookup("pytorch")
	if !near(over.CallS, 20e-6, 1e-12) || over.Sources["call_s"] != "user file "+path+":9" {
		t.Errorf("override call %g source %q", over.CallS, over.Sources["call_s"])
	}
	mg, _ := db.Lookup("mygraph")
	if !near(mg.KernelGapS, 0.8e-6, 1e-12) || mg.KernelGapScale != 0 || mg.MemoryFloor() != 250*mib {
		t.Errorf("mygraph = %+v", mg)
	}
	if len(db.All()) != len(Runtimes())+2 {
		t.Errorf("db has %d profiles, want built-ins + 2", len(db.All()))
	}
	// A base with a scale gap switched to an absolute one drops the scale.
	p2 := writeTemp(t, "rt2.yaml", "- name: g2\n  base: graph\n  kernel_gap_us: 1\n")
	db2, err := RuntimesWithUserFile(p2)
	if err != nil {
		t.Fatal(err)
	}
	if g2, _ := db2.Lookup("g2"); g2.KernelGapScale != 0 || !near(g2.KernelGapS, 1e-6, 1e-12) {
		t.Errorf("g2 gap scale %g abs %g", g2.KernelGapScale, g2.KernelGapS)
	}
}

// `gpus runtimes --format json` output loads back unchanged.
func TestRuntimeJSONRoundTrip(t *testing.T) {
	orig := Runtimes()
	b, err := json.MarshalIndent(orig, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	body := strings.ReplaceAll(string(b), `"name": "`, `"name": "copy-`)
	db, err := RuntimesWithUserFile(writeTemp(t, "rt.json", body))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range orig {
		c, err := db.Lookup("copy-" + r.Name)
		if err != nil {
			t.Fatal(err)
		}
		c.Name = r.Name
		x, _ := json.Marshal(c)
		y, _ := json.Marshal(r)
		if !bytes.Equal(x, y) {
			t.Errorf("round trip changed %s:\n got %s\nwant %s", r.Name, x, y)
		}
	}
}

// TestRuntimeUncaptured: a CUDA-graph profile runs the calls it does not
// capture as the profile it names (onnxruntime-cudagraph as
// onnxruntime-iobinding), a profile built on it inherits that, and a
// user file that replaces the named profile changes its own database's
// answer, never the built-in one's.
func TestRuntimeUncaptured(t *testing.T) {
	cg, err := LookupRuntime("onnxruntime-cudagraph")
	if err != nil {
		t.Fatal(err)
	}
	u := cg.UncapturedProfile()
	if cg.CUDAGraph != 1 || u == nil || u.Name != "onnxruntime-iobinding" || u.DispatchS <= 0 || u.CUDAGraph != 0 {
		t.Fatalf("onnxruntime-cudagraph runs uncaptured calls as %+v, want onnxruntime-iobinding's node-by-node dispatch", u)
	}
	if g, _ := LookupRuntime("graph"); g.UncapturedProfile() != nil {
		t.Errorf("graph names an uncaptured profile: %s", g.UncapturedProfile().Name)
	}
	body := "- name: onnxruntime-iobinding\n  base: onnxruntime-iobinding\n  dispatch_us: 9\n- name: mine\n  base: onnxruntime-cudagraph\n  call_us: 12\n"
	db, err := RuntimesWithUserFile(writeTemp(t, "rt.yaml", body))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"mine", "onnxruntime-cudagraph"} {
		r, _ := db.Lookup(name)
		if u := r.UncapturedProfile(); u == nil || !near(u.DispatchS, 9e-6, 1e-12) {
			t.Errorf("%s in the user database runs uncaptured calls as %+v, want the file's onnxruntime-iobinding (dispatch 9 us)", name, u)
		}
	}
	cg, _ = LookupRuntime("onnxruntime-cudagraph")
	if u := cg.UncapturedProfile(); u == nil || near(u.DispatchS, 9e-6, 1e-12) {
		t.Errorf("the built-in onnxruntime-cudagraph now runs uncaptured calls as %+v: a user file changed it", u)
	}
}

func TestRuntimeFileErrors(t *testing.T) {
	valid := "  kernel_gap_scale: 1\n  dispatch_us: 5\n  call_us: 10\n  context_mib: 300\n"
	cases := []struct{ name, body, want string }{
		{"unknown field", "- name: X\n" + valid + "  launch_us: 3\n", `:6: unknown field "launch_us"`},
		{"negative", "- name: X\n" + strings.Replace(valid, "dispatch_us: 5", "dispatch_us: -5", 1), ":3: dispatch_us must be a zero or positive"},
		{"zero context", "- name: X\n" + strings.Replace(valid, "context_mib: 300", "context_mib: 0", 1), "context_mib must be a positive"},
		{"ms slip", "- name: X\n" + strings.Replace(valid, "call_us: 10", "call_us: 5e6", 1), "implausibly large"},
		{"both gaps", "- name: X\n" + valid + "  kernel_gap_us: 1\n", "not both"},
		{"no gap", "- name: X\n  dispatch_us: 5\n  call_us: 10\n  context_mib: 300\n", "kernel_gap_scale (x the GPU's launch_us) or kernel_gap_us is required"},
		{"missing", "- name: X\n  kernel_gap_scale: 1\n", "X: dispatch_s is required"},
		{"unknown base", "- name: X\n  base: jax\n", `base "jax" is not a known runtime profile`},
		{"unknown uncaptured", "- name: X\n" + valid + "  cuda_graph: 1\n  uncaptured: jax\n", `uncaptured "jax" is not a known runtime profile`},
		{"duplicate", "- name: X\n" + valid + "- name: x\n" + valid, "defined twice"},
		{"source for absent", "- name: X\n" + valid + "  sources: {workspace_mib: here}\n", "source given for workspace_bytes"},
		{"bad source key", "- name: X\n" + valid + "  sources: {latency: here}\n", `"latency" is not a runtime figure`},
		{"quoted", "- name: X\n" + strings.Replace(valid, "call_us: 10", `call_us: "10"`, 1), "call_us must be"},
		{"no name", "- dispatch_us: 5\n", "has no name"},
		{"empty", "", "no runtime profiles"},
		{"syntax", "- name: [\n", "yaml"},
		{"bad version", "- name: X\n" + valid + "  tensorrt_version: ten\n", `tensorrt_version must be a TensorRT release as major.minor (10.1, 8.6), got "ten"`},
		{"bare major", "- name: X\n" + valid + "  tensorrt_version: 10\n", "tensorrt_version must be a TensorRT release"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := RuntimesWithUserFile(writeTemp(t, "bad.yaml", c.body))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %v, want it to contain %q", err, c.want)
			}
		})
	}
	// Built-in data: a figure without a source is an error, not a default.
	_, err := parseRuntimes([]byte("- name: X\n"+valid), "b.yaml", true, nil)
	if err == nil || !strings.Contains(err.Error(), "X: call_s has no source") {
		t.Errorf("builtin without sources: %v", err)
	}
	bases, err := BuiltinRuntimes()
	if err != nil {
		t.Fatal(err)
	}
	_, err = parseRuntimes([]byte("- name: X\n  base: tensorrt\n  tensorrt_version: \"8.6\"\n"), "b.yaml", true, bases)
	if err == nil || !strings.Contains(err.Error(), "X: tensorrt_version has no source") {
		t.Errorf("builtin release without a source: %v", err)
	}
}

// TestRuntimeTensorRTVersion: a profile names the TensorRT release its
// engines are parsed with; one based on tensorrt inherits the built-in's
// unless it names its own, sourced to the user's file.
func TestRuntimeTensorRTVersion(t *testing.T) {
	path := writeTemp(t, "trt.yaml", "- name: trt86\n  base: tensorrt\n  tensorrt_version: 8.6.1\n- name: trtnew\n  base: tensorrt\n")
	db, err := RuntimesWithUserFile(path)
	if err != nil {
		t.Fatal(err)
	}
	old, _ := db.Lookup("trt86")
	if old.TensorRTVersion != "8.6.1" || !strings.HasPrefix(old.Sources["tensorrt_version"], "user file "+path+":3") {
		t.Errorf("trt86: version %q, source %q", old.TensorRTVersion, old.Sources["tensorrt_version"])
	}
	inherited, _ := db.Lookup("trtnew")
	builtin, _ := LookupRuntime("tensorrt")
	if inherited.TensorRTVersion == "" || inherited.TensorRTVersion != builtin.TensorRTVersion {
		t.Errorf("trtnew: version %q, want the built-in tensorrt's %q", inherited.TensorRTVersion, builtin.TensorRTVersion)
	}
	if pt, _ := LookupRuntime("pytorch"); pt.TensorRTVersion != "" {
		t.Errorf("pytorch names TensorRT %q", pt.TensorRTVersion)
	}
}

func TestWriteRuntimesGolden(t *testing.T) {
	checkGolden(t, "runtimes.golden", func(w io.Writer) error { return WriteRuntimes(w, Runtimes()) })
}
