package viz

import (
	"bytes"
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
)

// TestPDFIsDeterministic: a PDF carries the fixed date, not the time it
// was written, so the same input gives the same bytes.
func TestPDFIsDeterministic(t *testing.T) {
	r := &report.Report{GPU: "T4", Nodes: []report.NodeCost{{Name: "a", OpType: "Conv", Counts: report.Counts{FLOPs: 1e9, BytesRead: 1e6}, TimeS: 1e-4, ArithmeticIntensity: 1000, Bound: "compute"}}}
	r.Totals.TimeS = 1e-4
	c := Ceilings{}
	a := renderTwice(t, "roofline PDF", func() ([]byte, error) {
		return Roofline(r, nil, c, RooflineOptions{}, "pdf")
	})
	if !bytes.Contains(a, []byte("D:20000101")) {
		t.Fatalf("PDF does not carry the fixed date")
	}
}

// renderTwice renders with f twice and fails unless both succeed with the
// same bytes (every output must be deterministic); it returns them.
func renderTwice(t *testing.T, what string, f func() ([]byte, error)) []byte {
	t.Helper()
	a, err := f()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	b, err := f()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !bytes.Equal(a, b) {
		t.Fatalf("%s: two renders differ", what)
	}
	return a
}
