package sweep

import (
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
)

// TestParseAlong: NAME=LIST, the name trimmed; a missing name or a bad
// list names --sweep.
func TestParseAlong(t *testing.T) {
	name, values, err := ParseAlong(" batch =1..4")
	if err != nil || name != "batch" || len(values) != 3 {
		t.Fatalf("got %q %v %v", name, values, err)
	}
	for in, want := range map[string]string{"batch": "want NAME=LIST", "=1,2": "want NAME=LIST", "seq=x": "--sweep seq:"} {
		if _, _, err := ParseAlong(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

// TestAlong: a zoo parameter is rebuilt per value, in order; a name that
// binds nothing says what can be swept.
func TestAlong(t *testing.T) {
	s, err := NewSweeper(Config{Model: "zoo:lstm-ptb", GPUs: gpus(t, "V100"), Plan: "fused"})
	if err != nil {
		t.Fatal(err)
	}
	var seen []int64
	var flops []float64
	err = s.Along(Along{Name: "hidden", Values: []int64{256, 512}}, func(v int64, r *report.Report) error {
		seen, flops = append(seen, v), append(flops, r.Totals.FLOPs)
		return nil
	})
	if err != nil || len(seen) != 2 || seen[1] != 512 || !(flops[1] > flops[0]) {
		t.Fatalf("values %v, FLOPs %v, %v", seen, flops, err)
	}
	err = s.Along(Along{Name: "nosuch", Values: []int64{1, 2}}, func(int64, *report.Report) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "its parameters and symbolic dims: ") {
		t.Fatalf("unknown name: %v", err)
	}
}
