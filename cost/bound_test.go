package cost

import (
	"testing"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/ir/irtest"
)

// TestGEMVNodeLatencyBound: a [1,512]×[512,512] Gemm on A100 is neither
// compute- nor memory-bound: its fixed fill and drain (latency_s) exceed
// both, and the report says "latency" (it said "compute", 9.3 µs of
// compute against 0.19 µs of memory).
func TestGEMVNodeLatencyBound(t *testing.T) {
	b := irtest.New(t, 13)
	x := b.Input("x", ir.Float32, 1, 512)
	w := initializer(b, "w", ir.Float32, 512, 512)
	c := initializer(b, "c", ir.Float32, 512)
	b.Output(b.Op("Gemm", nil, x, w, c))
	b.Infer()
	r := analyzeOn(t, b, "A100", "")
	n := r.Nodes[0]
	if n.Bound != "latency" || !(n.LatencyS > n.ComputeS) || !(n.LatencyS > n.MemoryS) || n.ComputeS > n.MemoryS {
		t.Errorf("GEMV node: bound %q compute %g latency %g memory %g, want latency-bound", n.Bound, n.ComputeS, n.LatencyS, n.MemoryS)
	}
	// The fill runs in series with the weight stream (perf.BodyS).
	if want := perf.BodyS(perf.ClassGEMM, n.ComputeS, n.LatencyS, n.MemoryS) + n.RampS + n.LaunchS; n.TimeS != want || !(n.RampS > 0) {
		t.Errorf("time %g, want overlap(compute, memory)+latency+ramp+launch = %g (ramp %g)", n.TimeS, want, n.RampS)
	}
}
