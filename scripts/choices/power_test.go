package main

import (
	"io"
	"strings"
	"testing"
)

// TestPowerTable: a table in the layout scripts/measure_gpu.py --power
// writes is read one kernel per row and each priced by the power model; a
// row without a power reading (the CPU dry run's, whose first three rows
// these are) is priced all the same, and an unknown kernel is refused by
// name. A format check, not a measurement: the last row is hand-written in
// a GPU run's shape (its time and power arbitrary).
func TestPowerTable(t *testing.T) {
	write := tableWriter(t, "# --device cpu dry run\n"+powerHeader+"\n")
	ok := write("ok.csv", "Add,fp32,16384,0.00704,,\nMatMul,fp32,64x64x64,0.21500,,\nConv,fp32,1x256x14x14x256x3,3.57656,,\n"+
		"Add,fp16,268435456,0.40000,600,1980\n")
	s := tableOutput(t, "H200", ok)
	t.Log("\n" + s)
	// 600 W at 3 × 2^28 × 2 bytes in 0.4 ms: (600 − 140) W over 4.03 TB/s.
	for _, want := range []string{"1x256x14x14x256x3", "1 kernels with power on H200-SXM-141GB", "a DRAM stream implies 114 pJ/B above the 140 W idle (hwdb mem_pj_per_byte: 120"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Count(s, "\n") != 7 {
		t.Errorf("want a header, four kernels, a summary and the stream's energy per byte:\n%s", s)
	}
	bad := write("bad.csv", "Mul,fp32,16384,0.1,,\n")
	if err := run(io.Discard, "H200", []string{bad}); err == nil || !strings.Contains(err.Error(), "bad.csv") || !strings.Contains(err.Error(), "Mul") {
		t.Errorf("unknown kernel: %v", err)
	}
}
