package ir

import "testing"

func TestStringAndTextShapes(t *testing.T) {
	words := fcIn{name: "x", dt: String, shape: KnownShape(1, 4)}
	stop := &Attribute{Name: "stopwords", Type: AttrStrings, Strings: []string{"monday"}}
	// Unknown contents: the stopword count is data-dependent.
	n, err := fcInfer(t, 10, "StringNormalizer", []*Attribute{stop}, []fcIn{words}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if s := n.Outputs[0].Shape; s.Rank() != 2 || !s.Dims[0].Is(1) || s.Dims[1].IsKnown() {
		t.Errorf("StringNormalizer with stopwords on unknown input = %s, want [1,?]", s)
	}
	// Known contents: case-insensitive removal leaves 2 of 4.
	g := NewGraph("g")
	x, _ := g.NewValue("x")
	g.AddInitializer(x, &Tensor{DType: String, Dims: []int64{1, 4}, Strings: []string{"Monday", "tuesday", "MONDAY", "friday"}, HasData: true})
	node := fcNode(t, g, "StringNormalizer", []*Attribute{stop}, []*Value{x}, 1)
	if _, err := InferShapes(&Model{Opsets: []OpsetImport{{Version: 10}}, Graph: g}, InferOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := node.Outputs[0].Shape.String(); got != "[1,2]" {
		t.Errorf("StringNormalizer on known input = %s, want [1,2]", got)
	}
	fcCheck(t, 10, "StringNormalizer", nil, []fcIn{words}, "string[1,4]")

	fcCheck(t, 20, "StringConcat", nil, []fcIn{fcKnownIn("a", String, 3, 1), fcKnownIn("b", String, 4)}, "string[3,4]")
	fcCheck(t, 20, "RegexFullMatch", nil, []fcIn{fcKnownIn("a", String, 3)}, "bool[3]")
	fcCheck(t, 20, "StringSplit", nil, []fcIn{fcKnownIn("a", String, 3)}, "string[3,?splits_1]", "int64[3]")

	// TfIdfVectorizer: width = max(ngram_indexes) + 1 = 7.
	idx := fcAttrInts("ngram_indexes", 0, 1, 2, 3, 4, 5, 6)
	fcCheck(t, 9, "TfIdfVectorizer", []*Attribute{idx}, []fcIn{fcKnownIn("x", Int32, 2, 6)}, "float32[2,7]")
	fcCheck(t, 9, "TfIdfVectorizer", []*Attribute{idx}, []fcIn{fcKnownIn("x", Int32, 12)}, "float32[7]")
}

func TestTrainingOpShapes(t *testing.T) {
	g := NewGraph("g")
	ins := fcAddInputs(t, g, []fcIn{
		fcKnownIn("r", Float32), fcKnownIn("t", Int64),
		fcKnownIn("x1", Float32, 3), fcKnownIn("x2", Float32, 2, 2), // X
		fcKnownIn("g1", Float32, 3), fcKnownIn("g2", Float32, 2, 2), // G
		fcKnownIn("v1", Float32, 3), fcKnownIn("v2", Float32, 2, 2), // V
		fcKnownIn("h1", Float64, 3), fcKnownIn("h2", Float64, 2, 2), // H
	})
	adam := fcNode(t, g, "Adam", nil, ins, 6)
	adam.Domain = trainingDomain
	m := &Model{Opsets: []OpsetImport{{Version: 13}, {Domain: trainingDomain, Version: 1}}, Graph: g}
	if _, err := InferShapes(m, InferOptions{}); err != nil {
		t.Fatal(err)
	}
	// Outputs X_new..., V_new..., H_new... follow input groups X, V, H.
	want := []string{"float32[3]", "float32[2,2]", "float32[3]", "float32[2,2]", "float64[3]", "float64[2,2]"}
	for i, w := range want {
		if got := adam.Outputs[i].DType.String() + adam.Outputs[i].Shape.String(); got != w {
			t.Errorf("Adam output %d = %s, want %s", i, got, w)
		}
	}
}
