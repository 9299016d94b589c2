package ir

import (
	"fmt"
	"testing"
)

// famCOps lists the ops whose shape functions live in ops_nn.go,
// ops_rnn.go, ops_control.go, ops_sequence.go, ops_signal.go and
// ops_misc.go.
var famCOps = []struct{ domain, name string }{
	{"", "Conv"}, {"", "ConvInteger"}, {"", "QLinearConv"}, {"", "DeformConv"}, {"", "ConvTranspose"},
	{"", "MaxPool"}, {"", "AveragePool"}, {"", "LpPool"}, {"", "GlobalAveragePool"}, {"", "GlobalMaxPool"},
	{"", "GlobalLpPool"}, {"", "MaxUnpool"}, {"", "MaxRoiPool"}, {"", "RoiAlign"}, {"", "Gemm"}, {"", "MatMul"},
	{"", "MatMulInteger"}, {"", "QLinearMatMul"}, {"", "Einsum"}, {"", "NonMaxSuppression"}, {"", "GridSample"},
	{"", "AffineGrid"}, {"", "RNN"}, {"", "GRU"}, {"", "LSTM"}, {"", "If"}, {"", "Loop"}, {"", "Scan"},
	{"", "SequenceConstruct"}, {"", "SequenceEmpty"}, {"", "SequenceInsert"}, {"", "SequenceErase"},
	{"", "SequenceAt"}, {"", "SequenceLength"}, {"", "SplitToSequence"}, {"", "ConcatFromSequence"},
	{"", "SequenceMap"}, {"", "Optional"}, {"", "OptionalHasElement"}, {"", "OptionalGetElement"},
	{"", "DFT"}, {"", "STFT"}, {"", "HannWindow"}, {"", "HammingWindow"}, {"", "BlackmanWindow"},
	{"", "MelWeightMatrix"}, {"", "StringNormalizer"}, {"", "StringConcat"}, {"", "StringSplit"},
	{"", "RegexFullMatch"}, {"", "TfIdfVectorizer"}, {trainingDomain, "Adagrad"}, {trainingDomain, "Adam"},
	{trainingDomain, "Momentum"}, {trainingDomain, "Gradient"},
}

// TestFamilyCOpsNeverPanic feeds every op malformed and degenerate inputs
// (unranked, scalars, empty and symbolic shapes, omitted inputs, hostile
// constants, missing attributes and bodies): each must give a result or
// an error, never a panic.
func TestFamilyCOpsNeverPanic(t *testing.T) {
	shapes := []Shape{Unranked(), RankedShape(), KnownShape(0), KnownShape(1, 1), KnownShape(2, 3, 4, 5),
		RankedShape(S("N"), D(3), S("H"), S("W")), KnownShape(1, 1, 1, 1, 1, 1, 1)}
	omitted := []int64{} // marks "leave inputs after the first out"
	consts := [][]int64{nil, {-1}, {0}, {1 << 62}, {3, -7, 0}, omitted}
	attrSets := [][]*Attribute{nil,
		{fcAttrInts("kernel_shape", 2, 2), fcAttrInts("strides", 0, 1), fcAttrInts("pads", -5, 0, 0, 0), fcAttrStr("auto_pad", "VALID")},
		{fcAttrStr("equation", "...ij,...jk->...ik"), fcAttrInt("axis", -9), fcAttrInt("num_scan_inputs", 5), fcAttrInt("hidden_size", -3)},
		{fcAttrStr("equation", "ab,,c"), fcAttrInts("ngram_indexes"), fcAttrInt("new_axis", 1), fcAttrStr("direction", "bidirectional")},
	}
	for _, op := range famCOps {
		s := LookupOp(op.domain, op.name)
		if s == nil {
			t.Errorf("%s::%s is not registered", op.domain, op.name)
			continue
		}
		maxIn := s.MaxIn
		if maxIn < 0 || maxIn > s.MinIn+3 {
			maxIn = s.MinIn + 3
		}
		nout := max(s.MinOut, 1)
		if s.MaxOut >= 0 && nout > s.MaxOut {
			nout = s.MaxOut
		}
		for nin := s.MinIn; nin <= maxIn; nin++ {
			for si, sh := range shapes {
				for ci, cv := range consts {
					for ai, attrs := range attrSets {
						name := fmt.Sprintf("%s/in%d/shape%d/const%d/attrs%d", op.name, nin, si, ci, ai)
						famCRun(t, name, op.domain, op.name, attrs, nin, nout, sh, cv)
					}
				}
			}
		}
	}
}

// famCRun builds one node with nin inputs: the first of shape sh, the
// rest int64 constants cv (of shape sh when cv is nil, omitted when cv is
// empty), and infers it.
func famCRun(t *testing.T, name, domain, op string, attrs []*Attribute, nin, nout int, sh Shape, cv []int64) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s: panic: %v", name, r)
		}
	}()
	g := NewGraph("g")
	var ins []*Value
	for i := 0; i < nin; i++ {
		v, _ := g.NewValue(fmt.Sprintf("in%d", i))
		switch {
		case i > 0 && cv != nil && len(cv) == 0:
			ins = append(ins, nil)
			continue
		case i > 0 && cv != nil:
			g.AddInitializer(v, &Tensor{DType: Int64, Dims: []int64{int64(len(cv))}, Ints: cv, HasData: true})
		default:
			v.Declared = &TypeInfo{Kind: TensorValue, DType: Float32, Shape: sh}
			g.AddInput(v)
		}
		ins = append(ins, v)
	}
	n := &Node{Name: "n", OpType: op, Domain: domain, Inputs: ins, Attrs: attrs}
	for i := 0; i < nout; i++ {
		v, _ := g.NewValue(fmt.Sprintf("out%d", i))
		n.Outputs = append(n.Outputs, v)
	}
	if err := g.AddNode(n); err != nil {
		t.Fatal(err)
	}
	m := &Model{Opsets: []OpsetImport{{Version: 18}, {Domain: trainingDomain, Version: 1}}, Graph: g}
	_, _ = InferShapes(m, InferOptions{})
}
