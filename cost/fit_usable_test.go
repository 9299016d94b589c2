package cost

import (
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/models"
)

// TestFitUsableNotNominal: a model whose peak lies between the GPU's
// usable memory (what CUDA reports, less the runtime's CUDA context and
// workspaces) and its nominal size does not run, and the report says so.
// LLaMA-7B decoding in fp16 with a 3072-token cache as exported (the
// caller's past and the written present both held) peaks at about
// 16.7 GB on a T4: under its nominal 16 GiB (17.2 GB) but over the
// 14.75 GiB CUDA reports less the default runtime's 304 MiB (15.5 GB).
// Judged by the nominal size it "fit", and sweep --find-max-batch, which
// asks the same question, answered one step too high.
func TestFitUsableNotNominal(t *testing.T) {
	e, _ := models.Lookup("llama-7b")
	m, err := e.Build(map[string]int64{"decode": 1, "past": 3072})
	if err != nil {
		t.Fatal(err)
	}
	gpu, err := hwdb.Lookup("T4")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Analyze(m.Graph, m, gpu, Options{DType: "fp16"})
	if err != nil {
		t.Fatal(err)
	}
	tt := r.Totals
	usable := gpu.UsableMem(r.Runtime.MemoryFloorBytes)
	if !(tt.PeakMemoryBytes > usable && tt.PeakMemoryBytes <= gpu.MemBytes) {
		t.Fatalf("peak %.4g GB is not between usable %.4g GB and nominal %.4g GB: the test needs another cache length", tt.PeakMemoryBytes/1e9, usable/1e9, gpu.MemBytes/1e9)
	}
	if tt.Fits || tt.MemoryLimitBytes != usable {
		t.Errorf("fits %v against limit %.4g GB; want not fitting against the usable %.4g GB", tt.Fits, tt.MemoryLimitBytes/1e9, usable/1e9)
	}
	if len(tt.FitAdvice) == 0 {
		t.Error("no advice for a model that does not fit")
	}
}

// TestFitUsableTraining: a training report's peak is the nvidia-smi view,
// which already holds the runtime's CUDA context and workspace, so its
// limit is what CUDA reports, with no floor taken off twice.
func TestFitUsableTraining(t *testing.T) {
	gpu := &hwdb.GPU{Name: "G", MemBytes: 100, CUDAMemBytes: 90}
	r := &report.Report{DType: "fp32", Runtime: &report.Runtime{MemoryFloorBytes: 10},
		Totals: report.Totals{ParamBytes: 20, PeakActivationBytes: 65, PeakMemoryBytes: 85, Train: &report.Train{}}}
	applyFit(r, gpu, 1)
	if !r.Totals.Fits || r.Totals.MemoryLimitBytes != 90 {
		t.Errorf("training: fits %v against %v, want fitting CUDA's 90", r.Totals.Fits, r.Totals.MemoryLimitBytes)
	}
	r.Totals.Train = nil
	applyFit(r, gpu, 1)
	if r.Totals.Fits || r.Totals.MemoryLimitBytes != 80 {
		t.Errorf("inference: fits %v against %v, want not fitting CUDA's 90 less the floor of 10", r.Totals.Fits, r.Totals.MemoryLimitBytes)
	}
}

// TestRuntimeFloorFillsGPU: a board whose memory the runtime's own floor
// already takes (a user file's mem_gib written in TiB, say) is refused
// with one line naming both sizes. It was priced, with "split over at
// least +Inf GPUs" as its advice, and generate called a model fitting
// (its limit read as unknown).
func TestRuntimeFloorFillsGPU(t *testing.T) {
	e, _ := models.Lookup("resnet50")
	m, err := e.Build(nil)
	if err != nil {
		t.Fatal(err)
	}
	base, err := hwdb.Lookup("A100-SXM4-80GB")
	if err != nil {
		t.Fatal(err)
	}
	gpu := base.Clone()
	gpu.Name, gpu.MemBytes, gpu.CUDAMemBytes = "tiny", 1<<20, 0
	_, err = Analyze(m.Graph, m, gpu, Options{})
	if err == nil || !strings.Contains(err.Error(), "GPU tiny: its 0.00105 GB of memory is no more than runtime tensorrt's own") {
		t.Fatalf("error %v, want the runtime floor's refusal", err)
	}
}
