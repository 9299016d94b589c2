package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// Tests for the findings of issue 18: every flag does what it says, or
// is refused.

// TestBatchBindsTheBatchDim: `--batch` binds the dim the model calls
// batch (lstm_ptb_dyn's tokens are [seq,batch]), keeps a --dim of the
// other symbol, and the header says what was bound.
func TestBatchBindsTheBatchDim(t *testing.T) {
	m := fixture(t, "lstm_ptb_dyn.onnx")
	code, out, errs := runCLI(t, "report", m, "--gpu", "V100", "--batch", "20")
	if code != 0 || !strings.Contains(out, "batch=20") || strings.Contains(errs, "symbol batch is unbound") {
		t.Fatalf("--batch 20: exit %d, header %q, stderr %q", code, firstLine(out), errs)
	}
	code, out, errs = runCLI(t, "report", m, "--gpu", "V100", "--batch", "20", "--dim", "seq=35", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r struct{ Bindings map[string]int64 }
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Bindings["batch"] != 20 || r.Bindings["seq"] != 35 {
		t.Fatalf("bindings %v, want batch=20 seq=35", r.Bindings)
	}
}

// TestBatchOnStaticModel: a static batch-1 export is rewritten to the
// asked batch, with a warning naming the input, and the header shows it;
// a static model whose batch is not 1 is refused.
func TestBatchOnStaticModel(t *testing.T) {
	_, one, _ := runCLI(t, "report", fixture(t, "alexnet.onnx"), "--gpu", "T4", "--plan", "unfused", "--format", "json")
	code, out, errs := runCLI(t, "report", fixture(t, "alexnet.onnx"), "--gpu", "T4", "--plan", "unfused", "--batch", "8", "--format", "json")
	if code != 0 || !strings.Contains(errs, "input input has a static batch dim of 1") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	var a, b struct {
		Bindings map[string]int64
		Totals   struct{ MACs float64 }
	}
	if err := json.Unmarshal([]byte(one), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out), &b); err != nil {
		t.Fatal(err)
	}
	if b.Bindings["batch"] != 8 || b.Totals.MACs < 7.9*a.Totals.MACs {
		t.Fatalf("batch 8: bindings %v, MACs %g vs %g at batch 1", b.Bindings, b.Totals.MACs, a.Totals.MACs)
	}
	code, out, errs = runCLI(t, "report", fixture(t, "lstm_ptb.onnx"), "--gpu", "T4", "--batch", "8")
	if code != 2 || out != "" || !strings.Contains(errs, "batch size is fixed") {
		t.Fatalf("static batch 128: exit %d, stderr %q", code, errs)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
