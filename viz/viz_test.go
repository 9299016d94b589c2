package viz

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/golden"
	"github.com/onnxcost/onnxcost/ir"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// testGPU is a made-up GPU with round ceilings, so label arithmetic is
// easy to check: 100 TFLOP/s fp16 tensor, 10 TFLOP/s fp32, 1 TB/s HBM,
// 4 TB/s L2.
func testGPU() *hwdb.GPU {
	return &hwdb.GPU{Name: "TestGPU", MemBW: 1e12, L2BW: 4e12, L2Bytes: 40e6, LaunchS: 2e-6,
		Peak: map[hwdb.Precision]float64{hwdb.FP32: 10e12, hwdb.FP16Tensor: 100e12}}
}

func ti(name, dt string, dims ...int64) report.TensorInfo {
	s := report.Shape{}
	for _, d := range dims {
		s = append(s, ir.D(d))
	}
	return report.TensorInfo{Name: name, DType: dt, Shape: s}
}

// smallReport is a hand-built 5-node report: a fused conv (compute
// bound), a free Reshape, a MatMul bound by HBM, an L2-bound Add and a
// launch-bound Softmax, with a model string that needs escaping.
func smallReport() *report.Report {
	nodes := []report.NodeCost{
		{Counts: report.Counts{FLOPs: 2 * 1 * 64 * 56 * 56 * 64 * 3 * 3, BytesRead: 2 * (64*56*56 + 64*64*9), BytesWritten: 2 * 64 * 56 * 56}, Name: "/block/conv/Conv", OpType: "FusedConv", Domain: "onnxcost", FusedFrom: []string{"/block/conv/Conv", "/block/relu/Relu"}, Inputs: []report.TensorInfo{ti("x", "float16", 1, 64, 56, 56), ti("w", "float16", 64, 64, 3, 3)}, Outputs: []report.TensorInfo{ti("c", "float16", 1, 64, 56, 56)}, Bound: "compute", MemLevel: "l2", Precision: "fp16_tensor", ComputeS: 40e-6, MemoryS: 2e-6, LaunchS: 2e-6, TimeS: 42e-6, Launches: 1},
		{Name: "/block/Reshape", OpType: "Reshape", Inputs: []report.TensorInfo{ti("c", "float16", 1, 64, 56, 56)}, Outputs: []report.TensorInfo{ti("r", "float16", 64, 3136)}},
		{Counts: report.Counts{FLOPs: 2 * 64 * 3136 * 1000, BytesRead: 2 * (64*3136 + 3136*1000), BytesWritten: 2 * 64 * 1000}, Name: "/head/MatMul", OpType: "MatMul", Inputs: []report.TensorInfo{ti("r", "float16", 64, 3136), ti("wm", "float16", 3136, 1000)}, Outputs: []report.TensorInfo{ti("m", "float16", 64, 1000)}, Bound: "memory", MemLevel: "hbm", Precision: "fp16_tensor", ComputeS: 4e-6, MemoryS: 6.7e-6, LaunchS: 2e-6, TimeS: 8.7e-6, Launches: 1},
		{Counts: report.Counts{FLOPs: 64000, BytesRead: 2 * 2 * 64000, BytesWritten: 2 * 64000}, Name: "/head/Add <b>&\"x\"", OpType: "Add", Inputs: []report.TensorInfo{ti("m", "float16", 64, 1000), ti("x", "float16", 1, 64, 56, 56)}, Outputs: []report.TensorInfo{ti("a", "float16", 64, 1000)}, Bound: "memory", MemLevel: "l2", Precision: "fp16", ComputeS: 1e-9, MemoryS: 3e-6, LaunchS: 2e-6, TimeS: 5e-6, Launches: 1},
		{Counts: report.Counts{FLOPs: 5 * 64000, BytesRead: 128000, BytesWritten: 128000}, Name: "/head/Softmax", OpType: "Softmax", Inputs: []report.TensorInfo{ti("a", "float16", 64, 1000)}, Outputs: []report.TensorInfo{ti("y", "float16", 64, 1000)}, Bound: "launch", MemLevel: "l2", Precision: "fp16", ComputeS: 1e-7, MemoryS: 6e-8, LaunchS: 2e-6, TimeS: 2.1e-6, Launches: 1},
	}
	r := &report.Report{Header: report.Header{SchemaVersion: 1}, Model: "models/small.onnx", GPU: "TestGPU", DType: "fp16", Plan: "fused", Nodes: nodes}
	for i := range r.Nodes {
		n := &r.Nodes[i]
		if b := n.BytesRead + n.BytesWritten; b > 0 {
			n.ArithmeticIntensity = n.FLOPs / b
		}
		r.Totals.TimeS += n.TimeS
		r.Totals.FLOPs += n.FLOPs
	}
	return r
}

func alexnetReport(t *testing.T) (*report.Report, Ceilings) {
	t.Helper()
	data, err := os.ReadFile("testdata/alexnet_a100.report.json")
	if err != nil {
		t.Fatal(err)
	}
	var r report.Report
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	db, err := hwdb.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	g, err := db.Lookup(r.GPU)
	if err != nil {
		t.Fatal(err)
	}
	return &r, CeilingsOf(g)
}

func TestDOTGoldenSmall(t *testing.T) {
	src, err := DOT(smallReport(), CeilingsOf(testGPU()), GraphOptions{Inputs: []string{"x"}})
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "small.dot"), []byte(src), *update)
	// The model string is entity-escaped in the HTML label.
	if !strings.Contains(src, "/head/Add &lt;b&gt;&amp;&#34;x&#34;") {
		t.Errorf("node name not escaped in its label")
	}
	// The MatMul is HBM-bound: its roof at AI = FLOPs/bytes is AI × 1 TB/s.
	n := smallReport().Nodes[2]
	ai := n.FLOPs / (n.BytesRead + n.BytesWritten)
	roof := CeilingsOf(testGPU()).RoofOf(&n)
	if want := ai * 1e12; roof.Roof != want || roof.Ceiling != CeilHBM {
		t.Errorf("MatMul roof = %v (%s), want %v (HBM)", roof.Roof, roof.Ceiling, want)
	}
	// The free Reshape is hidden and the edge runs Conv -> MatMul.
	if strings.Contains(src, `id="node:/block/Reshape"`) {
		t.Errorf("free Reshape drawn")
	}
	if !strings.Contains(src, `id="edge:node:/block/conv/Conv->node:/head/MatMul"`) {
		t.Errorf("no edge routed through the hidden Reshape")
	}
}

func TestDOTGoldenAlexNet(t *testing.T) {
	r, c := alexnetReport(t)
	for _, tc := range []struct {
		name string
		opt  GraphOptions
	}{
		{"alexnet.dot", GraphOptions{Inputs: []string{"input"}}},
		{"alexnet_time_lr_top3.dot", GraphOptions{Color: "time", RankDir: "LR", Top: 3}},
		{"alexnet_collapse1_op.dot", GraphOptions{Color: "op", Collapse: 1}},
	} {
		src, err := DOT(r, c, tc.opt)
		if err != nil {
			t.Fatal(err)
		}
		golden.Check(t, filepath.Join("testdata", tc.name), []byte(src), *update)
	}
}

func TestDOTDeterministic(t *testing.T) {
	r, c := alexnetReport(t)
	a, _ := DOT(r, c, GraphOptions{Collapse: 2, Top: 4})
	b, _ := DOT(r, c, GraphOptions{Collapse: 2, Top: 4})
	if a != b {
		t.Fatal("two builds of the same graph differ")
	}
}

func TestTopFoldsTheRest(t *testing.T) {
	r, _ := alexnetReport(t)
	l := buildLayout(r, layoutOptions{top: 3})
	kept, folds, members := 0, 0, 0
	for _, u := range l.units {
		if u.kind == unitFold {
			folds++
		} else {
			kept++
		}
		members += len(u.members)
	}
	if kept != 3 {
		t.Errorf("kept %d boxes, want 3", kept)
	}
	if members+l.hidden != len(r.Nodes) {
		t.Errorf("boxes hold %d nodes + %d hidden, want all %d", members, l.hidden, len(r.Nodes))
	}
	if folds > kept+1 { // runs between kept boxes: at most kept+1
		t.Errorf("%d folds for %d kept boxes", folds, kept)
	}
}

func TestFocus(t *testing.T) {
	r, c := alexnetReport(t)
	src, err := DOT(r, c, GraphOptions{Focus: regexp.MustCompile(`classifier`)})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(src, `id="node:/features`) || !strings.Contains(src, `id="node:/classifier/classifier.6/Gemm"`) {
		t.Errorf("focus did not keep exactly the classifier nodes")
	}
}

func TestScopeOf(t *testing.T) {
	for _, tc := range []struct {
		name  string
		depth int
		want  string
		ok    bool
	}{
		{"/layer3/attn/MatMul", 1, "/layer3", true},
		{"/layer3/attn/MatMul", 2, "/layer3/attn", true},
		{"/layer3/attn/MatMul", 5, "/layer3/attn", true},
		{"MatMul_12", 1, "", false},
	} {
		got, ok := scopeOf(tc.name, tc.depth)
		if got != tc.want || ok != tc.ok {
			t.Errorf("scopeOf(%q, %d) = %q, %v; want %q, %v", tc.name, tc.depth, got, ok, tc.want, tc.ok)
		}
	}
}

func TestUniqueIDs(t *testing.T) {
	used := map[string]int{}
	got := []string{uniqueID(used, "node:a"), uniqueID(used, "node:a"), uniqueID(used, "node:a~2"), uniqueID(used, "node:a")}
	want := []string{"node:a", "node:a~2", "node:a~2~2", "node:a~3"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ids %v, want %v", got, want)
	}
	if s := sanitizeID("a b<c>\"d"); s != "a_b_c__d" {
		t.Errorf("sanitizeID = %q", s)
	}
}

// synthetic is an n-node report shaped like a deep residual network: a
// chain with a skip edge every 3 nodes and exporter scopes.
func synthetic(n int) *report.Report {
	r := &report.Report{Model: "synthetic", GPU: "TestGPU", Plan: "fused", DType: "fp32"}
	ops := []string{"Conv", "Relu", "Add"}
	for i := 0; i < n; i++ {
		in := []report.TensorInfo{ti(fmt.Sprintf("v%d", i), "float32", 1, 64, 28, 28)}
		if i%3 == 2 && i >= 3 {
			in = append(in, ti(fmt.Sprintf("v%d", i-2), "float32", 1, 64, 28, 28))
		}
		t := float64(1+(i*7919)%97) * 1e-6
		r.Nodes = append(r.Nodes, report.NodeCost{Counts: report.Counts{FLOPs: 1e6, BytesRead: 4e5, BytesWritten: 2e5}, Name: fmt.Sprintf("/stage%d/block%d/%s_%d", i/1000, i/30, ops[i%3], i), OpType: ops[i%3], Inputs: in, Outputs: []report.TensorInfo{ti(fmt.Sprintf("v%d", i+1), "float32", 1, 64, 28, 28)}, ArithmeticIntensity: 1e6 / 6e5, Bound: "memory", MemLevel: "hbm", Precision: "fp32", MemoryS: t, LaunchS: 2e-6, TimeS: t + 2e-6, Launches: 1})
		r.Totals.TimeS += t + 2e-6
	}
	return r
}

func TestLargeGraphStaysReadable(t *testing.T) {
	r := synthetic(10000)
	c := CeilingsOf(testGPU())
	start := time.Now()
	g, err := Graph(r, c, GraphOptions{})
	if err != nil {
		t.Fatal(err)
	}
	src := g.String()
	boxes := strings.Count(src, `id="node:`) + strings.Count(src, `id="fold:`) + strings.Count(src, `id="scope:`)
	if boxes > DefaultMaxNodes+1 {
		t.Errorf("10,000 nodes drew %d boxes, want ≤ %d", boxes, DefaultMaxNodes+1)
	}
	t.Logf("10,000-node report: %d boxes, DOT %d kB built in %v", boxes, len(src)/1000, time.Since(start))
	for _, opt := range []GraphOptions{{Collapse: 1}, {Collapse: 2, Top: 40}} {
		src, err := DOT(r, c, opt)
		if err != nil {
			t.Fatal(err)
		}
		if boxes := strings.Count(src, `shape="box3d"`); boxes == 0 {
			t.Errorf("collapse %d: no scope boxes", opt.Collapse)
		}
		if testing.Short() {
			continue
		}
		if _, err := LookDot(); err == nil {
			start := time.Now()
			if _, err := Render(context.Background(), src, "svg", 0); err != nil {
				t.Errorf("collapse %d: %v", opt.Collapse, err)
			}
			t.Logf("collapse %d top %d: %d bytes of DOT rendered in %v", opt.Collapse, opt.Top, len(src), time.Since(start))
		}
	}
	if _, err := LookDot(); err == nil && !testing.Short() {
		start := time.Now()
		if _, err := Render(context.Background(), src, "svg", 0); err != nil {
			t.Fatal(err)
		}
		t.Logf("default options: rendered by dot in %v", time.Since(start))
	}
}

// TestRenderWithDot lays out every golden with the real Graphviz, and
// checks the SVG is byte-identical across runs.
func TestRenderWithDot(t *testing.T) {
	if _, err := LookDot(); err != nil {
		t.Skip("graphviz 'dot' not on PATH; CI installs it")
	}
	files, _ := filepath.Glob("testdata/*.dot")
	if len(files) == 0 {
		t.Fatal("no DOT goldens")
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		a := renderTwice(t, f+" SVG", func() ([]byte, error) {
			return Render(context.Background(), string(src), "svg", 0)
		})
		if !bytes.Contains(a, []byte(`id="legend"`)) {
			t.Errorf("%s: SVG lost the node ids", f)
		}
	}
}

func TestRooflineSVGDeterministic(t *testing.T) {
	r, c := alexnetReport(t)
	a := renderTwice(t, "roofline SVG", func() ([]byte, error) {
		return Roofline(r, nil, c, RooflineOptions{}, "svg")
	})
	if !bytes.Contains(a, []byte("<svg")) || !bytes.Contains(a, []byte("@font-face")) {
		t.Error("roofline SVG has no embedded fonts")
	}
	for _, f := range []string{"png", "pdf"} {
		if img, err := Roofline(r, r, c, RooflineOptions{}, f); err != nil || len(img) == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestRooflineCountsUndrawable(t *testing.T) {
	r := smallReport()
	// A copy with zero FLOPs: cannot sit on a log axis.
	r.Nodes = append(r.Nodes, report.NodeCost{Counts: report.Counts{BytesRead: 10, BytesWritten: 10}, Name: "copy", OpType: "Transpose", TimeS: 2e-6, LaunchS: 2e-6, Launches: 1, Bound: "launch"})
	pts, skipped, _ := points(r, CeilingsOf(testGPU()))
	if want := 4; len(pts) != want || skipped != 1 { // 5 kernels, the free Reshape is no point
		t.Errorf("points %d skipped %d, want %d and 1", len(pts), skipped, want)
	}
	title := rooflineTitle(r, nil, len(pts), skipped, 2e-6)
	if !strings.Contains(title, "1 with zero FLOPs or zero bytes not drawn") {
		t.Errorf("title %q does not count the undrawable node", title)
	}
}

func TestHTMLSelfContained(t *testing.T) {
	r, c := alexnetReport(t)
	roof, err := Roofline(r, nil, c, RooflineOptions{}, "svg")
	if err != nil {
		t.Fatal(err)
	}
	r.Nodes[len(r.Nodes)-1].Note = "a <slow> path: pad it"
	r.Nodes[len(r.Nodes)-1].TimeS = max(r.Nodes[len(r.Nodes)-1].TimeS, 1e-9)
	in := HTMLInput{Report: r, Ceil: c, RooflineSVG: roof, GraphNote: "no dot", GraphDOT: "digraph{}"}
	if _, err := LookDot(); err == nil {
		src, _ := DOT(r, c, GraphOptions{})
		if in.GraphSVG, err = Render(context.Background(), src, "svg", 0); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := HTML(&buf, in); err != nil {
		t.Fatal(err)
	}
	page := strings.ToLower(buf.String())
	for _, bad := range []string{`src="http`, `src='http`, `href="http`, `href='http`, "<link", "<script src", "@import", "url(http"} {
		if strings.Contains(page, bad) {
			t.Errorf("HTML fetches from the network: contains %q", bad)
		}
	}
	// The costed nodes' notes are listed, escaped (a model's strings).
	for _, want := range []string{"<table class=\"nodes\"", "<svg", "/classifier/classifier.1/gemm", "node notes", "a &lt;slow&gt; path: pad it", `title="a &lt;slow&gt; path: pad it"`} {
		if !strings.Contains(page, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
}

// TestDynamoNamesCollapse: a report of a dynamo export (nodes named
// without their modules, the module path in NodeCost.Module) collapses
// into the same scope boxes, with the same members and times, as the
// same model named the TorchScript way; its node boxes keep their own
// names.
func TestDynamoNamesCollapse(t *testing.T) {
	c := CeilingsOf(testGPU())
	named := synthetic(300)
	dyn := synthetic(300)
	for i := range dyn.Nodes {
		n := &dyn.Nodes[i]
		n.Module = n.Name[:strings.LastIndexByte(n.Name, '/')]
		n.Name = fmt.Sprintf("node_%d", i)
	}
	for _, o := range []GraphOptions{{Collapse: 1}, {Collapse: 2}, {Collapse: 2, Expand: []string{"/stage0"}}, {Collapse: 2, Top: 3, Reveal: "5"}} {
		a, err := Draw(named, c, revealing(o, named))
		if err != nil {
			t.Fatal(err)
		}
		b, err := Draw(dyn, c, revealing(o, dyn))
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Groups) != len(b.Groups) {
			t.Fatalf("%+v: %d groups named, %d as a dynamo export", o, len(a.Groups), len(b.Groups))
		}
		for k := range a.Groups {
			ga, gb := a.Groups[k], b.Groups[k]
			if ga.Kind != gb.Kind || ga.Members != gb.Members || ga.TimeS != gb.TimeS || ga.Path != gb.Path {
				t.Errorf("%+v: group %d is %s %q (%d members, %g s, path %q) named, %s %q (%d, %g s, path %q) as a dynamo export",
					o, k, ga.Kind, ga.Name, ga.Members, ga.TimeS, ga.Path, gb.Kind, gb.Name, gb.Members, gb.TimeS, gb.Path)
			}
			if gb.Kind == "node" && !strings.HasPrefix(gb.Name, "node_") {
				t.Errorf("%+v: node box named %q, want its own name", o, gb.Name)
			}
		}
	}
}

// revealing names o's Reveal, a node index, as r names that node.
func revealing(o GraphOptions, r *report.Report) GraphOptions {
	if o.Reveal != "" {
		i, _ := strconv.Atoi(o.Reveal)
		o.Reveal = r.Nodes[i].Name
	}
	return o
}

// TestDrawingsNameTheRuntime: a graph's legend, a roofline's title, the
// HTML page's header and a pprof profile's comment name the runtime a
// report was priced under, as the text report's header does; one priced
// without a runtime names its plan alone.
func TestDrawingsNameTheRuntime(t *testing.T) {
	r := smallReport()
	if got := planText(r); got != "fused plan" {
		t.Errorf("without a runtime: %q", got)
	}
	r.Runtime = &report.Runtime{Name: "tensorrt"}
	const want = "runtime tensorrt (fused kernels)"
	src, err := DOT(r, CeilingsOf(testGPU()), GraphOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(src, want) {
		t.Errorf("graph legend does not say %q", want)
	}
	if title := rooflineTitle(r, nil, 1, 0, 0); !strings.Contains(title, "runtime tensorrt, fused plan") {
		t.Errorf("roofline title %q", title)
	}
	prof, err := Profile(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(prof, []byte(want)) && !gzipContains(t, prof, want) {
		t.Errorf("pprof comment does not say %q", want)
	}
	// A power setting is named beside the runtime.
	r.Totals.PowerCapW = 150
	if src, err = DOT(r, CeilingsOf(testGPU()), GraphOptions{}); err != nil || !strings.Contains(src, want+" · power cap 150 W") {
		t.Errorf("graph legend does not name the cap (%v)", err)
	}
	if title := rooflineTitle(r, nil, 1, 0, 0); !strings.Contains(title, "runtime tensorrt, fused plan, power cap 150 W") {
		t.Errorf("roofline title %q", title)
	}
}

// gzipContains reports whether the gzip stream b holds s.
func gzipContains(t *testing.T, b []byte, s string) bool {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Contains(data, []byte(s))
}
