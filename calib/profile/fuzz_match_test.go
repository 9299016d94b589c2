package profile

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/pipeline"
)

// FuzzMatch: any sequence of events, named from the models' own node and
// tensor names with onnxruntime's prefixes and suffixes around them,
// matches without a panic, gives one profiled row per event, and keeps
// the rows' time equal to the matched time (the invariants checkRows
// holds the real profiles to).
func FuzzMatch(f *testing.F) {
	type model struct{ rep, asRead *report.Report }
	var models []model
	for _, name := range []string{"half", "transformer", "dense"} {
		path := filepath.Join("testdata", "models", name+".onnx")
		asRead, err := pipeline.Run(path, pipeline.Config{GPU: "A100", Plan: "unfused"})
		if err != nil {
			f.Fatal(err)
		}
		rep, err := pipeline.Run(path, pipeline.Config{GPU: "A100", Runtime: "onnxruntime"})
		if err != nil {
			f.Fatal(err)
		}
		models = append(models, model{rep, asRead})
	}
	ops := []string{"", "Add", "Mul", "Tanh", "Cast", "Conv", "MatMul", "FusedMatMul", "Gelu", "FastGelu", "QuickGelu", "Split",
		"LayerNormalization", "SkipLayerNormalization", "Attention", "Softmax", "MemcpyFromHost", "ReorderOutput",
		"QuantizeLinear", "DequantizeLinear", "Transpose"}
	affixes := []string{"", "InsertedPrecisionFreeCast_", "InsertedPrecisionFreeCast__inlfunc_FastGelu_", "ReorderInput",
		"gemm_input_reshape", "/GatherSliceToSplitFusion", "_bn_nchwc", "_nchwc", "/MatMulAddFusion", "_token_3", "_output_0",
		"/duplicated", "_bias_dq", "_pre_q", "_q", "_dq1", "Transpose_token_"}
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, uint8(0))
	f.Add([]byte{7, 1, 200, 3, 9, 9, 12, 5}, uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		m := models[int(which)%len(models)]
		var names []string
		for _, n := range m.asRead.Nodes {
			names = append(names, n.Name)
			for _, o := range n.Outputs {
				names = append(names, o.Name)
			}
		}
		var evs []Event
		for i := 0; i+2 < len(data) && len(evs) < 64; i += 3 {
			name := names[int(data[i])%len(names)]
			a := affixes[int(data[i+1])%len(affixes)]
			if data[i+1]&1 == 0 {
				name = a + name
			} else {
				name += a
			}
			if data[i+2]%7 == 0 {
				name = ops[int(data[i+2])%len(ops)] + "_" + name[:min(len(name), int(data[i])%5)]
			}
			evs = append(evs, Event{Name: name, OpType: ops[int(data[i+2])%len(ops)], DurS: float64(data[i]%9+1) * 1e-6})
		}
		p := &Profile{Format: ONNXRuntime, Events: evs, Runs: 1}
		mt := MatchReportFrom(p, m.rep, m.asRead)
		if len(mt.Profiled) != len(evs) {
			t.Fatalf("%d profiled rows for %d events", len(mt.Profiled), len(evs))
		}
		var rows float64
		for _, r := range mt.Nodes {
			rows += r.MeasuredS
		}
		if math.Abs(rows-mt.MatchedS) > 1e-12 || mt.MatchedTimeFraction < 0 || mt.MatchedTimeFraction > 1 {
			t.Fatalf("rows %g s, matched %g s, fraction %g", rows, mt.MatchedS, mt.MatchedTimeFraction)
		}
	})
}
