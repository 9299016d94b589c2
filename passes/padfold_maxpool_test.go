package passes

import (
	"testing"

	"github.com/onnxcost/onnxcost/internal/costtest"
	"github.com/onnxcost/onnxcost/ir"
)

// TestORTPadFusionChangesMaxPoolNumbers: onnxruntime's PadFusion folds a
// zero Pad into a MaxPool, whose own padding is −∞, so the numbers of the
// graph it runs differ from the file's where a window holds only padding
// (the fuzzer's case: a 1×1 pool over a column of padding, 0 in the file,
// −∞ as onnxruntime runs it). The onnxruntime plan models that fold, so
// FuzzPasses does not ask it to keep the numbers (zeroPadIntoMaxPool);
// the fused plan's fold-pad leaves the Pad alone and keeps them.
func TestORTPadFusionChangesMaxPoolNumbers(t *testing.T) {
	build := func() *ir.Graph {
		b := costtest.New(t)
		x := b.Input("x", 1, 4, 4, 4)
		padded := b.Val("padded", ir.Float32, 1, 4, 4, 5)
		b.Node("Pad", []*ir.Value{x, b.Ints("pads", 0, 0, 0, 0, 0, 0, 0, 1)}, []*ir.Value{padded})
		y := b.Val("y", ir.Float32, 1, 4, 4, 5)
		b.Node("MaxPool", []*ir.Value{padded}, []*ir.Value{y}, ir.IntsAttr("kernel_shape", 1, 1), ir.IntsAttr("strides", 1, 1), ir.IntsAttr("pads", 0, 0, 0, 0))
		b.G.AddOutput(y)
		ir.NameNodes(b.G)
		return b.G
	}
	for _, c := range []struct {
		plan        string
		wantFolded  bool
		wantChanged bool
	}{
		{"onnxruntime", true, true},
		{"fused", false, false},
	} {
		g := build()
		if !zeroPadIntoMaxPool(g) {
			t.Fatal("zeroPadIntoMaxPool: false for a zero Pad a MaxPool reads")
		}
		inputs := randomInputs(g, 7)
		before, err := safeEvaluate(g, inputs)
		if err != nil {
			t.Fatal(err)
		}
		p, err := LookupPlan(c.plan)
		if err != nil {
			t.Fatal(err)
		}
		opt, _ := p.Options(Options{Check: true})
		if _, err := Run(g, opt); err != nil {
			t.Fatal(err)
		}
		folded := true
		for _, n := range g.Nodes {
			if n.OpType == "Pad" {
				folded = false
			}
		}
		after, err := safeEvaluate(g, inputs)
		if err != nil {
			t.Fatal(err)
		}
		changed := relErr(before[0], after[0]) > 1e-4
		if folded != c.wantFolded || changed != c.wantChanged {
			t.Errorf("%s: Pad folded %v, numbers changed %v; want %v, %v\n%s", c.plan, folded, changed, c.wantFolded, c.wantChanged, ir.Dump(g))
		}
	}
}
