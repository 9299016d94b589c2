package physics

import (
	"fmt"
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/pipeline"
)

// TestTimeNeverFallsBatchByBatch walks batches one at a time, where
// TestPhysics walks powers of two: a tile or a split-K depth that is on
// offer at one batch and not the next, or a row count off the tensor
// granule, shows only there (single products fell as one row was added
// at 2,200-2,300 row counts per tensor-core GPU, by up to 35%, before
// every split depth was tried and an unaligned M could be padded:
// cost/perf TestProductRowsNeverCheaper). A few models and GPUs of each
// kind, the default runtime, PyTorch's eager one and its CUDA-graph
// replay (whose library helpers are priced as the choice weighed them:
// cost/perf ChoiceOptions); throughput may step down at a wave's edge,
// time may not fall.
func TestTimeNeverFallsBatchByBatch(t *testing.T) {
	if testing.Short() {
		t.Skip("prices three models at 48 batches on five GPUs")
	}
	var gpus []*hwdb.GPU
	for _, name := range []string{"H200-SXM-141GB", "A100-SXM4-80GB", "T4", "RTX-3090", "MI300X"} {
		g, err := hwdb.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		gpus = append(gpus, g)
	}
	graph, err := hwdb.LookupRuntime("graph")
	if err != nil {
		t.Fatal(err)
	}
	var v violations
	for _, model := range []string{"zoo:resnet50", bertBase, "zoo:llama-7b?decode=1&past=1024"} {
		prev := map[string]float64{}
		for b := int64(1); b <= 48; b++ {
			ld := load(t, model, b)
			eager := loadPlan(t, model, b, "eager")
			for _, g := range gpus {
				for _, dt := range dtypes {
					for _, run := range []struct {
						name string
						l    *loaded
						opt  pipeline.EstimateOptions
					}{
						{"fused", ld, pipeline.EstimateOptions{DType: dt, Plan: "fused"}},
						{"eager", eager, pipeline.EstimateOptions{DType: dt, Plan: "eager", Runtime: pytorchRuntime(t)}},
						{"graph", eager, pipeline.EstimateOptions{DType: dt, Plan: "eager", Runtime: graph}},
					} {
						r, err := pipeline.Estimate(run.l.l, g, run.opt)
						if err != nil {
							t.Fatalf("%s batch %d on %s %s %s: %v", model, b, g.Name, dt, run.name, err)
						}
						key := fmt.Sprintf("%s %s %s", g.Name, dt, run.name)
						if p, ok := prev[key]; ok && r.Totals.TimeS < p*(1-tol) {
							v.add("time never falls as batch grows, batch by batch", "%s %s: batch %d %.6g s, batch %d %.6g s", model, key, b-1, p, b, r.Totals.TimeS)
						}
						prev[key] = r.Totals.TimeS
					}
				}
			}
		}
	}
	v.report(t)
}
