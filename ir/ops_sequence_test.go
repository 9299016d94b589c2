package ir

import "testing"

// fcSeqGraph is a small builder for multi-node sequence graphs.
type fcSeqGraph struct {
	t *testing.T
	g *Graph
}

func (b fcSeqGraph) in(spec fcIn) *Value { return fcAddInputs(b.t, b.g, []fcIn{spec})[0] }

func (b fcSeqGraph) op(op string, attrs []*Attribute, ins ...*Value) *Value {
	return fcNode(b.t, b.g, op, attrs, ins, 1).Outputs[0]
}

func (b fcSeqGraph) infer() {
	b.t.Helper()
	if _, err := InferShapes(&Model{Opsets: []OpsetImport{{Version: 18}}, Graph: b.g}, InferOptions{}); err != nil {
		b.t.Fatal(err)
	}
}

func TestSequenceShapes(t *testing.T) {
	b := fcSeqGraph{t, NewGraph("g")}
	a := b.in(fcKnownIn("a", Float32, 2, 3))
	c := b.in(fcKnownIn("c", Float32, 2, 4))
	d := b.in(fcKnownIn("d", Float32, 2, 5))
	one := b.in(fcConstInts("one", nil, 1))
	zero := b.in(fcConstInts("zero", nil, 0))
	last := b.in(fcConstInts("last", nil, -1))

	seq := b.op("SequenceConstruct", nil, a, c)
	at1 := b.op("SequenceAt", nil, seq, one)
	n := b.op("SequenceLength", nil, seq)
	cat := b.op("ConcatFromSequence", []*Attribute{fcAttrInt("axis", 1)}, seq) // 3 + 4 columns
	ins := b.op("SequenceInsert", nil, seq, d)                                 // appended
	atLast := b.op("SequenceAt", nil, ins, last)
	erased := b.op("SequenceErase", nil, ins, zero) // [c, d]
	at0 := b.op("SequenceAt", nil, erased, zero)
	empty := b.op("SequenceEmpty", []*Attribute{fcAttrInt("dtype", int64(Float16))})
	b.infer()

	if seq.Kind != SequenceValue || seq.DType != Float32 || seq.Shape.Rank() != 2 || !seq.Shape.Dims[0].Is(2) || seq.Shape.Dims[1].IsKnown() {
		t.Errorf("SequenceConstruct of [2,3] and [2,4] = kind %d %s, want a float32 sequence of [2,?]", seq.Kind, fcTypeString(seq))
	}
	checks := []struct {
		name string
		v    *Value
		want string
	}{
		{"SequenceAt 1", at1, "float32[2,4]"},
		{"SequenceLength", n, "int64[]"},
		{"ConcatFromSequence axis 1", cat, "float32[2," + fcItoa(3+4) + "]"},
		{"SequenceAt -1 after insert", atLast, "float32[2,5]"},
		{"SequenceAt 0 after erase", at0, "float32[2,4]"},
		{"SequenceEmpty", empty, "float16?"},
	}
	for _, c := range checks {
		if got := fcTypeString(c.v); got != c.want {
			t.Errorf("%s = %s, want %s", c.name, got, c.want)
		}
	}
	if n.Const == nil || len(n.Const.Ints) != 1 || n.Const.Ints[0] != 2 {
		t.Errorf("SequenceLength of a 2-element sequence: value %v, want 2", n.Const)
	}
	if at1.Kind != TensorValue || empty.Kind != SequenceValue {
		t.Errorf("kinds: SequenceAt %d (want tensor), SequenceEmpty %d (want sequence)", at1.Kind, empty.Kind)
	}
}

func TestSplitToSequenceShapes(t *testing.T) {
	b := fcSeqGraph{t, NewGraph("g")}
	x := b.in(fcKnownIn("x", Float32, 6, 4))
	four := b.in(fcConstInts("four", nil, 4))
	one := b.in(fcConstInts("one", nil, 1))
	sizes := b.in(fcConstInts("sizes", []int64{3}, 1, 2, 3))

	chunks := b.op("SplitToSequence", nil, x, four) // 6 rows in chunks of 4: [4,4], [2,4]
	second := b.op("SequenceAt", nil, chunks, one)
	rows := b.op("SplitToSequence", []*Attribute{fcAttrInt("keepdims", 0)}, x) // six [4]
	stacked := b.op("ConcatFromSequence", []*Attribute{fcAttrInt("new_axis", 1), fcAttrInt("axis", -1)}, rows)
	parts := b.op("SplitToSequence", nil, x, sizes)
	joined := b.op("ConcatFromSequence", nil, parts)
	b.infer()

	checks := []struct {
		name string
		v    *Value
		want string
	}{
		{"second chunk", second, "float32[" + fcItoa(6-4) + ",4]"},
		{"rows stacked on a new last axis", stacked, "float32[4,6]"},
		{"parts rejoined", joined, "float32[" + fcItoa(1+2+3) + ",4]"},
	}
	for _, c := range checks {
		if got := fcTypeString(c.v); got != c.want {
			t.Errorf("%s = %s, want %s", c.name, got, c.want)
		}
	}
}

func TestSequenceFromGraphInput(t *testing.T) {
	// A sequence graph input: elements are described only by its type.
	b := fcSeqGraph{t, NewGraph("g")}
	s, _ := b.g.NewValue("s")
	s.Declared = &TypeInfo{Kind: SequenceValue, DType: Int32, Shape: RankedShape(S("n"), D(3))}
	b.g.AddInput(s)
	pos := b.in(fcKnownIn("p", Int64))
	at := b.op("SequenceAt", nil, s, pos)
	n := b.op("SequenceLength", nil, s)
	b.infer()
	if got := fcTypeString(at); got != "int32[n,3]" {
		t.Errorf("SequenceAt on a sequence input = %s, want int32[n,3]", got)
	}
	if got := fcTypeString(n); got != "int64[]" || n.Const != nil {
		t.Errorf("SequenceLength on a sequence input = %s (value %v), want int64[] with no value", got, n.Const)
	}
}

func TestOptionalShapes(t *testing.T) {
	b := fcSeqGraph{t, NewGraph("g")}
	a := b.in(fcKnownIn("a", Float32, 2, 3))
	opt := b.op("Optional", nil, a)
	has := b.op("OptionalHasElement", nil, opt)
	got := b.op("OptionalGetElement", nil, opt)
	b.infer()
	if opt.Kind != OptionalValue || fcTypeString(opt) != "float32[2,3]" {
		t.Errorf("Optional(a) = kind %d %s, want an optional float32[2,3]", opt.Kind, fcTypeString(opt))
	}
	if fcTypeString(has) != "bool[]" || has.Const == nil || has.Const.Ints[0] != 1 {
		t.Errorf("OptionalHasElement = %s value %v, want a known true", fcTypeString(has), has.Const)
	}
	if got.Kind != TensorValue || fcTypeString(got) != "float32[2,3]" {
		t.Errorf("OptionalGetElement = kind %d %s, want tensor float32[2,3]", got.Kind, fcTypeString(got))
	}
}
