package passes

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
)

// Real-model checks of the part-2 passes on the PyTorch fixtures
// (scripts/export_fixtures.py): every attention block fused, the L×L
// scores gone from the fused plan's bytes, LayerNorm and GELU recognised.

// transformerFixture describes one fixture's attention geometry.
type transformerFixture struct {
	name           string
	batch          int64 // bound to the symbolic batch (fixed-batch models ignore it)
	layers         int64
	heads, seq     int64
	layerNorms     int // LayerNorm decompositions in the export
	gelus          int // GELU decompositions
	geluForm       string
	layerNormCount string // how layerNorms is made up, for messages
}

var transformerFixtures = []transformerFixture{
	// nn.TransformerEncoder: 6 layers, 8 heads, L=30, batch 1 (fixed), ReLU FFN.
	{name: "transformer_encoder", batch: 1, layers: 6, heads: 8, seq: 30,
		layerNorms: 6 * 2, layerNormCount: "2 per layer"},
	// GPT-style: 4 layers, 4 heads, L=64; tanh GELU.
	{name: "gpt_small", batch: 2, layers: 4, heads: 4, seq: 64,
		layerNorms: 4*2 + 1, layerNormCount: "2 per block + ln_f", gelus: 4, geluForm: "tanh"},
	// BERT-base: 12 layers, 12 heads, L=128; erf GELU.
	{name: "bert_base", batch: 2, layers: 12, heads: 12, seq: 128,
		layerNorms: 12*2 + 1, layerNormCount: "2 per layer + embeddings", gelus: 12, geluForm: "none"},
}

// fixturePath is testdata/models/NAME.onnx at the repository root; the
// test is skipped when the fixture has not been exported.
func fixturePath(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join("..", "testdata", "models", name+".onnx")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("fixture %s not exported (run scripts/export_fixtures.py): %v", p, err)
	}
	return p
}

// loadInferred reads, inlines and infers a fixture with batch bound.
func loadInferred(t testing.TB, path string, batch int64) *ir.Model {
	t.Helper()
	m, err := ir.ReadFile(path, ir.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.InlineFunctions(m); err != nil {
		t.Fatal(err)
	}
	ir.NameNodes(m.Graph)
	if _, err := ir.InferShapes(m, ir.InferOptions{Batch: batch}); err != nil {
		t.Fatal(err)
	}
	return m
}

// countOps counts onnxcost-domain nodes of op (with attribute attr=val
// when attr is not empty).
func countOps(g *ir.Graph, op, attr, val string) int {
	n := 0
	for _, x := range g.Nodes {
		if x.Domain == ir.FusedDomain && x.OpType == op && (attr == "" || x.AttrString(attr, "") == val) {
			n++
		}
	}
	return n
}

func TestFixtureRecognisers(t *testing.T) {
	for _, fx := range transformerFixtures {
		t.Run(fx.name, func(t *testing.T) {
			m := loadInferred(t, fixturePath(t, fx.name), fx.batch)
			runPasses(t, m.Graph, "cleanup", "fuse-layernorm", "fuse-gelu", "fuse-softmax", "fuse-attention")
			if got := countOps(m.Graph, "LayerNormalization", "", ""); got != fx.layerNorms {
				t.Errorf("LayerNormalization: %d, want %d (%s)", got, fx.layerNorms, fx.layerNormCount)
			}
			if got := countOps(m.Graph, "Gelu", "approximate", fx.geluForm); got != fx.gelus {
				t.Errorf("Gelu{approximate=%s}: %d, want %d (1 per layer)", fx.geluForm, got, fx.gelus)
			}
			if got := countOps(m.Graph, "FusedAttention", "", ""); int64(got) != fx.layers {
				t.Errorf("FusedAttention: %d, want %d (1 per layer)", got, fx.layers)
			}
			runPasses(t, m.Graph, "fuse-elementwise")
			// Recognising and fusing moves no arithmetic: the FLOPs are the
			// unfused plan's (sums of parts).
			gpu, err := hwdb.Lookup("A100-SXM4-80GB")
			if err != nil {
				t.Fatal(err)
			}
			unfused := loadInferred(t, fixturePath(t, fx.name), fx.batch)
			ru, err := cost.Analyze(unfused.Graph, unfused, gpu, cost.Options{DType: "fp32"})
			if err != nil {
				t.Fatal(err)
			}
			rf, err := cost.Analyze(m.Graph, m, gpu, cost.Options{DType: "fp32"})
			if err != nil {
				t.Fatal(err)
			}
			if d := math.Abs(rf.Totals.FLOPs - ru.Totals.FLOPs); d > 1e-9*ru.Totals.FLOPs {
				t.Errorf("FLOPs after part-2 passes %.0f != unfused %.0f", rf.Totals.FLOPs, ru.Totals.FLOPs)
			}
			if d := math.Abs(rf.Totals.Transcendentals - ru.Totals.Transcendentals); d > 1e-9*ru.Totals.Transcendentals {
				t.Errorf("transcendentals after part-2 passes %.0f != unfused %.0f", rf.Totals.Transcendentals, ru.Totals.Transcendentals)
			}
			// Nothing left of the decompositions the exports spell out.
			for _, n := range m.Graph.Nodes {
				if isOp(n, "Softmax") || isOp(n, "Erf") || isOp(n, "Sqrt") || isOp(n, "Pow") {
					t.Errorf("%s %q left unfused", n.OpType, n.Name)
				}
			}
		})
	}
}

// TestFixtureAttentionBytes runs the whole pass table (the fused plan) and
// checks that no node writes a B·H·L·L tensor and that the fused plan
// reads and writes at least the scores' traffic less than the unfused
// plan: per layer the unfused plan writes the scores and reads them back
// at least twice (QKᵀ writes S; the scale, mask and Softmax each read and
// write it; P·V reads P), so the saving is at least 2·layers·B·H·L·L·4
// bytes in fp32.
func TestFixtureAttentionBytes(t *testing.T) {
	gpu, err := hwdb.Lookup("A100-SXM4-80GB")
	if err != nil {
		t.Fatal(err)
	}
	for _, fx := range transformerFixtures {
		t.Run(fx.name, func(t *testing.T) {
			path := fixturePath(t, fx.name)
			unfused := loadInferred(t, path, fx.batch)
			fused := loadInferred(t, path, fx.batch)
			if _, err := Run(fused.Graph, Options{Check: true}); err != nil {
				t.Fatal(err)
			}
			if got := countOps(fused.Graph, "FusedAttention", "", ""); int64(got) != fx.layers {
				t.Fatalf("FusedAttention after all passes: %d, want %d", got, fx.layers)
			}
			scoresElems := fx.batch * fx.heads * fx.seq * fx.seq // B·H·L·L
			// Q, K, V and the context are B·H·L·d, which is B·H·L·L when
			// d = L (gpt_small): those are the attention's own operands.
			operand := map[*ir.Value]bool{}
			for _, n := range fused.Graph.Nodes {
				if n.Domain == ir.FusedDomain && n.OpType == "FusedAttention" {
					for _, v := range append(append([]*ir.Value{}, n.Inputs...), n.Outputs...) {
						operand[v] = true
					}
				}
			}
			for _, n := range fused.Graph.Nodes {
				for _, o := range n.Outputs {
					if o == nil || operand[o] {
						continue
					}
					if e, ok := o.Shape.NumElements(); ok && e == scoresElems && lastTwo(o.Shape, fx.seq) {
						t.Errorf("%s %q writes a B·H·L·L tensor %s", n.OpType, n.Name, o.Shape)
					}
				}
			}
			ru, err := cost.Analyze(unfused.Graph, unfused, gpu, cost.Options{DType: "fp32", Plan: "unfused"})
			if err != nil {
				t.Fatal(err)
			}
			rf, err := cost.Analyze(fused.Graph, fused, gpu, cost.Options{DType: "fp32", Plan: "fused"})
			if err != nil {
				t.Fatal(err)
			}
			bu := ru.Totals.BytesRead + ru.Totals.BytesWritten
			bf := rf.Totals.BytesRead + rf.Totals.BytesWritten
			const fp32Bytes = 4
			want := float64(2 * fx.layers * scoresElems * fp32Bytes)
			if bu-bf < want {
				t.Errorf("bytes unfused %.0f - fused %.0f = %.0f, want >= 2·layers·B·H·L·L·4 = %.0f", bu, bf, bu-bf, want)
			}
			if rf.Totals.TimeS >= ru.Totals.TimeS {
				t.Errorf("fused time %g s not below unfused %g s", rf.Totals.TimeS, ru.Totals.TimeS)
			}
			t.Logf("%s batch %d on %s: bytes %.4g -> %.4g, launches %.0f -> %.0f, time %.4g s -> %.4g s",
				fx.name, fx.batch, gpu.Name, bu, bf, ru.Totals.Launches, rf.Totals.Launches, ru.Totals.TimeS, rf.Totals.TimeS)
		})
	}
}

// lastTwo reports whether s ends in L×L.
func lastTwo(s ir.Shape, l int64) bool {
	r := s.Rank()
	return r >= 2 && s.Dims[r-1].Is(l) && s.Dims[r-2].Is(l)
}
