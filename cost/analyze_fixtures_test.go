package cost

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/internal/costtest"
	"github.com/onnxcost/onnxcost/ir"
)

// fixtureDir holds the graph-only models exported by
// scripts/export_fixtures.py (ONNXCOST_FIXTURES overrides it).
func fixtureDir() string {
	if d := os.Getenv("ONNXCOST_FIXTURES"); d != "" {
		return d
	}
	return filepath.Join("..", "testdata", "models")
}

// loadFixture reads and infers a fixture with the given symbol bindings.
// A missing fixture fails the test: the fixtures are committed.
func loadFixture(tb testing.TB, name string, bind map[string]int64) *ir.Model {
	tb.Helper()
	m, err := ir.ReadFile(filepath.Join(fixtureDir(), name+".onnx"), ir.ReadOptions{})
	if err != nil {
		tb.Fatalf("fixture %s: %v (run /usr/bin/python3 scripts/export_fixtures.py)", name, err)
	}
	res, err := ir.InferShapes(m, ir.InferOptions{Bindings: bind})
	if err != nil {
		tb.Fatalf("fixture %s: infer: %v", name, err)
	}
	if len(res.Unbound) > 0 {
		tb.Fatalf("fixture %s: unbound symbols %v", name, res.Unbound)
	}
	return m
}

// fixtureMACs is, per fixture, the bindings it is costed at and an
// independent count of its Conv/Gemm/MatMul/LSTM MACs from the
// architecture (not from the graph).
var fixtureMACs = map[string]struct {
	bind map[string]int64
	macs float64
}{
	"alexnet":             {nil, alexnetMACs()},
	"vgg16":               {nil, vgg16MACs()},
	"resnet50":            {map[string]int64{"batch": 1}, resnet50MACs(false)},
	"resnet50_plus_block": {map[string]int64{"batch": 1}, resnet50MACs(true)},
	"mobilenet_v2":        {nil, mobilenetV2MACs()},
	"densenet121":         {map[string]int64{"batch": 1}, densenet121MACs()},
	"lstm_ptb":            {nil, ptbMACs(32, 128)},
	"lstm_ptb_dyn":        {map[string]int64{"seq": 32, "batch": 128}, ptbMACs(32, 128)},
	// nn.TransformerEncoder, L=30, d=512, ff=2048, 6 layers, batch 1.
	"transformer_encoder": {nil, 6 * transformerLayerMACs(30, 512, 2048)},
	// GPT: batch 2, T=64, d=256, 4 layers, vocab 50257: per layer QKV
	// 3Td², attention 2T²d, out proj Td², MLP 8Td²; LM head T·d·V.
	"gpt_small": {map[string]int64{"batch": 2}, 2 * (4*(3*64*256*256+2*64*64*256+64*256*256+8*64*256*256) + 64*256*50257)},
	// BERT: batch 2, T=128; per layer 4Td² + 2T²d + 2T·d·ff; pooler d² per sequence.
	"bert_base":  {map[string]int64{"batch": 2}, 2 * (12*transformerLayerMACs(128, 768, 3072) + 768*768)},
	"bert_large": {map[string]int64{"batch": 2}, 2 * (24*transformerLayerMACs(128, 1024, 4096) + 1024*1024)},
	// BERT-large at MLPerf's sequence length, batch 2, T=384: the same
	// per-layer count, where the 2T²d attention term now weighs 3x more
	// relative to the projections than at T=128.
	"bert_large_s384": {map[string]int64{"batch": 2}, 2 * (24*transformerLayerMACs(384, 1024, 4096) + 1024*1024)},
	// GRU 128->256, 2 layers, batch 4, seq 20; head 256->10 on the last step.
	"gru": {map[string]int64{"batch": 4, "seq": 20}, 20*4*(gruStepMACs(128, 256)+gruStepMACs(256, 256)) + 4*256*10},
	// Bidirectional LSTM 64->128, 2 layers (the second reads 2·128), seq 20,
	// batch 4; head 256->5 on every step.
	"bilstm": {nil, 20 * 4 * (2*lstmStepMACs(64, 128) + 2*lstmStepMACs(256, 128) + 256*5)},
	// Loop over seq 5, batch 3: a 32x32 linear per step; head 32->8 once.
	"loop_if": {map[string]int64{"seq": 5, "batch": 3}, 5*3*32*32 + 3*32*8},
	// nn.Transformer, S=10, T=7, batch 2, d 256, ff 512, 2+2 layers.
	"transformer_seq2seq": {nil, 2 * 2 * (transformerLayerMACs(10, 256, 512) + decoderLayerMACs(7, 10, 256, 512))},
}

// gruStepMACs: one GRU step of one row: 3 gates of h outputs over the
// input (in) and the previous state (h).
func gruStepMACs(in, h float64) float64 { return 3 * h * (in + h) }

// lstmStepMACs: one LSTM step of one row and direction: 4 gates.
func lstmStepMACs(in, h float64) float64 { return 4 * h * (in + h) }

// decoderLayerMACs: a Transformer decoder layer over t target and s source
// positions: self-attention as an encoder layer on t (4·t·d² + 2·t²·d),
// cross-attention Q and out projections on t (2·t·d²), K and V on s
// (2·s·d²), scores and weighted sum (2·t·s·d), FFN 2·t·d·ff.
func decoderLayerMACs(t, s, d, ff float64) float64 {
	return 4*t*d*d + 2*t*t*d + 2*t*d*d + 2*s*d*d + 2*t*s*d + 2*t*d*ff
}

// alexnetLayers are torchvision AlexNet's MACs per layer at 224x224, batch 1:
// output elements × reduction length (K·P·Q · C·R·S; FC: in·out).
var alexnetLayers = []struct {
	name string
	macs float64
}{
	{"conv1", 64 * 55 * 55 * 3 * 11 * 11},
	{"conv2", 192 * 27 * 27 * 64 * 5 * 5},
	{"conv3", 384 * 13 * 13 * 192 * 3 * 3},
	{"conv4", 256 * 13 * 13 * 384 * 3 * 3},
	{"conv5", 256 * 13 * 13 * 256 * 3 * 3},
	{"fc6", 9216 * 4096},
	{"fc7", 4096 * 4096},
	{"fc8", 4096 * 1000},
}

// alexnetTable is the per-layer FLOPs (2·MACs, bias excluded) of
// torchvision's AlexNet, conv1..conv5 then fc6..fc8, written out as a
// table independent of the rules.
var alexnetTable = []float64{140_553_600, 447_897_600, 224_280_576, 299_040_768, 199_360_512, 75_497_472, 33_554_432, 8_192_000}

func alexnetMACs() float64 {
	s := 0.0
	for _, l := range alexnetLayers {
		s += l.macs
	}
	return s
}

func vgg16MACs() float64 {
	cfg := []int{64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0} // 0 = max-pool
	hw, in, s := 224.0, 3.0, 0.0
	for _, c := range cfg {
		if c == 0 {
			hw /= 2
			continue
		}
		s += hw * hw * in * float64(c) * 3 * 3 // 3x3, pad 1: P·Q·C·K·R·S
		in = float64(c)
	}
	return s + 512*7*7*4096 + 4096*4096 + 4096*1000
}

// resnet50MACs: stem 7x7/2 to 112², max-pool to 56², four stages of
// bottlenecks (1x1 reduce, 3x3 with the stage's stride, 1x1 expand ×4,
// a 1x1 projection on each stage's first block), fc 2048→1000.
func resnet50MACs(extraBlock bool) float64 {
	s := 112.0 * 112 * 3 * 64 * 7 * 7
	in, hw := 64.0, 56.0
	bottleneck := func(width, stride float64, project bool) {
		out := hw / stride
		s += hw * hw * in * width              // 1x1 reduce
		s += out * out * width * width * 3 * 3 // 3x3
		s += out * out * width * 4 * width     // 1x1 expand
		if project {
			s += out * out * in * 4 * width
		}
		in, hw = 4*width, out
	}
	stages := []struct{ blocks, width, stride float64 }{{3, 64, 1}, {4, 128, 2}, {6, 256, 2}, {3, 512, 2}}
	for i, st := range stages {
		for b := 0.0; b < st.blocks; b++ {
			if b == 0 {
				bottleneck(st.width, st.stride, true)
			} else {
				bottleneck(st.width, 1, false)
			}
		}
		if i == 2 && extraBlock {
			bottleneck(256, 1, false) // Bottleneck(1024, 256) at 14²
		}
	}
	return s + 2048*1000
}

// mobilenetV2MACs: stem 3x3/2 3→32; inverted residuals (expand 1x1 by t,
// depthwise 3x3 with stride s: hidden·9 per output pixel, project 1x1);
// last 1x1 320→1280 at 7²; classifier 1280→1000.
// densenet121MACs counts torchvision's DenseNet-121 (growth 32, bottleneck
// 4×32, blocks of 6, 12, 24, 16 layers, 64 stem features, compression
// 0.5) at 224×224: the stem 7×7 conv, per dense layer a 1×1 conv to 128
// channels and a 3×3 conv to 32, per transition a 1×1 conv halving the
// channels (at the block's resolution, before its 2×2 average pool), and
// the 1024 → 1000 classifier.
func densenet121MACs() float64 {
	macs := 112.0 * 112 * 64 * 3 * 49
	c, s := 64.0, 56.0
	for i, layers := range []int{6, 12, 24, 16} {
		for range layers {
			macs += s*s*128*c + s*s*32*128*9
			c += 32
		}
		if i < 3 {
			macs += s * s * c * (c / 2)
			c, s = c/2, s/2
		}
	}
	return macs + 1024*1000
}

func mobilenetV2MACs() float64 {
	hw := 112.0
	s := hw * hw * 3 * 32 * 3 * 3
	in := 32.0
	for _, b := range [][4]float64{{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2}, {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}} {
		t, c, n, stride := b[0], b[1], b[2], b[3]
		for i := 0.0; i < n; i++ {
			st := 1.0
			if i == 0 {
				st = stride
			}
			hidden := in * t
			if t != 1 {
				s += hw * hw * in * hidden
			}
			hw /= st
			s += hw * hw * hidden * 3 * 3
			s += hw * hw * hidden * c
			in = c
		}
	}
	return s + 7*7*320*1280 + 1280*1000
}

// ptbMACs: 2 LSTM layers of hidden 1024 over seq steps and batch rows,
// 4·h·(in+h) MACs per row and step, plus the decoder 1024→10000 per token.
func ptbMACs(seq, batch float64) float64 {
	return 2*seq*batch*4*1024*(1024+1024) + seq*batch*1024*10000
}

// transformerLayerMACs: QKV and out projections 4·L·d², scores and the
// weighted sum 2·L²·d, FFN 2·L·d·ff (in MACs).
func transformerLayerMACs(l, d, ff float64) float64 {
	return 4*l*d*d + 2*l*l*d + 2*l*d*ff
}

// gemmLikeMACs sums the MACs of Conv, Gemm, MatMul, LSTM and GRU nodes,
// including those inside control-flow bodies.
func gemmLikeMACs(r *report.Report) float64 {
	s := 0.0
	for _, n := range r.Nodes {
		switch n.OpType {
		case "Conv", "Gemm", "MatMul", "LSTM", "GRU",
			"Loop", "If", "Scan": // control flow carries its bodies' MACs
			s += n.MACs
		}
	}
	return s
}

// TestAlexNetTable reproduces alexnetTable layer by layer from the
// torchvision export: 2·MACs of the k-th Conv/Gemm equals the table
// (the table's convention excludes bias, which our flops add: flops =
// 2·macs + one add per output element).
func TestAlexNetTable(t *testing.T) {
	m := loadFixture(t, "alexnet", nil)
	r, err := Analyze(m.Graph, m, costtest.GPU(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	costtest.CheckSane(t, r)
	var layers []report.NodeCost
	for _, n := range r.Nodes {
		if n.OpType == "Conv" || n.OpType == "Gemm" {
			layers = append(layers, n)
		}
	}
	if len(layers) != len(alexnetTable) {
		t.Fatalf("%d Conv/Gemm layers, want %d", len(layers), len(alexnetTable))
	}
	for i, n := range layers {
		l := alexnetLayers[i]
		if perf.FMAFLOPs*l.macs != alexnetTable[i] {
			t.Errorf("%s: the stated arithmetic 2·%v disagrees with the table's %v", l.name, l.macs, alexnetTable[i])
		}
		if got := perf.FMAFLOPs * n.MACs; got != alexnetTable[i] {
			t.Errorf("%s (%s): 2·macs = %v, want %v", l.name, n.Name, got, alexnetTable[i])
		}
		outElems := 1.0
		for _, d := range n.Outputs[0].Shape {
			outElems *= float64(d.Value)
		}
		if want := alexnetTable[i] + outElems; n.FLOPs != want {
			t.Errorf("%s: flops = %v, want table + bias (%v)", l.name, n.FLOPs, want)
		}
	}
}

// TestFixtureGEMMMACs: on every fixture, the Conv/Gemm/MatMul/LSTM MACs
// equal the independent architectural count, and nothing is NaN,
// infinite, negative or unsupported.
func TestFixtureGEMMMACs(t *testing.T) {
	names := make([]string, 0, len(fixtureMACs))
	for n := range fixtureMACs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			fx := fixtureMACs[name]
			m := loadFixture(t, name, fx.bind)
			for _, dt := range []string{"", "fp16"} {
				r, err := Analyze(m.Graph, m, costtest.GPU(), Options{DType: dt})
				if err != nil {
					t.Fatal(err)
				}
				costtest.CheckSane(t, r)
				if len(r.UnsupportedOps) > 0 {
					t.Errorf("unsupported ops: %+v", r.UnsupportedOps)
				}
				if got := gemmLikeMACs(r); got != fx.macs {
					t.Errorf("dtype %q: Conv/Gemm/MatMul/LSTM macs = %v, want %v (diff %v)", dt, got, fx.macs, got-fx.macs)
				}
				if r.Totals.TimeS <= 0 || r.Totals.PeakMemoryBytes <= 0 || r.Totals.Params <= 0 {
					t.Errorf("totals %+v", r.Totals)
				}
			}
		})
	}
}

// TestConformanceModelsSane runs read + infer + analyze on every model of
// the ONNX conformance suite (Debian's libonnx-testdata, where installed):
// no panic, and no NaN, infinite or negative number in any report.
func TestConformanceModelsSane(t *testing.T) {
	paths, _ := filepath.Glob("/usr/share/libonnx-testdata/data/*/*/model.onnx")
	if len(paths) == 0 {
		t.Skip("libonnx-testdata not installed")
	}
	analysed := 0
	for _, p := range paths {
		m, err := ir.ReadFile(p, ir.ReadOptions{})
		if err != nil {
			continue
		}
		if _, err := ir.InferShapes(m, ir.InferOptions{Batch: 1}); err != nil {
			continue
		}
		r, err := Analyze(m.Graph, m, costtest.GPU(), Options{})
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		analysed++
		costtest.CheckSane(t, r)
	}
	t.Logf("analysed %d of %d conformance models", analysed, len(paths))
}

func benchmarkFixture(b *testing.B, name string, bind map[string]int64) {
	gpu := costtest.GPU()
	for b.Loop() {
		m := loadFixture(b, name, bind)
		if _, err := Analyze(m.Graph, m, gpu, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAnalyzeResNet50 is read + infer + analyze of ResNet-50.
func BenchmarkAnalyzeResNet50(b *testing.B) {
	benchmarkFixture(b, "resnet50", map[string]int64{"batch": 1})
}

// BenchmarkAnalyzeVGG16 is read + infer + analyze of VGG-16.
func BenchmarkAnalyzeVGG16(b *testing.B) { benchmarkFixture(b, "vgg16", nil) }
