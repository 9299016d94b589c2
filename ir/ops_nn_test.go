package ir

import (
	"strconv"
	"testing"
)

// fcIn describes one input of a hand-built single-node graph: a graph
// input of the given type, or, when ints or floats are set, an
// initializer with those contents. An empty name leaves the slot omitted.
type fcIn struct {
	name   string
	dt     DType
	shape  Shape
	ints   []int64
	floats []float64
}

func fcTensorIn(name string, dt DType, dims ...Dim) fcIn {
	return fcIn{name: name, dt: dt, shape: RankedShape(dims...)}
}

func fcKnownIn(name string, dt DType, dims ...int64) fcIn {
	return fcIn{name: name, dt: dt, shape: KnownShape(dims...)}
}

func fcConstInts(name string, dims []int64, vals ...int64) fcIn {
	return fcIn{name: name, dt: Int64, shape: KnownShape(dims...), ints: vals}
}

// fcAddInputs creates the values for ins in g.
func fcAddInputs(t *testing.T, g *Graph, ins []fcIn) []*Value {
	t.Helper()
	vals := make([]*Value, len(ins))
	for i, in := range ins {
		if in.name == "" {
			continue
		}
		if v := g.Local(in.name); v != nil {
			vals[i] = v
			continue
		}
		v, err := g.NewValue(in.name)
		if err != nil {
			t.Fatal(err)
		}
		dims, _ := in.shape.Ints()
		switch {
		case in.ints != nil:
			g.AddInitializer(v, &Tensor{DType: in.dt, Dims: dims, Ints: in.ints, HasData: true})
		case in.floats != nil:
			g.AddInitializer(v, &Tensor{DType: in.dt, Dims: dims, Floats: in.floats, HasData: true})
		default:
			v.Declared = &TypeInfo{Kind: TensorValue, DType: in.dt, Shape: in.shape}
			g.AddInput(v)
		}
		vals[i] = v
	}
	return vals
}

// fcNode appends a node to g reading ins and writing nout fresh outputs.
func fcNode(t *testing.T, g *Graph, op string, attrs []*Attribute, ins []*Value, nout int) *Node {
	t.Helper()
	n := &Node{Name: g.UniqueName(op), OpType: op, Inputs: ins, Attrs: attrs}
	for i := 0; i < nout; i++ {
		v, err := g.NewValue(g.UniqueName(op + "_out"))
		if err != nil {
			t.Fatal(err)
		}
		n.Outputs = append(n.Outputs, v)
	}
	if err := g.AddNode(n); err != nil {
		t.Fatal(err)
	}
	return n
}

// fcInfer builds a one-node model at the given opset and infers it.
func fcInfer(t *testing.T, opset int64, op string, attrs []*Attribute, ins []fcIn, nout int) (*Node, error) {
	t.Helper()
	g := NewGraph("g")
	n := fcNode(t, g, op, attrs, fcAddInputs(t, g, ins), nout)
	for _, o := range n.Outputs {
		g.AddOutput(o)
	}
	m := &Model{Opsets: []OpsetImport{{Version: opset}}, Graph: g}
	_, err := InferShapes(m, InferOptions{})
	return n, err
}

// fcCheck infers a one-node model and compares each output's dtype and
// shape (rendered with Shape.String) with want.
func fcCheck(t *testing.T, opset int64, op string, attrs []*Attribute, ins []fcIn, want ...string) {
	t.Helper()
	n, err := fcInfer(t, opset, op, attrs, ins, len(want))
	if err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	for i, w := range want {
		o := n.Outputs[i]
		got := o.DType.String() + o.Shape.String()
		if got != w {
			t.Errorf("%s output %d = %s, want %s", op, i, got, w)
		}
	}
}

func fcAttrInts(name string, v ...int64) *Attribute {
	return &Attribute{Name: name, Type: AttrInts, Ints: v}
}
func fcAttrInt(name string, v int64) *Attribute { return &Attribute{Name: name, Type: AttrInt, I: v} }
func fcAttrStr(name, v string) *Attribute       { return &Attribute{Name: name, Type: AttrString, S: v} }

func TestConvShapes(t *testing.T) {
	x := fcKnownIn("x", Float32, 1, 3, 224, 224)
	w := fcKnownIn("w", Float32, 64, 3, 11, 11)
	// AlexNet conv1: (224 + 2 + 2 - 11)/4 + 1 = 55.
	out := (224+2+2-11)/4 + 1
	fcCheck(t, 13, "Conv", []*Attribute{fcAttrInts("strides", 4, 4), fcAttrInts("pads", 2, 2, 2, 2)}, []fcIn{x, w},
		"float32[1,64,"+fcItoa(out)+","+fcItoa(out)+"]")

	x7 := fcKnownIn("x", Float32, 1, 1, 7, 7)
	w3 := fcKnownIn("w", Float32, 2, 1, 3, 3)
	// SAME: ceil(7/2) = 4 whatever the kernel.
	fcCheck(t, 13, "Conv", []*Attribute{fcAttrStr("auto_pad", "SAME_UPPER"), fcAttrInts("strides", 2, 2)}, []fcIn{x7, w3}, "float32[1,2,4,4]")
	// VALID: (7-3)/2 + 1 = 3.
	fcCheck(t, 13, "Conv", []*Attribute{fcAttrStr("auto_pad", "VALID"), fcAttrInts("strides", 2, 2)}, []fcIn{x7, w3}, "float32[1,2,3,3]")
	// Dilation 2 widens the 3-tap kernel to (3-1)*2+1 = 5: 7-5+1 = 3.
	fcCheck(t, 13, "Conv", []*Attribute{fcAttrInts("dilations", 2, 2)}, []fcIn{x7, w3}, "float32[1,2,3,3]")
	// Asymmetric pads on a 1-D conv: 7 + 1 + 0 - 3 + 1 = 6.
	fcCheck(t, 13, "Conv", []*Attribute{fcAttrInts("pads", 1, 0)},
		[]fcIn{fcKnownIn("x", Float32, 1, 1, 7), fcKnownIn("w", Float32, 2, 1, 3)}, "float32[1,2,6]")
	// Symbolic batch and height; pad 1 with a 3x3 kernel keeps the size.
	xs := fcTensorIn("x", Float32, S("N"), D(3), S("H"), D(32))
	fcCheck(t, 13, "Conv", []*Attribute{fcAttrInts("pads", 1, 1, 1, 1)}, []fcIn{xs, fcKnownIn("w", Float32, 8, 3, 3, 3)}, "float32[N,8,H,32]")
	// Stride 2 on a symbol stays an expression: (H + 2 - 3)/2 + 1.
	fcCheck(t, 13, "Conv", []*Attribute{fcAttrInts("pads", 1, 1, 1, 1), fcAttrInts("strides", 2, 2)},
		[]fcIn{xs, fcKnownIn("w", Float32, 8, 3, 3, 3)}, "float32[N,8,(H-1)/2+1,16]")
	// Integer and quantized convolutions.
	fcCheck(t, 13, "ConvInteger", nil, []fcIn{fcKnownIn("x", Uint8, 1, 1, 5, 5), fcKnownIn("w", Uint8, 1, 1, 3, 3)}, "int32[1,1,3,3]")
	q := []fcIn{fcKnownIn("x", Uint8, 1, 1, 5, 5), fcKnownIn("xs", Float32), fcKnownIn("xz", Uint8),
		fcKnownIn("w", Uint8, 4, 1, 3, 3), fcKnownIn("ws", Float32), fcKnownIn("wz", Uint8),
		fcKnownIn("ys", Float32), fcKnownIn("yz", Int8)}
	fcCheck(t, 13, "QLinearConv", nil, q, "int8[1,4,3,3]")
	// A weight that does not match the input's rank is an error.
	if _, err := fcInfer(t, 13, "Conv", nil, []fcIn{x7, fcKnownIn("w", Float32, 2, 1, 3)}, 1); err == nil {
		t.Error("Conv with mismatched weight rank: no error")
	}
}

func fcItoa(v int) string { return strconv.Itoa(v) }

func TestConvTransposeShapes(t *testing.T) {
	x := fcKnownIn("x", Float32, 1, 1, 3, 3)
	w := fcKnownIn("w", Float32, 1, 2, 3, 3)
	// stride*(in-1) + k + output_padding - pads = 3*2 + 3 + 1 - 0 = 10.
	fcCheck(t, 13, "ConvTranspose", []*Attribute{fcAttrInts("strides", 3, 2), fcAttrInts("output_padding", 1, 1)}, []fcIn{x, w},
		"float32[1,2,"+fcItoa(3*2+3+1)+","+fcItoa(2*2+3+1)+"]")
	// group 2 doubles the output channels: W[1]*group.
	fcCheck(t, 13, "ConvTranspose", []*Attribute{fcAttrInt("group", 2)}, []fcIn{fcKnownIn("x", Float32, 1, 2, 3, 3), fcKnownIn("w", Float32, 2, 2, 3, 3)},
		"float32[1,4,5,5]")
	// output_shape wins.
	fcCheck(t, 13, "ConvTranspose", []*Attribute{fcAttrInts("strides", 3, 2), fcAttrInts("output_shape", 10, 8)}, []fcIn{x, w}, "float32[1,2,10,8]")
	// SAME_UPPER: in*stride.
	fcCheck(t, 13, "ConvTranspose", []*Attribute{fcAttrInts("strides", 2, 2), fcAttrStr("auto_pad", "SAME_UPPER")}, []fcIn{x, w}, "float32[1,2,6,6]")
	// pads subtract: 1*(3-1) + 3 - 2 = 3.
	fcCheck(t, 13, "ConvTranspose", []*Attribute{fcAttrInts("pads", 1, 1, 1, 1)}, []fcIn{x, w}, "float32[1,2,3,3]")
	// Symbolic: H*2 + (3 - 2) = H*2+1.
	fcCheck(t, 13, "ConvTranspose", []*Attribute{fcAttrInts("strides", 2, 2)},
		[]fcIn{fcTensorIn("x", Float32, D(1), D(1), S("H"), D(3)), w}, "float32[1,2,H*2+1,7]")
}

func TestPoolShapes(t *testing.T) {
	x := fcKnownIn("x", Float32, 1, 3, 4, 4)
	// floor((4-3)/2)+1 = 1; ceil gives ceil(1/2)+1 = 2.
	fcCheck(t, 13, "MaxPool", []*Attribute{fcAttrInts("kernel_shape", 3, 3), fcAttrInts("strides", 2, 2)}, []fcIn{x}, "float32[1,3,1,1]")
	fcCheck(t, 13, "MaxPool", []*Attribute{fcAttrInts("kernel_shape", 3, 3), fcAttrInts("strides", 2, 2), fcAttrInt("ceil_mode", 1)}, []fcIn{x},
		"float32[1,3,2,2]", "int64[1,3,2,2]")
	// ceil mode drops a window that would start in the end padding:
	// in 5, k 2, s 2, pad 1: ceil((5+2-2)/2)+1 = 4, but window 4 starts at
	// 3*2 = 6 >= 5+1, so 3.
	fcCheck(t, 13, "MaxPool", []*Attribute{fcAttrInts("kernel_shape", 2), fcAttrInts("strides", 2), fcAttrInts("pads", 1, 1), fcAttrInt("ceil_mode", 1)},
		[]fcIn{fcKnownIn("x", Float32, 1, 1, 5)}, "float32[1,1,3]")
	fcCheck(t, 13, "AveragePool", []*Attribute{fcAttrInts("kernel_shape", 2, 2), fcAttrStr("auto_pad", "SAME_LOWER")}, []fcIn{x}, "float32[1,3,4,4]")
	fcCheck(t, 19, "AveragePool", []*Attribute{fcAttrInts("kernel_shape", 2, 2), fcAttrInts("dilations", 2, 2)}, []fcIn{x}, "float32[1,3,2,2]")
	fcCheck(t, 13, "LpPool", []*Attribute{fcAttrInts("kernel_shape", 2, 2)}, []fcIn{x}, "float32[1,3,3,3]")
	fcCheck(t, 13, "GlobalAveragePool", nil, []fcIn{fcTensorIn("x", Float16, S("N"), D(8), D(7), D(7))}, "float16[N,8,1,1]")
	fcCheck(t, 13, "GlobalMaxPool", nil, []fcIn{fcKnownIn("x", Float32, 2, 8, 5)}, "float32[2,8,1]")
	// MaxUnpool: (in-1)*s + k - pads = 1*2 + 2 = 4.
	fcCheck(t, 11, "MaxUnpool", []*Attribute{fcAttrInts("kernel_shape", 2, 2), fcAttrInts("strides", 2, 2)},
		[]fcIn{fcKnownIn("x", Float32, 1, 1, 2, 2), fcKnownIn("i", Int64, 1, 1, 2, 2)}, "float32[1,1,4,4]")
	fcCheck(t, 11, "MaxUnpool", []*Attribute{fcAttrInts("kernel_shape", 2, 2), fcAttrInts("strides", 2, 2)},
		[]fcIn{fcKnownIn("x", Float32, 1, 1, 2, 2), fcKnownIn("i", Int64, 1, 1, 2, 2), fcConstInts("s", []int64{4}, 1, 1, 5, 5)}, "float32[1,1,5,5]")
	if _, err := fcInfer(t, 13, "MaxPool", nil, []fcIn{x}, 1); err == nil {
		t.Error("MaxPool without kernel_shape: no error")
	}
}

func TestRoiOps(t *testing.T) {
	x := fcKnownIn("x", Float32, 1, 256, 50, 50)
	rois := fcKnownIn("rois", Float32, 7, 5)
	fcCheck(t, 13, "MaxRoiPool", []*Attribute{fcAttrInts("pooled_shape", 6, 6)}, []fcIn{x, rois}, "float32[7,256,6,6]")
	fcCheck(t, 16, "RoiAlign", []*Attribute{fcAttrInt("output_height", 5), fcAttrInt("output_width", 4)},
		[]fcIn{x, fcKnownIn("rois", Float32, 7, 4), fcKnownIn("bi", Int64, 7)}, "float32[7,256,5,4]")
	fcCheck(t, 16, "GridSample", nil, []fcIn{fcKnownIn("x", Float32, 2, 3, 10, 10), fcKnownIn("g", Float32, 2, 6, 7, 2)}, "float32[2,3,6,7]")
	fcCheck(t, 20, "AffineGrid", nil, []fcIn{fcKnownIn("theta", Float32, 2, 2, 3), fcConstInts("size", []int64{4}, 2, 3, 5, 6)}, "float32[2,5,6,2]")
}

func TestGemmMatMulShapes(t *testing.T) {
	a, b := fcKnownIn("a", Float32, 3, 5), fcKnownIn("b", Float32, 5, 4)
	fcCheck(t, 13, "Gemm", nil, []fcIn{a, b}, "float32[3,4]")
	fcCheck(t, 13, "Gemm", []*Attribute{fcAttrInt("transA", 1), fcAttrInt("transB", 1)},
		[]fcIn{fcKnownIn("a", Float32, 5, 3), fcKnownIn("b", Float32, 4, 5), fcKnownIn("c", Float32, 1)}, "float32[3,4]")
	mm := func(as, bs []Dim, want string) {
		t.Helper()
		fcCheck(t, 13, "MatMul", nil, []fcIn{fcTensorIn("a", Float32, as...), fcTensorIn("b", Float32, bs...)}, want)
	}
	mm([]Dim{D(2), D(3), D(4)}, []Dim{D(4)}, "float32[2,3]")                             // 1-D right operand: its promoted dim is dropped
	mm([]Dim{D(4)}, []Dim{D(5), D(4), D(6)}, "float32[5,6]")                             // 1-D left operand
	mm([]Dim{D(4)}, []Dim{D(4)}, "float32[]")                                            // dot product
	mm([]Dim{D(1), D(3), D(4), D(5)}, []Dim{D(2), D(1), D(5), D(6)}, "float32[2,3,4,6]") // batch dims broadcast
	mm([]Dim{S("B"), S("L"), D(64)}, []Dim{D(64), D(128)}, "float32[B,L,128]")           // symbolic batch
	fcCheck(t, 13, "MatMulInteger", nil, []fcIn{fcKnownIn("a", Uint8, 4, 3), fcKnownIn("b", Uint8, 3, 2)}, "int32[4,2]")
	fcCheck(t, 13, "QLinearMatMul", nil, []fcIn{fcKnownIn("a", Uint8, 2, 4), fcKnownIn("as", Float32), fcKnownIn("az", Uint8),
		fcKnownIn("b", Uint8, 4, 3), fcKnownIn("bs", Float32), fcKnownIn("bz", Uint8), fcKnownIn("ys", Float32), fcKnownIn("yz", Uint8)}, "uint8[2,3]")
	if _, err := fcInfer(t, 13, "MatMul", nil, []fcIn{fcKnownIn("a", Float32, 2, 3), fcKnownIn("b", Float32, 4, 2)}, 1); err == nil {
		t.Error("MatMul with inner dims 3 and 4: no error")
	}
}

func TestEinsumShapes(t *testing.T) {
	eq := func(e string, ins []fcIn, want string) {
		t.Helper()
		fcCheck(t, 12, "Einsum", []*Attribute{fcAttrStr("equation", e)}, ins, want)
	}
	a, b := fcKnownIn("a", Float32, 3, 4), fcKnownIn("b", Float32, 4, 5)
	eq("ij,jk->ik", []fcIn{a, b}, "float32[3,5]")
	eq("ij,jk", []fcIn{a, b}, "float32[3,5]") // implicit: letters used once, sorted
	eq("ij->ji", []fcIn{a}, "float32[4,3]")
	eq("ij->", []fcIn{a}, "float32[]")
	eq("bij, bjk -> bik", []fcIn{fcKnownIn("a", Float32, 2, 3, 4), fcKnownIn("b", Float32, 2, 4, 5)}, "float32[2,3,5]")
	eq("...ii->...i", []fcIn{fcKnownIn("a", Float32, 2, 7, 3, 3)}, "float32[2,7,3]")
	eq("...ij,...jk", []fcIn{fcKnownIn("a", Float32, 2, 1, 3, 4), fcKnownIn("b", Float32, 5, 4, 6)}, "float32[2,5,3,6]") // ellipsis broadcasts
	eq("i,i", []fcIn{fcKnownIn("a", Float32, 4), fcKnownIn("b", Float32, 4)}, "float32[]")
	if _, err := fcInfer(t, 12, "Einsum", []*Attribute{fcAttrStr("equation", "ij->k")}, []fcIn{a}, 1); err == nil {
		t.Error("Einsum with an output letter absent from the inputs: no error")
	}
	if _, err := fcInfer(t, 12, "Einsum", []*Attribute{fcAttrStr("equation", "i.j->i")}, []fcIn{a}, 1); err == nil {
		t.Error("Einsum with a lone dot: no error")
	}
}

func TestNonMaxSuppression(t *testing.T) {
	boxes := fcIn{name: "boxes", dt: Float32, shape: KnownShape(1, 3, 4), floats: []float64{
		0, 0, 1, 1, // box 0
		0, 0.1, 1, 1.1, // overlaps box 0 with IoU 0.9/1.1
		0, 10, 1, 11, // far away
	}}
	scores := fcIn{name: "scores", dt: Float32, shape: KnownShape(1, 1, 3), floats: []float64{0.9, 0.8, 0.7}}
	maxOut := fcConstInts("max", nil, 3)
	iou := fcIn{name: "iou", dt: Float32, shape: KnownShape(), floats: []float64{0.5}}
	// Box 1 is suppressed by box 0: 2 selected.
	fcCheck(t, 11, "NonMaxSuppression", nil, []fcIn{boxes, scores, maxOut, iou}, "int64[2,3]")
	// Unknown boxes: a data-dependent count.
	n, err := fcInfer(t, 11, "NonMaxSuppression", nil, []fcIn{fcKnownIn("boxes", Float32, 1, 3, 4), fcKnownIn("scores", Float32, 1, 1, 3)}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if s := n.Outputs[0].Shape; s.Rank() != 2 || s.Dims[0].IsKnown() || !s.Dims[1].Is(3) {
		t.Errorf("NonMaxSuppression on unknown boxes: %s, want [?,3]", s)
	}
}
