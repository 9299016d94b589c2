package pipeline

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/passes"
)

// tpReport costs a zoo model (fused plan, fp16) on gpu over n GPUs.
func tpReport(t *testing.T, model, gpu string, n int) *report.Report {
	t.Helper()
	l, err := Load(model, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Plan("fused", passes.Options{}); err != nil {
		t.Fatal(err)
	}
	g, err := hwdb.Lookup(gpu)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Estimate(l, g, EstimateOptions{DType: "fp16", Plan: "fused", GPUs: n})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestTensorParallelLlama70BFits: LLaMA-70B in fp16 (138 GB of weights)
// does not fit one 80 GB H100 and fits two when split.
func TestTensorParallelLlama70BFits(t *testing.T) {
	one := tpReport(t, "zoo:llama-70b", "h100-sxm", 1)
	two := tpReport(t, "zoo:llama-70b", "h100-sxm", 2)
	if one.Totals.Fits {
		t.Errorf("1 GPU: fits with peak %g of %g", one.Totals.PeakMemoryBytes, one.Totals.MemoryLimitBytes)
	}
	if !two.Totals.Fits {
		t.Errorf("2 GPUs: does not fit, per-GPU peak %g of %g", two.Totals.PerGPUPeakMemoryBytes, two.Totals.MemoryLimitBytes)
	}
	// Nearly all the weights are GEMM weights: about half on each GPU.
	if got, whole := two.Totals.PerGPUPeakMemoryBytes, two.Totals.PeakMemoryBytes; got < whole/2 || got > 0.52*whole {
		t.Errorf("2 GPUs: per-GPU peak %g, whole %g: want about half", got, whole)
	}
	if rt := two.Runtime; rt == nil || rt.DeviceMemoryBytes != two.Totals.PerGPUPeakMemoryBytes+rt.MemoryFloorBytes {
		t.Errorf("2 GPUs: runtime device memory not one GPU's share plus the floor: %+v", rt)
	}
	if one.Totals.GPUs != 0 || one.Totals.CommunicationTimeS != 0 || one.Totals.PerGPUPeakMemoryBytes != 0 {
		t.Errorf("1 GPU: parallel totals set: %+v", one.Totals)
	}
}

// TestTensorParallelCommunication: one all-reduce after each attention
// and each MLP block (2 per layer, 80 layers), and the all-reduce time
// less the fitted latency grows as the ring's 2·(n−1)/n over the fitted
// bus fraction while n stays in one NVLink domain (the same per-GPU
// bandwidth).
func TestTensorParallelCommunication(t *testing.T) {
	bw := map[int]float64{}
	for _, n := range []int{2, 4, 8} {
		r := tpReport(t, "zoo:llama-70b", "h100-sxm", n)
		reduces, sum := 0, 0.0
		for _, nc := range r.Nodes {
			if nc.CommunicationS > 0 {
				reduces++
				sum += nc.CommunicationS
			}
		}
		if reduces != 160 {
			t.Errorf("n=%d: %d all-reduces, want 160", n, reduces)
		}
		if math.Abs(sum-r.Totals.CommunicationTimeS) > 1e-12*sum || sum <= 0 {
			t.Errorf("n=%d: node all-reduces sum to %g, total says %g", n, sum, r.Totals.CommunicationTimeS)
		}
		// Per all-reduce, latency removed, over the ring factor and the
		// bus fraction.
		ar := perf.AllReduceNVLink
		bw[n] = (sum/float64(reduces) - ar.Latency(n)) / (2 * float64(n-1) / float64(n)) * ar.BusFraction(n)
	}
	for _, n := range []int{4, 8} {
		if math.Abs(bw[n]/bw[2]-1) > 1e-9 {
			t.Errorf("n=%d: all-reduce time per ring factor %g, n=2 %g: want equal", n, bw[n], bw[2])
		}
	}
}

// TestTensorParallelComputeScales: a GEMM-dominated model's GEMM kernel
// time (all-reduces excluded) falls about as 1/n.
func TestTensorParallelComputeScales(t *testing.T) {
	gemm := func(r *report.Report) float64 {
		s := 0.0
		for _, nc := range r.Nodes {
			if nc.Precision != "" && (nc.OpType == "MatMul" || nc.OpType == "FusedGemm" || nc.OpType == "GroupedGemm") {
				s += nc.TimeS - nc.CommunicationS
			}
		}
		return s
	}
	base := gemm(tpReport(t, "zoo:llama-70b?batch=4", "h100-sxm", 1))
	for _, n := range []int{2, 4} {
		got := gemm(tpReport(t, "zoo:llama-70b?batch=4", "h100-sxm", n))
		if r := got * float64(n) / base; r < 0.95 || r > 1.25 {
			t.Errorf("n=%d: GEMM time %g × n / one GPU's %g = %.3f, want about 1", n, got, base, r)
		}
	}
}

// TestTensorParallelOneIsIdentity: --gpus 1 is the one-GPU report, byte
// for byte.
func TestTensorParallelOneIsIdentity(t *testing.T) {
	var out [2][]byte
	for i, n := range []int{0, 1} {
		b, err := json.Marshal(tpReport(t, "zoo:alexnet", "t4", n))
		if err != nil {
			t.Fatal(err)
		}
		out[i] = b
	}
	if !bytes.Equal(out[0], out[1]) {
		t.Error("GPUs 1 and 0 give different reports")
	}
}

// TestTensorParallelNoInterconnect: a GPU entry with no link figures is
// refused for n > 1, never costed with zero communication.
func TestTensorParallelNoInterconnect(t *testing.T) {
	l, err := Load("zoo:alexnet", Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := &hwdb.GPU{Name: "Bare", Peak: map[hwdb.Precision]float64{hwdb.FP32: 10e12}, MemBytes: 16e9, MemBW: 5e11}
	if _, err := Estimate(l, g, EstimateOptions{GPUs: 2}); err == nil {
		t.Error("no error for a GPU without NVLink or PCIe figures")
	}
}
