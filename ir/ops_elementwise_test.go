package ir

import (
	"math"
	"strings"
	"testing"
)

// faIn describes one input of a single-node test graph: a declared graph
// input (dtype and shape), a known initializer (val), or an omitted slot.
type faIn struct {
	dt      DType
	shape   Shape
	val     *Tensor
	omitted bool
}

func faInput(dt DType, s Shape) faIn { return faIn{dt: dt, shape: s} }
func faKnown(t *Tensor) faIn         { return faIn{val: t} }

var faOmitted = faIn{omitted: true}

// faShape builds a shape from dims written as numbers or symbol names
// (tbShape under the name these tables use).
func faShape(dims ...any) Shape { return tbShape(dims...) }

// runFAOp builds a graph with one node of op (domain "" unless op is
// written "domain::Op") at the given opset, runs InferShapes, and returns
// the node's outputs.
func runFAOp(t *testing.T, op string, opset int64, ins []faIn, attrs []*Attribute, nout int) ([]*Value, error) {
	t.Helper()
	domain := ""
	if i := strings.Index(op, "::"); i >= 0 {
		domain, op = op[:i], op[i+2:]
	}
	g := NewGraph("test")
	n := &Node{Name: "n", OpType: op, Domain: domain, Attrs: attrs}
	for i, x := range ins {
		if x.omitted {
			n.Inputs = append(n.Inputs, nil)
			continue
		}
		v, err := g.NewValue("in" + string(rune('0'+i)))
		if err != nil {
			t.Fatal(err)
		}
		if x.val != nil {
			g.AddInitializer(v, x.val)
		} else {
			v.Declared = &TypeInfo{Kind: TensorValue, DType: x.dt, Shape: x.shape}
			g.AddInput(v)
		}
		n.Inputs = append(n.Inputs, v)
	}
	for i := 0; i < nout; i++ {
		v, err := g.NewValue("out" + string(rune('0'+i)))
		if err != nil {
			t.Fatal(err)
		}
		n.Outputs = append(n.Outputs, v)
		g.AddOutput(v)
	}
	if err := g.AddNode(n); err != nil {
		t.Fatal(err)
	}
	m := &Model{Graph: g, Opsets: []OpsetImport{{Domain: "", Version: opset}, {Domain: "com.microsoft", Version: 1}}}
	_, err := InferShapes(m, InferOptions{})
	return n.Outputs, err
}

// faTypeCase is one shape/dtype expectation for output 0.
type faTypeCase struct {
	name    string
	op      string
	opset   int64
	ins     []faIn
	attrs   []*Attribute
	wantDT  DType
	want    Shape
	wantErr string // substring of the expected error; "" means success
}

func runFATypeCases(t *testing.T, cases []faTypeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			outs, err := runFAOp(t, tc.op, tc.opset, tc.ins, tc.attrs, 1)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o := outs[0]; o.DType != tc.wantDT || !o.Shape.Equal(tc.want) {
				t.Errorf("got %s%s, want %s%s", o.DType, o.Shape, tc.wantDT, tc.want)
			}
		})
	}
}

func TestElementwiseTypes(t *testing.T) {
	f32 := Float32
	runFATypeCases(t, []faTypeCase{
		{name: "relu keeps shape", op: "Relu", opset: 14, ins: []faIn{faInput(f32, faShape("N", 3, 224, 224))}, wantDT: f32, want: faShape("N", 3, 224, 224)},
		{name: "sigmoid fp16", op: "Sigmoid", opset: 13, ins: []faIn{faInput(Float16, faShape(2, 3))}, wantDT: Float16, want: faShape(2, 3)},
		{name: "add broadcast", op: "Add", opset: 14, ins: []faIn{faInput(f32, faShape(2, 1, 4)), faInput(f32, faShape(3, 1))}, wantDT: f32, want: faShape(2, 3, 4)},
		{name: "add symbol with 1 keeps symbol", op: "Add", opset: 14, ins: []faIn{faInput(f32, faShape("batch", 1)), faInput(f32, faShape(1, 8))}, wantDT: f32, want: faShape("batch", 8)},
		{name: "add scalar", op: "Add", opset: 14, ins: []faIn{faInput(f32, faShape("seq", 8)), faInput(f32, faShape())}, wantDT: f32, want: faShape("seq", 8)},
		{name: "add incompatible", op: "Add", opset: 14, ins: []faIn{faInput(f32, faShape(2, 3)), faInput(f32, faShape(4))}, wantErr: "broadcast"},
		{name: "add unranked", op: "Add", opset: 14, ins: []faIn{faInput(f32, Unranked()), faInput(f32, faShape(4))}, wantDT: f32, want: Unranked()},
		{name: "legacy add broadcast attr", op: "Add", opset: 6, ins: []faIn{faInput(f32, faShape(2, 3, 4, 5)), faInput(f32, faShape(3, 4))},
			attrs: []*Attribute{IntAttr("broadcast", 1), IntAttr("axis", 1)}, wantDT: f32, want: faShape(2, 3, 4, 5)},
		{name: "equal gives bool", op: "Equal", opset: 13, ins: []faIn{faInput(Int64, faShape(4)), faInput(Int64, faShape())}, wantDT: Bool, want: faShape(4)},
		{name: "greater or equal", op: "GreaterOrEqual", opset: 16, ins: []faIn{faInput(f32, faShape(2, 1)), faInput(f32, faShape(3))}, wantDT: Bool, want: faShape(2, 3)},
		{name: "and", op: "And", opset: 7, ins: []faIn{faInput(Bool, faShape(3, 4)), faInput(Bool, faShape(4))}, wantDT: Bool, want: faShape(3, 4)},
		{name: "pow keeps base type", op: "Pow", opset: 15, ins: []faIn{faInput(f32, faShape(3)), faInput(Int64, faShape())}, wantDT: f32, want: faShape(3)},
		{name: "bitshift", op: "BitShift", opset: 11, ins: []faIn{faInput(Uint8, faShape(3)), faInput(Uint8, faShape(3))}, attrs: []*Attribute{StringAttr("direction", "LEFT")}, wantDT: Uint8, want: faShape(3)},
		{name: "sum of three", op: "Sum", opset: 13, ins: []faIn{faInput(f32, faShape(3)), faInput(f32, faShape(2, 1)), faInput(f32, faShape(1, 1, 3))}, wantDT: f32, want: faShape(1, 2, 3)},
		{name: "max one input", op: "Max", opset: 13, ins: []faIn{faInput(Int32, faShape("n"))}, wantDT: Int32, want: faShape("n")},
		{name: "where", op: "Where", opset: 16, ins: []faIn{faInput(Bool, faShape(2, 1)), faInput(Int64, faShape(3)), faInput(Int64, faShape())}, wantDT: Int64, want: faShape(2, 3)},
		{name: "where incompatible", op: "Where", opset: 16, ins: []faIn{faInput(Bool, faShape(2)), faInput(f32, faShape(3)), faInput(f32, faShape())}, wantErr: "broadcast"},
		{name: "cast", op: "Cast", opset: 19, ins: []faIn{faInput(f32, faShape("b", 3))}, attrs: []*Attribute{IntAttr("to", int64(Float16))}, wantDT: Float16, want: faShape("b", 3)},
		{name: "cast opset 1 string to", op: "Cast", opset: 1, ins: []faIn{faInput(f32, faShape(2))}, attrs: []*Attribute{StringAttr("to", "INT32")}, wantDT: Int32, want: faShape(2)},
		{name: "cast bad to", op: "Cast", opset: 13, ins: []faIn{faInput(f32, faShape(2))}, attrs: []*Attribute{IntAttr("to", 99)}, wantErr: "not a tensor type"},
		{name: "castlike", op: "CastLike", opset: 15, ins: []faIn{faInput(f32, faShape(2, 3)), faInput(BFloat16, faShape())}, wantDT: BFloat16, want: faShape(2, 3)},
		{name: "isnan", op: "IsNaN", opset: 13, ins: []faIn{faInput(f32, faShape(5))}, wantDT: Bool, want: faShape(5)},
		{name: "clip with inputs", op: "Clip", opset: 13, ins: []faIn{faInput(f32, faShape(5)), faInput(f32, faShape()), faOmitted}, wantDT: f32, want: faShape(5)},
		{name: "softmax axis default 13", op: "Softmax", opset: 13, ins: []faIn{faInput(f32, faShape(2, "seq"))}, wantDT: f32, want: faShape(2, "seq")},
		{name: "softmax bad axis", op: "Softmax", opset: 13, ins: []faIn{faInput(f32, faShape(2, 3))}, attrs: []*Attribute{IntAttr("axis", 2)}, wantErr: "axis 2 out of range"},
		{name: "logsoftmax old default axis 1 on rank 1", op: "LogSoftmax", opset: 11, ins: []faIn{faInput(f32, faShape(4))}, wantErr: "axis 1 out of range"},
		{name: "prelu", op: "PRelu", opset: 16, ins: []faIn{faInput(f32, faShape("N", 3, 8, 8)), faInput(f32, faShape(3, 1, 1))}, wantDT: f32, want: faShape("N", 3, 8, 8)},
		{name: "prelu bad slope", op: "PRelu", opset: 16, ins: []faIn{faInput(f32, faShape(1, 3, 8, 8)), faInput(f32, faShape(4, 1, 1))}, wantErr: "slope"},
		{name: "contrib gelu", op: "com.microsoft::FastGelu", opset: 17, ins: []faIn{faInput(Float16, faShape("b", "s", 768)), faInput(Float16, faShape(768))}, wantDT: Float16, want: faShape("b", "s", 768)},
	})
}

// faFoldCase checks a folded value of output 0.
type faFoldCase struct {
	name   string
	op     string
	opset  int64
	ins    []faIn
	attrs  []*Attribute
	wantDT DType
	dims   []int64
	ints   []int64   // expected Ints (integer/bool outputs)
	floats []float64 // expected Floats (float outputs)
}

func faInts(dims []int64, v ...int64) *Tensor { return IntTensor(dims, v) }
func faTyped(dt DType, dims []int64, v ...int64) *Tensor {
	return &Tensor{DType: dt, Dims: dims, Ints: v, HasData: true}
}
func faFloats(dims []int64, v ...float64) *Tensor { return FloatTensor(Float32, dims, v) }

func runFAFoldCases(t *testing.T, cases []faFoldCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			outs, err := runFAOp(t, tc.op, tc.opset, tc.ins, tc.attrs, 1)
			if err != nil {
				t.Fatal(err)
			}
			o := outs[0]
			if o.Const == nil {
				t.Fatalf("no value folded; type %s%s", o.DType, o.Shape)
			}
			got := o.Const
			if got.DType != tc.wantDT || o.DType != tc.wantDT || !KnownShape(got.Dims...).Equal(KnownShape(tc.dims...)) {
				t.Fatalf("got %s%v, want %s%v", got.DType, got.Dims, tc.wantDT, tc.dims)
			}
			if !o.Shape.Equal(KnownShape(tc.dims...)) {
				t.Errorf("value shape %s disagrees with %v", o.Shape, tc.dims)
			}
			if tc.floats != nil {
				if len(got.Floats) != len(tc.floats) {
					t.Fatalf("floats %v, want %v", got.Floats, tc.floats)
				}
				for i := range tc.floats {
					if got.Floats[i] != tc.floats[i] && !(math.IsNaN(got.Floats[i]) && math.IsNaN(tc.floats[i])) {
						t.Fatalf("floats %v, want %v", got.Floats, tc.floats)
					}
				}
				return
			}
			if len(got.Ints) != len(tc.ints) {
				t.Fatalf("ints %v, want %v", got.Ints, tc.ints)
			}
			for i := range tc.ints {
				if got.Ints[i] != tc.ints[i] {
					t.Fatalf("ints %v, want %v", got.Ints, tc.ints)
				}
			}
		})
	}
}

func TestElementwiseFold(t *testing.T) {
	shape := faInts([]int64{4}, 8, 3, 224, 224) // a Shape output: N, C, H, W
	scalar := func(v int64) faIn { return faKnown(faInts(nil, v)) }
	runFAFoldCases(t, []faFoldCase{
		{name: "mul of dims", op: "Mul", opset: 14, ins: []faIn{faKnown(shape), scalar(2)}, wantDT: Int64, dims: []int64{4},
			ints: []int64{8 * 2, 3 * 2, 224 * 2, 224 * 2}},
		{name: "add broadcast 2x3", op: "Add", opset: 14, ins: []faIn{faKnown(faInts([]int64{2, 1}, 10, 20)), faKnown(faInts([]int64{3}, 1, 2, 3))},
			wantDT: Int64, dims: []int64{2, 3}, ints: []int64{11, 12, 13, 21, 22, 23}},
		{name: "sub", op: "Sub", opset: 14, ins: []faIn{scalar(7), faKnown(faInts([]int64{2}, 2, 9))}, wantDT: Int64, dims: []int64{2}, ints: []int64{7 - 2, 7 - 9}},
		// ONNX integer Div truncates toward zero: -7/2 = -3, not -4.
		{name: "int div truncates", op: "Div", opset: 14, ins: []faIn{faKnown(faInts([]int64{2}, 7, -7)), scalar(2)}, wantDT: Int64, dims: []int64{2}, ints: []int64{3, -3}},
		{name: "float div", op: "Div", opset: 14, ins: []faIn{faKnown(faFloats([]int64{2}, 224, 7)), faKnown(faFloats(nil, 2))}, wantDT: Float32, dims: []int64{2}, floats: []float64{112, 3.5}},
		// float32 rounding: 1/3 is stored as float32's nearest value.
		{name: "float32 rounding", op: "Div", opset: 14, ins: []faIn{faKnown(faFloats(nil, 1)), faKnown(faFloats(nil, 3))}, wantDT: Float32, dims: []int64{}, floats: []float64{float64(float32(1.0 / 3.0))}},
		// Mod: fmod=0 takes the divisor's sign (-7 mod 3 = 2), fmod=1 the dividend's (-1).
		{name: "mod python", op: "Mod", opset: 13, ins: []faIn{faKnown(faInts([]int64{2}, -7, 7)), scalar(3)}, wantDT: Int64, dims: []int64{2}, ints: []int64{2, 1}},
		{name: "mod fmod", op: "Mod", opset: 13, ins: []faIn{faKnown(faInts([]int64{2}, -7, 7)), scalar(3)}, attrs: []*Attribute{IntAttr("fmod", 1)}, wantDT: Int64, dims: []int64{2}, ints: []int64{-1, 1}},
		{name: "int32 wraps", op: "Mul", opset: 14, ins: []faIn{faKnown(faTyped(Int32, nil, 1<<30)), faKnown(faTyped(Int32, nil, 4))}, wantDT: Int32, dims: []int64{}, ints: []int64{0}},
		{name: "neg", op: "Neg", opset: 13, ins: []faIn{faKnown(faInts([]int64{2}, 5, -1))}, wantDT: Int64, dims: []int64{2}, ints: []int64{-5, 1}},
		{name: "abs", op: "Abs", opset: 13, ins: []faIn{faKnown(faInts([]int64{2}, 5, -1))}, wantDT: Int64, dims: []int64{2}, ints: []int64{5, 1}},
		{name: "sign", op: "Sign", opset: 13, ins: []faIn{faKnown(faInts([]int64{3}, 5, 0, -9))}, wantDT: Int64, dims: []int64{3}, ints: []int64{1, 0, -1}},
		{name: "floor", op: "Floor", opset: 13, ins: []faIn{faKnown(faFloats([]int64{2}, 2.5, -2.5))}, wantDT: Float32, dims: []int64{2}, floats: []float64{2, -3}},
		{name: "ceil", op: "Ceil", opset: 13, ins: []faIn{faKnown(faFloats([]int64{2}, 2.5, -2.5))}, wantDT: Float32, dims: []int64{2}, floats: []float64{3, -2}},
		// Round is half to even: 2.5 -> 2, 3.5 -> 4.
		{name: "round half even", op: "Round", opset: 11, ins: []faIn{faKnown(faFloats([]int64{2}, 2.5, 3.5))}, wantDT: Float32, dims: []int64{2}, floats: []float64{2, 4}},
		{name: "sqrt", op: "Sqrt", opset: 13, ins: []faIn{faKnown(faFloats(nil, 16))}, wantDT: Float32, dims: []int64{}, floats: []float64{4}},
		{name: "reciprocal", op: "Reciprocal", opset: 13, ins: []faIn{faKnown(faFloats(nil, 4))}, wantDT: Float32, dims: []int64{}, floats: []float64{0.25}},
		{name: "int pow", op: "Pow", opset: 15, ins: []faIn{scalar(3), scalar(4)}, wantDT: Int64, dims: []int64{}, ints: []int64{3 * 3 * 3 * 3}},
		{name: "float pow", op: "Pow", opset: 15, ins: []faIn{faKnown(faFloats(nil, 2)), scalar(3)}, wantDT: Float32, dims: []int64{}, floats: []float64{8}},
		{name: "max variadic", op: "Max", opset: 13, ins: []faIn{scalar(3), faKnown(faInts([]int64{3}, 1, 5, 2)), scalar(4)}, wantDT: Int64, dims: []int64{3}, ints: []int64{4, 5, 4}},
		{name: "min", op: "Min", opset: 13, ins: []faIn{scalar(3), faKnown(faInts([]int64{3}, 1, 5, 2))}, wantDT: Int64, dims: []int64{3}, ints: []int64{1, 3, 2}},
		{name: "equal", op: "Equal", opset: 13, ins: []faIn{faKnown(faInts([]int64{3}, 1, -1, 2)), scalar(-1)}, wantDT: Bool, dims: []int64{3}, ints: []int64{0, 1, 0}},
		{name: "less float", op: "Less", opset: 13, ins: []faIn{faKnown(faFloats([]int64{2}, 1, 3)), faKnown(faFloats(nil, 2))}, wantDT: Bool, dims: []int64{2}, ints: []int64{1, 0}},
		{name: "greater", op: "Greater", opset: 13, ins: []faIn{faKnown(faInts([]int64{2}, 1, 3)), scalar(2)}, wantDT: Bool, dims: []int64{2}, ints: []int64{0, 1}},
		{name: "less or equal", op: "LessOrEqual", opset: 16, ins: []faIn{faKnown(faInts([]int64{3}, 1, 2, 3)), scalar(2)}, wantDT: Bool, dims: []int64{3}, ints: []int64{1, 1, 0}},
		{name: "greater or equal", op: "GreaterOrEqual", opset: 16, ins: []faIn{faKnown(faInts([]int64{3}, 1, 2, 3)), scalar(2)}, wantDT: Bool, dims: []int64{3}, ints: []int64{0, 1, 1}},
		{name: "not", op: "Not", opset: 1, ins: []faIn{faKnown(faTyped(Bool, []int64{2}, 1, 0))}, wantDT: Bool, dims: []int64{2}, ints: []int64{0, 1}},
		{name: "and", op: "And", opset: 7, ins: []faIn{faKnown(faTyped(Bool, []int64{2}, 1, 0)), faKnown(faTyped(Bool, nil, 1))}, wantDT: Bool, dims: []int64{2}, ints: []int64{1, 0}},
		{name: "or", op: "Or", opset: 7, ins: []faIn{faKnown(faTyped(Bool, []int64{2}, 1, 0)), faKnown(faTyped(Bool, nil, 0))}, wantDT: Bool, dims: []int64{2}, ints: []int64{1, 0}},
		// Where(shape == -1, 1, shape): how exporters turn -1 into 1 before Expand.
		{name: "where", op: "Where", opset: 16, ins: []faIn{faKnown(faTyped(Bool, []int64{3}, 0, 1, 0)), scalar(1), faKnown(faInts([]int64{3}, 4, -1, 6))},
			wantDT: Int64, dims: []int64{3}, ints: []int64{4, 1, 6}},
		{name: "identity", op: "Identity", opset: 16, ins: []faIn{faKnown(shape)}, wantDT: Int64, dims: []int64{4}, ints: shape.Ints},
		// Cast float->int truncates toward zero.
		{name: "cast float to int", op: "Cast", opset: 13, ins: []faIn{faKnown(faFloats([]int64{3}, 2.7, -2.7, 112))}, attrs: []*Attribute{IntAttr("to", int64(Int64))},
			wantDT: Int64, dims: []int64{3}, ints: []int64{2, -2, 112}},
		{name: "cast int to float", op: "Cast", opset: 13, ins: []faIn{faKnown(shape)}, attrs: []*Attribute{IntAttr("to", int64(Float32))},
			wantDT: Float32, dims: []int64{4}, floats: []float64{8, 3, 224, 224}},
		{name: "cast int64 to uint8 wraps", op: "Cast", opset: 13, ins: []faIn{faKnown(faInts([]int64{2}, 300, -1))}, attrs: []*Attribute{IntAttr("to", int64(Uint8))},
			wantDT: Uint8, dims: []int64{2}, ints: []int64{300 - 256, 255}},
		{name: "cast to bool", op: "Cast", opset: 13, ins: []faIn{faKnown(faFloats([]int64{2}, 0, -0.5))}, attrs: []*Attribute{IntAttr("to", int64(Bool))},
			wantDT: Bool, dims: []int64{2}, ints: []int64{0, 1}},
		{name: "castlike", op: "CastLike", opset: 15, ins: []faIn{faKnown(faInts([]int64{2}, 3, 4)), faKnown(faFloats(nil, 0))},
			wantDT: Float32, dims: []int64{2}, floats: []float64{3, 4}},
		{name: "clip opset 11 inputs", op: "Clip", opset: 13, ins: []faIn{faKnown(faInts([]int64{3}, -5, 3, 99)), scalar(0), scalar(10)},
			wantDT: Int64, dims: []int64{3}, ints: []int64{0, 3, 10}},
		{name: "clip opset 6 attrs", op: "Clip", opset: 6, ins: []faIn{faKnown(faFloats([]int64{2}, -5, 9))}, attrs: []*Attribute{FloatAttr("min", -1), FloatAttr("max", 1)},
			wantDT: Float32, dims: []int64{2}, floats: []float64{-1, 1}},
		// Resize scales as exporters compute them: Div(Cast(out dims), Cast(in dims)).
		{name: "resize scales", op: "Div", opset: 13, ins: []faIn{faKnown(faFloats([]int64{2}, 448, 448)), faKnown(faFloats([]int64{2}, 224, 224))},
			wantDT: Float32, dims: []int64{2}, floats: []float64{2, 2}},
	})
}

func TestElementwiseNoFold(t *testing.T) {
	// Division by zero, an unknown operand, and a result over the small-
	// tensor limit give a shape but no value.
	big := make([]int64, DefaultLimits.SmallTensorElems+1)
	cases := []struct {
		name string
		op   string
		ins  []faIn
	}{
		{"div by zero", "Div", []faIn{faKnown(faInts(nil, 4)), faKnown(faInts(nil, 0))}},
		{"unknown operand", "Add", []faIn{faKnown(faInts(nil, 4)), faInput(Int64, faShape())}},
		{"too large", "Neg", []faIn{faKnown(faInts([]int64{int64(len(big))}, big...))}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			outs, err := runFAOp(t, tc.op, 14, tc.ins, nil, 1)
			if err != nil {
				t.Fatal(err)
			}
			if outs[0].Const != nil {
				t.Errorf("folded %v, want no value", outs[0].Const)
			}
			if !outs[0].Shape.Ranked {
				t.Errorf("shape %s, want ranked", outs[0].Shape)
			}
		})
	}
}

// Shape arithmetic that carries a symbol: Mul(Gather(Shape(x), 0), 8)
// arrives here as SymInts [batch] and must give "batch*8" (evaluated by
// symElementwise in ops_shape.go).
func TestElementwiseSymbolicValues(t *testing.T) {
	g := NewGraph("t")
	a, _ := g.NewValue("a")
	a.Kind, a.DType, a.Shape, a.SymInts = TensorValue, Int64, KnownShape(1), []Dim{S("batch")}
	b, _ := g.NewValue("b")
	g.AddInitializer(b, faInts([]int64{1}, 8))
	out, _ := g.NewValue("out")
	n := &Node{Name: "mul", OpType: "Mul", Inputs: []*Value{a, b}, Outputs: []*Value{out}}
	if err := g.AddNode(n); err != nil {
		t.Fatal(err)
	}
	schema := LookupOp("", "Mul")
	fresh := 0
	c := &InferCtx{Node: n, Opset: 14, Model: &Model{Graph: g}, Limits: &DefaultLimits, fresh: &fresh}
	if err := schema.Infer(c); err != nil {
		t.Fatal(err)
	}
	if len(out.SymInts) != 1 || out.SymInts[0].String() != "batch*8" && out.SymInts[0].String() != "8*batch" {
		t.Fatalf("SymInts = %v, want [batch*8]", out.SymInts)
	}
}

// A second inference run must not keep a value folded by the first.
func TestElementwiseStaleValueCleared(t *testing.T) {
	outs, err := runFAOp(t, "Neg", 14, []faIn{faKnown(faInts(nil, 4))}, nil, 1)
	if err != nil || outs[0].Const == nil {
		t.Fatalf("first run: %v, %v", err, outs[0].Const)
	}
	n := outs[0].Producer
	n.Inputs[0].Const = nil // the input is no longer known
	fresh := 0
	c := &InferCtx{Node: n, Opset: 14, Limits: &DefaultLimits, fresh: &fresh}
	if err := LookupOp("", "Neg").Infer(c); err != nil {
		t.Fatal(err)
	}
	if outs[0].Const != nil {
		t.Errorf("stale value %v survived", outs[0].Const)
	}
}
