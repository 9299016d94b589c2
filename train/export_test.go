package train

import (
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

// exportWarning returns the inference-export warning of r, "" if none.
func exportWarning(r *report.Report) string {
	for _, w := range r.Warnings {
		if strings.Contains(w, "inference-mode export") {
			return w
		}
	}
	return ""
}

// convNet: x[2,3,8,8] -> Conv(w, bias?) -> [BatchNormalization] ->
// [Dropout] -> Relu, the three shapes an export of one CNN layer takes:
// eval-mode (bias carrying the folded BN, no BN, no Dropout), training
// (no bias, BN kept) and a net without BN but with Dropout kept.
func convNet(t *testing.T, bias, bn, dropout bool) *builder {
	b := newBuilder(t)
	x := b.Input("x", 2, 3, 8, 8)
	ins := []*ir.Value{x, b.Weight("w", 4, 3, 3, 3)}
	if bias {
		ins = append(ins, b.Weight("b", 4))
	}
	h := b.Val("h", ir.Float32, 2, 4, 6, 6)
	b.Node("Conv", ins, []*ir.Value{h})
	if bn {
		o := b.Val("hn", ir.Float32, 2, 4, 6, 6)
		b.Node("BatchNormalization", []*ir.Value{h, b.Weight("s", 4), b.Weight("c", 4), b.Weight("mu", 4), b.Weight("var", 4)}, []*ir.Value{o})
		h = o
	}
	if dropout {
		o := b.Val("hd", ir.Float32, 2, 4, 6, 6)
		b.Node("Dropout", []*ir.Value{h}, []*ir.Value{o})
		h = o
	}
	y := b.Val("y", ir.Float32, 2, 4, 6, 6)
	b.Node("Relu", []*ir.Value{h}, []*ir.Value{y})
	b.G.AddOutput(y)
	return b
}

// TestTrainWarnsOnInferenceExport: --train on a graph with biased
// convolutions and no BatchNormalization or Dropout (what an eval-mode
// export leaves after folding BN) warns and says how to export for
// training, the advice whole; a graph that kept BN or Dropout, one whose
// convolutions have no bias, and an inference estimate do not warn.
func TestTrainWarnsOnInferenceExport(t *testing.T) {
	train := cost.Options{Train: &Options{}}
	w := exportWarning(convNet(t, true, false, false).analyze(train))
	if w == "" || !strings.Contains(w, ExportAdvice) || !strings.Contains(w, "1 of 1 convolutions") {
		t.Errorf("eval-mode export under --train: warning %q, want one naming the biased convolutions and ending in the export advice", w)
	}
	for _, c := range []struct {
		name              string
		bias, bn, dropout bool
		opt               cost.Options
	}{
		{"BN kept", false, true, false, train},
		{"BN kept, biased conv", true, true, false, train},
		{"Dropout kept", true, false, true, train},
		{"no conv bias", false, false, false, train},
		{"inference", true, false, false, cost.Options{}},
	} {
		if w := exportWarning(convNet(t, c.bias, c.bn, c.dropout).analyze(c.opt)); w != "" {
			t.Errorf("%s: unexpected warning %q", c.name, w)
		}
	}
}
