package cost

import (
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/models"
)

// TestFitAdvice: the verdict and each piece of advice follow from the
// totals: GPUs = ceil(peak / memory); the batch that fits is the largest
// with weights + activations·b/batch ≤ memory; the precision is the first
// smaller one the GPU has at which the scaled peak fits.
func TestFitAdvice(t *testing.T) {
	gpu := &hwdb.GPU{Name: "G", MemBytes: 100, Peak: map[hwdb.Precision]float64{hwdb.FP16Tensor: 1}}
	r := &report.Report{DType: "fp32", Totals: report.Totals{ParamBytes: 40, PeakActivationBytes: 160, PeakMemoryBytes: 200}}
	applyFit(r, gpu, 32)
	tt := r.Totals
	if tt.Fits || tt.MemoryLimitBytes != 100 {
		t.Fatalf("fits %v, limit %v", tt.Fits, tt.MemoryLimitBytes)
	}
	// (100-40)/160·32 = 12 exactly: batch 12 peaks at 40+60 = 100.
	want := []string{"split over at least 2 GPUs", "batch 12 or less", "--dtype fp16 (peak about"}
	if len(tt.FitAdvice) != len(want) {
		t.Fatalf("advice %q", tt.FitAdvice)
	}
	for i, w := range want {
		if !strings.HasPrefix(tt.FitAdvice[i], w) {
			t.Errorf("advice %d = %q, want %q…", i, tt.FitAdvice[i], w)
		}
	}
	r.Totals.PeakMemoryBytes = 100
	applyFit(r, gpu, 32)
	if !r.Totals.Fits || len(r.Totals.FitAdvice) != 0 {
		t.Errorf("peak = memory must fit with no advice: %+v", r.Totals)
	}
}

// TestFitLlama70BOnH100: LLaMA-70B in fp16 (138 GB of weights) does not
// fit an 80 GB H100; the report says so and suggests two GPUs or fp8.
func TestFitLlama70BOnH100(t *testing.T) {
	e, _ := models.Lookup("llama-70b")
	m, err := e.Build(map[string]int64{"seq": 128})
	if err != nil {
		t.Fatal(err)
	}
	gpu, err := hwdb.Lookup("H100-SXM5-80GB")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Analyze(m.Graph, m, gpu, Options{DType: "fp16", Plan: "unfused"})
	if err != nil {
		t.Fatal(err)
	}
	tt := r.Totals
	// The limit is the usable memory: CUDA's 79.11 GiB less the default
	// runtime's floor (fit.go), not the nominal 80 GiB.
	if tt.Fits || tt.PeakMemoryBytes < 1.3e11 || tt.MemoryLimitBytes != gpu.UsableMem(r.Runtime.MemoryFloorBytes) || tt.MemoryLimitBytes >= 80*(1<<30) {
		t.Fatalf("fits %v, peak %v, limit %v", tt.Fits, tt.PeakMemoryBytes, tt.MemoryLimitBytes)
	}
	adv := strings.Join(tt.FitAdvice, "; ")
	if !strings.Contains(adv, "at least 2 GPUs") || !strings.Contains(adv, "--dtype fp8") {
		t.Errorf("advice %q", adv)
	}
}
