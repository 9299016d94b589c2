package passes

import (
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/models"
)

// TestFoldConstants checks that every node computed from constants alone
// is marked to be computed at build time (a whole chain in one run, values
// too large for cleanup's folding included), and that the nodes
// onnxruntime keeps to run are not: DequantizeLinear of an int8 weight,
// random generators, nodes reading a graph input, a constant node whose
// output is a graph output.
func TestFoldConstants(t *testing.T) {
	b := newBuilder(t)
	b.M.Opsets[0].Version = 14 // Trilu
	perm := ir.IntsAttr("perm", 1, 0)
	x := b.input("x", 4, 256)
	w := b.weight("w", 64, 256)
	y := b.op("MatMul", nil, x, b.op("Transpose", []*ir.Attribute{perm}, w)) // a weight's layout change
	shape := b.intsOf("shape", ir.Int64, []int64{2}, []int64{256, 256})
	one := &ir.Attribute{Name: "value", Type: ir.AttrTensor, T: ir.FloatTensor(ir.Float32, []int64{1}, []float64{1})}
	mask := b.op("Trilu", []*ir.Attribute{ir.IntAttr("upper", 1)}, b.op("ConstantOfShape", []*ir.Attribute{one}, shape)) // 65,536 elements: above cleanup's limit
	scores := b.op("Add", nil, b.input("s", 256, 256), mask)
	pos, freq := b.weight("pos", 256, 64), b.weight("freq", 1, 64)
	rot := b.op("Mul", nil, b.input("q", 256, 64), b.op("Cos", nil, b.op("Mul", nil, pos, freq))) // a chain: Mul, then Cos
	deq := b.op("DequantizeLinear", nil, b.qweight("qw", 64, 256), b.constant("qs", nil, []float64{0.02}))
	q := b.op("Gemm", []*ir.Attribute{ir.IntAttr("transB", 1)}, x, deq)
	noise := b.op("RandomNormalLike", []*ir.Attribute{ir.IntAttr("dtype", int64(ir.Float32))}, pos)
	exposed := b.op("Transpose", []*ir.Attribute{perm}, freq) // a graph output
	b.output(y, scores, rot, q, noise, exposed)
	g := b.infer()

	if st := runPasses(t, g, "fold-constants"); st.Changed["fold-constants"] == 0 {
		t.Fatalf("nothing folded: %s", ops(g))
	}
	var built, run []string
	for _, n := range g.Nodes {
		if n.BuildTime() {
			built = append(built, n.OpType)
		} else {
			run = append(run, n.OpType)
		}
	}
	if got, want := strings.Join(built, " "), "Transpose ConstantOfShape Trilu Mul Cos"; got != want {
		t.Errorf("built at load: %s, want %s", got, want)
	}
	if got, want := strings.Join(run, " "), "MatMul Add Mul DequantizeLinear Gemm RandomNormalLike Transpose"; got != want {
		t.Errorf("left to run: %s, want %s", got, want)
	}
}

// TestFoldConstantsSurvivePlans runs the plans that fold constants on zoo
// transformers: every node fold-constants marks on the graph as read is
// still in the graph, marked, after the whole plan (no fusion took one
// into a kernel that runs), and the cost model prices none of them.
func TestFoldConstantsSurvivePlans(t *testing.T) {
	for _, entry := range []string{"gpt2-small", "llama-tiny", "llama-7b"} {
		for _, plan := range []string{"fused", "onnxruntime"} {
			t.Run(entry+"/"+plan, func(t *testing.T) {
				marked := func(g *ir.Graph) []string {
					var names []string
					for _, n := range g.Nodes {
						if n.BuildTime() {
							names = append(names, n.Name)
						}
					}
					return names
				}
				g := zooGraph(t, entry, map[string]int64{"layers": 2})
				runPasses(t, g, "cleanup", "fold-constants")
				want := marked(g)
				if len(want) == 0 {
					t.Fatal("no node computed from constants: pick a model that has some")
				}
				g = zooGraph(t, entry, map[string]int64{"layers": 2})
				p, err := LookupPlan(plan)
				if err != nil {
					t.Fatal(err)
				}
				opt, _ := p.Options(Options{Check: true})
				if _, err := Run(g, opt); err != nil {
					t.Fatal(err)
				}
				if got := marked(g); strings.Join(got, " ") != strings.Join(want, " ") {
					t.Errorf("after the %s plan marked %v, want %v", plan, got, want)
				}
			})
		}
	}
}

// zooGraph builds the zoo entry with params, inferred.
func zooGraph(t *testing.T, entry string, params map[string]int64) *ir.Graph {
	t.Helper()
	for _, z := range models.Zoo() {
		if z.Name == entry {
			m, err := z.Build(params)
			if err != nil {
				t.Fatal(err)
			}
			return m.Graph
		}
	}
	t.Fatalf("no zoo entry %s", entry)
	return nil
}
