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
	a, err := Roofline(r, nil, c, RooflineOptions{}, "pdf")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(a, []byte("D:20000101")) {
		t.Fatalf("PDF does not carry the fixed date")
	}
	b, _ := Roofline(r, nil, c, RooflineOptions{}, "pdf")
	if !bytes.Equal(a, b) {
		t.Fatal("two renderings differ")
	}
}
