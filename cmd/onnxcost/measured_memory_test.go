package main

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Training memory against the H100 training rows
// (testdata/measured/h100_sxm5_pytorch.csv): peak_mib is
// torch.cuda.max_memory_allocated over the timed steps less what was
// allocated before the row built its model (scripts/measure_gpu.py
// train_row), so it holds the fp32 parameters, the optimizer state, the
// batch, what autograd saved, the gradients and any cuDNN workspace, and
// neither the CUDA context nor the allocator's cached but free blocks:
// the report's train.memory.tensor_peak_bytes. The rows run torchvision
// models under autocast (--dtype fp16) with SGD momentum 0.9 (onnxcost's
// optimizer "momentum") or Adam. Nothing is fitted to them.
//
// 2026-11-29 (memory model with autocast's dtypes, train/memory_amp.go):
// ResNet-50 b64 SGD −1.9%, Adam −1.0%, VGG-16 b32 SGD −0.3%,
// DenseNet-121 b32 Adam −2.9% (before it: −3.1%, −2.1%, −6.9%, −3.7%).
const (
	trainMemoryMedianBound = 0.05
	trainMemoryRowBound    = 0.10
)

func TestMeasuredTrainMemoryH100(t *testing.T) {
	if testing.Short() {
		t.Skip("costs whole models")
	}
	recs, path := h100Rows(t)
	dir := t.TempDir()
	var errs []float64
	for _, rec := range recs {
		opt, ok := strings.CutPrefix(rec[1], "train-")
		if !ok {
			continue
		}
		if opt == "sgd" {
			opt = "momentum" // scripts/measure_gpu.py: SGD(momentum=0.9)
		}
		mib, err := strconv.ParseFloat(rec[8], 64)
		if err != nil {
			t.Fatalf("%s: bad row %q", path, rec)
		}
		r := measuredJSON(t, measuredModel(t, dir, rec[0]), "--dtype", strings.TrimSuffix(rec[2], "-amp"), "--batch", rec[3],
			"--train", "--optimizer", opt, "--runtime", "pytorch")
		m := r.Totals.Train.Memory
		pred := m.TensorPeakBytes / (1 << 20)
		e := (pred - mib) / mib
		errs = append(errs, e)
		t.Logf("%-12s %s b=%-3s %-8s measured %5.0f MiB, predicted %6.1f MiB %+5.1f%% (activations %.0f, fp32 params %.0f, fp16 copies %.0f, grads %.0f, state %.0f MiB; peak in %s; nvidia-smi view %.0f MiB)",
			rec[0], rec[2], rec[3], opt, mib, pred, 100*e, m.ActivationsBytes/(1<<20), m.MasterWeightsBytes/(1<<20),
			m.WeightsBytes/(1<<20), m.GradientsBytes/(1<<20), m.OptimizerStateBytes/(1<<20), m.PeakPhase, m.NvidiaSMIBytes/(1<<20))
		if abs := max(e, -e); abs > trainMemoryRowBound {
			t.Errorf("%s %s b%s: training memory off by %+.1f%%, beyond ±%.0f%%", rec[0], rec[1], rec[3], 100*e, 100*trainMemoryRowBound)
		}
	}
	if len(errs) < 4 {
		t.Fatalf("only %d training rows", len(errs))
	}
	abs := make([]float64, len(errs))
	for i, e := range errs {
		abs[i] = max(e, -e)
	}
	slices.Sort(abs)
	med := (abs[(len(abs)-1)/2] + abs[len(abs)/2]) / 2
	t.Logf("training memory: n=%d median |error| %.1f%%", len(errs), 100*med)
	if med > trainMemoryMedianBound {
		t.Errorf("training memory median |error| %.1f%% exceeds %.0f%%", 100*med, 100*trainMemoryMedianBound)
	}
}

var largestBatchRE = regexp.MustCompile(`largest batch that fits: (\d+)`)

// TestTrainMaxBatchRowModels logs the largest batch `sweep
// --find-max-batch --train` finds for the rows' models on an 80 GB H100
// and a 24 GB RTX 3090, and checks it is ordered as memory is (the
// smaller GPU, the larger optimizer state, never a larger batch).
func TestTrainMaxBatchRowModels(t *testing.T) {
	if testing.Short() {
		t.Skip("searches batches of whole models")
	}
	find := func(model, opt, gpu string) int {
		code, out, errs := runCLI(t, "sweep", model, "--gpu", gpu, "--dtype", "fp16", "--train", "--optimizer", opt,
			"--runtime", "pytorch", "--find-max-batch", "--batch", "1")
		m := largestBatchRE.FindStringSubmatch(out)
		if code != 0 || m == nil {
			t.Fatalf("sweep %s %s %s: exit %d: %s%s", model, opt, gpu, code, out, errs)
		}
		b, _ := strconv.Atoi(m[1])
		return b
	}
	for _, c := range [][2]string{{"zoo:resnet50", "momentum"}, {"zoo:resnet50", "adam"}, {"zoo:vgg16", "momentum"}} {
		h100, rtx := find(c[0], c[1], "H100-SXM5-80GB"), find(c[0], c[1], "RTX-3090")
		t.Logf("%-13s %-8s largest batch: H100-SXM5-80GB %d, RTX-3090 %d", c[0], c[1], h100, rtx)
		if rtx >= h100 || rtx < 1 {
			t.Errorf("%s %s: RTX-3090 batch %d not below H100's %d", c[0], c[1], rtx, h100)
		}
	}
}
