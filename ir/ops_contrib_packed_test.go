package ir

import (
	"slices"
	"strings"
	"testing"
)

// packedGraph is RemovePadding → PackedAttention (4 heads over 32
// wide rows) → RestorePadding over the graph inputs x [batch, seq, 32]
// and counts [batch], inferred under opt.
func packedGraph(t *testing.T, x Shape, counts *Tensor, opt InferOptions) (*Graph, *InferResult, error) {
	t.Helper()
	g := NewGraph("packed")
	val := func(name string) *Value {
		v, err := g.NewValue(name)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	xv, cv := val("x"), val("counts")
	xv.Declared = &TypeInfo{Kind: TensorValue, DType: Float32, Shape: x}
	g.AddInput(xv)
	if counts != nil {
		g.AddInitializer(cv, counts)
	} else {
		cv.Declared = &TypeInfo{Kind: TensorValue, DType: Int32, Shape: faShape("batch")}
		g.AddInput(cv)
	}
	w, b := val("w"), val("b")
	g.AddInitializer(w, &Tensor{DType: Float32, Dims: []int64{32, 96}})
	g.AddInitializer(b, &Tensor{DType: Float32, Dims: []int64{96}})
	packed, off, cum, longest := val("packed"), val("token_offset"), val("cum"), val("max")
	att, out := val("att"), val("out")
	nodes := []*Node{
		{Name: "rp", OpType: "RemovePadding", Domain: "com.microsoft", Inputs: []*Value{xv, cv}, Outputs: []*Value{packed, off, cum, longest}},
		{Name: "pa", OpType: "PackedAttention", Domain: "com.microsoft", Inputs: []*Value{packed, w, b, off, cum},
			Outputs: []*Value{att}, Attrs: []*Attribute{IntAttr("num_heads", 4)}},
		{Name: "restore", OpType: "RestorePadding", Domain: "com.microsoft", Inputs: []*Value{att, off}, Outputs: []*Value{out}},
	}
	for _, n := range nodes {
		if err := g.AddNode(n); err != nil {
			t.Fatal(err)
		}
	}
	g.AddOutput(out)
	m := &Model{Graph: g, Opsets: []OpsetImport{{Domain: "", Version: 17}, {Domain: "com.microsoft", Version: 1}}}
	res, err := InferShapes(m, opt)
	return g, res, err
}

// TestRemovePaddingTokens: the packed token count is the counts' sum
// when they are known, --dim total_tokens when bound, batch × sequence
// (with a warning naming the flag) when neither, and a named symbol
// while the batch is symbolic; every packed value and the restored
// output get their shapes.
func TestRemovePaddingTokens(t *testing.T) {
	x := faShape("batch", "seq", 32)
	find := func(g *Graph, name string) *Value {
		for _, v := range g.Values() {
			if v.Name == name {
				return v
			}
		}
		t.Fatalf("no value %q", name)
		return nil
	}
	counts := IntTensor([]int64{3}, []int64{5, 9, 2}) // 9 > seq 8: clamped
	counts.DType = Int32
	for _, c := range []struct {
		name     string
		counts   *Tensor
		opt      InferOptions
		tokens   string
		warn     bool
		cum, max []int64
	}{
		{"unstated", nil, InferOptions{Bindings: map[string]int64{"batch": 3, "seq": 8}}, "[24,32]", true, nil, nil},
		{"bound", nil, InferOptions{Bindings: map[string]int64{"batch": 3, "seq": 8, TotalTokensName: 15}}, "[15,32]", false, nil, nil},
		{"counts", counts, InferOptions{Bindings: map[string]int64{"batch": 3, "seq": 8}}, "[15,32]", false, []int64{0, 5, 13, 15}, []int64{8}},
		{"symbolic", nil, InferOptions{}, "[total_tokens,32]", false, nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, res, err := packedGraph(t, x, c.counts, c.opt)
			if err != nil {
				t.Fatal(err)
			}
			if got := find(g, "packed").Shape.String(); got != c.tokens {
				t.Errorf("packed rows %s, want %s", got, c.tokens)
			}
			if got, want := find(g, "att").Shape.String(), strings.Replace(c.tokens, ",32]", ",32]", 1); got != want {
				t.Errorf("PackedAttention output %s, want %s", got, want)
			}
			wantOut := "[3,8,32]"
			if c.name == "symbolic" {
				wantOut = "[batch,seq,32]"
			}
			if got := find(g, "out").Shape.String(); got != wantOut {
				t.Errorf("restored %s, want %s", got, wantOut)
			}
			warned := slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "--dim total_tokens=N") })
			if warned != c.warn {
				t.Errorf("warning %v, want %v: %q", warned, c.warn, res.Warnings)
			}
			if slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "matches no symbolic dim") }) {
				t.Errorf("a binding the rule read is reported unused: %q", res.Warnings)
			}
			if c.name == "bound" && res.Bound[TotalTokensName] != 15 {
				t.Errorf("bound %v, want total_tokens=15 among them", res.Bound)
			}
			cum, longest := find(g, "cum"), find(g, "max")
			if c.cum == nil {
				if cum.Const != nil || longest.Const != nil {
					t.Errorf("lengths known with no counts: %v %v", cum.Const, longest.Const)
				}
				return
			}
			if cum.Const == nil || !slices.Equal(cum.Const.Ints, c.cum) || cum.DType != Int32 {
				t.Errorf("cumulated_seq_len %v (%s), want %v", cum.Const, cum.DType, c.cum)
			}
			if longest.Const == nil || !slices.Equal(longest.Const.Ints, c.max) {
				t.Errorf("max_seq_len %v, want %v", longest.Const, c.max)
			}
			if got := PackedLengths(cum); !slices.Equal(got, []int64{5, 8, 2}) {
				t.Errorf("PackedLengths %v, want [5 8 2]", got)
			}
		})
	}
	for _, c := range []struct {
		bind int64
		want string
	}{{25, "more tokens than batch × sequence = 24"}, {0, "at least 1"}} {
		_, _, err := packedGraph(t, x, nil, InferOptions{Bindings: map[string]int64{"batch": 3, "seq": 8, TotalTokensName: c.bind}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("total_tokens=%d: want an error with %q, got %v", c.bind, c.want, err)
		}
	}
}

// TestPackedAttentionInfer: the packed ops' outputs and refusals.
func TestPackedAttentionInfer(t *testing.T) {
	const ms = "com.microsoft::"
	f16 := Float16
	off, cum := faInput(Int32, faShape("b", "s")), faInput(Int32, faShape("b1"))
	heads := []*Attribute{IntAttr("num_heads", 12)}
	pa := []faIn{faInput(f16, faShape("t", 768)), faInput(f16, faShape(768, 2304)), faInput(f16, faShape(2304)), off, cum}
	runFAOutputs(t, "PackedAttention", ms+"PackedAttention", 17, pa, heads, []TypeInfo{{DType: f16, Shape: faShape("t", 768)}})
	sized := append([]faIn{pa[0], faInput(f16, faShape(768, 1920)), faInput(f16, faShape(1920))}, off, cum)
	runFAOutputs(t, "PackedAttention qkv_hidden_sizes", ms+"PackedAttention", 17, sized,
		[]*Attribute{IntAttr("num_heads", 12), IntsAttr("qkv_hidden_sizes", 768, 768, 384)}, []TypeInfo{{DType: f16, Shape: faShape("t", 384)}})
	mha := []faIn{faInput(f16, faShape("t", 768)), faInput(f16, faShape("t", 768)), faInput(f16, faShape("t", 384)), faInput(f16, faShape(1920)), off, cum}
	runFAOutputs(t, "PackedMultiHeadAttention", ms+"PackedMultiHeadAttention", 17, mha, heads, []TypeInfo{{DType: f16, Shape: faShape("t", 384)}})
	qkv := []faIn{faInput(f16, faShape("t", 12, 3, 64)), faOmitted, faOmitted, faOmitted, off, cum}
	runFAOutputs(t, "PackedMultiHeadAttention packed", ms+"PackedMultiHeadAttention", 17, qkv, heads, []TypeInfo{{DType: f16, Shape: faShape("t", 768)}})
	restore := []faIn{faInput(f16, faShape("t", 768)), off}
	runFAOutputs(t, "RestorePadding", ms+"RestorePadding", 17, restore, nil, []TypeInfo{{DType: f16, Shape: faShape("b", "s", 768)}})
	checkInferErrors(t, []inferErrCase{
		{ms + "PackedAttention", pa, nil, 1, "positive num_heads"},
		{ms + "PackedAttention", append([]faIn{faInput(f16, faShape(8, "t", 768))}, pa[1:]...), heads, 1, "input of rank 3"},
		{ms + "PackedAttention", append([]faIn{faInput(f16, faShape("t", 512))}, pa[1:]...), heads, 1, "input width 512 but weights have 768 rows"},
		{ms + "PackedAttention", append(append([]faIn{}, pa[:3]...), faInput(Int32, faShape(5)), cum), heads, 1, "token_offset has rank 1"},
		{ms + "PackedAttention", sized, []*Attribute{IntAttr("num_heads", 12), IntsAttr("qkv_hidden_sizes", 768, 768, 768)}, 1, "not qkv_hidden_sizes"},
		{ms + "PackedAttention", append(append([]faIn{}, pa[:3]...), faInput(Int32, faShape(4, 128)), faInput(Int32, faShape(4))), heads, 1, "4 entries for a batch of 4"},
		{ms + "PackedMultiHeadAttention", append([]faIn{qkv[0], mha[1]}, qkv[2:]...), heads, 1, "key or value is given too"},
		{ms + "PackedMultiHeadAttention", qkv, []*Attribute{IntAttr("num_heads", 8)}, 1, "12 heads, num_heads is 8"},
		{ms + "PackedMultiHeadAttention", append([]faIn{mha[0], faOmitted}, mha[2:]...), heads, 1, "needs both key and value"},
		{ms + "PackedMultiHeadAttention", append([]faIn{faInput(f16, faShape("t", 770))}, mha[1:]...), heads, 1, "not a multiple of its 12 heads"},
		{ms + "RemovePadding", []faIn{faInput(f16, faShape("t", 768)), faInput(Int32, faShape("b"))}, nil, 4, "rank 2, want 3"},
		{ms + "RemovePadding", []faIn{faInput(f16, faShape(4, 128, 768)), faInput(Int32, faShape(3))}, nil, 4, "3 entries for a batch of 4"},
		{ms + "RestorePadding", []faIn{faInput(f16, faShape(4, 128, 768)), off}, nil, 1, "rank 3, want 2"},
	})
}

// TestEmbedMaskIndex: with the mask known, EmbedLayerNormalization's
// mask_index is each row's first 0 (the row's length when it has none),
// as onnxruntime's kernel computes it; unknown otherwise.
func TestEmbedMaskIndex(t *testing.T) {
	mask := IntTensor([]int64{3, 4}, []int64{1, 1, 0, 0, 1, 1, 1, 1, 1, 0, 1, 0})
	mask.DType = Int32
	ids := faInput(Int32, faShape(3, 4))
	table := faInput(Float32, faShape(10, 8))
	ins := []faIn{ids, faOmitted, table, table, faOmitted, faInput(Float32, faShape(8)), faInput(Float32, faShape(8)), faKnown(mask)}
	outs, err := runFAOp(t, "com.microsoft::EmbedLayerNormalization", 17, ins, nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	if c := outs[1].Const; c == nil || !slices.Equal(c.Ints, []int64{2, 4, 1}) || outs[1].DType != Int32 {
		t.Errorf("mask_index %v (%s), want [2 4 1] int32", c, outs[1].DType)
	}
	ins[7] = faInput(Int32, faShape(3, 4))
	if outs, err = runFAOp(t, "com.microsoft::EmbedLayerNormalization", 17, ins, nil, 2); err != nil || outs[1].Const != nil || outs[1].Shape.String() != "[3]" {
		t.Errorf("unknown mask: mask_index %v %s, err %v", outs[1].Const, outs[1].Shape, err)
	}
}
