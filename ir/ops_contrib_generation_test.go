package ir

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var generationDir = filepath.Join("..", "testdata", "models", "generation")

// TestGenerationFixtureMatchesORT infers the generation fixtures at the
// bindings generation.ort_shapes.json was recorded at (max_length and
// num_beams bound by name, as --dim does) and holds every output to
// onnxruntime's dtype and dims.
func TestGenerationFixtureMatchesORT(t *testing.T) {
	ref := readORTShapes(t, filepath.Join(generationDir, "generation.ort_shapes.json"))
	seen := 0
	for _, name := range []string{"gpt2_beam", "gpt2_greedy", "gpt2_sampling", "t5_beam", "whisper_beam"} {
		m, err := ReadFile(filepath.Join(generationDir, name+".onnx"), ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := InferShapes(m, InferOptions{Bindings: ref.Bindings})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.UnknownOps) > 0 {
			t.Errorf("%s: no shape rule for %v", name, res.UnknownOps)
		}
		for _, v := range m.Graph.Nodes[0].Outputs {
			want, ok := ref.Values[name+"/"+v.Name]
			if !ok {
				t.Errorf("%s/%s: no onnxruntime shape recorded", name, v.Name)
				continue
			}
			seen++
			got, known := v.Shape.Ints()
			dt := map[string]DType{"int32": Int32, "float32": Float32}[want.Type]
			if !known || !slices.Equal(got, want.Dims) || v.DType != dt {
				t.Errorf("%s/%s: inferred %s%s, onnxruntime %s%v", name, v.Name, v.DType, v.Shape, want.Type, want.Dims)
			}
		}
	}
	if seen != len(ref.Values) {
		t.Errorf("compared %d values of %d recorded", seen, len(ref.Values))
	}
}

// readGeneration reads a generation fixture and infers it at batch 2, an
// 8-token prompt and the extra bindings.
func readGeneration(t *testing.T, name string, extra map[string]int64) *Model {
	t.Helper()
	m, err := ReadFile(filepath.Join(generationDir, name+".onnx"), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b := map[string]int64{"batch_size": 2, "sequence_length": 8}
	for k, v := range extra {
		b[k] = v
	}
	if _, err := InferShapes(m, InferOptions{Bindings: b}); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestGenerationUnboundLength: with max_length and num_beams unbound the
// outputs carry symbols for them, and the decoder is inferred at its
// declared types, its symbols kept.
func TestGenerationUnboundLength(t *testing.T) {
	m := readGeneration(t, "gpt2_beam", nil)
	n := m.Graph.Nodes[0]
	s := n.Outputs[0].Shape
	if s.Rank() != 3 || !s.Dims[0].Is(2) || s.Dims[1].IsKnown() || s.Dims[2].IsKnown() {
		t.Errorf("sequences %s, want [2, ?, ?]", s)
	}
	dec := nodeGraphAttr(n, "decoder")
	if got := dec.Outputs[1].Shape.String(); !strings.Contains(got, "batch_size") || !strings.Contains(got, "past_seq_len") {
		t.Errorf("present_0 %s, want the declared symbols", got)
	}
}

// TestGenerationStepShapes: a step's input shapes by role, for the
// fixture's GPT-2 decoder and for T5's input names.
func TestGenerationStepShapes(t *testing.T) {
	m := readGeneration(t, "gpt2_beam", nil)
	dec := nodeGraphAttr(m.Graph.Nodes[0], "decoder")
	got := GenerationStep{Batch: 6, New: 1, Past: 9}.InputShapes(dec)
	want := []string{"[6,1]", "[6,1]", "[6,10]", "[2,6,2,9,8]", "[2,6,2,9,8]"}
	for i, s := range got {
		if s.String() != want[i] {
			t.Errorf("input %s: %s, want %s", dec.Inputs[i].Name, s, want[i])
		}
	}
	if err := ReinferSubgraph(m, dec, got); err != nil {
		t.Fatal(err)
	}
	if s := dec.Outputs[1].Shape.String(); s != "[2,6,2,10,8]" {
		t.Errorf("present_0 at the step: %s, want [2,6,2,10,8]", s)
	}
	if s := dec.Outputs[0].Shape.String(); s != "[6,1,32]" {
		t.Errorf("logits at the step: %s, want [6,1,32]", s)
	}

	// T5's decoder: self caches by the past, cross caches and the
	// encoder's states by the encoder's length.
	g := NewGraph("t5_decoder")
	decl := func(name string, dims ...Dim) {
		v, err := g.NewValue(name)
		if err != nil {
			t.Fatal(err)
		}
		v.Declared = &TypeInfo{DType: Float32, Shape: Shape{Ranked: true, Dims: dims}}
		g.AddInput(v)
	}
	decl("input_ids", S("batch"), S("seq"))
	decl("encoder_attention_mask", S("batch"), S("enc_len"))
	decl("encoder_hidden_states", S("batch"), S("enc_len"), D(16))
	decl("past_key_self_0", S("batch"), D(2), S("past_len"), D(8))
	decl("past_key_cross_0", S("batch"), D(2), S("enc_len"), D(8))
	got = GenerationStep{Batch: 4, New: 1, Past: 3, EncoderLen: 11}.InputShapes(g)
	want = []string{"[4,1]", "[4,11]", "[4,11,16]", "[4,2,3,8]", "[4,2,11,8]"}
	for i, s := range got {
		if s.String() != want[i] {
			t.Errorf("T5 input %s: %s, want %s", g.Inputs[i].Name, s, want[i])
		}
	}
}

// TestGenerationInferErrors: what onnxruntime refuses, refused.
func TestGenerationInferErrors(t *testing.T) {
	cases := []struct {
		bind map[string]int64
		edit func(n *Node)
		want string
	}{
		{map[string]int64{"max_length": 8}, nil, "not more than the prompt"},
		{map[string]int64{"num_beams": 2, "num_return_sequences": 3}, nil, "num_return_sequences 3 with num_beams 2"},
		{nil, func(n *Node) { n.Attrs = AttrsWithout(n.Attrs, "decoder") }, "needs the decoder graph"},
		{nil, func(n *Node) { n.Attrs = append(AttrsWithout(n.Attrs, "model_type"), IntAttr("model_type", 1)) }, "needs the encoder graph"},
		{nil, func(n *Node) { n.Attrs = append(AttrsWithout(n.Attrs, "model_type"), IntAttr("model_type", 7)) }, "model_type 7"},
	}
	for _, tc := range cases {
		m, err := ReadFile(filepath.Join(generationDir, "gpt2_beam.onnx"), ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if tc.edit != nil {
			tc.edit(m.Graph.Nodes[0])
		}
		b := map[string]int64{"batch_size": 2, "sequence_length": 8}
		for k, v := range tc.bind {
			b[k] = v
		}
		_, err = InferShapes(m, InferOptions{Bindings: b})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("want an error with %q, got %v", tc.want, err)
		}
	}
}

// TestBindOneElementInput: a binding named after a one-element integer
// graph input gives it that value; one named after another input binds
// nothing and says so.
func TestBindOneElementInput(t *testing.T) {
	m, err := ReadFile(filepath.Join(generationDir, "gpt2_greedy.onnx"), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := InferShapes(m, InferOptions{Bindings: map[string]int64{"max_length": 20, "input_ids": 3}})
	if err != nil {
		t.Fatal(err)
	}
	ml := m.Graph.Lookup("max_length")
	if ml.Const == nil || !slices.Equal(ml.Const.Ints, []int64{20}) || ml.Const.DType != Int32 || res.Bound["max_length"] != 20 {
		t.Errorf("max_length: const %+v, bound %v", ml.Const, res.Bound)
	}
	if m.Graph.Lookup("input_ids").Const != nil {
		t.Error("a [batch, sequence] input took a binding's value")
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "binding input_ids=3 matches no") }) {
		t.Errorf("no warning for the unused binding: %v", res.Warnings)
	}
}
