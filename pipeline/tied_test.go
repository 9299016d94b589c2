package pipeline

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/passes"
)

// TestLoadFindsTiedHead: Load marks a head weight whose bytes are the
// embedding table's transposed (ir.TransposedCopies) on the model it
// returns, and the passes keep the mark on the value the plan reads.
func TestLoadFindsTiedHead(t *testing.T) {
	const vocab, dim = 600, 16
	table := make([]float64, vocab*dim)
	head := make([]float64, vocab*dim)
	for i := range vocab {
		for j := range dim {
			table[i*dim+j] = float64(i*dim+j) + 0.5
			head[j*vocab+i] = table[i*dim+j]
		}
	}
	g := ir.NewGraph("lm")
	val := func(name string) *ir.Value {
		v, err := g.NewValue(name)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	ids, tv, hv, x, y := val("ids"), val("table"), val("head"), val("x"), val("y")
	ids.Declared = &ir.TypeInfo{Kind: ir.TensorValue, DType: ir.Int64, Shape: ir.RankedShape(ir.S("batch"), ir.D(4))}
	g.AddInput(ids)
	g.AddInitializer(tv, &ir.Tensor{Name: "table", DType: ir.Float32, Dims: []int64{vocab, dim}, Floats: table, HasData: true})
	g.AddInitializer(hv, &ir.Tensor{Name: "head", DType: ir.Float32, Dims: []int64{dim, vocab}, Floats: head, HasData: true})
	for _, n := range []*ir.Node{
		{Name: "embed", OpType: "Gather", Inputs: []*ir.Value{tv, ids}, Outputs: []*ir.Value{x}},
		{Name: "lm_head", OpType: "MatMul", Inputs: []*ir.Value{x, hv}, Outputs: []*ir.Value{y}},
	} {
		if err := g.AddNode(n); err != nil {
			t.Fatal(err)
		}
	}
	g.AddOutput(y)
	path := filepath.Join(t.TempDir(), "lm.onnx")
	if err := ir.WriteFile(path, &ir.Model{IRVersion: 8, Opsets: []ir.OpsetImport{{Version: 17}}, Graph: g}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// A browser upload: the same bytes, in memory, under a name.
	up, err := LoadBytes("upload.onnx", data, Options{Batch: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(up.Model.TiedCopies) != 1 {
		t.Errorf("LoadBytes: TiedCopies %v, want the head tied to the table", up.Model.TiedCopies)
	}
	l, err := Load(path, Options{Batch: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Plan("fused", passes.Options{}); err != nil {
		t.Fatal(err)
	}
	got := l.Model.TiedCopies
	var reads bool
	for _, n := range l.Model.Graph.Nodes {
		for _, in := range n.Inputs {
			reads = reads || got[in] != nil
		}
	}
	if len(got) != 1 || !reads {
		t.Errorf("TiedCopies %v (read by the fused plan: %v), want the head tied to the table", got, reads)
	}
}
