package ir

import "testing"

func TestReduceTypes(t *testing.T) {
	f32 := Float32
	x := faShape("N", 3, 4, 5)
	axes := func(v ...int64) faIn { return faKnown(faInts([]int64{int64(len(v))}, v...)) }
	runFATypeCases(t, []faTypeCase{
		{name: "attr axes keepdims", op: "ReduceMean", opset: 13, ins: []faIn{faInput(f32, x)}, attrs: []*Attribute{IntsAttr("axes", 2, 3)}, wantDT: f32, want: faShape("N", 3, 1, 1)},
		{name: "attr axes no keepdims", op: "ReduceMax", opset: 13, ins: []faIn{faInput(f32, x)}, attrs: []*Attribute{IntsAttr("axes", -1), IntAttr("keepdims", 0)}, wantDT: f32, want: faShape("N", 3, 4)},
		{name: "default all axes", op: "ReduceL2", opset: 11, ins: []faIn{faInput(f32, x)}, wantDT: f32, want: faShape(1, 1, 1, 1)},
		{name: "default all axes no keepdims", op: "ReduceProd", opset: 11, ins: []faIn{faInput(f32, x)}, attrs: []*Attribute{IntAttr("keepdims", 0)}, wantDT: f32, want: faShape()},
		{name: "keepdims keeps symbol", op: "ReduceSumSquare", opset: 13, ins: []faIn{faInput(f32, x)}, attrs: []*Attribute{IntsAttr("axes", 1)}, wantDT: f32, want: faShape("N", 1, 4, 5)},
		{name: "sum axes input opset 13", op: "ReduceSum", opset: 13, ins: []faIn{faInput(f32, x), axes(1)}, attrs: []*Attribute{IntAttr("keepdims", 0)}, wantDT: f32, want: faShape("N", 4, 5)},
		{name: "mean axes input opset 18", op: "ReduceMean", opset: 18, ins: []faIn{faInput(f32, x), axes(-2, -1)}, wantDT: f32, want: faShape("N", 3, 1, 1)},
		{name: "noop with empty axes", op: "ReduceSum", opset: 13, ins: []faIn{faInput(f32, x)}, attrs: []*Attribute{IntAttr("noop_with_empty_axes", 1)}, wantDT: f32, want: x},
		{name: "statically empty axes input", op: "ReduceLogSumExp", opset: 18, ins: []faIn{faInput(f32, x), faInput(Int64, faShape(0))}, wantDT: f32, want: faShape(1, 1, 1, 1)},
		{name: "unknown axes keepdims keeps rank", op: "ReduceSum", opset: 13, ins: []faIn{faInput(f32, faShape(2, 1)), faInput(Int64, faShape(1))},
			wantDT: f32, want: RankedShape(S("?reduce_1"), D(1))},
		{name: "unknown axes no keepdims, one axis", op: "ReduceSum", opset: 13, ins: []faIn{faInput(f32, faShape(2, 3)), faInput(Int64, faShape(1))}, attrs: []*Attribute{IntAttr("keepdims", 0)},
			wantDT: f32, want: RankedShape(S("?reduce_1"))},
		{name: "int reduce keeps int", op: "ReduceMin", opset: 13, ins: []faIn{faInput(Int32, faShape(6))}, attrs: []*Attribute{IntAttr("keepdims", 0)}, wantDT: Int32, want: faShape()},
		{name: "bad axis", op: "ReduceMean", opset: 13, ins: []faIn{faInput(f32, x)}, attrs: []*Attribute{IntsAttr("axes", 4)}, wantErr: "axis 4 out of range"},
		{name: "argmax", op: "ArgMax", opset: 13, ins: []faIn{faInput(f32, x)}, attrs: []*Attribute{IntAttr("axis", 1)}, wantDT: Int64, want: faShape("N", 1, 4, 5)},
		{name: "argmin no keepdims", op: "ArgMin", opset: 13, ins: []faIn{faInput(f32, x)}, attrs: []*Attribute{IntAttr("axis", -1), IntAttr("keepdims", 0), IntAttr("select_last_index", 1)}, wantDT: Int64, want: faShape("N", 3, 4)},
		{name: "argmax bad axis", op: "ArgMax", opset: 13, ins: []faIn{faInput(f32, x)}, attrs: []*Attribute{IntAttr("axis", -5)}, wantErr: "out of range"},
		{name: "sce loss mean", op: "SoftmaxCrossEntropyLoss", opset: 13, ins: []faIn{faInput(f32, faShape("N", 10)), faInput(Int64, faShape("N"))}, wantDT: f32, want: faShape()},
		{name: "nll loss none", op: "NegativeLogLikelihoodLoss", opset: 13, ins: []faIn{faInput(f32, faShape("N", 10, 7)), faInput(Int64, faShape("N", 7))}, attrs: []*Attribute{StringAttr("reduction", "none")}, wantDT: f32, want: faShape("N", 7)},
		{name: "loss bad reduction", op: "NegativeLogLikelihoodLoss", opset: 13, ins: []faIn{faInput(f32, faShape(2, 3)), faInput(Int64, faShape(2))}, attrs: []*Attribute{StringAttr("reduction", "max")}, wantErr: "reduction"},
	})
}

func TestReduceFold(t *testing.T) {
	// A [2,3] int tensor: rows {1,2,3} and {4,5,6}.
	m := faKnown(faInts([]int64{2, 3}, 1, 2, 3, 4, 5, 6))
	runFAFoldCases(t, []faFoldCase{
		{name: "prod of shape", op: "ReduceProd", opset: 13, ins: []faIn{faKnown(faInts([]int64{3}, 3, 224, 224))}, attrs: []*Attribute{IntAttr("keepdims", 0)},
			wantDT: Int64, dims: []int64{}, ints: []int64{3 * 224 * 224}},
		{name: "sum axis 1 keepdims", op: "ReduceSum", opset: 13, ins: []faIn{m, faKnown(faInts([]int64{1}, 1))},
			wantDT: Int64, dims: []int64{2, 1}, ints: []int64{1 + 2 + 3, 4 + 5 + 6}},
		{name: "sum axis 0 attr", op: "ReduceSum", opset: 11, ins: []faIn{m}, attrs: []*Attribute{IntsAttr("axes", 0), IntAttr("keepdims", 0)},
			wantDT: Int64, dims: []int64{3}, ints: []int64{1 + 4, 2 + 5, 3 + 6}},
		{name: "max all", op: "ReduceMax", opset: 13, ins: []faIn{m}, attrs: []*Attribute{IntAttr("keepdims", 0)}, wantDT: Int64, dims: []int64{}, ints: []int64{6}},
		{name: "min axis -1", op: "ReduceMin", opset: 18, ins: []faIn{m, faKnown(faInts([]int64{1}, -1))}, attrs: []*Attribute{IntAttr("keepdims", 0)},
			wantDT: Int64, dims: []int64{2}, ints: []int64{1, 4}},
		{name: "sum of empty is 0", op: "ReduceSum", opset: 13, ins: []faIn{faKnown(faInts([]int64{0}))}, attrs: []*Attribute{IntAttr("keepdims", 0)}, wantDT: Int64, dims: []int64{}, ints: []int64{0}},
		{name: "float sum", op: "ReduceSum", opset: 13, ins: []faIn{faKnown(faFloats([]int64{2}, 0.5, 0.25))}, attrs: []*Attribute{IntAttr("keepdims", 0)}, wantDT: Float32, dims: []int64{}, floats: []float64{0.75}},
	})
}

// ReduceProd over Shape's symbolic elements gives the element count.
func TestReduceSymbolicProd(t *testing.T) {
	g := NewGraph("t")
	a, _ := g.NewValue("a")
	a.Kind, a.DType, a.Shape, a.SymInts = TensorValue, Int64, KnownShape(2), []Dim{S("batch"), D(768)}
	out, _ := g.NewValue("out")
	n := &Node{Name: "p", OpType: "ReduceProd", Inputs: []*Value{a}, Outputs: []*Value{out}, Attrs: []*Attribute{IntAttr("keepdims", 1)}}
	if err := g.AddNode(n); err != nil {
		t.Fatal(err)
	}
	fresh := 0
	c := &InferCtx{Node: n, Opset: 13, Limits: &DefaultLimits, fresh: &fresh}
	if err := LookupOp("", "ReduceProd").Infer(c); err != nil {
		t.Fatal(err)
	}
	if !out.Shape.Equal(KnownShape(1)) || len(out.SymInts) != 1 {
		t.Fatalf("got %s %v, want [1] holding batch*768", out.Shape, out.SymInts)
	}
	if s := out.SymInts[0].String(); s != "768*batch" && s != "batch*768" {
		t.Errorf("product %q, want batch*768", s)
	}
}
