package passes

import (
	"testing"
)

// TestFixtureAttentionORT checks the onnxruntime plan's attention on the
// PyTorch fixtures: BERT-base's post-LN layers (a LayerNormalization read
// by the residual Add and the Q, K, V MatMuls) get their Attention op and
// packed QKV GEMM, as onnxruntime's online AttentionFusion builds them;
// the pre-LN GPT-style model and nn.TransformerEncoder's in_proj blocks
// (which onnxruntime 1.23 also left unfused in a CPU profile of such an
// encoder: four Softmax nodes, no Attention) keep their attention unfused.
func TestFixtureAttentionORT(t *testing.T) {
	want := map[string]int{"bert_base": 12, "gpt_small": 0, "transformer_encoder": 0}
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
			if got, grouped := want[fx.name], countOps(m.Graph, "GroupedGemm", "", ""); (got > 0) != (grouped > 0) {
				t.Errorf("GroupedGemm: %d with %d fused attention blocks: the QKV packing belongs to the Attention op", grouped, got)
			}
		})
	}
}
