package ir

import (
	"path/filepath"
	"testing"

	"github.com/onnxcost/onnxcost/internal/golden"
)

// goldenModel exercises every part of the dump: symbolic and unknown
// dims, small and large initializers, attributes of many types, a custom
// domain, a subgraph reading an outer value, fused_from and a function.
func goldenModel(t *testing.T) *Model {
	g := NewGraph("golden")
	x := input(t, g, "x", S("batch"), D(3), D(224), D(224))
	w := mustValue(t, g, "w")
	g.AddInitializer(w, &Tensor{Name: "w", DType: Float32, Dims: []int64{64, 3, 11, 11}})
	shape := mustValue(t, g, "shape")
	g.AddInitializer(shape, IntTensor([]int64{2}, []int64{-1, 64}))
	cond := mustValue(t, g, "cond")
	g.AddInitializer(cond, &Tensor{Name: "cond", DType: Bool, Ints: []int64{1}, HasData: true})
	y := mustValue(t, g, "y")
	g.AddNode(&Node{Name: "conv1", OpType: "Conv", Inputs: []*Value{x, w, nil}, Outputs: []*Value{y}, Attrs: []*Attribute{
		{Name: "kernel_shape", Type: AttrInts, Ints: []int64{11, 11}},
		{Name: "strides", Type: AttrInts, Ints: []int64{4, 4}},
		{Name: "auto_pad", Type: AttrString, S: "NOTSET"},
	}})
	z := mustValue(t, g, "z")
	g.AddNode(&Node{Name: "act", OpType: "FusedAct", Domain: "com.example", Inputs: []*Value{y}, Outputs: []*Value{z},
		FusedFrom: []string{"relu1", "clip1"}, Attrs: []*Attribute{
			{Name: "alpha", Type: AttrFloat, F: 0.5},
			{Name: "scales", Type: AttrFloats, Floats: []float64{1, 2.5}},
			{Name: "table", Type: AttrTensor, T: FloatTensor(Float16, []int64{2}, []float64{0.5, -1})},
		}})
	then := NewSubgraph("then", g)
	tOut := mustValue(t, then, "t_out")
	then.AddNode(&Node{Name: "then_id", OpType: "Identity", Inputs: []*Value{z}, Outputs: []*Value{tOut}})
	then.AddOutput(tOut)
	els := NewSubgraph("else", g)
	eOut := mustValue(t, els, "e_out")
	els.AddNode(&Node{Name: "else_neg", OpType: "Neg", Inputs: []*Value{z}, Outputs: []*Value{eOut}})
	els.AddOutput(eOut)
	r := mustValue(t, g, "r")
	g.AddNode(&Node{Name: "branch", OpType: "If", Inputs: []*Value{cond}, Outputs: []*Value{r}, Attrs: []*Attribute{
		GraphAttr("then_branch", then),
		GraphAttr("else_branch", els),
	}})
	out := mustValue(t, g, "out")
	g.AddNode(&Node{Name: "reshape", OpType: "Reshape", Inputs: []*Value{r, shape}, Outputs: []*Value{out}})
	out.Declared = &TypeInfo{Kind: TensorValue, DType: Float32, Shape: RankedShape(S("?unk_1"), D(64))}
	g.AddOutput(out)
	return &Model{IRVersion: 8, Opsets: []OpsetImport{{Version: 17}, {Domain: "com.example", Version: 1}, {Domain: "custom", Version: 1}},
		Graph: g, Functions: []*Function{leakyFunction(t)}}
}

// TestDumpGolden compares the dump of goldenModel, after a write/read
// round trip, with testdata/roundtrip/dump.golden (-update rewrites it).
func TestDumpGolden(t *testing.T) {
	m := goldenModel(t)
	if err := VerifyModel(m); err != nil {
		t.Fatal(err)
	}
	got := DumpModel(roundTrip(t, m))
	golden.Check(t, filepath.Join("testdata", "roundtrip", "dump.golden"), []byte(got), *update)
	if again := DumpModel(roundTrip(t, m)); again != got {
		t.Errorf("dump is not deterministic")
	}
}
