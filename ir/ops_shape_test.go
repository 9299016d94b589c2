package ir

import (
	"strconv"
	"strings"
	"testing"
)

// tbModel builds one-graph models for the tests of the tensor and shape
// op families (ops_shape.go, ops_tensor*.go).
type tbModel struct {
	t   *testing.T
	m   *Model
	g   *Graph
	seq int
}

func newTB(t *testing.T, opset int64) *tbModel {
	t.Helper()
	g := NewGraph("t")
	return &tbModel{t: t, g: g, m: &Model{Opsets: []OpsetImport{{Version: opset}}, Graph: g}}
}

// tbShape builds a shape from ints (known dims) and strings (symbols).
func tbShape(dims ...any) Shape {
	s := RankedShape()
	for _, d := range dims {
		switch d := d.(type) {
		case int:
			s.Dims = append(s.Dims, D(int64(d)))
		case int64:
			s.Dims = append(s.Dims, D(d))
		case string:
			s.Dims = append(s.Dims, S(d))
		}
	}
	return s
}

func (b *tbModel) value(prefix string) *Value {
	b.t.Helper()
	b.seq++
	v, err := b.g.NewValue(prefix + "_" + strings.Repeat("v", b.seq))
	if err != nil {
		b.t.Fatal(err)
	}
	return v
}

// in declares a graph input.
func (b *tbModel) in(dt DType, dims ...any) *Value {
	v := b.value("in")
	v.Declared = &TypeInfo{Kind: TensorValue, DType: dt, Shape: tbShape(dims...)}
	b.g.AddInput(v)
	return v
}

// unranked declares a graph input of unknown rank.
func (b *tbModel) unranked(dt DType) *Value {
	v := b.value("in")
	v.Declared = &TypeInfo{Kind: TensorValue, DType: dt, Shape: Unranked()}
	b.g.AddInput(v)
	return v
}

// ints adds an int64 initializer.
func (b *tbModel) ints(dims []int64, vals ...int64) *Value {
	v := b.value("init")
	b.g.AddInitializer(v, IntTensor(dims, vals))
	return v
}

// vec adds a 1-D int64 initializer.
func (b *tbModel) vec(vals ...int64) *Value { return b.ints([]int64{int64(len(vals))}, vals...) }

// floats adds a float32 initializer.
func (b *tbModel) floats(dims []int64, vals ...float64) *Value {
	v := b.value("init")
	b.g.AddInitializer(v, FloatTensor(Float32, dims, vals))
	return v
}

// op appends a node and returns its outputs.
func (b *tbModel) op(op string, ins []*Value, nout int, attrs ...*Attribute) []*Value {
	b.t.Helper()
	outs := make([]*Value, nout)
	for i := range outs {
		outs[i] = b.value(strings.ToLower(op))
	}
	n := &Node{Name: b.g.UniqueName(op), OpType: op, Inputs: ins, Outputs: outs, Attrs: attrs}
	if err := b.g.AddNode(n); err != nil {
		b.t.Fatal(err)
	}
	return outs
}

// op1 appends a single-output node.
func (b *tbModel) op1(op string, ins []*Value, attrs ...*Attribute) *Value {
	return b.op(op, ins, 1, attrs...)[0]
}

func (b *tbModel) infer() error {
	_, err := InferShapes(b.m, InferOptions{})
	return err
}

func (b *tbModel) mustInfer() {
	b.t.Helper()
	if err := b.infer(); err != nil {
		b.t.Fatal(err)
	}
}

func tbI(name string, v int64) *Attribute { return &Attribute{Name: name, Type: AttrInt, I: v} }
func tbIs(name string, v ...int64) *Attribute {
	return &Attribute{Name: name, Type: AttrInts, Ints: v}
}
func tbS(name, v string) *Attribute { return &Attribute{Name: name, Type: AttrString, S: v} }
func tbFs(name string, v ...float64) *Attribute {
	return &Attribute{Name: name, Type: AttrFloats, Floats: v}
}

// tbType renders a value's inferred type as "float32[batch,3]".
func tbType(v *Value) string { return v.DType.String() + v.Shape.String() }

// tbVals renders a value's known contents: numbers from Const, symbols
// from SymInts, "" when unknown.
func tbVals(v *Value) string {
	t, ok := valsOf(v)
	if !ok {
		return ""
	}
	var parts []string
	switch {
	case t.isFloat():
		for _, f := range t.flts {
			parts = append(parts, strconv.FormatFloat(f, 'g', -1, 64))
		}
	default:
		for _, d := range t.ints {
			parts = append(parts, d.String())
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func itoa(v int64) string { return D(v).String() }

// expectType checks a value's dtype and shape.
func expectType(t *testing.T, v *Value, want string) {
	t.Helper()
	if got := tbType(v); got != want {
		t.Errorf("%s: type %s, want %s", v.Name, got, want)
	}
}

// expectVals checks a value's known contents.
func expectVals(t *testing.T, v *Value, want string) {
	t.Helper()
	if got := tbVals(v); got != want {
		t.Errorf("%s: contents %q, want %q", v.Name, got, want)
	}
}

// The PyTorch idiom x.view(x.size(0), -1):
// Shape -> Gather(0) -> Unsqueeze -> Concat with [-1] -> Reshape.
func TestShapeChainSymbolicBatch(t *testing.T) {
	for _, opset := range []int64{11, 13} {
		b := newTB(t, opset)
		x := b.in(Float32, "batch", 3, 224, 224)
		shape := b.op1("Shape", []*Value{x})
		dim0 := b.op1("Gather", []*Value{shape, b.ints(nil, 0)}, tbI("axis", 0))
		var unsq *Value
		if opset >= 13 {
			unsq = b.op1("Unsqueeze", []*Value{dim0, b.vec(0)})
		} else {
			unsq = b.op1("Unsqueeze", []*Value{dim0}, tbIs("axes", 0))
		}
		target := b.op1("Concat", []*Value{unsq, b.vec(-1)}, tbI("axis", 0))
		out := b.op1("Reshape", []*Value{x, target})
		b.mustInfer()
		expectVals(t, shape, "[batch 3 224 224]")
		expectType(t, dim0, "int64[]")
		expectVals(t, dim0, "[batch]")
		expectVals(t, unsq, "[batch]")
		expectVals(t, target, "[batch -1]")
		want := 3 * 224 * 224 // the -1 takes every dim but the batch
		expectType(t, out, "float32[batch,"+itoa(int64(want))+"]")
	}
}

// Binding the batch makes the same chain fully concrete, values included.
func TestShapeChainBoundBatch(t *testing.T) {
	b := newTB(t, 13)
	x := b.in(Float32, "batch", 2048, 1, 1)
	shape := b.op1("Shape", []*Value{x})
	dim0 := b.op1("Gather", []*Value{shape, b.ints(nil, 0)})
	unsq := b.op1("Unsqueeze", []*Value{dim0, b.vec(0)})
	target := b.op1("Concat", []*Value{unsq, b.vec(-1)}, tbI("axis", 0))
	out := b.op1("Reshape", []*Value{x, target})
	if _, err := InferShapes(b.m, InferOptions{Batch: 8}); err != nil {
		t.Fatal(err)
	}
	if target.Const == nil || target.SymInts != nil {
		t.Errorf("target should be a known constant, got Const=%v SymInts=%v", target.Const, target.SymInts)
	}
	expectVals(t, target, "[8 -1]")
	expectType(t, out, "float32[8,2048]")
}

// Transformer head split: Mul(Gather(Shape(x), 1), 8) arithmetic through
// symElementwise, then Reshape [0, 0, heads, -1] and back.
func TestSymElementwise(t *testing.T) {
	b := newTB(t, 13)
	x := b.in(Int64, "batch", "seq")
	shape := b.op1("Shape", []*Value{x})
	seq := b.op1("Gather", []*Value{shape, b.vec(1)})
	cases := []struct {
		op    string
		other *Value
		attrs []*Attribute
		want  string
	}{
		{"Mul", b.vec(8), nil, "[seq*8]"},
		{"Add", b.vec(1), nil, "[seq+1]"},
		{"Sub", b.vec(1), nil, "[seq-1]"},
		{"Div", b.vec(2), nil, "[seq/2]"},
		{"Equal", b.vec(-1), nil, "[0]"}, // a dim is never -1
		{"Max", b.vec(0), nil, "[seq]"},
		{"Cast", nil, []*Attribute{tbI("to", int64(Int32))}, "[seq]"},
		{"Identity", nil, nil, "[seq]"},
	}
	outs := make([]*Value, len(cases))
	for i, tc := range cases {
		ins := []*Value{seq}
		if tc.other != nil {
			ins = append(ins, tc.other)
		}
		outs[i] = b.op1(tc.op, ins, tc.attrs...)
	}
	// Fed through symElementwise directly (family A's ops call it too).
	b.mustInfer()
	for i, tc := range cases {
		n := outs[i].Producer
		fresh := 0
		c := &InferCtx{Node: n, Opset: 13, Model: b.m, Limits: &DefaultLimits, fresh: &fresh}
		if !symElementwise(tc.op, c) {
			t.Errorf("%s: symElementwise declined", tc.op)
			continue
		}
		expectVals(t, outs[i], tc.want)
	}
	// Less(seq, 4) depends on seq: declined, output untouched.
	n := b.op1("Less", []*Value{seq, b.vec(4)}).Producer
	fresh := 0
	if symElementwise("Less", &InferCtx{Node: n, Opset: 13, Model: b.m, Limits: &DefaultLimits, fresh: &fresh}) {
		t.Errorf("Less(seq, 4) should not be decided")
	}
}

// Where(Equal(shape, -1), ones, shape), as PyTorch exports expand().
func TestSymWhere(t *testing.T) {
	b := newTB(t, 13)
	x := b.in(Float32, "batch", 1)
	shape := b.op1("Shape", []*Value{x})
	cond := b.ints([]int64{2}, 0, 1)
	w := b.op1("Where", []*Value{cond, b.vec(7, 7), shape})
	b.mustInfer()
	fresh := 0
	if !symElementwise("Where", &InferCtx{Node: w.Producer, Opset: 13, Model: b.m, Limits: &DefaultLimits, fresh: &fresh}) {
		t.Fatal("declined")
	}
	expectVals(t, w, "[batch 7]")
}

func TestDimProduct(t *testing.T) {
	cases := []struct {
		num, den []Dim
		want     string
	}{
		{[]Dim{S("batch"), D(2048), D(1), D(1)}, []Dim{S("batch")}, "2048"},
		{[]Dim{S("batch"), S("seq"), D(768)}, []Dim{D(768)}, "batch*seq"},
		{[]Dim{S("batch*seq"), D(768)}, []Dim{S("batch"), D(12)}, "seq*64"},
		{[]Dim{S("(batch*seq)*4")}, []Dim{S("seq")}, "batch*4"},
	}
	for _, tc := range cases {
		p, _ := productOf(tc.num)
		q, _ := productOf(tc.den)
		got, ok := p.quo(q)
		if !ok || got.String() != tc.want {
			t.Errorf("%v / %v = %v (%v), want %s", tc.num, tc.den, got, ok, tc.want)
		}
	}
	p, _ := productOf([]Dim{S("seq+1"), D(2)})
	q, _ := productOf([]Dim{S("seq")})
	if _, ok := p.quo(q); ok {
		t.Errorf("(seq+1)*2 / seq must not cancel")
	}
}

func TestReshape(t *testing.T) {
	cases := []struct {
		in        []any
		target    []int64
		allowZero bool
		want      string // "" means an error is expected
	}{
		{[]any{2, 3, 4}, []int64{0, -1}, false, "float32[2,12]"},
		{[]any{2, 3, 4}, []int64{-1}, false, "float32[24]"},
		{[]any{2, 3, 4}, []int64{4, 2, 3}, false, "float32[4,2,3]"},
		{[]any{2, 3, 4}, []int64{2, 0, 4, 1}, false, "float32[2,3,4,1]"},
		{[]any{0, 3, 4}, []int64{3, 4, 0}, true, "float32[3,4,0]"},
		{[]any{"batch", "seq", 768}, []int64{0, 0, 12, 64}, false, "float32[batch,seq,12,64]"},
		{[]any{"batch", "seq", 768}, []int64{-1, 768}, false, "float32[batch*seq,768]"},
		{[]any{"batch", "seq", 12, 64}, []int64{0, 0, -1}, false, "float32[batch,seq,768]"},
		{[]any{2, 3, 4}, []int64{5, -1}, false, ""},      // 24 is not a multiple of 5
		{[]any{2, 3, 4}, []int64{5, 5}, false, ""},       // 25 elements != 24
		{[]any{2, 3, 4}, []int64{-1, -1}, false, ""},     // two -1
		{[]any{2, 3, 4}, []int64{0, 0, 0, 0}, false, ""}, // 0 past the input rank
	}
	for _, tc := range cases {
		b := newTB(t, 14)
		x := b.in(Float32, tc.in...)
		var attrs []*Attribute
		if tc.allowZero {
			attrs = append(attrs, tbI("allowzero", 1))
		}
		out := b.op1("Reshape", []*Value{x, b.vec(tc.target...)}, attrs...)
		err := b.infer()
		if tc.want == "" {
			if err == nil {
				t.Errorf("Reshape %v to %v: no error, got %s", tc.in, tc.target, tbType(out))
			}
			continue
		}
		if err != nil {
			t.Errorf("Reshape %v to %v: %v", tc.in, tc.target, err)
			continue
		}
		expectType(t, out, tc.want)
	}
}

// Opset 1 took the target as an attribute; an unknown target keeps the rank.
func TestReshapeVariants(t *testing.T) {
	b := newTB(t, 1)
	x := b.in(Float32, 2, 3)
	out := b.op1("Reshape", []*Value{x}, tbIs("shape", 3, -1))
	b.mustInfer()
	expectType(t, out, "float32[3,2]")

	b = newTB(t, 13)
	x = b.in(Float32, 2, 3)
	out = b.op1("Reshape", []*Value{x, b.in(Int64, 3)})
	b.mustInfer()
	if out.Shape.Rank() != 3 {
		t.Errorf("unknown target of length 3: got %s, want rank 3", out.Shape)
	}

	// Contents travel: Reshape of a known [2,2] to [4].
	b = newTB(t, 13)
	c := b.ints([]int64{2, 2}, 1, 2, 3, 4)
	out = b.op1("Reshape", []*Value{c, b.vec(-1)})
	b.mustInfer()
	expectVals(t, out, "[1 2 3 4]")
}

func TestShapeAndSize(t *testing.T) {
	b := newTB(t, 15)
	x := b.in(Float32, "batch", 3, 4, 5)
	full := b.op1("Shape", []*Value{x})
	tail := b.op1("Shape", []*Value{x}, tbI("start", 1))
	mid := b.op1("Shape", []*Value{x}, tbI("start", 1), tbI("end", -1))
	clip := b.op1("Shape", []*Value{x}, tbI("start", -10), tbI("end", 10))
	size := b.op1("Size", []*Value{x})
	known := b.op1("Size", []*Value{b.in(Float32, 2, 3)})
	b.mustInfer()
	expectType(t, full, "int64[4]")
	expectVals(t, full, "[batch 3 4 5]")
	expectVals(t, tail, "[3 4 5]")
	if tail.Const == nil {
		t.Errorf("Shape start=1 of known dims should be a constant")
	}
	expectVals(t, mid, "[3 4]")
	expectVals(t, clip, "[batch 3 4 5]")
	expectType(t, size, "int64[]")
	expectVals(t, size, "[batch*60]") // 3*4*5 = 60 per batch element
	expectVals(t, known, "[6]")
}

func TestFlatten(t *testing.T) {
	cases := []struct {
		axis int64
		want string
	}{
		{0, "float32[1,batch*60]"},
		{1, "float32[batch,60]"},
		{2, "float32[batch*3,20]"},
		{4, "float32[batch*60,1]"},
		{-1, "float32[batch*12,5]"},
	}
	for _, tc := range cases {
		b := newTB(t, 13)
		out := b.op1("Flatten", []*Value{b.in(Float32, "batch", 3, 4, 5)}, tbI("axis", tc.axis))
		b.mustInfer()
		expectType(t, out, tc.want)
	}
	b := newTB(t, 13)
	b.op1("Flatten", []*Value{b.in(Float32, 2, 3)}, tbI("axis", 3))
	if err := b.infer(); err == nil {
		t.Errorf("Flatten axis 3 of rank 2: want an error")
	}
}

func TestSqueezeUnsqueeze(t *testing.T) {
	b := newTB(t, 11)
	x := b.in(Float32, 1, 3, 1, 5)
	all := b.op1("Squeeze", []*Value{x})
	one := b.op1("Squeeze", []*Value{x}, tbIs("axes", -2))
	un := b.op1("Unsqueeze", []*Value{b.in(Float32, 3, 4, 5)}, tbIs("axes", 2, 4, 5))
	unNeg := b.op1("Unsqueeze", []*Value{b.in(Float32, 3, 5)}, tbIs("axes", 0, -2, -1))
	b.mustInfer()
	expectType(t, all, "float32[3,5]")
	expectType(t, one, "float32[1,3,5]")
	expectType(t, un, "float32[3,4,1,5,1,1]")
	expectType(t, unNeg, "float32[1,3,5,1,1]") // -2 and -1 count in the output rank 5

	// Opset 13: axes as an input; contents travel.
	b = newTB(t, 13)
	v := b.ints([]int64{1, 2}, 7, 8)
	sq := b.op1("Squeeze", []*Value{v, b.vec(0)})
	us := b.op1("Unsqueeze", []*Value{sq, b.vec(1)})
	b.mustInfer()
	expectType(t, sq, "int64[2]")
	expectVals(t, sq, "[7 8]")
	expectType(t, us, "int64[2,1]")

	// Unknown axes, but exactly as many 1s as axes: they are determined.
	b = newTB(t, 13)
	sqU := b.op1("Squeeze", []*Value{b.in(Float32, 1, 3, 4), b.in(Int64, 1)})
	b.mustInfer()
	expectType(t, sqU, "float32[3,4]")

	for _, tc := range []struct {
		name string
		op   string
		in   []any
		axes []int64
	}{
		{"squeeze a dim of 3", "Squeeze", []any{1, 3}, []int64{1}},
		{"squeeze axis out of range", "Squeeze", []any{1, 3}, []int64{2}},
		{"unsqueeze axis out of range", "Unsqueeze", []any{3}, []int64{2}},
		{"unsqueeze repeated axis", "Unsqueeze", []any{3}, []int64{0, 0}},
	} {
		b := newTB(t, 13)
		b.op1(tc.op, []*Value{b.in(Float32, tc.in...), b.vec(tc.axes...)})
		if err := b.infer(); err == nil {
			t.Errorf("%s: want an error", tc.name)
		}
	}
}

func TestConstantOfShapeAndRange(t *testing.T) {
	b := newTB(t, 13)
	x := b.in(Float32, "batch", 4)
	shape := b.op1("Shape", []*Value{x})
	fill := &Attribute{Name: "value", Type: AttrTensor, T: IntTensor([]int64{1}, []int64{1})}
	symFill := b.op1("ConstantOfShape", []*Value{shape}, fill)
	smallFill := b.op1("ConstantOfShape", []*Value{b.vec(2, 2)}, fill)
	def := b.op1("ConstantOfShape", []*Value{b.vec(3)})
	ints := b.op1("Range", []*Value{b.ints(nil, 10), b.ints(nil, 4), b.ints(nil, -3)})
	flts := b.op1("Range", []*Value{b.floats(nil, 1), b.floats(nil, 5), b.floats(nil, 2)})
	seq := b.op1("Gather", []*Value{shape, b.ints(nil, 0)})
	pos := b.op1("Range", []*Value{b.ints(nil, 0), seq, b.ints(nil, 1)})
	b.mustInfer()
	expectType(t, symFill, "int64[batch,4]")
	expectVals(t, smallFill, "[1 1 1 1]")
	expectType(t, def, "float32[3]") // the default fill is float32 0
	expectType(t, ints, "int64[2]")  // ceil((4-10)/-3) = 2
	expectVals(t, ints, "[10 7]")
	expectType(t, flts, "float32[2]") // ceil((5-1)/2) = 2
	expectVals(t, flts, "[1 3]")
	expectType(t, pos, "int64[batch]")
}
