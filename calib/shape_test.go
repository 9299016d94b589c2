package calib

import (
	"math"
	"strings"
	"testing"
)

// shapeRows are single-kernel MatMul rows of two GEMM shapes, 40 each
// over 5 µs-5 ms, measured factor[shape] times the model.
func shapeRows(gpu string, factor map[string]float64) []Row {
	var rows []Row
	for _, shape := range []string{"4096x4096", "1024x4096"} {
		for i := range 40 {
			body := 5e-6 * math.Pow(1000, float64(i)/39)
			k := kern{"gemm", "MatMul", "compute", body}
			rep := synthReport(gpu, k)
			rep.Nodes[0].KernelShape = shape
			rows = append(rows, Row{Name: shape, MeasuredS: measuredAs([]kern{k}, func(kern) float64 { return factor[shape] }, 1), Report: rep})
		}
	}
	return rows
}

// Two GEMM shapes of one op, one 30% slower than the model and one 10%
// faster: the shape cells tell them apart on the GPU fitted (an op cell
// alone would price both at their mean), are written and read back, and
// do not transfer: on another GPU both shapes get the op's factor.
func TestShapeCellsSeparateAnOpsGEMMs(t *testing.T) {
	a100, h100 := mustGPU(t, "A100-SXM4-80GB"), mustGPU(t, "H100-SXM5-80GB")
	truth := map[string]float64{"4096x4096": 1.3, "1024x4096": 0.9}
	rows := shapeRows(a100.Name, truth)
	cal, err := Fit(a100, rows, Source{Measurements: "shapes.csv"})
	if err != nil {
		t.Fatal(err)
	}
	if worst, at := rowErr(rows, cal.For(a100)); worst > 0.05 {
		t.Errorf("fitted rows: worst |error| %.1f%% (%s)", 100*worst, at)
	}
	text := writeString(t, cal)
	if !strings.Contains(text, `shape: "4096x4096"`) || !strings.Contains(text, `shape: "1024x4096"`) {
		t.Errorf("no shape cells written:\n%s", text)
	}
	back, err := Parse("cal.yaml", []byte(text))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if again := writeString(t, back); again != text {
		t.Errorf("round trip changed the file:\n%s\n---\n%s", text, again)
	}
	ts := only("compute", 200e-6)
	for _, a := range []*Applied{cal.For(a100), back.For(a100)} {
		big, small := a.TermFactor("gemm", "", "MatMul", "4096x4096", "compute", ts), a.TermFactor("gemm", "", "MatMul", "1024x4096", "compute", ts)
		// Shrunk toward the op cell by 4 rows' weight of 40.
		if r := big / small; r < 1.35 || r > 1.3/0.9 {
			t.Errorf("fitted GPU: factors %.3f and %.3f, want the shapes' ratio %.3f", big, small, 1.3/0.9)
		}
	}
	tr := cal.For(h100)
	op := tr.TermFactor("gemm", "", "MatMul", "", "compute", ts)
	for shape := range truth {
		if f := tr.TermFactor("gemm", "", "MatMul", shape, "compute", ts); f != op {
			t.Errorf("transferred, shape %s: factor %g, want the op's %g (shape cells stay on the GPU fitted)", shape, f, op)
		}
	}
}
