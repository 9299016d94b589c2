package profile

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// Compare keeps measured nodes only, largest disagreement first, sums
// classes, and the trace lays both timelines on whole nanoseconds.
func TestCompareAndTrace(t *testing.T) {
	m := &Match{MatchedS: 6e-6, MatchedTimeFraction: 0.9, Nodes: []NodeTime{
		{Name: "a", OpType: "MatMul", KernelClass: "gemm", PredictedS: 1e-6, MeasuredS: 1.5e-6},
		{Name: "b", OpType: "Add", KernelClass: "elementwise", PredictedS: 2e-6, MeasuredS: 4.5e-6},
		{Name: "c", OpType: "Reshape", PredictedS: 0, MeasuredS: 0},
		{Name: "d", OpType: "MatMul", KernelClass: "gemm", PredictedS: 3.3333333e-6, MeasuredS: 1e-7},
	}}
	c := Compare(&Profile{Format: ONNXRuntime, Path: "p.json", Runs: 3}, m)
	if len(c.Nodes) != 3 || c.Nodes[0].Name != "d" || c.Nodes[1].Name != "b" {
		t.Fatalf("nodes %+v: want d, b, a (largest |measured − predicted| first), c left out", c.Nodes)
	}
	if len(c.Classes) != 2 || c.Classes[0].Class != "elementwise" || c.Classes[1].Nodes != 2 {
		t.Errorf("classes %+v", c.Classes)
	}
	var text bytes.Buffer
	if err := c.WriteText(&text, 1); err != nil || !strings.Contains(text.String(), "90.0% of the measured time matched") || !strings.Contains(text.String(), "2 more nodes") {
		t.Errorf("text %q (%v)", text.String(), err)
	}
	b, err := m.Trace()
	if err != nil {
		t.Fatal(err)
	}
	var tr struct {
		TraceEvents []struct {
			Ph      string
			Pid     int
			Ts, Dur float64
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatal(err)
	}
	end := map[int]float64{}
	for _, e := range tr.TraceEvents {
		if e.Ph != "X" {
			continue
		}
		for _, v := range []float64{e.Ts * 1e3, e.Dur * 1e3} {
			if math.Abs(v-math.Round(v)) > 1e-6 {
				t.Errorf("pid %d: %g ns is not a whole nanosecond", e.Pid, v)
			}
		}
		if e.Ts < end[e.Pid]-1e-9 {
			t.Errorf("pid %d: a slice at %g µs overlaps the one ending at %g µs", e.Pid, e.Ts, end[e.Pid])
		}
		end[e.Pid] = e.Ts + e.Dur
	}
	if len(end) != 2 {
		t.Errorf("timelines %v, want predicted and measured", end)
	}
}
