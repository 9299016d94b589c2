package perf

import (
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
)

// TestChoiceOptionsStreamGap: a replay's algorithm choice sees the stream
// gap and nothing else of the runtime changes; a stream-launched runtime
// and the nil default are their own choice.
func TestChoiceOptionsStreamGap(t *testing.T) {
	a100 := lookupAll(t, []string{"A100-SXM4-80GB"})[0]
	graph, pytorch := testRT(t, "graph"), testRT(t, "pytorch")
	o := PlanOptions()
	o.Runtime = graph
	c := ChoiceOptions(o)
	if c.Runtime == graph || KernelGap(a100, c.Runtime, o.Params) != KernelGap(a100, pytorch, o.Params) {
		t.Errorf("graph's choice gap %.3g s, want the stream gap %.3g s", KernelGap(a100, c.Runtime, o.Params), KernelGap(a100, pytorch, o.Params))
	}
	if c.Runtime.Name != graph.Name || c.Runtime.Plan != graph.Plan || c.Runtime.ConvWinograd != graph.ConvWinograd || graph.KernelGapScale != 0.53 {
		t.Errorf("the choice's runtime %+v changed more than the gap of %+v (or the profile itself)", c.Runtime, graph)
	}
	o.Runtime = pytorch
	if ChoiceOptions(o).Runtime != pytorch {
		t.Error("a stream-launched runtime's choice options copied it")
	}
	o.Runtime = nil
	if ChoiceOptions(o).Runtime != nil {
		t.Error("the nil default got a runtime")
	}
}

// TestReplayKeepsTheStreamPlan: a product cuBLAS splits with its reduce
// kernel under onnxruntime's stream launches is split the same way in
// onnxruntime's CUDA-graph replay, and the replay prices it no slower
// (its kernels' gaps are shorter), on every GPU the reduce is priced on.
func TestReplayKeepsTheStreamPlan(t *testing.T) {
	stream, replay := PlanOptions(), PlanOptions()
	stream.Runtime, replay.Runtime = testRT(t, "onnxruntime-iobinding"), testRT(t, "onnxruntime-cudagraph")
	differed := 0
	for _, g := range lookupAll(t, []string{"A100-SXM4-80GB", "H100-SXM5-80GB", "A10", "L4"}) {
		for _, pr := range []hwdb.Precision{hwdb.FP32, hwdb.TF32Tensor, hwdb.FP16Tensor} {
			for _, m := range []int64{16, 64, 128, 384, 1024} {
				for _, nk := range [][2]int64{{768, 768}, {1024, 1024}, {1024, 4096}, {3072, 768}, {4096, 1024}} {
					eb := 4.0
					if pr == hwdb.FP16Tensor {
						eb = 2
					}
					k := GEMMKernel(m, nk[0], nk[1], 1, pr, eb, eb)
					s, ok1 := ChooseGEMM(g, k, stream)
					r, ok2 := ChooseGEMM(g, k, replay)
					if !ok1 || !ok2 {
						continue
					}
					if s.Split > 1 && s.Helpers > 0 {
						differed++
					}
					if s.TileM != r.TileM || s.TileN != r.TileN || s.Split != r.Split || s.Passes != r.Passes || s.Helpers != r.Helpers {
						t.Errorf("%s %s %d×%d×%d: stream plan %+v, replay plan %+v", g.Name, pr, m, nk[0], nk[1], s, r)
					}
					if r.ComputeS > s.ComputeS {
						t.Errorf("%s %s %d×%d×%d: replay %.4g s over the stream's %.4g s", g.Name, pr, m, nk[0], nk[1], r.ComputeS, s.ComputeS)
					}
				}
			}
		}
	}
	if differed == 0 {
		t.Error("no product split with a reduce kernel: the check saw no choice to keep")
	}
}
