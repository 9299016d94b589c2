package passes

import (
	"testing"
)

// TestFixtureAttentionORT checks the onnxruntime plan's attention on the
// PyTorch fixtures as onnxruntime 1.23.2 ran them (a CPU session at level
// all saved with optimized_model_filepath, onnxruntime-node): no Attention
// op and no packed QKV GEMM in any of them, BERT-base's post-LN layers
// included (12 Softmax, 84 MatMul: its projections stayed apart), while
// the source-described fusion (fuse-attention-ort, for --passes) still
// finds BERT-base's twelve blocks.
func TestFixtureAttentionORT(t *testing.T) {
	want := map[string]int{"bert_base": 0, "gpt_small": 0, "transformer_encoder": 0}
	p, err := LookupPlan("onnxruntime")
	if err != nil {
		t.Fatal(err)
	}
	for _, fx := range transformerFixtures {
		t.Run(fx.name, func(t *testing.T) {
			m := loadInferred(t, fixturePath(t, fx.name), fx.batch)
			opt, _ := p.Options(Options{Check: true})
			if _, err := Run(m.Graph, opt); err != nil {
				t.Fatal(err)
			}
			if got := countOps(m.Graph, "FusedAttention", "", ""); got != want[fx.name] {
				t.Errorf("FusedAttention: %d, want %d", got, want[fx.name])
			}
			if grouped := countOps(m.Graph, "GroupedGemm", "", ""); grouped > 0 {
				t.Errorf("GroupedGemm: %d: the QKV packing belongs to an Attention op", grouped)
			}
			if fx.name == "bert_base" {
				m := loadInferred(t, fixturePath(t, fx.name), fx.batch)
				if _, err := Run(m.Graph, Options{Only: []string{"cleanup", "fuse-layernorm", "fuse-softmax", "fuse-attention-ort", "fuse-qkv-ort"}, Check: true}); err != nil {
					t.Fatal(err)
				}
				if got := countOps(m.Graph, "FusedAttention", "", ""); got != 12 || countOps(m.Graph, "GroupedGemm", "", "") != 12 {
					t.Errorf("--passes fuse-attention-ort,fuse-qkv-ort: %d FusedAttention, %d GroupedGemm, want 12 and 12", got, countOps(m.Graph, "GroupedGemm", "", ""))
				}
			}
		})
	}
}
