package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestWarmFlag: `report --warm` prices a call repeated back to back and
// says so in the header line and the JSON (`"warm": true`), a small model
// costs less than its first call, and without a GPU or with --train (whose
// backward prices its own traffic) the flag is refused with exit 2.
func TestWarmFlag(t *testing.T) {
	model := fixture(t, "transformer_seq2seq.onnx")
	total := func(args ...string) (float64, bool) {
		t.Helper()
		code, out, errs := runCLI(t, append([]string{"report", model, "--gpu", "H100", "--runtime", "graph", "--format", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("report %v: exit %d: %s", args, code, errs)
		}
		var r struct {
			Warm   bool `json:"warm"`
			Totals struct {
				TimeS float64 `json:"time_s"`
			} `json:"totals"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		return r.Totals.TimeS, r.Warm
	}
	cold, coldWarm := total()
	warm, warmWarm := total("--warm")
	if coldWarm || !warmWarm {
		t.Errorf("JSON warm: %v without --warm, %v with it", coldWarm, warmWarm)
	}
	// The whole call (weights and activations) fits the H100's L2: the
	// repeated call reads it from there. (A model whose call outgrows L2
	// finds nothing: L2 is an LRU, and a cyclic stream larger than it
	// evicts each line before its reuse.)
	if !(warm < cold) {
		t.Errorf("--warm %.4g s, first call %.4g s: want the repeated call cheaper", warm, cold)
	}
	code, out, _ := runCLI(t, "report", model, "--gpu", "H100", "--warm")
	if code != 0 || !strings.Contains(strings.SplitN(out, "\n", 2)[0], "repeated calls (warm L2)") {
		t.Errorf("text header (exit %d) does not say the calls are repeated: %q", code, strings.SplitN(out, "\n", 2)[0])
	}
	if code, _, errs := runCLI(t, "report", model, "--warm"); code != 2 || !strings.Contains(errs, "--warm needs a GPU") {
		t.Errorf("--warm without a GPU: exit %d, %q; want exit 2 naming the flag", code, errs)
	}
	if code, out, errs := runCLI(t, "report", model, "--gpu", "H100", "--train", "--warm"); code != 2 || out != "" || !strings.Contains(errs, "--warm") {
		t.Errorf("--warm --train: exit %d, %d bytes out, %q; want exit 2 naming --warm and no output", code, len(out), errs)
	}
}
