package models

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
)

// analyze costs m's main graph on a T4 with the unfused plan (no passes).
func analyze(t *testing.T, m *ir.Model) *report.Report {
	t.Helper()
	gpu, err := hwdb.Lookup("T4")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := cost.Analyze(m.Graph, m, gpu, cost.Options{Plan: "unfused"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.UnsupportedOps) > 0 {
		t.Errorf("%s: unsupported ops %+v", m.Graph.Name, rep.UnsupportedOps)
	}
	return rep
}

// loadFixture reads a committed torch export the way the CLI does.
func loadFixture(t *testing.T, name string, bind map[string]int64) *ir.Model {
	t.Helper()
	m, err := ir.ReadFile(filepath.Join("..", "testdata", "models", name+".onnx"), ir.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.InlineFunctions(m); err != nil {
		t.Fatal(err)
	}
	res, err := ir.InferShapes(m, ir.InferOptions{Bindings: bind})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.UnknownOps) > 0 {
		t.Fatalf("%s: unknown ops %v", name, res.UnknownOps)
	}
	return m
}

// gemmOps are the ops whose count and per-node MACs must match a fixture.
var gemmOps = []string{"Conv", "Gemm", "MatMul", "LSTM"}

// macsByOp lists, per op type, the sorted per-node MACs.
func macsByOp(rep *report.Report) map[string][]float64 {
	out := map[string][]float64{}
	for _, n := range rep.Nodes {
		out[n.OpType] = append(out[n.OpType], n.MACs)
	}
	for _, v := range out {
		sort.Float64s(v)
	}
	return out
}

func outputShapes(m *ir.Model) []string {
	var s []string
	for _, o := range m.Graph.Outputs {
		s = append(s, o.DType.String()+o.Shape.String())
	}
	return s
}

// compareFixture checks that the zoo model and the fixture have the same
// GEMM-like nodes with the same MACs each, the same output shapes, and
// parameter counts that differ by exactly extraParams (the zoo model's
// minus the fixture's; the caller states the arithmetic).
func compareFixture(t *testing.T, zoo, fix *ir.Model, extraParams float64) {
	t.Helper()
	zr, fr := analyze(t, zoo), analyze(t, fix)
	zm, fm := macsByOp(zr), macsByOp(fr)
	for _, op := range gemmOps {
		if len(zm[op]) != len(fm[op]) {
			t.Errorf("%s nodes: zoo %d, fixture %d", op, len(zm[op]), len(fm[op]))
			continue
		}
		for i := range zm[op] {
			if zm[op][i] != fm[op][i] {
				t.Errorf("%s MACs (sorted) #%d: zoo %g, fixture %g", op, i, zm[op][i], fm[op][i])
			}
		}
	}
	if got := zr.Totals.Params - fr.Totals.Params; got != extraParams {
		t.Errorf("params: zoo %g - fixture %g = %g, want %g", zr.Totals.Params, fr.Totals.Params, got, extraParams)
	}
	if z, f := fmt.Sprint(outputShapes(zoo)), fmt.Sprint(outputShapes(fix)); z != f {
		t.Errorf("outputs: zoo %s, fixture %s", z, f)
	}
}

// mustBuild returns a builder-result checker: mustBuild(t)(Model(cfg))
// fails the test on the builder's error and returns its model.
func mustBuild(t *testing.T) func(*ir.Model, error) *ir.Model {
	return func(m *ir.Model, err error) *ir.Model {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
}

func TestAlexNetMatchesFixture(t *testing.T) {
	m := mustBuild(t)(AlexNet(ImageConfig{}))
	compareFixture(t, m, loadFixture(t, "alexnet", nil), 0)
	// torchvision's AlexNet has 61,100,840 parameters: the conv and
	// linear weights plus biases.
	conv := int64(64*3*11*11+64) + (192*64*5*5 + 192) + (384*192*3*3 + 384) + (256*384*3*3 + 256) + (256*256*3*3 + 256)
	fc := int64(4096*9216+4096) + (4096*4096 + 4096) + (1000*4096 + 1000)
	if got := analyze(t, m).Totals.Params; got != float64(conv+fc) {
		t.Errorf("alexnet params %g, want %d", got, conv+fc)
	}
}

func TestVGG16MatchesFixture(t *testing.T) {
	m := mustBuild(t)(VGG(VGGConfig{Depth: 16}))
	compareFixture(t, m, loadFixture(t, "vgg16", nil), 0)
}

// bnChannels sums the channels of every BatchNormalization node.
func bnChannels(m *ir.Model) float64 {
	var c float64
	for _, n := range m.Graph.Nodes {
		if n.OpType == "BatchNormalization" {
			c += float64(n.In(1).Shape.Dims[0].Value)
		}
	}
	return c
}

func TestResNet50MatchesFixture(t *testing.T) {
	fix := loadFixture(t, "resnet50", map[string]int64{"batch": 2})
	folded := mustBuild(t)(ResNet(ResNetConfig{ImageConfig: ImageConfig{Batch: 2}, FoldBN: true}))
	compareFixture(t, folded, fix, 0)

	withBN := mustBuild(t)(ResNet(ResNetConfig{ImageConfig: ImageConfig{Batch: 2}}))
	// The fixture's BN is folded into conv biases (C per conv); the BN
	// form keeps scale, bias, mean and var (4·C) and convs without bias:
	// 3·C more per BN.
	compareFixture(t, withBN, fix, 3*bnChannels(withBN))
	// torchvision reports 25,557,032 trainable parameters for ResNet-50;
	// ONNX also holds the running mean and var (2·C per BN).
	if got, want := analyze(t, withBN).Totals.Params, 25557032+2*bnChannels(withBN); got != want {
		t.Errorf("resnet50 params %g, want %g", got, want)
	}
}

func TestLSTMMatchesFixture(t *testing.T) {
	m := mustBuild(t)(LSTM(LSTMConfig{}))
	compareFixture(t, m, loadFixture(t, "lstm_ptb", nil), 0)
}

func TestTransformerMatchesFixture(t *testing.T) {
	// The fixture: d_model 512, 8 heads, 6 layers, ff 2048, L=30, batch 1,
	// seq-first and without a mask; the zoo model is batch-first, so the
	// output is [1,30,512] against [30,1,512] and only the GEMM nodes and
	// parameters are compared.
	m := mustBuild(t)(TransformerEncoder(TransformerConfig{Seq: 30, Batch: 1, NoMask: true}))
	fix := loadFixture(t, "transformer_encoder", nil)
	zr, fr := analyze(t, m), analyze(t, fix)
	zm, fm := macsByOp(zr), macsByOp(fr)
	for _, op := range gemmOps {
		if fmt.Sprint(zm[op]) != fmt.Sprint(fm[op]) {
			t.Errorf("%s MACs: zoo %v, fixture %v", op, zm[op], fm[op])
		}
	}
	if zr.Totals.Params != fr.Totals.Params {
		t.Errorf("params: zoo %g, fixture %g", zr.Totals.Params, fr.Totals.Params)
	}
	if got, want := m.Graph.Outputs[0].Shape.String(), "[1,30,512]"; got != want {
		t.Errorf("output %s, want %s", got, want)
	}
}

func TestGPTMatchesFixture(t *testing.T) {
	// gpt_small fixture: vocab 50257, 4 layers, d 256, 4 heads, 1024
	// positions, seq 64, dynamic batch, untied head.
	m := mustBuild(t)(GPT(GPTConfig{DModel: 256, Heads: 4, Layers: 4, Seq: 64, Batch: 3, Untied: true}))
	// The fixture keeps its causal mask as a [1,1,1024,1024] initializer;
	// the zoo computes it (Trilu), so the fixture counts 1024² more.
	compareFixture(t, m, loadFixture(t, "gpt_small", map[string]int64{"batch": 3}), -1024*1024)
}

// gpt2Params is GPT-2's parameter count with a tied head: embeddings
// (V·d + P·d), per layer 12·d² + 13·d (QKV 3d²+3d, proj d²+d, MLP 8d²+5d,
// two LayerNorms 4d), and the final LayerNorm 2d.
func gpt2Params(c GPTConfig) float64 {
	c.defaults()
	d := float64(c.DModel)
	return float64(c.Vocab)*d + float64(c.Positions)*d + float64(c.Layers)*(12*d*d+13*d) + 2*d
}

func TestGPT2Sizes(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    GPTConfig
		pub  float64 // published size, for the sanity of the formula
	}{{"small", GPT2Small, 124e6}, {"medium", GPT2Medium, 355e6}, {"large", GPT2Large, 774e6}, {"xl", GPT2XL, 1558e6}} {
		c := tc.c
		c.Seq = 128
		m, err := GPT(c)
		if err != nil {
			t.Fatal(err)
		}
		got, want := analyze(t, m).Totals.Params, gpt2Params(c)
		if got != want {
			t.Errorf("gpt2-%s params %g, want %g", tc.name, got, want)
		}
		if math.Abs(want-tc.pub)/tc.pub > 0.01 {
			t.Errorf("gpt2-%s: %g params is not the published %g", tc.name, want, tc.pub)
		}
	}
}

// llamaParams: embeddings and head 2·V·d; per layer q and o d², k and v
// d·kv·hd each, MLP 3·d·ff, two RMSNorms 2d; final norm d.
func llamaParams(c LlamaConfig) float64 {
	c.defaults()
	d, kv := float64(c.DModel), float64(c.KVHeads*(c.DModel/c.Heads))
	perLayer := 2*d*d + 2*d*kv + 3*d*float64(c.FF) + 2*d
	return 2*float64(c.Vocab)*d + float64(c.Layers)*perLayer + d
}

func TestLlama7B(t *testing.T) {
	c := Llama7B
	c.Seq = 128
	m, err := Llama(c)
	if err != nil {
		t.Fatal(err)
	}
	rep := analyze(t, m)
	// 2·32000·4096 + 32·(2·4096² + 2·4096² + 3·4096·11008 + 2·4096) + 4096
	// = 262,144,000 + 32·202,383,360 + 4096 = 6,738,415,616.
	want := 2.0*32000*4096 + 32*(4*4096.0*4096+3*4096.0*11008+2*4096) + 4096
	if rep.Totals.Params != want || want != 6738415616 {
		t.Fatalf("llama-7b params %g, want %g", rep.Totals.Params, want)
	}
	// Forward FLOPs per token ≈ 2·params (each weight is one multiply-add
	// per token), plus attention (4·s·d per layer per token) and the
	// elementwise work; the embedding lookup does no MACs. Within 10%.
	tokens := float64(c.Seq)
	perTok := rep.Totals.FLOPs / tokens
	t.Logf("llama-7b seq %d: %.4g FLOPs/token = %.4f × 2·params", c.Seq, perTok, perTok/(2*want))
	if r := perTok / (2 * want); r < 0.95 || r > 1.10 {
		t.Errorf("llama-7b FLOPs/token %g = %.3f × 2·params", perTok, r)
	}
	// The GEMM part exactly: 2·(params − embedding − norms) per token
	// plus the two attention MatMuls, 2·2·s·d per layer per token.
	var gemm float64
	for _, n := range rep.Nodes {
		if n.OpType == "MatMul" {
			gemm += n.FLOPs
		}
	}
	wantGemm := 2*(want-32000*4096-(2*32+1)*4096)*tokens + 32*2*2*tokens*tokens*4096
	if gemm != wantGemm {
		t.Errorf("llama-7b MatMul FLOPs %g, want %g", gemm, wantGemm)
	}
}

func TestLlamaSizes(t *testing.T) {
	for name, c := range llamaNames {
		c.Seq = 8
		m, err := Llama(c)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, want := analyze(t, m).Totals.Params, llamaParams(c); got != want {
			t.Errorf("llama-%s params %g, want %g", name, got, want)
		}
	}
}

// TestLlamaGQAMACs checks the grouped attention MatMuls against the MACs
// of attention over repeated key/value heads: b·h·s·s·hd each.
func TestLlamaGQAMACs(t *testing.T) {
	c := LlamaTiny
	c.Batch, c.Seq = 3, 16
	m, err := Llama(c)
	if err != nil {
		t.Fatal(err)
	}
	want := float64(3 * 4 * 16 * 16 * (64 / 4)) // b·h·s·s·hd
	n := 0
	for _, nc := range analyze(t, m).Nodes {
		if nc.OpType == "MatMul" && (strings.HasSuffix(nc.Name, "/self_attn/MatMul") || strings.HasSuffix(nc.Name, "/self_attn/MatMul_1")) {
			n++
			if nc.MACs != want {
				t.Errorf("%s MACs %g, want %g", nc.Name, nc.MACs, want)
			}
		}
	}
	if n != 2*c.Layers {
		t.Errorf("found %d attention MatMuls, want %d", n, 2*c.Layers)
	}
}

// TestLlama70BHugeTotals builds 70B-shaped graphs and checks that the
// totals stay finite, positive and unwrapped. At batch 64, seq 4096 the
// forward pass is ≈ 2·69e9·262144 + attention ≈ 4e16 FLOPs, far below
// 2^63 ≈ 9.2e18; batch 256 at seq 131072 (3.4e7 tokens: ≈ 4.6e18 in the
// weights plus ≈ 1.2e19 in attention) exceeds it.
func TestLlama70BHugeTotals(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two 80-layer graphs")
	}
	for _, tc := range []struct {
		batch, seq int64
		over63     bool
	}{{64, 4096, false}, {256, 131072, true}} {
		c := Llama70B
		c.Batch, c.Seq = tc.batch, tc.seq
		m, err := Llama(c)
		if err != nil {
			t.Fatal(err)
		}
		rep := analyze(t, m)
		tot := rep.Totals
		for name, v := range map[string]float64{"macs": tot.MACs, "flops": tot.FLOPs, "bytes_read": tot.BytesRead,
			"bytes_written": tot.BytesWritten, "params": tot.Params, "time_s": tot.TimeS, "energy_j": tot.EnergyJ,
			"launches": tot.Launches, "peak_memory_bytes": tot.PeakMemoryBytes} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
				t.Errorf("b%d s%d: %s = %g", tc.batch, tc.seq, name, v)
			}
		}
		// Lower bound: 2 FLOPs per weight per token, without attention.
		tokens := float64(tc.batch * tc.seq)
		if floor := 2 * (llamaParams(c) - 32000*8192) * tokens; tot.FLOPs < floor {
			t.Errorf("b%d s%d: flops %g below 2·params·tokens %g (wrapped?)", tc.batch, tc.seq, tot.FLOPs, floor)
		}
		t.Logf("llama-70b b%d s%d: %d nodes, %.4g FLOPs (2^63 = %.4g), %.4g params, %.4g s on T4", tc.batch, tc.seq, len(m.Graph.Nodes), tot.FLOPs, math.Exp2(63), tot.Params, tot.TimeS)
		if over := tot.FLOPs > math.Exp2(63); over != tc.over63 {
			t.Errorf("b%d s%d: flops %g > 2^63 is %v, want %v", tc.batch, tc.seq, tot.FLOPs, over, tc.over63)
		}
	}
}

// TestZooEntriesBuild builds every registry entry at its defaults (the big
// LLMs at a short sequence) and checks the invariants every model keeps.
func TestZooEntriesBuild(t *testing.T) {
	for _, e := range Zoo() {
		params := map[string]int64{}
		for _, p := range e.Params {
			if p.Name == "seq" && p.Default > 64 {
				params["seq"] = 64
			}
		}
		m, err := e.Build(params)
		if err != nil {
			t.Errorf("%s: %v", e.Name, err)
			continue
		}
		checkModel(t, e.Name, m)
	}
}

// checkModel: opset 17, verified, unique node names, weights without
// bytes, every output with a known dtype and rank.
func checkModel(t *testing.T, name string, m *ir.Model) {
	t.Helper()
	if m.Opset("") != Opset {
		t.Errorf("%s: opset %d", name, m.Opset(""))
	}
	if err := ir.VerifyInferred(m.Graph); err != nil {
		t.Errorf("%s: %v", name, err)
	}
	seen := map[string]bool{}
	for _, n := range m.Graph.Nodes {
		if seen[n.Name] || n.Name == "" || n.Name[0] != '/' {
			t.Errorf("%s: bad or duplicate node name %q", name, n.Name)
		}
		seen[n.Name] = true
	}
	for _, v := range m.Graph.Initializers {
		if v.Const.HasData || !v.Const.Loc.Missing {
			t.Errorf("%s: initializer %s carries data", name, v.Name)
		}
	}
	for _, o := range m.Graph.Outputs {
		if o.DType == 0 || !o.Shape.Ranked {
			t.Errorf("%s: output %s untyped", name, o.Name)
		}
	}
}

func TestSymbolicDims(t *testing.T) {
	c := LlamaTiny
	c.Batch, c.Seq = Symbolic, Symbolic
	m, err := Llama(c)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Graph.Outputs[0].Shape.String(), "[batch,seq,1000]"; got != want {
		t.Errorf("llama-tiny symbolic output %s, want %s", got, want)
	}
	// Binding the symbols later gives the same model as building concrete.
	res, err := ir.InferShapes(m, ir.InferOptions{Bindings: map[string]int64{"batch": 2, "seq": 16}})
	if err != nil || len(res.Unbound) > 0 {
		t.Fatalf("bind: %v %v", err, res.Unbound)
	}
	c.Batch, c.Seq = 2, 16
	concrete, err := Llama(c)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := analyze(t, m).Totals.FLOPs, analyze(t, concrete).Totals.FLOPs; a != b {
		t.Errorf("bound symbolic FLOPs %g, concrete %g", a, b)
	}
}

func TestBadConfigs(t *testing.T) {
	for name, build := range map[string]func() error{
		"vgg depth":       func() error { _, e := VGG(VGGConfig{Depth: 12}); return e },
		"resnet depth":    func() error { _, e := ResNet(ResNetConfig{Depth: 49}); return e },
		"alexnet small":   func() error { _, e := AlexNet(ImageConfig{Image: 64}); return e },
		"heads":           func() error { _, e := GPT(GPTConfig{DModel: 100, Heads: 3}); return e },
		"kv heads":        func() error { _, e := Llama(LlamaConfig{Heads: 32, KVHeads: 5}); return e },
		"seq > positions": func() error { _, e := GPT(GPTConfig{Seq: 2048}); return e },
		"batch -2":        func() error { _, e := LSTM(LSTMConfig{Batch: -2}); return e },
		"huge weight": func() error {
			_, e := Llama(LlamaConfig{Vocab: 1 << 40, DModel: 1 << 20, Heads: 1 << 10, Seq: 2})
			return e
		},
		"synthetic 0": func() error { _, e := Synthetic(0); return e },
	} {
		if err := build(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	e, _ := Lookup("llama-7b")
	for _, p := range []map[string]int64{{"nope": 1}, {"layers": 0}, {"layers": 100000}, {"seq": -5}, {"d_model": 1 << 50}} {
		if _, err := e.Build(p); err == nil {
			t.Errorf("llama-7b %v: no error", p)
		}
	}
}

func TestSynthetic(t *testing.T) {
	for _, n := range []int{1, 100, 10000} {
		m, err := Synthetic(n)
		if err != nil {
			t.Fatal(err)
		}
		checkModel(t, "synthetic", m)
		// At least n nodes, and at most one block (14 nodes) more.
		if got := len(m.Graph.Nodes); got < n || got > n+14 {
			t.Errorf("Synthetic(%d) has %d nodes", n, got)
		}
	}
}

// TestRoundTrip writes every entry (small settings) as .onnx, reads it
// back and compares the canonical dumps.
func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, e := range Zoo() {
		params := map[string]int64{}
		for _, p := range e.Params {
			switch p.Name {
			case "seq":
				params["seq"] = 16
			case "nodes":
				params["nodes"] = 200
			}
		}
		m, err := e.Build(params)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, e.Name+".onnx")
		if err := ir.WriteFile(path, m); err != nil {
			t.Fatalf("%s: write: %v", e.Name, err)
		}
		back, err := ir.ReadFile(path, ir.ReadOptions{})
		if err != nil {
			t.Fatalf("%s: read: %v", e.Name, err)
		}
		if _, err := ir.InferShapes(back, ir.InferOptions{}); err != nil {
			t.Fatalf("%s: infer: %v", e.Name, err)
		}
		if a, b := ir.DumpModel(m), ir.DumpModel(back); a != b {
			t.Errorf("%s: dump differs after round trip:\n%s", e.Name, firstDiff(a, b))
		}
	}
}

func firstDiff(a, b string) string {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			lo := max(0, i-200)
			return "want …" + a[lo:min(len(a), i+200)] + "\ngot  …" + b[lo:min(len(b), i+200)]
		}
	}
	return fmt.Sprintf("lengths %d vs %d", len(a), len(b))
}

// TestOnnxChecker runs onnx.checker on one written model when Debian's
// python3 with onnx is present.
func TestOnnxChecker(t *testing.T) {
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	if err := exec.Command(py, "-c", "import onnx").Run(); err != nil {
		t.Skip("python3 has no onnx")
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		p    map[string]int64
	}{
		{"llama-tiny", nil},
		{"resnet18", map[string]int64{"batch": -1}},
		{"lstm-ptb", map[string]int64{"vocab": 100, "embed": 32, "hidden": 32, "seq": 8}},
		{"transformer", map[string]int64{"d_model": 64, "ff": 128, "seq": -1, "batch": -1}},
		{"gpt2-small", map[string]int64{"vocab": 1000, "d_model": 64, "heads": 4, "layers": 2, "seq": 8}},
		{"synthetic", map[string]int64{"nodes": 100}},
	} {
		name := tc.name
		e, _ := Lookup(name)
		m, err := e.Build(tc.p)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name+".onnx")
		if err := ir.WriteFile(path, m); err != nil {
			t.Fatal(err)
		}
		// onnx 1.12's checker insists that the external data file exists
		// (not that it holds anything): give it a sparse one of the size
		// the weights claim.
		if err := makeSparseData(dir, m); err != nil {
			t.Fatal(err)
		}
		script := `import onnx,sys
m = onnx.load(sys.argv[1], load_external_data=False)
onnx.checker.check_model(m)
onnx.shape_inference.infer_shapes(m, strict_mode=True)`
		// The checker resolves external data against the working folder
		// when given a loaded proto.
		cmd := exec.Command(py, "-c", script, path)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: onnx.checker: %v\n%s", name, err, out)
		}
	}
}

// makeSparseData creates the external data files m's weights point to,
// as sparse files as long as the furthest byte claimed.
func makeSparseData(dir string, m *ir.Model) error {
	size := map[string]int64{}
	for _, v := range m.Graph.Initializers {
		if l := v.Const.Loc; l.File != "" && l.Offset+l.Length > size[l.File] {
			size[l.File] = l.Offset + l.Length
		}
	}
	for f, n := range size {
		h, err := os.Create(filepath.Join(dir, f))
		if err != nil {
			return err
		}
		if err := h.Truncate(n); err != nil {
			h.Close()
			return err
		}
		if err := h.Close(); err != nil {
			return err
		}
	}
	return nil
}
