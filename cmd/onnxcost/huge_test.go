package main

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/models"
)

// TestHugeQuestionCounted: LLaMA-70B at batch 64 and 2^20 tokens is a big
// question, not a hostile model. Its attention scores have 2^52 elements
// and its MAC total (~9.7e19) is past 2^63; the report must be finite,
// non-negative everywhere, and its MACs must match the architecture's
// count within 1%.
func TestHugeQuestionCounted(t *testing.T) {
	c := models.Llama70B
	c.Seq, c.Batch = models.Symbolic, models.Symbolic
	m, err := models.Llama(c)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "llama70b.onnx")
	models.SetDataFile(m, "llama70b.onnx.data")
	if err := ir.WriteFile(path, m); err != nil {
		t.Fatal(err)
	}
	const batch, seq = 64, 1 << 20
	want := llamaMACs(batch, seq, 80, 8192, 64, 8, 28672, 32000)
	if want < math.Exp2(63) {
		t.Fatalf("independent count %g: the test should exercise a total past 2^63", want)
	}
	for _, plan := range []string{"fused", "unfused"} {
		code, out, errs := runCLI(t, "report", path, "--gpu", "H100-SXM5-80GB", "--batch", "64",
			"--dim", "seq=1048576", "--plan", plan, "--format", "json")
		if code != 0 {
			t.Fatalf("%s plan: exit %d: %s", plan, code, errs)
		}
		var r struct {
			Totals struct {
				MACs float64 `json:"macs"`
			} `json:"totals"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		if rel := math.Abs(r.Totals.MACs-want) / want; rel > 0.01 {
			t.Errorf("%s plan: MACs %g, independent count %g (off by %.2f%%)", plan, r.Totals.MACs, want, 100*rel)
		}
		checkFiniteJSON(t, plan, out)
		_, text, _ := runCLI(t, "report", path, "--gpu", "H100-SXM5-80GB", "--batch", "64",
			"--dim", "seq=1048576", "--plan", plan)
		for _, bad := range []string{"NaN", "Inf"} {
			if strings.Contains(text, bad) {
				t.Errorf("%s plan: text report contains %q", plan, bad)
			}
		}
	}
}

// llamaMACs counts a LLaMA-2 forward pass from its architecture alone:
// per token and layer the Q and O projections (d×d each), the K and V
// projections (d×kv·hd each), the SwiGLU MLP (three d×ff matrices) and
// attention over the full sequence (QKᵀ and AV: heads·seq·hd each), then
// the LM head (d×vocab). The graph computes full, not causal, scores.
func llamaMACs(batch, seq, layers, d, heads, kvHeads, ff, vocab float64) float64 {
	hd := d / heads
	perLayer := 2*d*d + 2*d*kvHeads*hd + 3*d*ff + 2*heads*seq*hd
	return batch * seq * (layers*perLayer + d*vocab)
}

// checkFiniteJSON fails on any number in a JSON document that is not a
// finite, non-negative float64 (encoding/json refuses NaN and Inf, so an
// overflow shows up as an error, a negative or a wrapped value).
func checkFiniteJSON(t *testing.T, what, doc string) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(doc)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				walk(path+"."+k, x)
			}
		case []any:
			for i, x := range v {
				walk(path+"["+strconv.Itoa(i)+"]", x)
			}
		case json.Number:
			f, err := strconv.ParseFloat(string(v), 64)
			if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || f < 0 {
				t.Errorf("%s: %s = %s", what, path, v)
			}
		}
	}
	walk("", v)
}
