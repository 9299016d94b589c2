package profile

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/pipeline"
)

// TestORTRealProfiles matches the real onnxruntime profiles recorded by
// testdata/profile_ort.js to onnxcost's reports of the same models,
// under both plans, as `calibrate --profile` does (with the model as
// read for the nodes a plan removed): at least 95% of the profiled node
// time must land on report nodes, and every profiled node must appear on
// some row. The shapes model's profile (optimisations off) must match in
// full: its Identity, Dropout and shape chain run as nodes there, and the
// fused plan removes them. transformer_noname is the transformer with
// its node names cleared: onnxruntime names the nodes itself, and its
// fusions' nodes carry no ONNX name at all.
func TestORTRealProfiles(t *testing.T) {
	cases := []struct{ profile, model string }{
		{"ort_cnn.json", "cnn"},
		{"ort_cnn_disabled.json", "cnn"},
		{"ort_dense.json", "dense"},
		{"ort_half_basic.json", "half"},
		{"ort_transformer.json", "transformer"},
		{"ort_shapes_disabled.json", "shapes"},
		{"ort_transformer_noname.json", "transformer_noname"},
		{"ort_transformer_noname_disabled.json", "transformer_noname"},
	}
	for _, c := range cases {
		p, err := Read(filepath.Join("testdata", c.profile))
		if err != nil {
			t.Fatal(err)
		}
		if p.Format != ONNXRuntime || p.Runs != 3 || len(p.Events) == 0 {
			t.Fatalf("%s: format %s, %d runs, %d events", c.profile, p.Format, p.Runs, len(p.Events))
		}
		model := filepath.Join("testdata", "models", c.model+".onnx")
		asRead, err := pipeline.Run(model, pipeline.Config{GPU: "A100", Plan: "unfused"})
		if err != nil {
			t.Fatal(err)
		}
		for _, plan := range []string{"unfused", "fused"} {
			rep, err := pipeline.Run(model, pipeline.Config{GPU: "A100", Plan: plan})
			if err != nil {
				t.Fatal(err)
			}
			m := MatchReportFrom(p, rep, asRead)
			if c.model == "shapes" {
				if m.MatchedTimeFraction != 1 {
					t.Errorf("%s %s: matched %.4f, want all of it (unmatched %v)", c.profile, plan, m.MatchedTimeFraction, m.Unmatched)
				}
				if plain := MatchReport(p, rep); plan == "fused" && !(plain.MatchedTimeFraction < 1) {
					t.Errorf("%s fused: without the model as read matched %.4f: the plan no longer removes the nodes this case is for", c.profile, plain.MatchedTimeFraction)
				}
			}
			t.Logf("%s %s: matched %.4f of %.1f us, %d rows, unmatched %v", c.profile, plan, m.MatchedTimeFraction, (m.MatchedS+m.UnmatchedS)*1e6, len(m.Nodes), m.Unmatched)
			if m.MatchedTimeFraction < 0.95 {
				t.Errorf("%s %s: matched %.3f of the time, want >= 0.95", c.profile, plan, m.MatchedTimeFraction)
			}
			if c.profile == "ort_transformer_noname.json" && plan == "unfused" {
				checkUnnamed(t, m)
			}
			if c.model == "half" {
				checkInlined(t, plan, m)
			}
			checkRows(t, c.profile+" "+plan, p, m)
		}
	}
}

// checkUnnamed checks where the unnamed transformer's nameless fused
// events landed, placed by data flow: onnxruntime ran the K projection
// (its first "/MatMulAddFusion") before Q, and QKᵀ with its scale as
// "/MatMulScaleFusion/"; the rows are named as onnxruntime names unnamed
// nodes ("<OpType>_<position among the non-Constant nodes>").
func checkUnnamed(t *testing.T, m *Match) {
	t.Helper()
	want := map[string]string{"MatMul_13": "/MatMulAddFusion", "MatMul_9": "/MatMulAddFusion_token_6",
		"MatMul_21": "/MatMulScaleFusion/", "MatMul_27": "/MatMulAddFusion_token_20", "Erf_34": "Gelu"}
	for _, r := range m.Nodes {
		if ev, ok := want[r.Name]; ok {
			if !slices.Contains(r.Profiled, ev) {
				t.Errorf("unnamed transformer: row %s has events %v, want %q among them", r.Name, r.Profiled, ev)
			}
			delete(want, r.Name)
		}
	}
	for name := range want {
		t.Errorf("unnamed transformer: no row %s", name)
	}
}

// checkInlined checks where the fp16 model's onnxruntime-made nodes
// landed: FastGelu's inlined body ("<Op>_<n>") and the Casts of its
// constants on the node holding FastGelu (fc1's GEMM under the fused
// plan), the other Casts on the node of the tensor they convert (its
// producer, else its reader; checked on the unfused plan, whose nodes
// are the model's).
func checkInlined(t *testing.T, plan string, m *Match) {
	t.Helper()
	gelu := "/act/FastGelu"
	want := map[string]string{"InsertedPrecisionFreeCast_input": "/ln/LayerNormalization",
		"InsertedPrecisionFreeCast_/ln/LayerNormalization_output_0": "/ln/LayerNormalization",
		"InsertedPrecisionFreeCast_fc2.weight":                      "/fc2/MatMul", "InsertedPrecisionFreeCast_/Add_output_0": "/Add"}
	if m.MatchedTimeFraction != 1 {
		t.Errorf("half %s: matched %.4f, want all of it (unmatched %v)", plan, m.MatchedTimeFraction, m.Unmatched)
	}
	for _, r := range m.Profiled {
		on := strings.Join(r.Nodes, " ")
		switch {
		case want[r.Name] != "" && plan == "unfused":
			if !slices.Contains(r.Nodes, want[r.Name]) {
				t.Errorf("half %s: %s on %q, want %s", plan, r.Name, on, want[r.Name])
			}
		case strings.Contains(r.Name, "_inlfunc_FastGelu_") || !strings.Contains(r.Name, "/") && opFromName(r.Name) == r.OpType:
			if !slices.ContainsFunc(r.Nodes, func(n string) bool { return n == gelu || n == "/fc1/MatMul" && plan == "fused" }) {
				t.Errorf("half %s: %s (%s) on %q, want the node holding %s", plan, r.Name, r.OpType, on, gelu)
			}
		}
	}
}

// checkRows checks that every matched event is named on some row, and
// that rows add up to the matched time.
func checkRows(t *testing.T, what string, p *Profile, m *Match) {
	t.Helper()
	onRow := map[string]bool{}
	sum := 0.0
	for _, r := range m.Nodes {
		sum += r.MeasuredS
		for _, n := range r.Profiled {
			onRow[n] = true
		}
		t.Logf("  %-45s %-20s pred %8.2f us  meas %8.2f us  %v", r.Name, r.OpType, r.PredictedS*1e6, r.MeasuredS*1e6, r.Profiled)
	}
	unmatched := map[string]bool{}
	for _, e := range m.Unmatched {
		unmatched[e.Name] = true
	}
	for _, e := range p.Events {
		if !onRow[e.Name] && !unmatched[e.Name] {
			t.Errorf("%s: event %q neither on a row nor unmatched", what, e.Name)
		}
	}
	if d := sum - m.MatchedS; d > 1e-12 || d < -1e-12 {
		t.Errorf("%s: rows sum to %g s, matched %g s", what, sum, m.MatchedS)
	}
	// One profiled_nodes row per event, with nodes exactly when matched.
	if len(m.Profiled) != len(p.Events) {
		t.Fatalf("%s: %d profiled rows for %d events", what, len(m.Profiled), len(p.Events))
	}
	var matched float64
	for i, r := range m.Profiled {
		if r.Name != p.Events[i].Name || (len(r.Nodes) == 0) != unmatched[r.Name] {
			t.Errorf("%s: profiled row %d %+v for event %q (unmatched %v)", what, i, r, p.Events[i].Name, unmatched[r.Name])
		}
		if len(r.Nodes) > 0 {
			matched += r.MeasuredS
		}
	}
	if d := matched - m.MatchedS; d > 1e-12 || d < -1e-12 {
		t.Errorf("%s: matched profiled rows sum to %g s, matched %g s", what, matched, m.MatchedS)
	}
}

// TestORTCandidates: onnxruntime's fusion suffixes are stripped one at a
// time, innermost last, whatever the fusion's name.
func TestORTCandidates(t *testing.T) {
	for name, want := range map[string][]string{
		"/layers.0/self_attn/Slice_2/GatherSliceToSplitFusion": {"/layers.0/self_attn/Slice_2/GatherSliceToSplitFusion", "/layers.0/self_attn/Slice_2"},
		"/ln/Mul/LayerNormFusion/_token_3":                     {"/ln/Mul/LayerNormFusion/_token_3", "/ln/Mul/LayerNormFusion/", "/ln/Mul"},
		"MatMul_7/MatMulAddFusion":                             {"MatMul_7/MatMulAddFusion", "MatMul_7"},
		"conv_out_nchwc":                                       {"conv_out_nchwc", "conv_out"},
		"/norm/BatchNormalization_output_0_bn_nchwc":           {"/norm/BatchNormalization_output_0_bn_nchwc", "/norm/BatchNormalization_output_0"},
		"/conv/QLinearConv_output_0_nhwc":                      {"/conv/QLinearConv_output_0_nhwc", "/conv/QLinearConv_output_0"},
		"/Fusion":                                              {"/Fusion"}, // a suffix with nothing before it is a name
		"/blk/Add":                                             {"/blk/Add"},
	} {
		if got := ortCandidates(name); !slices.Equal(got, want) {
			t.Errorf("ortCandidates(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestORTCopies: the host-device copies onnxruntime inserts around a GPU
// execution provider's nodes are charged to the node they serve: an
// upload to the node after it, a download to the node before it.
func TestORTCopies(t *testing.T) {
	p, err := Read(filepath.Join("testdata", "ort_cnn.json"))
	if err != nil {
		t.Fatal(err)
	}
	up := Event{Name: "Memcpy", OpType: "MemcpyFromHost", DurS: 5e-6}
	down := Event{Name: "Memcpy_token_1", OpType: "MemcpyToHost", DurS: 3e-6}
	p.Events = append(append([]Event{up}, p.Events...), down)
	rep, err := pipeline.Run(filepath.Join("testdata", "models", "cnn.onnx"), pipeline.Config{GPU: "A100", Plan: "unfused"})
	if err != nil {
		t.Fatal(err)
	}
	m := MatchReport(p, rep)
	if m.MatchedTimeFraction != 1 {
		t.Fatalf("matched %.4f, want all (unmatched %v)", m.MatchedTimeFraction, m.Unmatched)
	}
	first, last := m.Nodes[0], m.Nodes[len(m.Nodes)-1]
	if !slices.Contains(first.Profiled, up.Name) || !slices.Contains(last.Profiled, down.Name) {
		t.Errorf("upload on %s %v, download on %s %v: want the first and the last node", first.Name, first.Profiled, last.Name, last.Profiled)
	}
}

// TestORTFixtureProfiles matches real onnxruntime 1.23.2 profiles of the
// repository's own fixtures (testdata/models: BERT-base, DenseNet-121,
// MobileNet-V2, ResNet-50, GPT-small, exported with their weights by
// scripts/export_fixtures.py and run on the CPU at optimisation level
// all, 3 runs at batch 1; testdata/fixtures, gzipped) against the
// weightless fixtures, as `calibrate --profile MODEL` does: onnxruntime
// fuses these graphs its own way (NCHWc convolutions named after their
// activation's output, SkipLayerNormalization, FusedMatMul, Gelu), and
// every profiled node must land on a report node with one profiled_nodes
// row each. Recorded 2026-11-30: all five match 100% of the time
// (353, 252, 56, 58 and 184 profiled nodes).
func TestORTFixtureProfiles(t *testing.T) {
	for _, name := range []string{"bert_base", "densenet121", "mobilenet_v2", "resnet50", "gpt_small"} {
		p, _ := matchRecorded(t, filepath.Join("testdata", "fixtures", "ort_"+name+".json.gz"),
			filepath.Join("..", "..", "testdata", "models", name+".onnx"), pipeline.Config{GPU: "A100", Batch: 1})
		if p.Format != ONNXRuntime || p.Runs < 1 || len(p.Events) == 0 {
			t.Fatalf("%s: format %s, %d runs, %d events", name, p.Format, p.Runs, len(p.Events))
		}
	}
}

// TestORTTorchvisionProfile: a real onnxruntime 1.23.2 CPU profile (level
// all) of torchvision's MaxViT-T (testdata/fixtures, recorded by
// profile_torchvision.js; the graph-only export beside it) matches all
// but a few of its 1,879 profiled nodes: its shape arithmetic on the
// symbolic batch runs as nodes, some named by the model (charged to the
// node their computation feeds before any event is placed by position,
// else they took the fused GELUs beside them: 0.990 matched) and some by
// onnxruntime's own fusions (charged where the shape events around them
// went). The few left are Reshapes onnxruntime made between a
// convolution and a pooling, which no rule places.
func TestORTTorchvisionProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "maxvit_t.onnx")
	if err := os.WriteFile(path, gunzipFile(t, filepath.Join("testdata", "fixtures", "maxvit_t.onnx.gz")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, m := matchRecorded(t, filepath.Join("testdata", "fixtures", "ort_maxvit_t.json.gz"), path, pipeline.Config{GPU: "A100", Batch: 1})
	if m.MatchedTimeFraction < 0.999 {
		t.Errorf("matched %.4f of the node time, want >= 0.999 (unmatched %v)", m.MatchedTimeFraction, m.Unmatched)
	}
	for _, e := range m.Unmatched {
		if e.OpType != "Reshape" {
			t.Errorf("unmatched %s (%s): only onnxruntime's own Reshapes may be left", e.Name, e.OpType)
		}
	}
}

// TestORTContribProfiles: onnxruntime 1.23.2 CPU profiles (level all) of
// the contrib-op LLM and encoder fixtures (GroupQueryAttention with int4
// MatMulNBits or fp16 weights, MultiHeadAttention over a KV cache,
// RotaryEmbedding, Attention, SkipLayerNormalization, BiasGelu), run at
// toy sizes with weights (profile_contrib.js), match the committed
// graph-only fixtures of the same node names in full, one row per
// profiled node. The runs are one decode step of 3 new tokens over 2
// past ones; the same step is bound here.
func TestORTContribProfiles(t *testing.T) {
	step := map[string]int64{"batch_size": 1, "sequence_length": 3, "past_sequence_length": 2, "total_sequence_length": 5}
	for _, name := range []string{"bert_ms_attention", "gpt2_mha_past", "llama3_int4_gqa", "llama_fp16_gqa", "llama_int4_gqa", "phi2_rotary_mha"} {
		p, m := matchRecorded(t, filepath.Join("testdata", "fixtures", "ort_"+name+".json.gz"),
			filepath.Join("..", "..", "testdata", "models", "contrib", name+".onnx"), pipeline.Config{GPU: "A100", Dims: step})
		if p.Format != ONNXRuntime || p.Runs < 1 || len(m.Nodes) == 0 {
			t.Fatalf("%s: format %s, %d runs, %d rows", name, p.Format, p.Runs, len(m.Nodes))
		}
	}
}

// TestORTQOperatorProfile: an onnxruntime 1.23.2 CPU profile (level all,
// 3 runs at batch 2; testdata/models/qoperator/record_ort.js) of the
// QOperator int8 CNN, whose com.microsoft QLinear* ops and QGemm have
// shape and cost rules, matches with one row per profiled node and every
// quantized node costed. At level all onnxruntime's NHWC transformer
// rewrites the standard QLinearConvs into its channels-last contrib
// kernels (QLinearConv_2_token_2 ...); the layout transpose it inserts
// before the first, Transpose_token_0, a node the model does not have, is
// charged to the convolution it feeds (it was the one unmatched event,
// 95.8% of the node time matched, before).
func TestORTQOperatorProfile(t *testing.T) {
	p, m := matchRecorded(t, filepath.Join("testdata", "fixtures", "ort_qop_cnn.json.gz"),
		filepath.Join("..", "..", "testdata", "models", "qoperator", "qop_cnn.onnx"), pipeline.Config{GPU: "A100", Dims: map[string]int64{"N": 2}})
	if p.Format != ONNXRuntime || p.Runs < 1 || len(m.Nodes) == 0 {
		t.Fatalf("format %s, %d runs, %d rows", p.Format, p.Runs, len(m.Nodes))
	}
	if m.MatchedTimeFraction != 1 {
		t.Errorf("matched %.4f, want all of it (unmatched %v)", m.MatchedTimeFraction, m.Unmatched)
	}
	if i := slices.IndexFunc(m.Nodes, func(r NodeTime) bool { return slices.Contains(r.Profiled, "Transpose_token_0") }); i < 0 || m.Nodes[i].Name != "QLinearConv_2" {
		t.Errorf("the inserted layout transpose is not on QLinearConv_2, the convolution it feeds")
	}
	for _, r := range m.Nodes {
		// Flatten is a view, free on a GPU (onnxruntime's CPU copy is timed).
		if quantized := strings.HasPrefix(r.OpType, "QLinear") || r.OpType == "QGemm"; quantized && !(r.PredictedS > 0) {
			t.Errorf("%s (%s): measured %.3g s, predicted %g: a node without a cost", r.Name, r.OpType, r.MeasuredS, r.PredictedS)
		}
	}
}

// TestORTQDQProfile: onnxruntime 1.23.2 CPU profiles of two QDQ int8
// models (testdata/models/qoperator: qdq_cnn.onnx, a CNN with float
// biases and a MaxPool with no Q/DQ of its own, and qdq_attn.onnx, a
// self-attention block whose key Transpose has none) at levels all, basic
// and disabled, batch 2, match in full, one row per profiled node, with
// the nodes onnxruntime adds where they belong: a DequantizeLinear it
// copies for each further reader ("<dq>/duplicated[_token_<n>]") on the
// one it copies; the int32 bias it makes of a Conv's float one
// ("<conv>_bias_dq") on that Conv; the Q/DQ pair its QDQ propagation adds
// after a node with none ("<tensor>_q", "<tensor>_dq<i>") on the row that
// holds that node (the MaxPool; the scores' MatMul the plan folded the
// Transpose into); and at level all the transposes around the
// convolution its NHWC transformer runs channels-last on a neighbour.
// Before, qdq_cnn matched 95.9%, 96.6% and 99.0% of the node time,
// qdq_attn 100%, 93.9% and 95.9%.
func TestORTQDQProfile(t *testing.T) {
	duplicate := regexp.MustCompile(`^(.*)/duplicated(_token_\d+)?$`)
	for _, c := range []struct {
		model, producer, propagated string
		// the levels whose profile holds duplicated, bias and propagated
		// nodes (level all fuses most into its QLinear ops)
		duplicated, bias, propagatedAt []string
	}{
		{"qdq_cnn", "MaxPool_20", "pool_y_", []string{"basic", "disabled"}, []string{"all", "basic"}, []string{"basic"}},
		{"qdq_attn", "Transpose_18", "kt_", []string{"all", "basic", "disabled"}, nil, []string{"basic"}},
	} {
		model := filepath.Join("..", "..", "testdata", "models", "qoperator", c.model+".onnx")
		for _, level := range []string{"all", "basic", "disabled"} {
			t.Run(c.model+"/"+level, func(t *testing.T) {
				suffix := "_" + level
				if level == "all" {
					suffix = ""
				}
				p, m := matchRecorded(t, filepath.Join("testdata", "fixtures", "ort_"+c.model+suffix+".json.gz"), model,
					pipeline.Config{GPU: "A100", Dims: map[string]int64{"N": 2}})
				if m.MatchedTimeFraction != 1 {
					t.Errorf("matched %.4f, want all of it (unmatched %v)", m.MatchedTimeFraction, m.Unmatched)
				}
				on := map[string]string{}
				for _, r := range m.Nodes {
					for _, e := range r.Profiled {
						on[e] = r.Name
					}
				}
				var duplicated, bias, propagated int
				for _, e := range p.Events {
					if d := duplicate.FindStringSubmatch(e.Name); d != nil {
						duplicated++
						if on[e.Name] != d[1] {
							t.Errorf("%s on %q, want the DequantizeLinear it copies", e.Name, on[e.Name])
						}
					}
					if conv, ok := strings.CutSuffix(e.Name, "_bias_dq"); ok {
						bias++
						// The Conv's row: its own, or the fused one its event is on.
						if want := cmp.Or(on[conv], conv); on[e.Name] != want {
							t.Errorf("%s on %q, want %s, the row holding %s", e.Name, on[e.Name], want, conv)
						}
					}
					if strings.HasPrefix(e.Name, c.propagated) && (e.OpType == "QuantizeLinear" || e.OpType == "DequantizeLinear") {
						propagated++
						if want := on[c.producer]; on[e.Name] != want || want == "" {
							t.Errorf("%s on %q, want %q, the row holding %s, whose output it quantizes", e.Name, on[e.Name], want, c.producer)
						}
					}
				}
				for _, k := range []struct {
					what   string
					n      int
					levels []string
				}{{"duplicated DequantizeLinear", duplicated, c.duplicated}, {"quantized bias", bias, c.bias}, {"propagated Q/DQ", propagated, c.propagatedAt}} {
					if slices.Contains(k.levels, level) != (k.n > 0) {
						t.Errorf("%d %s nodes at level %s: the case this is for is gone", k.n, k.what, level)
					}
				}
			})
		}
	}
}

// TestORTQBertProfile: the same for the int8 BERT layer quantize_dynamic
// writes (testdata/models/qoperator/qbert.onnx) at batch 2, sequence 16:
// onnxruntime's level-all graph fuses the attention output's
// DynamicQuantizeLinear, MatMulInteger, Cast, Mul, Mul and Add into one
// DynamicQuantizeMatMul, which keeps the MatMulInteger's name; every
// profiled node is matched and costed.
func TestORTQBertProfile(t *testing.T) {
	checkRunnableProfile(t, "qbert", map[string]int64{"N": 2, "S": 16}, "QEmbedLayerNormalization", "QAttention")
}

// TestORTMoEProfile: the same for a sparse decoder's expert FFNs
// (testdata/models/qoperator/moe_ffn.onnx: MoE and 4-bit QMoE, top 2 of
// 4 experts) at batch 2, sequence 8.
func TestORTMoEProfile(t *testing.T) {
	checkRunnableProfile(t, "moe_ffn", map[string]int64{"N": 2, "S": 8}, "MoE", "QMoE")
}

// checkRunnableProfile matches testdata/models/qoperator/NAME.onnx to its
// recorded onnxruntime profile (ort_NAME.json.gz) at dims: ≥ 95% of the
// node time matched, every profiled node costed, a row for each of ops.
func checkRunnableProfile(t *testing.T, name string, dims map[string]int64, ops ...string) {
	t.Helper()
	checkRunnableProfileIn(t, "qoperator", name, dims, ops...)
}

// TestORTTwinsProfile: onnxruntime's com.microsoft twins of standard ops
// (16-bit QuantizeLinear and DequantizeLinear, Pad, Trilu, GridSample,
// GatherND; testdata/models/qoperator/twins.onnx) at batch 2.
func TestORTTwinsProfile(t *testing.T) {
	checkRunnableProfile(t, "twins", map[string]int64{"N": 2}, "QuantizeLinear", "DequantizeLinear", "Pad", "Trilu", "GridSample", "GatherND")
}

// TestORTQLSTMProfile: quantize_dynamic's LSTM (com.microsoft
// DynamicQuantizeLSTM, bidirectional then forward;
// testdata/models/qoperator/qlstm.onnx) over 6 steps at batch 2.
func TestORTQLSTMProfile(t *testing.T) {
	checkRunnableProfile(t, "qlstm", map[string]int64{"S": 6, "N": 2}, "DynamicQuantizeLSTM")
}

// TestORTGenerationProfile: onnxruntime's BeamSearch, GreedySearch and
// Sampling around a GPT-2-style decoder, and BeamSearch and
// WhisperBeamSearch around T5- and Whisper-style encoders and a decoder
// (testdata/models/generation, 2 prompts of 8 tokens to 14, 3 beams): the subgraphs' nodes, profiled once a run inside the
// generation node's span, are that node's, which is one row with all of
// the time.
func TestORTGenerationProfile(t *testing.T) {
	dims := map[string]int64{"batch_size": 2, "sequence_length": 8, "max_length": 14, "num_beams": 3, "num_return_sequences": 2}
	for name, op := range map[string]string{"gpt2_beam": "BeamSearch", "gpt2_greedy": "GreedySearch", "gpt2_sampling": "Sampling",
		"t5_beam": "BeamSearch", "whisper_beam": "WhisperBeamSearch"} {
		t.Run(name, func(t *testing.T) { checkRunnableProfileIn(t, "generation", name, dims, op) })
	}
}

// checkRunnableProfileIn is checkRunnableProfile for the model NAME in
// testdata/models/DIR.
func checkRunnableProfileIn(t *testing.T, dir, name string, dims map[string]int64, ops ...string) {
	t.Helper()
	p, m := matchRecorded(t, filepath.Join("testdata", "fixtures", "ort_"+name+".json.gz"),
		filepath.Join("..", "..", "testdata", "models", dir, name+".onnx"), pipeline.Config{GPU: "A100", Dims: dims})
	if p.Format != ONNXRuntime || p.Runs < 1 || len(m.Nodes) == 0 {
		t.Fatalf("format %s, %d runs, %d rows", p.Format, p.Runs, len(m.Nodes))
	}
	seen := map[string]bool{}
	for _, r := range m.Nodes {
		seen[r.OpType] = true
		// Shape and Reshape are views, free on a GPU.
		if view := r.OpType == "Shape" || r.OpType == "Reshape"; !view && !(r.PredictedS > 0) {
			t.Errorf("%s (%s): measured %.3g s, predicted %g: a node without a cost", r.Name, r.OpType, r.MeasuredS, r.PredictedS)
		}
	}
	for _, op := range ops {
		if !seen[op] {
			t.Errorf("no %s row among %v", op, seen)
		}
	}
	if m.MatchedTimeFraction < 0.95 {
		t.Errorf("matched %.1f%% of the node time, want ≥ 95%%", 100*m.MatchedTimeFraction)
	}
}

// TestORTSavedGraphProfile: graphs onnxruntime 1.23.2 saved
// (optimizedModelFilePath) are inferred with the output dtype and dims
// onnxruntime's own run of them records for every node (the profile's
// output_type_shape, batch 2), and their profiles match with one row per
// profiled node and every node costed: a small CNN and two 8-bit linears
// at level extended (testdata/models/ortsaved: com.microsoft FusedConv,
// FusedGemm, DynamicQuantizeMatMul among standard ops), and the QOperator
// int8 CNN at level all (testdata/models/qoperator/qop_cnn_ort_all.onnx:
// the NHWC transformer's channels-last QLinearConv, pools and concat).
func TestORTSavedGraphProfile(t *testing.T) {
	batch2 := map[string]int64{"N": 2}
	for _, c := range []struct {
		model, profile string
		dims           map[string]int64
	}{
		{filepath.Join("ortsaved", "ort_fusions_opt.onnx"), "ort_ort_fusions_opt.json.gz", batch2},
		{filepath.Join("qoperator", "qop_cnn_ort_all.onnx"), "ort_qop_cnn_ort_all.json.gz", batch2},
		{filepath.Join("qoperator", "qdq_cnn_ort_all.onnx"), "ort_qdq_cnn_ort_all.json.gz", batch2},
		{filepath.Join("qoperator", "qdq_attn_ort_all.onnx"), "ort_qdq_attn_ort_all.json.gz", batch2},
		{filepath.Join("qoperator", "qbert_ort_all.onnx"), "ort_qbert_ort_all.json.gz", map[string]int64{"N": 2, "S": 16}},
		{filepath.Join("qoperator", "moe_ffn_ort_all.onnx"), "ort_moe_ffn_ort_all.json.gz", map[string]int64{"N": 2, "S": 8}},
		{filepath.Join("qoperator", "twins_ort_all.onnx"), "ort_twins_ort_all.json.gz", map[string]int64{"N": 2}},
		{filepath.Join("qoperator", "qlstm_ort_all.onnx"), "ort_qlstm_ort_all.json.gz", map[string]int64{"S": 6, "N": 2}},
	} {
		gzPath := filepath.Join("testdata", "fixtures", c.profile)
		model := filepath.Join("..", "..", "testdata", "models", c.model)
		dims := c.dims
		_, m := matchRecorded(t, gzPath, model, pipeline.Config{GPU: "A100", Dims: dims})
		for _, r := range m.Nodes {
			// A Flatten or Reshape, and a Transpose that moves only unit
			// dims (the level-all graph's [2,1,1,32] to [2,32,1,1]), are
			// views: free.
			if view := r.OpType == "Flatten" || r.OpType == "Reshape" || r.OpType == "Transpose"; !view && !(r.PredictedS > 0) {
				t.Errorf("%s: %s (%s): predicted %g", c.model, r.Name, r.OpType, r.PredictedS)
			}
		}
		checkRecordedShapes(t, model, gzPath, dims)
	}
}

// checkRecordedShapes infers model at dims (the bindings it was profiled
// at) and holds every node's outputs to the dtype and dims onnxruntime
// recorded in the profile.
func checkRecordedShapes(t *testing.T, model, gzPath string, dims map[string]int64) {
	t.Helper()
	g, err := ir.ReadFile(model, ir.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ir.InferShapes(g, ir.InferOptions{Bindings: dims}); err != nil {
		t.Fatal(err)
	}
	// A profile lists the outputs a node has, an omitted one left out.
	present := map[string][]*ir.Value{}
	outputs := 0
	for _, n := range g.Graph.Nodes {
		for _, v := range n.Outputs {
			if v != nil {
				present[n.Name] = append(present[n.Name], v)
			}
		}
		outputs += len(present[n.Name])
	}
	ortType := map[string]ir.DType{"float": ir.Float32, "uint8": ir.Uint8, "uint16": ir.Uint16, "int8": ir.Int8, "int32": ir.Int32, "int64": ir.Int64}
	checked := 0
	for name, outs := range recordedOutputShapes(t, gzPath) {
		vs := present[name]
		if len(vs) < len(outs) {
			t.Errorf("%s: profiled node %q: no such node with %d outputs in the model", model, name, len(outs))
			continue
		}
		for i, o := range outs {
			for dt, dims := range o {
				v := vs[i]
				got, known := v.Shape.Ints()
				if !known || !slices.Equal(got, dims) || v.DType != ortType[dt] {
					t.Errorf("%s: %s (%s) output %d: inferred %s%s, onnxruntime %s%v", model, name, v.Producer.OpType, i, v.DType, v.Shape, dt, dims)
				}
				checked++
			}
		}
	}
	if checked != outputs {
		t.Errorf("%s: checked %d outputs of %d", model, checked, outputs)
	}
}

// gunzipFile is the decompressed content of the gzipped file at path.
func gunzipFile(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// recordedOutputShapes reads an onnxruntime profile's node events: per node
// name, its outputs as onnxruntime ran them ({dtype: dims} each).
func recordedOutputShapes(t *testing.T, gzPath string) map[string][]map[string][]int64 {
	t.Helper()
	data := gunzipFile(t, gzPath)
	var events []struct {
		Cat  string `json:"cat"`
		Name string `json:"name"`
		Args struct {
			Out []map[string][]int64 `json:"output_type_shape"`
		} `json:"args"`
	}
	if err := json.Unmarshal(data, &events); err != nil {
		t.Fatal(err)
	}
	out := map[string][]map[string][]int64{}
	for _, e := range events {
		if name, ok := strings.CutSuffix(e.Name, "_kernel_time"); ok && e.Cat == "Node" {
			out[name] = e.Args.Out
		}
	}
	return out
}

// matchRecorded reads a gzipped recorded profile, matches it to model's
// report under cfg (the model as read for the plan's elided nodes; an
// onnxruntime profile under the onnxruntime plan unless cfg names a
// runtime, as calibrate --profile prices it), and
// checks that at least 95% of its node time is matched, with one row per
// profiled node; it returns the profile and the match.
func matchRecorded(t *testing.T, gzPath, model string, cfg pipeline.Config) (*Profile, *Match) {
	t.Helper()
	name := filepath.Base(gzPath)
	gz, err := os.ReadFile(gzPath)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(strings.TrimSuffix(name, ".gz"), gz) // Parse gunzips it
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Runtime == "" && p.Format == ONNXRuntime {
		// As calibrate --profile prices an onnxruntime profile
		// (loop.ProfileRuntime): its fusions are the ones to match.
		cfg.Runtime = "onnxruntime"
	}
	rep, err := pipeline.Run(model, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Plan = "unfused"
	asRead, err := pipeline.Run(model, cfg)
	if err != nil {
		t.Fatal(err)
	}
	m := MatchReportFrom(p, rep, asRead)
	if m.MatchedTimeFraction < 0.95 {
		t.Errorf("%s: matched %.3f of the profiled node time, want >= 0.95 (unmatched %v)", name, m.MatchedTimeFraction, m.Unmatched)
	}
	checkRows(t, name, p, m)
	return p, m
}

// conformanceData is Debian's libonnx-testdata, the ONNX conformance
// suite (ir's conformance tests read it too).
const conformanceData = "/usr/share/libonnx-testdata/data/node"

// TestORTConformanceProfiles: onnxruntime 1.23.2 CPU profiles of ONNX
// conformance models (testdata/conformance, recorded by
// profile_conformance.js) match in full with one row per profiled node.
// A Loop's and a Scan's body nodes run inside the control-flow node's
// span, once per iteration: each is one event, charged to the Loop or
// Scan node, whose own time keeps only its own (before: 70-78% matched,
// 36 rows for test_loop11's 8 nodes). A NegativeLogLikelihoodLoss, a
// function op the CPU provider has no kernel for, runs as its body's
// nodes, some reading only graph inputs and run first: they take the
// model's one node that can be run as parts (before: 15-45% matched).
func TestORTConformanceProfiles(t *testing.T) {
	if _, err := os.Stat(conformanceData); err != nil {
		t.Skipf("ONNX conformance suite not installed (%s from Debian's libonnx-testdata)", conformanceData)
	}
	for _, c := range []struct{ name, host string }{
		{"test_loop11", "Loop"},
		{"test_scan_sum", "Scan"},
		{"test_range_float_type_positive_delta_expanded", "Loop"},
		{"test_sce_mean_expanded", "NegativeLogLikelihoodLoss"},
		{"test_sce_mean_weight_ii_expanded", "NegativeLogLikelihoodLoss"},
	} {
		p, m := matchRecorded(t, filepath.Join("testdata", "conformance", "ort_"+c.name+".json.gz"),
			filepath.Join(conformanceData, c.name, "model.onnx"), pipeline.Config{GPU: "T4"})
		names := map[string]bool{}
		hosted := 0
		for i, e := range p.Events {
			if names[e.Name] && e.Within != "" {
				t.Errorf("%s: subgraph node %q is two events", c.name, e.Name)
			}
			names[e.Name] = true
			r := m.Profiled[i]
			if len(r.Nodes) == 1 && strings.HasPrefix(r.Nodes[0], c.host) && !strings.HasPrefix(e.Name, c.host) {
				hosted++
			}
		}
		if hosted == 0 {
			t.Errorf("%s: no event other than the %s node's own was charged to it", c.name, c.host)
		}
		if math.Abs(p.TotalS()-m.MatchedS-m.UnmatchedS) > 1e-12 {
			t.Errorf("%s: matched %g + unmatched %g s, the profile's total %g s", c.name, m.MatchedS, m.UnmatchedS, p.TotalS())
		}
	}
}
