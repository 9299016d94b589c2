package cost

import (
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/models"
)

// TestMisalignedGEMMAdvice: GPT-2's LM head over 50,257 tokens runs
// cuBLAS's alignment-1 fallback on Hopper under a runtime that calls
// cuBLAS; the report says so on the node and in one warning, with the
// head priced at the next multiple of 8, where it runs several times
// faster. A padded vocabulary, TensorRT (its own tactics) and an A100 (no
// TMA kernels) say nothing.
func TestMisalignedGEMMAdvice(t *testing.T) {
	e, _ := models.Lookup("gpt2-small")
	analyze := func(gpuName, runtime string, vocab int64, seq ...int64) *report.Report {
		t.Helper()
		m, err := e.Build(map[string]int64{"seq": append(seq, 128)[0], "vocab": vocab})
		if err != nil {
			t.Fatal(err)
		}
		gpu, err := hwdb.Lookup(gpuName)
		if err != nil {
			t.Fatal(err)
		}
		rt, err := hwdb.LookupRuntime(runtime)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Analyze(m.Graph, m, gpu, Options{DType: "fp16", Runtime: rt})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	said := func(r *report.Report) (noted []report.NodeCost, warning string) {
		for _, n := range r.Nodes {
			if strings.Contains(n.Note, "alignment-1") {
				noted = append(noted, n)
			}
		}
		for _, w := range r.Warnings {
			if strings.Contains(w, "alignment-1") {
				warning = w
			}
		}
		return noted, warning
	}
	r := analyze("H100-SXM5-80GB", "pytorch", 50257)
	noted, warning := said(r)
	if len(noted) != 1 || !strings.Contains(warning, "1 GEMM node(s) ("+noted[0].Name+")") || !strings.Contains(warning, "N=50257 → 50264") {
		t.Fatalf("want one node noted and a warning naming it and N=50257 → 50264; noted %d, warning %q", len(noted), warning)
	}
	head := noted[0]
	if !strings.Contains(head.Note, "N=50257 is not a multiple of 8") || !strings.Contains(head.Note, "at N=50264 about") {
		t.Errorf("note %q", head.Note)
	}
	// The warning holds no time: every step of a generation, every point
	// of a sweep says the same line, kept once.
	if other, w := said(analyze("H100-SXM5-80GB", "pytorch", 50257, 512)); len(other) != 1 || w != warning {
		t.Errorf("at another sequence length the warning differs:\n%q\n%q", w, warning)
	}
	padded := analyze("H100-SXM5-80GB", "pytorch", 50264)
	if n, w := said(padded); len(n) != 0 || w != "" {
		t.Errorf("padded vocabulary: %d noted, warning %q", len(n), w)
	}
	found := false
	for _, n := range padded.Nodes {
		if n.Name == head.Name {
			found = true
			if !(n.TimeS < head.TimeS/3) {
				t.Errorf("%s padded: %g s, against %g s at the fallback: want several times faster", n.Name, n.TimeS, head.TimeS)
			}
		}
	}
	if !found {
		t.Errorf("no node %s in the padded model", head.Name)
	}
	for _, c := range []struct{ gpu, rt string }{{"H100-SXM5-80GB", "tensorrt"}, {"A100-SXM4-80GB", "pytorch"}} {
		if n, w := said(analyze(c.gpu, c.rt, 50257)); len(n) != 0 || w != "" {
			t.Errorf("%s under %s: %d noted, warning %q", c.gpu, c.rt, len(n), w)
		}
	}
}
