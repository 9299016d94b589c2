package ir

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestQLinearContribTypes: onnxruntime's QOperator ops take the float
// op's shapes, channels_last taking and giving NHWC; the shapes marked
// "ORT" are what onnxruntime 1.23.2's CPU provider gives for the same
// node (testdata/models/qoperator: TestQOperatorFixtureMatchesORT).
func TestQLinearContribTypes(t *testing.T) {
	u8, i8, f32 := Uint8, Int8, Float32
	s := faInput(f32, faShape())
	z := faInput(u8, faShape())
	x := faInput(u8, faShape("N", 16, 32, 32))
	nhwc := faInput(u8, faShape("N", 32, 32, 16))
	pool := []*Attribute{IntsAttr("kernel_shape", 2, 2), IntsAttr("strides", 2, 2)}
	last := IntAttr("channels_last", 1)
	runFATypeCases(t, []faTypeCase{
		{name: "sigmoid", op: "com.microsoft::QLinearSigmoid", opset: 13, ins: []faIn{x, s, z, s, z}, wantDT: u8, want: faShape("N", 16, 32, 32)},
		{name: "leaky relu, zero points omitted", op: "com.microsoft::QLinearLeakyRelu", opset: 13, ins: []faIn{faInput(i8, faShape(4, 8)), s, faOmitted, s},
			attrs: []*Attribute{FloatAttr("alpha", 0.1)}, wantDT: i8, want: faShape(4, 8)},
		{name: "mul broadcasts", op: "com.microsoft::QLinearMul", opset: 13, ins: []faIn{x, s, z, faInput(u8, faShape(16, 1, 1)), s, z, s, z},
			wantDT: u8, want: faShape("N", 16, 32, 32)},
		{name: "where broadcasts condition, X and Y", op: "com.microsoft::QLinearWhere", opset: 13,
			ins:    []faIn{faInput(Bool, faShape(1, 32)), faInput(i8, faShape(8, 1)), s, faInput(i8, faShape()), faInput(i8, faShape(8, 32)), s, faInput(i8, faShape()), s, faInput(i8, faShape())},
			wantDT: i8, want: faShape(8, 32)},
		{name: "softmax", op: "com.microsoft::QLinearSoftmax", opset: 13, ins: []faIn{faInput(u8, faShape(2, 12, 128, 128)), s, z, s, z},
			attrs: []*Attribute{IntAttr("opset", 13), IntAttr("axis", -1)}, wantDT: u8, want: faShape(2, 12, 128, 128)},
		{name: "average pool (ORT)", op: "com.microsoft::QLinearAveragePool", opset: 13, ins: []faIn{x, s, z, s, z}, attrs: pool,
			wantDT: u8, want: faShape("N", 16, 16, 16)},
		{name: "average pool channels last", op: "com.microsoft::QLinearAveragePool", opset: 13, ins: []faIn{nhwc, s, z, s, z},
			attrs: append([]*Attribute{last}, pool...), wantDT: u8, want: faShape("N", 16, 16, 16)},
		{name: "global average pool (ORT)", op: "com.microsoft::QLinearGlobalAveragePool", opset: 13, ins: []faIn{x, s, z, s, z},
			attrs: []*Attribute{IntAttr("channels_last", 0)}, wantDT: u8, want: faShape("N", 16, 1, 1)},
		{name: "global average pool channels last", op: "com.microsoft::QLinearGlobalAveragePool", opset: 13, ins: []faIn{nhwc, s, z, s, z},
			attrs: []*Attribute{last}, wantDT: u8, want: faShape("N", 1, 1, 16)},
		{name: "concat (ORT)", op: "com.microsoft::QLinearConcat", opset: 13, ins: []faIn{s, z, x, s, z, faInput(u8, faShape("N", 8, 32, 32)), s, z},
			attrs: []*Attribute{IntAttr("axis", 1)}, wantDT: u8, want: faShape("N", 24, 32, 32)},
		{name: "gemm quantized out", op: "com.microsoft::QGemm", opset: 13,
			ins:   []faIn{faInput(u8, faShape(4, 64)), s, z, faInput(i8, faShape(10, 64)), s, faInput(i8, faShape()), faInput(Int32, faShape(10)), s, faInput(u8, faShape())},
			attrs: []*Attribute{IntAttr("transB", 1)}, wantDT: u8, want: faShape(4, 10)},
		{name: "gemm float out", op: "com.microsoft::QGemm", opset: 13,
			ins:   []faIn{faInput(u8, faShape(64, 4)), s, z, faInput(u8, faShape(64, 10)), s, z},
			attrs: []*Attribute{IntAttr("transA", 1)}, wantDT: f32, want: faShape(4, 10)},
		{name: "conv channels last", op: "com.microsoft::QLinearConv", opset: 13,
			ins:   []faIn{nhwc, s, z, faInput(u8, faShape(8, 16, 3, 3)), s, z, s, z},
			attrs: []*Attribute{last, IntsAttr("pads", 1, 1, 1, 1), IntsAttr("strides", 2, 2)}, wantDT: u8, want: faShape("N", 16, 16, 8)},

		{name: "NHWC max pool", op: "com.microsoft::NhwcMaxPool", opset: 13, ins: []faIn{faInput(i8, faShape("N", 56, 56, 64))},
			attrs: []*Attribute{IntsAttr("kernel_shape", 3, 3), IntsAttr("strides", 2, 2), IntsAttr("pads", 1, 1, 1, 1)}, wantDT: i8, want: faShape("N", 28, 28, 64)},

		{name: "concat not in triples", op: "com.microsoft::QLinearConcat", opset: 13, ins: []faIn{s, z, x, s, z, x, s},
			attrs: []*Attribute{IntAttr("axis", 1)}, wantErr: "triples"},
		{name: "softmax axis out of range", op: "com.microsoft::QLinearSoftmax", opset: 13, ins: []faIn{faInput(u8, faShape(2, 8)), s, z, s, z},
			attrs: []*Attribute{IntAttr("opset", 13), IntAttr("axis", 2)}, wantErr: "out of range"},
		{name: "pool without kernel_shape", op: "com.microsoft::QLinearAveragePool", opset: 13, ins: []faIn{x, s, z, s, z}, wantErr: "kernel_shape"},
	})
}

// TestQOperatorFixtureMatchesORT: every value of the QOperator int8 CNN
// (testdata/models/qoperator/qop_cnn.onnx, every quantized op of the
// format at least once) and of the int8 BERT layer quantize_dynamic
// writes (qbert.onnx: QEmbedLayerNormalization, QAttention,
// MatMulInteger, DynamicQuantizeMatMul) and of a sparse decoder's expert
// FFNs (moe_ffn.onnx: MoE, QMoE) is inferred with the dtype and dims
// onnxruntime 1.23.2's CPU provider gave it (NAME.ort_shapes.json, at the
// bindings it names; recorded by record_ort.js there).
func TestQOperatorFixtureMatchesORT(t *testing.T) {
	for _, name := range []string{"qop_cnn", "qdq_cnn", "qdq_attn", "qbert", "moe_ffn", "twins", "qlstm"} {
		t.Run(name, func(t *testing.T) { checkORTShapes(t, name) })
	}
}

// checkORTShapes infers testdata/models/qoperator/NAME.onnx at the
// bindings NAME.ort_shapes.json was recorded at ("batch" binds N) and
// holds every node output to onnxruntime's dtype and dims.
// ortShapes is a NAME.ort_shapes.json record_ort.js wrote: the bindings
// (or, in the first fixture's, the batch N) onnxruntime ran at and each
// value's dtype and dims.
type ortShapes struct {
	Batch    int64            `json:"batch"`
	Bindings map[string]int64 `json:"bindings"`
	Values   map[string]struct {
		Type string  `json:"type"`
		Dims []int64 `json:"dims"`
	} `json:"values"`
}

// readORTShapes reads the ortShapes record at path.
func readORTShapes(t *testing.T, path string) ortShapes {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ref ortShapes
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	return ref
}

func checkORTShapes(t *testing.T, name string) {
	dir := filepath.Join("..", "testdata", "models", "qoperator")
	m, err := ReadFile(filepath.Join(dir, name+".onnx"), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ref := readORTShapes(t, filepath.Join(dir, name+".ort_shapes.json"))
	if ref.Bindings == nil {
		ref.Bindings = map[string]int64{"N": ref.Batch}
	}
	if _, err := InferShapes(m, InferOptions{Bindings: ref.Bindings}); err != nil {
		t.Fatal(err)
	}
	ortType := map[string]DType{"uint8": Uint8, "int8": Int8, "uint16": Uint16, "float32": Float32, "int32": Int32, "int64": Int64}
	seen := 0
	for _, n := range m.Graph.Nodes {
		for _, v := range n.Outputs {
			if v == nil {
				continue // an output the node omits
			}
			want, ok := ref.Values[v.Name]
			if !ok {
				t.Errorf("%s: no onnxruntime shape recorded", v.Name)
				continue
			}
			seen++
			got, known := v.Shape.Ints()
			if !known || !slices.Equal(got, want.Dims) || v.DType != ortType[want.Type] {
				t.Errorf("%s (%s): inferred %s%s, onnxruntime %s%v", v.Name, n.OpType, v.DType, v.Shape, want.Type, want.Dims)
			}
		}
	}
	if seen != len(ref.Values) {
		t.Errorf("compared %d values of %d recorded", seen, len(ref.Values))
	}
}
