package ir

import (
	"math"
	"testing"
)

func TestSlice(t *testing.T) {
	const big = math.MaxInt64
	const small = math.MinInt64
	cases := []struct {
		name                      string
		in                        []any
		starts, ends, axes, steps []int64
		want                      string
	}{
		{"two axes", []any{20, 10, 5}, []int64{0, 0}, []int64{3, 10}, []int64{0, 1}, []int64{1, 1}, "float32[3,10,5]"},
		{"default axes and steps", []any{20, 10, 5}, []int64{0, 0, 3}, []int64{20, 10, 4}, nil, nil, "float32[20,10,1]"},
		{"negative end", []any{20, 10, 5}, []int64{0}, []int64{-1}, []int64{1}, nil, "float32[20,9,5]"},
		{"end past the dim", []any{20, 10, 5}, []int64{1}, []int64{1000}, []int64{1}, nil, "float32[20,9,5]"},
		{"start past the dim", []any{20, 10, 5}, []int64{1000}, []int64{1000}, []int64{1}, nil, "float32[20,0,5]"},
		{"negative steps", []any{20, 10, 5}, []int64{20, 10, 4}, []int64{0, 0, 1}, []int64{0, 1, 2}, []int64{-1, -3, -2}, "float32[19,3,2]"},
		{"reverse all", []any{7}, []int64{-1}, []int64{small}, []int64{0}, []int64{-1}, "float32[7]"},
		{"negative axis", []any{20, 10, 5}, []int64{0}, []int64{1}, []int64{-1}, nil, "float32[20,10,1]"},
		{"step 2 of 7", []any{7}, []int64{0}, []int64{big}, nil, []int64{2}, "float32[4]"}, // ceil(7/2)
		{"symbolic open end", []any{"batch", "seq", 64}, []int64{1}, []int64{big}, []int64{1}, nil, "float32[batch,seq-1,64]"},
		{"symbolic prefix", []any{"batch", "seq", 64}, []int64{0}, []int64{3}, []int64{1}, nil, "float32[batch,3,64]"},
		{"symbolic last", []any{"batch", "seq", 64}, []int64{-1}, []int64{big}, []int64{1}, nil, "float32[batch,1,64]"},
		{"symbolic whole", []any{"batch", "seq"}, []int64{0}, []int64{big}, []int64{1}, nil, "float32[batch,seq]"},
	}
	for _, tc := range cases {
		b := newTB(t, 13)
		ins := []*Value{b.in(Float32, tc.in...), b.vec(tc.starts...), b.vec(tc.ends...)}
		if tc.axes != nil {
			ins = append(ins, b.vec(tc.axes...))
		}
		if tc.steps != nil {
			if tc.axes == nil {
				ins = append(ins, nil)
			}
			ins = append(ins, b.vec(tc.steps...))
		}
		out := b.op1("Slice", ins)
		if err := b.infer(); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got := tbType(out); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, got, tc.want)
		}
	}
}

// The GPT causal mask: mask[:, :, :seq, :seq] with seq from Shape(x).
func TestSliceBySymbolicEnd(t *testing.T) {
	b := newTB(t, 13)
	x := b.in(Int64, "batch", "seq")
	mask := b.in(Float32, 1, 1, 1024, 1024)
	seq := b.op1("Unsqueeze", []*Value{b.op1("Gather", []*Value{b.op1("Shape", []*Value{x}), b.ints(nil, 1)}), b.vec(0)})
	ends := b.op1("Concat", []*Value{seq, seq}, tbI("axis", 0))
	out := b.op1("Slice", []*Value{mask, b.vec(0, 0), ends, b.vec(2, 3)})
	b.mustInfer()
	expectType(t, out, "float32[1,1,seq,seq]")
}

func TestSliceVariantsAndValues(t *testing.T) {
	// Opset 1-9: attributes.
	b := newTB(t, 9)
	out := b.op1("Slice", []*Value{b.in(Float32, 4, 6)}, tbIs("starts", 1, 2), tbIs("ends", 3, -1))
	b.mustInfer()
	expectType(t, out, "float32[2,3]")

	// Shape(x)[2:] of a symbolic-batch image: known dims become a constant.
	b = newTB(t, 13)
	shape := b.op1("Shape", []*Value{b.in(Float32, "batch", 3, 224, 224)})
	hw := b.op1("Slice", []*Value{shape, b.vec(2), b.vec(math.MaxInt64)})
	head := b.op1("Slice", []*Value{shape, b.vec(0), b.vec(2)})
	rev := b.op1("Slice", []*Value{shape, b.vec(-1), b.vec(math.MinInt64), b.vec(0), b.vec(-2)})
	b.mustInfer()
	expectVals(t, hw, "[224 224]")
	if hw.Const == nil {
		t.Errorf("Shape(x)[2:] should be a constant")
	}
	expectVals(t, head, "[batch 3]")
	expectVals(t, rev, "[224 3]")

	// Unknown starts: the rank stays, the sliced axis is fresh.
	b = newTB(t, 13)
	out = b.op1("Slice", []*Value{b.in(Float32, 4, 6), b.in(Int64, 1), b.in(Int64, 1), b.vec(1)})
	b.mustInfer()
	if out.Shape.Rank() != 2 || !out.Shape.Dims[0].Is(4) || out.Shape.Dims[1].IsKnown() {
		t.Errorf("unknown bounds: got %s, want [4,?]", out.Shape)
	}

	for _, tc := range []struct {
		name string
		ins  func(b *tbModel) []*Value
	}{
		{"axis out of range", func(b *tbModel) []*Value {
			return []*Value{b.in(Float32, 4), b.vec(0), b.vec(1), b.vec(1)}
		}},
		{"step 0", func(b *tbModel) []*Value {
			return []*Value{b.in(Float32, 4), b.vec(0), b.vec(1), b.vec(0), b.vec(0)}
		}},
		{"length mismatch", func(b *tbModel) []*Value {
			return []*Value{b.in(Float32, 4), b.vec(0, 0), b.vec(1)}
		}},
	} {
		b := newTB(t, 13)
		b.op1("Slice", tc.ins(b))
		if err := b.infer(); err == nil {
			t.Errorf("%s: want an error", tc.name)
		}
	}
}

func TestConcatSplit(t *testing.T) {
	b := newTB(t, 13)
	cat := b.op1("Concat", []*Value{b.in(Float32, "batch", 3), b.in(Float32, "batch", 5)}, tbI("axis", -1))
	catSym := b.op1("Concat", []*Value{b.in(Float32, "a", 3), b.in(Float32, "b", 3)}, tbI("axis", 0))
	vals := b.op1("Concat", []*Value{b.ints([]int64{1, 2}, 1, 2), b.ints([]int64{1, 2}, 3, 4)}, tbI("axis", 0))
	valsT := b.op1("Concat", []*Value{b.ints([]int64{2, 1}, 1, 2), b.ints([]int64{2, 1}, 3, 4)}, tbI("axis", 1))
	even := b.op("Split", []*Value{b.in(Float32, 6, 4)}, 3)
	b.mustInfer()
	expectType(t, cat, "float32[batch,8]")
	expectType(t, catSym, "float32[a+b,3]")
	expectVals(t, vals, "[1 2 3 4]")
	expectVals(t, valsT, "[1 3 2 4]")
	for _, o := range even {
		expectType(t, o, "float32[2,4]")
	}
}

func TestSplitVariants(t *testing.T) {
	// Opset 11: split attribute.
	b := newTB(t, 11)
	parts := b.op("Split", []*Value{b.in(Float32, 2, 6)}, 2, tbI("axis", 1), tbIs("split", 2, 4))
	b.mustInfer()
	expectType(t, parts[0], "float32[2,2]")
	expectType(t, parts[1], "float32[2,4]")

	// Opset 13: split input; contents of a shape vector travel.
	b = newTB(t, 13)
	shape := b.op1("Shape", []*Value{b.in(Float32, "batch", "seq", 64)})
	vparts := b.op("Split", []*Value{shape, b.vec(1, 2)}, 2)
	b.mustInfer()
	expectVals(t, vparts[0], "[batch]")
	expectVals(t, vparts[1], "[seq 64]")

	// Opset 18: num_outputs, the last chunk smaller: 7 = 3+3+1.
	b = newTB(t, 18)
	chunks := b.op("Split", []*Value{b.in(Float32, 7)}, 3, tbI("num_outputs", 3))
	sym := b.op("Split", []*Value{b.in(Float32, "batch", 6)}, 2)
	b.mustInfer()
	expectType(t, chunks[0], "float32[3]")
	expectType(t, chunks[2], "float32[1]")
	expectType(t, sym[0], "float32[batch/2,6]")

	for _, tc := range []struct {
		name  string
		opset int64
		build func(b *tbModel)
	}{
		{"uneven without num_outputs", 13, func(b *tbModel) { b.op("Split", []*Value{b.in(Float32, 7)}, 2) }},
		{"sizes do not sum", 13, func(b *tbModel) { b.op("Split", []*Value{b.in(Float32, 7), b.vec(3, 3)}, 2) }},
		{"count mismatch", 13, func(b *tbModel) { b.op("Split", []*Value{b.in(Float32, 6), b.vec(3, 3)}, 3) }},
	} {
		b := newTB(t, tc.opset)
		tc.build(b)
		if err := b.infer(); err == nil {
			t.Errorf("%s: want an error", tc.name)
		}
	}
}

func TestGatherFamily(t *testing.T) {
	b := newTB(t, 13)
	g := b.op1("Gather", []*Value{b.in(Float32, 5, 4), b.in(Int64, 2, 3)}, tbI("axis", 1))
	emb := b.op1("Gather", []*Value{b.in(Float32, 50257, 768), b.in(Int64, "batch", "seq")})
	vals := b.op1("Gather", []*Value{b.ints([]int64{2, 3}, 1, 2, 3, 4, 5, 6), b.vec(-1, 0)}, tbI("axis", 1))
	ge := b.op1("GatherElements", []*Value{b.in(Float32, 3, 3), b.in(Int64, 2, 3)}, tbI("axis", 1))
	nd := b.op1("GatherND", []*Value{b.in(Int32, 2, 2, 2), b.in(Int64, 2, 1)}, tbI("batch_dims", 1))
	nd0 := b.op1("GatherND", []*Value{b.in(Float32, 2, 2), b.in(Int64, 2, 2)})
	b.mustInfer()
	expectType(t, g, "float32[5,2,3]")
	expectType(t, emb, "float32[batch,seq,768]")
	expectVals(t, vals, "[3 1 6 4]")
	expectType(t, ge, "float32[2,3]")
	expectType(t, nd, "int32[2,2]") // indices[:-1] = [2] + data[1+1:] = [2]
	expectType(t, nd0, "float32[2]")

	b = newTB(t, 13)
	b.op1("Gather", []*Value{b.ints([]int64{3}, 1, 2, 3), b.vec(3)})
	if err := b.infer(); err == nil {
		t.Errorf("index 3 of a 3-element axis: want an error")
	}
	b = newTB(t, 13)
	b.op1("Gather", []*Value{b.in(Float32, 3), b.vec(0)}, tbI("axis", 1))
	if err := b.infer(); err == nil {
		t.Errorf("axis 1 of rank 1: want an error")
	}
}

func TestTransposeExpandTile(t *testing.T) {
	b := newTB(t, 13)
	tr := b.op1("Transpose", []*Value{b.in(Float32, "batch", "seq", 12, 64)}, tbIs("perm", 0, 2, 1, 3))
	def := b.op1("Transpose", []*Value{b.in(Float32, 2, 3, 4)})
	trVals := b.op1("Transpose", []*Value{b.ints([]int64{2, 3}, 1, 2, 3, 4, 5, 6)})
	ex := b.op1("Expand", []*Value{b.in(Float32, 3, 1), b.vec(2, 1, 6)})
	exSym := b.op1("Expand", []*Value{b.in(Float32, 1, 1, 4), b.op1("Shape", []*Value{b.in(Float32, "batch", 1, 1)})})
	exVals := b.op1("Expand", []*Value{b.ints([]int64{1}, 7), b.vec(3)})
	tile := b.op1("Tile", []*Value{b.in(Float32, "batch", 3), b.vec(2, 2)})
	tileVals := b.op1("Tile", []*Value{b.ints([]int64{2}, 1, 2), b.vec(2)})
	b.mustInfer()
	expectType(t, tr, "float32[batch,12,seq,64]")
	expectType(t, def, "float32[4,3,2]")
	expectVals(t, trVals, "[1 4 2 5 3 6]")
	expectType(t, ex, "float32[2,3,6]")
	expectType(t, exSym, "float32[batch,1,4]")
	expectVals(t, exVals, "[7 7 7]")
	expectType(t, tile, "float32[batch*2,6]")
	expectVals(t, tileVals, "[1 2 1 2]")

	for _, tc := range []struct {
		name  string
		build func(b *tbModel)
	}{
		{"bad perm", func(b *tbModel) { b.op1("Transpose", []*Value{b.in(Float32, 2, 3)}, tbIs("perm", 0, 0)) }},
		{"expand mismatch", func(b *tbModel) { b.op1("Expand", []*Value{b.in(Float32, 3), b.vec(4)}) }},
		{"tile repeats length", func(b *tbModel) { b.op1("Tile", []*Value{b.in(Float32, 3), b.vec(1, 2)}) }},
	} {
		b := newTB(t, 13)
		tc.build(b)
		if err := b.infer(); err == nil {
			t.Errorf("%s: want an error", tc.name)
		}
	}
}

func TestPad(t *testing.T) {
	b := newTB(t, 2)
	p2 := b.op1("Pad", []*Value{b.in(Float32, 1, 3, 4, 5)}, tbIs("pads", 0, 0, 1, 2, 0, 0, 3, 4))
	b.mustInfer()
	expectType(t, p2, "float32[1,3,8,11]") // 4+1+3, 5+2+4

	b = newTB(t, 11)
	p11 := b.op1("Pad", []*Value{b.in(Float32, "batch", 3, 4), b.vec(0, 0, 1, 0, 0, 1)})
	b.mustInfer()
	expectType(t, p11, "float32[batch,3,6]")

	b = newTB(t, 18)
	p18 := b.op1("Pad", []*Value{b.in(Float32, 2, 3, 4), b.vec(1, 2), nil, b.vec(-1)})
	b.mustInfer()
	expectType(t, p18, "float32[2,3,7]")

	b = newTB(t, 11)
	b.op1("Pad", []*Value{b.in(Float32, 2, 3), b.vec(1, 1)})
	if err := b.infer(); err == nil {
		t.Errorf("2 pads for rank 2: want an error")
	}
}

func TestResize(t *testing.T) {
	cases := []struct {
		name  string
		opset int64
		build func(b *tbModel) *Value
		want  string
	}{
		{"scales up", 13, func(b *tbModel) *Value {
			return b.op1("Resize", []*Value{b.in(Float32, 1, 3, 10, 10), nil, b.floats([]int64{4}, 1, 1, 2, 2)})
		}, "float32[1,3,20,20]"},
		{"scales down floor", 13, func(b *tbModel) *Value {
			// floor(2*0.6) = 1, floor(4*0.6) = 2
			return b.op1("Resize", []*Value{b.in(Float32, 1, 1, 2, 4), nil, b.floats([]int64{4}, 1, 1, 0.6, 0.6)})
		}, "float32[1,1,1,2]"},
		{"sizes", 11, func(b *tbModel) *Value {
			return b.op1("Resize", []*Value{b.in(Float32, 1, 1, 4, 4), b.floats([]int64{0}), b.floats([]int64{0}), b.vec(1, 1, 7, 8)})
		}, "float32[1,1,7,8]"},
		{"opset 10 scales", 10, func(b *tbModel) *Value {
			return b.op1("Resize", []*Value{b.in(Float32, 1, 1, 2, 2), b.floats([]int64{4}, 1, 1, 2, 3)})
		}, "float32[1,1,4,6]"},
		{"symbolic batch and size", 13, func(b *tbModel) *Value {
			return b.op1("Resize", []*Value{b.in(Float32, "batch", 3, "h", 8), nil, b.floats([]int64{4}, 1, 1, 2, 2)})
		}, "float32[batch,3,h*2,16]"},
		{"axes", 18, func(b *tbModel) *Value {
			return b.op1("Resize", []*Value{b.in(Float32, 1, 3, 10, 10), nil, b.floats([]int64{2}, 2, 3)}, tbIs("axes", 2, 3))
		}, "float32[1,3,20,30]"},
		{"not_larger", 18, func(b *tbModel) *Value {
			// scale = min(5/10, 5/20) = 0.25: round(2.5) = 3 (halves up), round(5) = 5
			return b.op1("Resize", []*Value{b.in(Float32, 1, 1, 10, 20), nil, nil, b.vec(5, 5)},
				tbIs("axes", 2, 3), tbS("keep_aspect_ratio_policy", "not_larger"))
		}, "float32[1,1,3,5]"},
		{"not_smaller", 18, func(b *tbModel) *Value {
			// scale = max(0.5, 0.25) = 0.5
			return b.op1("Resize", []*Value{b.in(Float32, 1, 1, 10, 20), nil, nil, b.vec(5, 5)},
				tbIs("axes", 2, 3), tbS("keep_aspect_ratio_policy", "not_smaller"))
		}, "float32[1,1,5,10]"},
		{"upsample 7", 7, func(b *tbModel) *Value {
			return b.op1("Upsample", []*Value{b.in(Float32, 1, 1, 2, 2)}, tbFs("scales", 1, 1, 2, 3))
		}, "float32[1,1,4,6]"},
		{"upsample 9", 9, func(b *tbModel) *Value {
			return b.op1("Upsample", []*Value{b.in(Float32, 1, 1, 2, 2), b.floats([]int64{4}, 1, 1, 2, 3)})
		}, "float32[1,1,4,6]"},
	}
	for _, tc := range cases {
		b := newTB(t, tc.opset)
		out := tc.build(b)
		if err := b.infer(); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got := tbType(out); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, got, tc.want)
		}
	}
	b := newTB(t, 13)
	b.op1("Resize", []*Value{b.in(Float32, 1, 1, 2, 2), nil, b.floats([]int64{2}, 2, 2)})
	if err := b.infer(); err == nil {
		t.Errorf("2 scales for rank 4: want an error")
	}
}

func TestValueDependentOps(t *testing.T) {
	b := newTB(t, 11)
	topk := b.op("TopK", []*Value{b.in(Float32, 3, 4), b.vec(3)}, 2)
	oh := b.op1("OneHot", []*Value{b.in(Int64, 2, 2), b.floats(nil, 10), b.floats([]int64{2}, 0, 1)}, tbI("axis", 1))
	nz := b.op1("NonZero", []*Value{b.ints([]int64{2, 2}, 1, 0, 1, 1)})
	nzU := b.op1("NonZero", []*Value{b.in(Float32, 2, 2)})
	comp := b.op1("Compress", []*Value{b.in(Float32, 3, 2), b.ints([]int64{3}, 0, 1, 1)}, tbI("axis", 0))
	compFlat := b.op1("Compress", []*Value{b.in(Float32, 3, 2), b.ints([]int64{5}, 0, 1, 1, 0, 1)})
	uniq := b.op("Unique", []*Value{b.ints([]int64{6}, 2, 1, 1, 3, 4, 3)}, 4)
	uniqAx := b.op("Unique", []*Value{b.ints([]int64{3, 3}, 1, 0, 0, 1, 0, 0, 2, 3, 4)}, 4, tbI("axis", 0))
	uniqU := b.op("Unique", []*Value{b.in(Float32, 2, 3)}, 4)
	b.mustInfer()
	expectType(t, topk[0], "float32[3,3]")
	expectType(t, topk[1], "int64[3,3]")
	expectType(t, oh, "float32[2,10,2]")
	expectType(t, nz, "int64[2,3]")
	if nzU.Shape.Rank() != 2 || nzU.Shape.Dims[1].IsKnown() {
		t.Errorf("NonZero of unknown data: got %s, want [2,?]", nzU.Shape)
	}
	expectType(t, comp, "float32[2,2]")
	expectType(t, compFlat, "float32[3]")
	expectType(t, uniq[0], "int64[4]") // 2 1 3 4
	expectType(t, uniq[2], "int64[6]")
	expectType(t, uniq[3], "int64[4]")
	expectType(t, uniqAx[0], "int64[2,3]") // rows 0 and 1 are equal
	expectType(t, uniqAx[2], "int64[3]")
	if uniqU[0].Shape.Rank() != 1 || uniqU[0].Shape.Dims[0].IsKnown() || uniqU[0].Shape.Dims[0] != uniqU[1].Shape.Dims[0] {
		t.Errorf("Unique of unknown data: Y %s, indices %s: want one fresh count", uniqU[0].Shape, uniqU[1].Shape)
	}
	expectType(t, uniqU[2], "int64[6]")

	b = newTB(t, 1)
	topk1 := b.op("TopK", []*Value{b.in(Float32, 3, 4)}, 2, tbI("k", 2), tbI("axis", 0))
	b.mustInfer()
	expectType(t, topk1[0], "float32[2,4]")

	b = newTB(t, 11)
	b.op("TopK", []*Value{b.in(Float32, 3, 4), b.vec(5)}, 2)
	if err := b.infer(); err == nil {
		t.Errorf("k 5 of an axis of 4: want an error")
	}
}

func TestLayoutOps(t *testing.T) {
	b := newTB(t, 18)
	d2s := b.op1("DepthToSpace", []*Value{b.in(Float32, "batch", 8, 2, 3)}, tbI("blocksize", 2))
	s2d := b.op1("SpaceToDepth", []*Value{b.in(Float32, 1, 2, 4, 6)}, tbI("blocksize", 2))
	det := b.op1("Det", []*Value{b.in(Float32, 5, 3, 3)})
	ccp := b.op1("CenterCropPad", []*Value{b.in(Float32, 10, 7, 3), b.vec(8, 9)}, tbIs("axes", 0, 1))
	col := b.op1("Col2Im", []*Value{b.in(Float32, 1, 6, 9), b.vec(5, 5), b.vec(1, 2)})
	tri := b.op1("Trilu", []*Value{b.in(Float32, "n", 4)})
	cs := b.op1("CumSum", []*Value{b.in(Int32, 3), b.ints(nil, 0)})
	b.mustInfer()
	expectType(t, d2s, "float32[batch,2,4,6]") // 8/(2*2), 2*2, 3*2
	expectType(t, s2d, "float32[1,8,2,3]")     // 2*2*2, 4/2, 6/2
	expectType(t, det, "float32[5]")
	expectType(t, ccp, "float32[8,9,3]")
	expectType(t, col, "float32[1,3,5,5]") // 6 / (1*2) channels
	expectType(t, tri, "float32[n,4]")
	expectType(t, cs, "int32[3]")

	b = newTB(t, 13)
	b.op1("DepthToSpace", []*Value{b.in(Float32, 1, 6, 2, 2)}, tbI("blocksize", 2))
	if err := b.infer(); err == nil {
		t.Errorf("6 channels with blocksize 2: want an error")
	}
}

// A second inference run with other bindings must not keep contents
// computed by the first.
func TestStaleValuesCleared(t *testing.T) {
	b := newTB(t, 13)
	x := b.in(Float32, "batch", 4)
	shape := b.op1("Shape", []*Value{x})
	sl := b.op1("Slice", []*Value{shape, b.vec(0), b.vec(1)})
	if _, err := InferShapes(b.m, InferOptions{Batch: 2}); err != nil {
		t.Fatal(err)
	}
	expectVals(t, sl, "[2]")
	if _, err := InferShapes(b.m, InferOptions{}); err != nil {
		t.Fatal(err)
	}
	expectVals(t, sl, "[batch]")
	if sl.Const != nil {
		t.Errorf("stale constant %v kept", sl.Const.Ints)
	}
}

// Inputs of unknown rank give unknown results, never a panic or error.
func TestUnrankedInputs(t *testing.T) {
	ops := []struct {
		op    string
		extra func(b *tbModel) []*Value
		attrs []*Attribute
		nout  int
	}{
		{"Shape", nil, nil, 1}, {"Size", nil, nil, 1}, {"Flatten", nil, nil, 1},
		{"Reshape", func(b *tbModel) []*Value { return []*Value{b.vec(0, -1)} }, nil, 1},
		{"Squeeze", nil, nil, 1}, {"Unsqueeze", func(b *tbModel) []*Value { return []*Value{b.vec(0)} }, nil, 1},
		{"Concat", nil, []*Attribute{tbI("axis", 0)}, 1}, {"Split", nil, nil, 2},
		{"Slice", func(b *tbModel) []*Value { return []*Value{b.vec(0), b.vec(1)} }, nil, 1},
		{"Gather", func(b *tbModel) []*Value { return []*Value{b.vec(0)} }, nil, 1},
		{"Transpose", nil, nil, 1}, {"Expand", func(b *tbModel) []*Value { return []*Value{b.vec(2, 2)} }, nil, 1},
		{"Tile", func(b *tbModel) []*Value { return []*Value{b.vec(2)} }, nil, 1},
		{"Pad", func(b *tbModel) []*Value { return []*Value{b.vec(1, 1)} }, nil, 1},
		{"Resize", func(b *tbModel) []*Value { return []*Value{nil, b.floats([]int64{1}, 2)} }, nil, 1},
		{"DepthToSpace", nil, []*Attribute{tbI("blocksize", 2)}, 1},
		{"NonZero", nil, nil, 1}, {"TopK", func(b *tbModel) []*Value { return []*Value{b.vec(1)} }, nil, 2},
		{"Unique", nil, nil, 4}, {"Det", nil, nil, 1},
	}
	for _, tc := range ops {
		b := newTB(t, 13)
		ins := []*Value{b.unranked(Float32)}
		if tc.extra != nil {
			ins = append(ins, tc.extra(b)...)
		}
		b.op(tc.op, ins, tc.nout, tc.attrs...)
		if err := b.infer(); err != nil {
			t.Errorf("%s of an unranked input: %v", tc.op, err)
		}
	}
}
