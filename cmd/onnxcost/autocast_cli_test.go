package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
)

// TestAutocastDTypeCLI: --dtype fp16-amp is accepted by report and named
// in its header, with PyTorch eager the runtime unless one is given
// (autocast is PyTorch's); under --train it names the autocast step
// --dtype fp16 already prices (the same JSON totals, the report's dtype
// fp16); an unknown dtype lists the autocast ones among the choices.
func TestAutocastDTypeCLI(t *testing.T) {
	code, out, errs := runCLI(t, "report", "zoo:resnet50", "--gpu", "A100", "--dtype", "fp16-amp")
	if code != 0 || !strings.Contains(out, "dtype fp16-amp · runtime pytorch") {
		t.Fatalf("report --dtype fp16-amp: exit %d, header without the dtype or the pytorch runtime:\n%s%s", code, firstLine(out)+"\n", errs)
	}
	if code, out, _ := runCLI(t, "report", "zoo:resnet50", "--gpu", "A100", "--dtype", "fp16-amp", "--runtime", "graph"); code != 0 || !strings.Contains(out, "runtime graph") {
		t.Errorf("report --dtype fp16-amp --runtime graph: exit %d, header %q", code, firstLine(out))
	}
	totals := func(dtype string) (report.Totals, string) {
		t.Helper()
		code, out, errs := runCLI(t, "report", "zoo:resnet50", "--gpu", "A100", "--train", "--batch", "8", "--dtype", dtype, "--format", "json")
		if code != 0 {
			t.Fatalf("--train --dtype %s: exit %d: %s", dtype, code, errs)
		}
		var r report.Report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		return r.Totals, r.DType
	}
	amp, ampDT := totals("fp16-amp")
	half, _ := totals("fp16")
	if amp.TimeS != half.TimeS || amp.PeakMemoryBytes != half.PeakMemoryBytes || ampDT != "fp16" {
		t.Errorf("--train: fp16-amp %g s, %g B, dtype %q; fp16 %g s, %g B: want the same step, dtype fp16", amp.TimeS, amp.PeakMemoryBytes, ampDT, half.TimeS, half.PeakMemoryBytes)
	}
	code, _, errs = runCLI(t, "report", "zoo:resnet50", "--gpu", "A100", "--dtype", "fp17")
	if code != 2 || !strings.Contains(errs, "fp16-amp") {
		t.Errorf("--dtype fp17: exit %d, %q: want exit 2 and the choices, fp16-amp among them", code, errs)
	}
}
