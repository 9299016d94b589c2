package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/internal/measured"
)

// savedTolerance bounds |activations_bytes − saved| / saved per row: the
// rows of testdata/measured/saved_tensors.csv are within 0.41%.
const savedTolerance = 0.01

// TestSavedTensorsMatchAutograd: a training step's activations kept for
// backward (train.memory.activations_bytes) are the tensors PyTorch's
// autograd saves in the same model's training forward, plus the outputs
// the caller holds (testdata/measured/saved_tensors.csv, exact counts by
// scripts/saved_tensors.py). Before ReLU6 kept a copy of its input
// (train/memory.go memInplaceOps) MobileNetV2 was 31.2% short; before Mul
// and Div saved only the operands their gradients read (train's
// mulBackward) our BERT-base was 10.9% over (a [B, H, S, S] score buffer
// a layer) and the GPT 0.9% (batch 8); before an average pool kept its
// input (avg_pool2d_backward takes self) DenseNet-121 was 2.2% short.
func TestSavedTensorsMatchAutograd(t *testing.T) {
	if testing.Short() {
		t.Skip("prices six training steps at two batches")
	}
	path := filepath.Join("..", "..", "testdata", "measured", "saved_tensors.csv")
	recs, err := measured.Read(path, "model,batch,saved_bytes")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) < 12 {
		t.Fatalf("%s: %d rows, want 12", path, len(recs))
	}
	for _, rec := range recs {
		model, batch := rec[0], rec[1]
		want, err := strconv.ParseFloat(rec[2], 64)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(model, "zoo:") {
			model = filepath.Join("..", "..", model)
		}
		r := measuredJSON(t, model, "--train", "--batch", batch, "--runtime", "pytorch")
		if r.Totals.Train == nil {
			t.Fatalf("%s: no training totals", rec[0])
		}
		got := r.Totals.Train.Memory.ActivationsBytes
		e := (got - want) / want
		t.Logf("%-36s b=%s autograd %9.2f MB, priced %9.2f MB  %+6.2f%%", rec[0], batch, want/1e6, got/1e6, 100*e)
		if e > savedTolerance || e < -savedTolerance {
			t.Errorf("%s batch %s: activations %.2f MB against autograd's %.2f MB (%+.1f%%)", rec[0], batch, got/1e6, want/1e6, 100*e)
		}
	}
}
