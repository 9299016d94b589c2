package ir

import (
	"strings"
	"testing"
)

// validateCase is one single-node model: with wantErr empty it must infer;
// otherwise inference must fail with an error that names the op, the node
// and contains wantErr.
type validateCase struct {
	name    string
	op      string
	opset   int64
	attrs   []*Attribute
	ins     []fcIn
	nout    int
	wantErr string
}

func runValidateCases(t *testing.T, cases []validateCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opset, nout := tc.opset, tc.nout
			if opset == 0 {
				opset = 17
			}
			if nout == 0 {
				nout = 1
			}
			n, err := fcInfer(t, opset, tc.op, tc.attrs, tc.ins, nout)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("valid model refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted, inferred %s; want an error containing %q", n.Outputs[0].Shape, tc.wantErr)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, tc.op+" node \""+n.Name+"\": ") || !strings.Contains(msg, tc.wantErr) {
				t.Fatalf("error %q: want it to name %s node %q and contain %q", msg, tc.op, n.Name, tc.wantErr)
			}
		})
	}
}

func f32(name string, dims ...int64) fcIn { return fcKnownIn(name, Float32, dims...) }

func TestValidateConv(t *testing.T) {
	group := func(g int64) *Attribute { return fcAttrInt("group", g) }
	runValidateCases(t, []validateCase{
		{name: "good", op: "Conv", ins: []fcIn{f32("x", 1, 3, 8, 8), f32("w", 4, 3, 3, 3), f32("b", 4)}},
		{name: "grouped good", op: "Conv", attrs: []*Attribute{group(2)}, ins: []fcIn{f32("x", 1, 6, 8, 8), f32("w", 4, 3, 3, 3)}},
		{name: "depthwise good", op: "Conv", attrs: []*Attribute{group(8)}, ins: []fcIn{f32("x", 1, 8, 8, 8), f32("w", 8, 1, 3, 3)}},
		{name: "symbolic channels", op: "Conv", ins: []fcIn{fcTensorIn("x", Float32, S("N"), S("C"), D(8), D(8)), f32("w", 4, 5, 3, 3)}},
		// The cases: each was inferred and costed.
		{name: "channels", op: "Conv", ins: []fcIn{f32("x", 1, 3, 8, 8), f32("w", 4, 5, 3, 3)}, wantErr: "3 channels but weight [4,5,3,3] with group 1 takes 5"},
		{name: "group channels", op: "Conv", attrs: []*Attribute{group(4)}, ins: []fcIn{f32("x", 1, 6, 8, 8), f32("w", 4, 2, 3, 3)}, wantErr: "takes 8"},
		{name: "M not divisible", op: "Conv", attrs: []*Attribute{group(2)}, ins: []fcIn{f32("x", 1, 6, 8, 8), f32("w", 5, 3, 3, 3)}, wantErr: "not divisible by group 2"},
		{name: "group zero", op: "Conv", attrs: []*Attribute{group(0)}, ins: []fcIn{f32("x", 1, 3, 8, 8), f32("w", 4, 3, 3, 3)}, wantErr: "group 0 must be positive"},
		{name: "bias length", op: "Conv", ins: []fcIn{f32("x", 1, 3, 8, 8), f32("w", 4, 3, 3, 3), f32("b", 5)}, wantErr: "bias has length 5, want 4"},
		{name: "bias rank", op: "Conv", ins: []fcIn{f32("x", 1, 3, 8, 8), f32("w", 4, 3, 3, 3), f32("b", 1, 4)}, wantErr: "bias must be 1-D"},
		{name: "kernel_shape vs W", op: "Conv", attrs: []*Attribute{fcAttrInts("kernel_shape", 5, 5)}, ins: []fcIn{f32("x", 1, 3, 8, 8), f32("w", 4, 3, 3, 3)}, wantErr: "contradicts weight shape"},
		{name: "window larger than input", op: "Conv", ins: []fcIn{f32("x", 1, 3, 2, 8), f32("w", 4, 3, 3, 3)}, wantErr: "window of 3 on spatial axis 0 exceeds the padded input extent 2"},
		{name: "padding makes room", op: "Conv", attrs: []*Attribute{fcAttrInts("pads", 1, 1, 1, 1)}, ins: []fcIn{f32("x", 1, 3, 2, 8), f32("w", 4, 3, 3, 3)}},
		{name: "dilated window", op: "Conv", attrs: []*Attribute{fcAttrInts("dilations", 4, 1)}, ins: []fcIn{f32("x", 1, 3, 8, 8), f32("w", 4, 3, 3, 3)}, wantErr: "window of 9"},
		{name: "ConvInteger channels", op: "ConvInteger", opset: 10, ins: []fcIn{fcKnownIn("x", Uint8, 1, 3, 8, 8), fcKnownIn("w", Uint8, 4, 2, 3, 3)}, wantErr: "takes 2"},
	})
}

func TestValidateConvTranspose(t *testing.T) {
	runValidateCases(t, []validateCase{
		{name: "good", op: "ConvTranspose", ins: []fcIn{f32("x", 1, 4, 5, 5), f32("w", 4, 3, 3, 3), f32("b", 3)}},
		{name: "grouped good", op: "ConvTranspose", attrs: []*Attribute{fcAttrInt("group", 2)}, ins: []fcIn{f32("x", 1, 4, 5, 5), f32("w", 4, 3, 3, 3), f32("b", 6)}},
		{name: "channels", op: "ConvTranspose", ins: []fcIn{f32("x", 1, 3, 5, 5), f32("w", 4, 3, 3, 3)}, wantErr: "3 channels but weight [4,3,3,3] takes 4"},
		{name: "group divides C", op: "ConvTranspose", attrs: []*Attribute{fcAttrInt("group", 3)}, ins: []fcIn{f32("x", 1, 4, 5, 5), f32("w", 4, 3, 3, 3)}, wantErr: "not divisible by group 3"},
		{name: "bias is M = W[1]*group", op: "ConvTranspose", attrs: []*Attribute{fcAttrInt("group", 2)}, ins: []fcIn{f32("x", 1, 4, 5, 5), f32("w", 4, 3, 3, 3), f32("b", 3)}, wantErr: "bias has length 3, want 6"},
		{name: "pads eat the output", op: "ConvTranspose", attrs: []*Attribute{fcAttrInts("pads", 2, 0, 2, 0)}, ins: []fcIn{f32("x", 1, 4, 1, 5), f32("w", 4, 3, 3, 3)}, wantErr: "output extent -1 on spatial axis 0"},
	})
}

func TestValidatePool(t *testing.T) {
	ks := func(k ...int64) *Attribute { return fcAttrInts("kernel_shape", k...) }
	runValidateCases(t, []validateCase{
		{name: "good", op: "MaxPool", attrs: []*Attribute{ks(3, 3)}, ins: []fcIn{f32("x", 1, 3, 8, 8)}},
		{name: "window fits padded", op: "AveragePool", attrs: []*Attribute{ks(3, 3), fcAttrInts("pads", 1, 1, 1, 1)}, ins: []fcIn{f32("x", 1, 3, 1, 1)}},
		{name: "SAME never too small", op: "MaxPool", attrs: []*Attribute{ks(5, 5), fcAttrStr("auto_pad", "SAME_UPPER")}, ins: []fcIn{f32("x", 1, 3, 2, 2)}},
		{name: "window larger", op: "MaxPool", attrs: []*Attribute{ks(7, 7)}, ins: []fcIn{f32("x", 1, 3, 4, 8)}, wantErr: "window of 7 on spatial axis 0 exceeds the padded input extent 4"},
		{name: "VALID ignores pads", op: "AveragePool", attrs: []*Attribute{ks(3, 3), fcAttrStr("auto_pad", "VALID")}, ins: []fcIn{f32("x", 1, 3, 8, 2)}, wantErr: "spatial axis 1"},
		{name: "LpPool", op: "LpPool", attrs: []*Attribute{ks(9)}, ins: []fcIn{f32("x", 1, 3, 8)}, wantErr: "window of 9"},
	})
}

func TestValidateGemm(t *testing.T) {
	ta := fcAttrInt("transA", 1)
	tb := fcAttrInt("transB", 1)
	runValidateCases(t, []validateCase{
		{name: "good", op: "Gemm", ins: []fcIn{f32("a", 2, 3), f32("b", 3, 5), f32("c", 5)}},
		{name: "transB good", op: "Gemm", attrs: []*Attribute{tb}, ins: []fcIn{f32("a", 2, 3), f32("b", 5, 3), f32("c", 2, 1)}},
		{name: "transA good", op: "Gemm", attrs: []*Attribute{ta}, ins: []fcIn{f32("a", 3, 2), f32("b", 3, 5)}},
		{name: "scalar C", op: "Gemm", ins: []fcIn{f32("a", 2, 3), f32("b", 3, 5), f32("c")}},
		{name: "symbolic K", op: "Gemm", ins: []fcIn{fcTensorIn("a", Float32, D(2), S("K")), f32("b", 4, 5)}},
		// The case: [2,3] x [4,5] was inferred to [2,5].
		{name: "inner dims", op: "Gemm", ins: []fcIn{f32("a", 2, 3), f32("b", 4, 5)}, wantErr: "gives K=3, B [4,5] (transB=0) gives K=4"},
		{name: "inner dims transA", op: "Gemm", attrs: []*Attribute{ta}, ins: []fcIn{f32("a", 2, 3), f32("b", 3, 5)}, wantErr: "inner dims differ"},
		{name: "inner dims transB", op: "Gemm", attrs: []*Attribute{tb}, ins: []fcIn{f32("a", 2, 3), f32("b", 3, 5)}, wantErr: "inner dims differ"},
		{name: "C does not broadcast", op: "Gemm", ins: []fcIn{f32("a", 2, 3), f32("b", 3, 5), f32("c", 4)}, wantErr: "C [4] does not broadcast to Y [2,5]"},
		{name: "C rank 3", op: "Gemm", ins: []fcIn{f32("a", 2, 3), f32("b", 3, 5), f32("c", 1, 2, 5)}, wantErr: "has rank 3"},
	})
}

func TestValidateNorms(t *testing.T) {
	bn := func(c int64) []fcIn {
		return []fcIn{f32("x", 2, 8, 4, 4), f32("s", c), f32("b", 8), f32("m", 8), f32("v", 8)}
	}
	ng := func(g int64) *Attribute { return fcAttrInt("num_groups", g) }
	runValidateCases(t, []validateCase{
		{name: "BatchNorm good", op: "BatchNormalization", opset: 15, ins: bn(8)},
		{name: "BatchNorm scale", op: "BatchNormalization", opset: 15, ins: bn(6), wantErr: "scale has length 6, want 8"},
		{name: "BatchNorm var", op: "BatchNormalization", opset: 15, ins: []fcIn{f32("x", 2, 8, 4, 4), f32("s", 8), f32("b", 8), f32("m", 8), f32("v", 1, 8)}, wantErr: "input_var must be 1-D"},
		{name: "BatchNorm rank 1 X", op: "BatchNormalization", opset: 15, ins: []fcIn{f32("x", 8), f32("s", 8), f32("b", 8), f32("m", 8), f32("v", 8)}, wantErr: "need at least 2"},
		{name: "InstanceNorm good", op: "InstanceNormalization", ins: []fcIn{f32("x", 2, 8, 4), f32("s", 8), f32("b", 8)}},
		{name: "InstanceNorm bias", op: "InstanceNormalization", ins: []fcIn{f32("x", 2, 8, 4), f32("s", 8), f32("b", 4)}, wantErr: "B has length 4, want 8"},
		{name: "LayerNorm good", op: "LayerNormalization", ins: []fcIn{f32("x", 2, 5, 16), f32("s", 16), f32("b", 16)}},
		{name: "LayerNorm 2-axis good", op: "LayerNormalization", attrs: []*Attribute{fcAttrInt("axis", 1)}, ins: []fcIn{f32("x", 2, 5, 16), f32("s", 5, 16)}},
		{name: "LayerNorm scale", op: "LayerNormalization", ins: []fcIn{f32("x", 2, 5, 16), f32("s", 12)}, wantErr: "Scale [12] does not broadcast to input [2,5,16]"},
		{name: "LayerNorm bias", op: "LayerNormalization", ins: []fcIn{f32("x", 2, 5, 16), f32("s", 16), f32("b", 5, 8)}, wantErr: "B [5,8] does not broadcast"},
		{name: "GroupNorm good (opset 21, [C])", op: "GroupNormalization", opset: 21, attrs: []*Attribute{ng(4)}, ins: []fcIn{f32("x", 2, 8, 4, 4), f32("s", 8), f32("b", 8)}},
		{name: "GroupNorm good (opset 18, [G])", op: "GroupNormalization", opset: 18, attrs: []*Attribute{ng(4)}, ins: []fcIn{f32("x", 2, 8, 4, 4), f32("s", 4), f32("b", 4)}},
		{name: "GroupNorm groups", op: "GroupNormalization", opset: 21, attrs: []*Attribute{ng(3)}, ins: []fcIn{f32("x", 2, 8, 4, 4), f32("s", 8), f32("b", 8)}, wantErr: "8 channels, not divisible by num_groups 3"},
		{name: "GroupNorm scale", op: "GroupNormalization", opset: 21, attrs: []*Attribute{ng(4)}, ins: []fcIn{f32("x", 2, 8, 4, 4), f32("s", 6), f32("b", 8)}, wantErr: "scale has length 6"},
	})
}

func TestValidateGatherScatter(t *testing.T) {
	i64 := func(name string, dims ...int64) fcIn { return fcKnownIn(name, Int64, dims...) }
	ax := func(a int64) *Attribute { return fcAttrInt("axis", a) }
	runValidateCases(t, []validateCase{
		{name: "GatherElements good", op: "GatherElements", attrs: []*Attribute{ax(1)}, ins: []fcIn{f32("d", 3, 4), i64("i", 2, 7)}},
		{name: "GatherElements off-axis", op: "GatherElements", attrs: []*Attribute{ax(1)}, ins: []fcIn{f32("d", 3, 4), i64("i", 5, 2)}, wantErr: "exceed data [3,4] on axis 0"},
		{name: "GatherND good", op: "GatherND", attrs: []*Attribute{fcAttrInt("batch_dims", 1)}, ins: []fcIn{f32("d", 2, 3, 4), i64("i", 2, 1)}},
		{name: "GatherND batch", op: "GatherND", attrs: []*Attribute{fcAttrInt("batch_dims", 1)}, ins: []fcIn{f32("d", 2, 3, 4), i64("i", 3, 1)}, wantErr: "batch dim 0 differs"},
		{name: "ScatterElements good", op: "ScatterElements", ins: []fcIn{f32("d", 3, 3), i64("i", 2, 3), f32("u", 2, 3)}},
		{name: "ScatterElements updates", op: "ScatterElements", ins: []fcIn{f32("d", 3, 3), i64("i", 2, 3), f32("u", 3, 3)}, wantErr: "updates [3,3] must have the shape of indices [2,3]"},
		{name: "ScatterElements rank", op: "ScatterElements", ins: []fcIn{f32("d", 3, 3), i64("i", 3), f32("u", 3)}, wantErr: "data has rank 2, indices rank 1"},
		{name: "ScatterND good", op: "ScatterND", ins: []fcIn{f32("d", 4, 4, 4), i64("i", 2, 1), f32("u", 2, 4, 4)}},
		{name: "ScatterND updates", op: "ScatterND", ins: []fcIn{f32("d", 4, 4, 4), i64("i", 2, 1), f32("u", 2, 4)}, wantErr: "must have shape [2,4,4]"},
		{name: "ScatterND depth", op: "ScatterND", ins: []fcIn{f32("d", 4, 4), i64("i", 2, 3), f32("u", 2)}, wantErr: "index depth 3 does not fit data of rank 2"},
	})
}

func TestValidateRecurrent(t *testing.T) {
	h := fcAttrInt("hidden_size", 5)
	runValidateCases(t, []validateCase{
		{name: "LSTM good", op: "LSTM", attrs: []*Attribute{h}, ins: []fcIn{f32("x", 7, 2, 3), f32("w", 1, 20, 3), f32("r", 1, 20, 5), f32("b", 1, 40)}, nout: 3},
		{name: "GRU bidirectional good", op: "GRU", attrs: []*Attribute{h, fcAttrStr("direction", "bidirectional")}, ins: []fcIn{f32("x", 7, 2, 3), f32("w", 2, 15, 3), f32("r", 2, 15, 5)}, nout: 2},
		{name: "LSTM W rows", op: "LSTM", attrs: []*Attribute{h}, ins: []fcIn{f32("x", 7, 2, 3), f32("w", 1, 15, 3), f32("r", 1, 20, 5)}, nout: 3, wantErr: "W [1,15,3] has 15 rows, want 4 gates x hidden 5"},
		{name: "RNN input size", op: "RNN", attrs: []*Attribute{h}, ins: []fcIn{f32("x", 7, 2, 4), f32("w", 1, 5, 3), f32("r", 1, 5, 5)}, nout: 2, wantErr: "takes inputs of size 3"},
		{name: "GRU directions", op: "GRU", attrs: []*Attribute{h, fcAttrStr("direction", "bidirectional")}, ins: []fcIn{f32("x", 7, 2, 3), f32("w", 1, 15, 3), f32("r", 1, 15, 5)}, nout: 2, wantErr: "has 1 directions, the op has 2"},
		{name: "LSTM bias", op: "LSTM", attrs: []*Attribute{h}, ins: []fcIn{f32("x", 7, 2, 3), f32("w", 1, 20, 3), f32("r", 1, 20, 5), f32("b", 1, 20)}, nout: 3, wantErr: "B [1,20] has 20 columns, want 2 x 4 gates"},
	})
}

func TestValidateMisc(t *testing.T) {
	k := func(v int64) fcIn { return fcConstInts("k", []int64{1}, v) }
	runValidateCases(t, []validateCase{
		{name: "TopK good", op: "TopK", ins: []fcIn{f32("x", 3, 4), k(4)}, nout: 2},
		{name: "TopK too large", op: "TopK", ins: []fcIn{f32("x", 3, 4), k(5)}, nout: 2, wantErr: "k 5 exceeds axis 1 of size 4"},
		{name: "Dequantize per-axis good", op: "DequantizeLinear", opset: 13, attrs: []*Attribute{fcAttrInt("axis", 0)}, ins: []fcIn{fcKnownIn("x", Int8, 4, 3), f32("s", 4)}},
		{name: "Dequantize per-axis length", op: "DequantizeLinear", opset: 13, attrs: []*Attribute{fcAttrInt("axis", 0)}, ins: []fcIn{fcKnownIn("x", Int8, 4, 3), f32("s", 3)}, wantErr: "scale has 3 entries, axis 0 of input [4,3] has 4"},
		{name: "Quantize scalar good", op: "QuantizeLinear", opset: 13, ins: []fcIn{f32("x", 4, 3), f32("s")}},
		{name: "CumSum good", op: "CumSum", ins: []fcIn{f32("x", 2, 3), fcConstInts("a", []int64{}, -1)}},
		{name: "CumSum axis", op: "CumSum", ins: []fcIn{f32("x", 2, 3), fcConstInts("a", []int64{}, 4)}, wantErr: "axis 4 out of range for rank 2"},
		{name: "Trilu good", op: "Trilu", ins: []fcIn{f32("x", 2, 3)}},
		{name: "Trilu rank", op: "Trilu", ins: []fcIn{f32("x", 3)}, wantErr: "need at least 2"},
		{name: "LRN good", op: "LRN", attrs: []*Attribute{fcAttrInt("size", 3)}, ins: []fcIn{f32("x", 1, 3, 4, 4)}},
		{name: "LRN size", op: "LRN", attrs: []*Attribute{fcAttrInt("size", 0)}, ins: []fcIn{f32("x", 1, 3, 4, 4)}, wantErr: "size must be a positive integer"},
		{name: "Einsum good", op: "Einsum", attrs: []*Attribute{fcAttrStr("equation", "ij,jk->ik")}, ins: []fcIn{f32("a", 2, 3), f32("b", 3, 5)}},
		{name: "Einsum broadcast 1 good", op: "Einsum", attrs: []*Attribute{fcAttrStr("equation", "ij,ij->ij")}, ins: []fcIn{f32("a", 2, 3), f32("b", 1, 3)}},
		{name: "Einsum letter dims", op: "Einsum", attrs: []*Attribute{fcAttrStr("equation", "ij,jk->ik")}, ins: []fcIn{f32("a", 2, 3), f32("b", 4, 5)}, wantErr: "letter j is 3 in one operand and 4 in operand 1"},
		{name: "ConstantOfShape good", op: "ConstantOfShape", ins: []fcIn{fcConstInts("s", []int64{2}, 2, 0)}},
		{name: "ConstantOfShape negative", op: "ConstantOfShape", ins: []fcIn{fcConstInts("s", []int64{2}, 2, -1)}, wantErr: "has a negative dim"},
		{name: "ConstantOfShape two negatives", op: "ConstantOfShape", ins: []fcIn{fcConstInts("s", []int64{2}, -1, -1)}, wantErr: "has a negative dim"},
	})
}

func TestValidateDetection(t *testing.T) {
	i64 := func(name string, dims ...int64) fcIn { return fcKnownIn(name, Int64, dims...) }
	runValidateCases(t, []validateCase{
		{name: "RoiAlign good", op: "RoiAlign", ins: []fcIn{f32("x", 1, 3, 8, 8), f32("r", 5, 4), i64("b", 5)}},
		{name: "RoiAlign rois width", op: "RoiAlign", ins: []fcIn{f32("x", 1, 3, 8, 8), f32("r", 5, 5), i64("b", 5)}, wantErr: "must be [R, 4]"},
		{name: "RoiAlign batch_indices", op: "RoiAlign", ins: []fcIn{f32("x", 1, 3, 8, 8), f32("r", 5, 4), i64("b", 4)}, wantErr: "batch_indices has length 4, want 5"},
		{name: "MaxRoiPool good", op: "MaxRoiPool", attrs: []*Attribute{fcAttrInts("pooled_shape", 2, 2)}, ins: []fcIn{f32("x", 1, 3, 8, 8), f32("r", 5, 5)}},
		{name: "MaxRoiPool rois", op: "MaxRoiPool", attrs: []*Attribute{fcAttrInts("pooled_shape", 2, 2)}, ins: []fcIn{f32("x", 1, 3, 8, 8), f32("r", 5, 4)}, wantErr: "must be [R, 5]"},
		{name: "GridSample good", op: "GridSample", ins: []fcIn{f32("x", 2, 3, 8, 8), f32("g", 2, 4, 4, 2)}},
		{name: "GridSample coords", op: "GridSample", ins: []fcIn{f32("x", 2, 3, 8, 8), f32("g", 2, 4, 4, 3)}, wantErr: "3 coordinates per point"},
		{name: "GridSample batch", op: "GridSample", ins: []fcIn{f32("x", 2, 3, 8, 8), f32("g", 1, 4, 4, 2)}, wantErr: "differ in batch"},
		{name: "NMS good", op: "NonMaxSuppression", ins: []fcIn{f32("b", 1, 6, 4), f32("s", 1, 2, 6)}},
		{name: "NMS boxes", op: "NonMaxSuppression", ins: []fcIn{f32("b", 1, 6, 5), f32("s", 1, 2, 6)}, wantErr: "must be [batch, boxes, 4]"},
		{name: "NMS counts", op: "NonMaxSuppression", ins: []fcIn{f32("b", 1, 6, 4), f32("s", 1, 2, 7)}, wantErr: "disagree"},
		{name: "OneHot good", op: "OneHot", ins: []fcIn{i64("i", 3), fcConstInts("d", []int64{}, 4), f32("v", 2)}},
		{name: "OneHot values", op: "OneHot", ins: []fcIn{i64("i", 3), fcConstInts("d", []int64{}, 4), f32("v", 3)}, wantErr: "must hold 2 elements"},
		{name: "ReverseSequence good", op: "ReverseSequence", ins: []fcIn{f32("x", 5, 3, 2), i64("l", 3)}},
		{name: "ReverseSequence lens", op: "ReverseSequence", ins: []fcIn{f32("x", 5, 3, 2), i64("l", 5)}, wantErr: "sequence_lens has length 5, want 3"},
		{name: "NLL good", op: "NegativeLogLikelihoodLoss", ins: []fcIn{f32("x", 4, 10, 7), i64("y", 4, 7)}},
		{name: "NLL labels", op: "NegativeLogLikelihoodLoss", ins: []fcIn{f32("x", 4, 10, 7), i64("y", 4, 10)}, wantErr: "do not fit scores"},
		{name: "SoftmaxCrossEntropy rank", op: "SoftmaxCrossEntropyLoss", ins: []fcIn{f32("x", 4, 10), i64("y", 4, 1)}, wantErr: "do not fit scores"},
		{name: "MaxUnpool good", op: "MaxUnpool", attrs: []*Attribute{fcAttrInts("kernel_shape", 2, 2), fcAttrInts("strides", 2, 2)}, ins: []fcIn{f32("x", 1, 3, 4, 4), i64("i", 1, 3, 4, 4)}},
		{name: "MaxUnpool indices", op: "MaxUnpool", attrs: []*Attribute{fcAttrInts("kernel_shape", 2, 2), fcAttrInts("strides", 2, 2)}, ins: []fcIn{f32("x", 1, 3, 4, 4), i64("i", 1, 3, 2, 2)}, wantErr: "must have the shape of the input"},
	})
}

// The checks the shape functions already made before this file existed,
// pinned here so that the table of families is complete in one place.
func TestValidateExistingChecks(t *testing.T) {
	runValidateCases(t, []validateCase{
		{name: "MatMul inner", op: "MatMul", ins: []fcIn{f32("a", 2, 3), f32("b", 4, 5)}, wantErr: "inner dims differ"},
		{name: "MatMul batch broadcast", op: "MatMul", ins: []fcIn{f32("a", 3, 2, 4), f32("b", 2, 4, 5)}, wantErr: "do not broadcast"},
		{name: "MatMul batch good", op: "MatMul", ins: []fcIn{f32("a", 3, 2, 4), f32("b", 1, 4, 5)}},
		{name: "Concat rank", op: "Concat", attrs: []*Attribute{fcAttrInt("axis", 0)}, ins: []fcIn{f32("a", 2, 3), f32("b", 2)}, wantErr: "ranks"},
		{name: "Concat dim", op: "Concat", attrs: []*Attribute{fcAttrInt("axis", 0)}, ins: []fcIn{f32("a", 2, 3), f32("b", 2, 4)}, wantErr: "expected 3"},
		{name: "Transpose perm", op: "Transpose", attrs: []*Attribute{fcAttrInts("perm", 0, 0)}, ins: []fcIn{f32("a", 2, 3)}, wantErr: "not a permutation"},
		{name: "Split sum", op: "Split", opset: 13, ins: []fcIn{f32("a", 6), fcConstInts("s", []int64{2}, 2, 3)}, nout: 2, wantErr: "sum to 5"},
		{name: "Tile repeats", op: "Tile", ins: []fcIn{f32("a", 2, 3), fcConstInts("r", []int64{1}, 2)}, wantErr: "repeats has 1 entries for rank 2"},
		{name: "Pad length", op: "Pad", opset: 13, ins: []fcIn{f32("a", 2, 3), fcConstInts("p", []int64{2}, 1, 1)}, wantErr: "2 pads for 2 axes"},
		{name: "Where broadcast", op: "Where", ins: []fcIn{fcKnownIn("c", Bool, 2), f32("a", 3), f32("b", 3)}, wantErr: "do not broadcast"},
		{name: "Expand", op: "Expand", ins: []fcIn{f32("a", 3), fcConstInts("s", []int64{1}, 4)}, wantErr: "broadcast"},
		{name: "Reshape count", op: "Reshape", ins: []fcIn{f32("a", 2, 3), fcConstInts("s", []int64{1}, 5)}, wantErr: "cannot reshape"},
		{name: "Gather index", op: "Gather", ins: []fcIn{f32("a", 2, 3), fcConstInts("i", []int64{1}, 5)}, wantErr: "out of range"},
		{name: "GatherElements rank", op: "GatherElements", ins: []fcIn{f32("a", 2, 3), fcKnownIn("i", Int64, 2)}, wantErr: "indices rank 1"},
	})
}
