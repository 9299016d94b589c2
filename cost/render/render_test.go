package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

func TestUnits(t *testing.T) {
	cases := map[string]string{
		Seconds(0):        "0",
		Seconds(812e-9):   "812 ns",
		Seconds(1.42e-6):  "1.42 µs",
		Seconds(12.34e-3): "12.3 ms",
		Seconds(2.05):     "2.05 s",
		FLOPs(1.2e9):      "1.20 GFLOP",
		FLOPs(999):        "999 FLOP",
		Bytes(2.5e6):      "2.50 MB",
		Count(55):         "55",
		Count(1500):       "1.50 k",
		Percent(0.0004):   "<0.1%",
		Percent(0.25):     "25.0%",
		Joules(0.0123):    "12.3 mJ",
	}
	for got, want := range cases {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

func sample() *report.Report {
	shape := report.ShapeOf(ir.KnownShape(1, 64, 56, 56))
	n := func(name, op string, timeS, flops float64) report.NodeCost {
		return report.NodeCost{Counts: report.Counts{FLOPs: flops, BytesRead: 1e6, BytesWritten: 8e5}, Name: name, OpType: op, TimeS: timeS, Bound: "memory", ArithmeticIntensity: flops / 1.8e6, Outputs: []report.TensorInfo{{Name: name + ":0", DType: "float32", Shape: shape}}}
	}
	return &report.Report{Header: report.Header{ToolVersion: "t"}, Model: "m.onnx", GPU: "T4", DType: "fp32", Plan: "unfused", Totals: report.Totals{Counts: report.Counts{FLOPs: 3e6, BytesRead: 3e6, BytesWritten: 2.4e6}, TimeS: 6e-6, Launches: 3}, Nodes: []report.NodeCost{n("conv|1\n::error::x", "Conv", 4e-6, 2.9e6), n("relu", "Relu", 1e-6, 5e4), n("add", "Add", 1e-6, 5e4)}, UnsupportedOps: []report.Unsupported{{Domain: "com.x", OpType: "Magic", Count: 2}}}
}

func TestTextTopAndTotals(t *testing.T) {
	var b bytes.Buffer
	if err := Text(&b, sample(), Options{Top: 1}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"… 2 more nodes", "total", "unsupported ops, not counted in any total: com.x.Magic (2)", ConventionSummary} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "::") {
			t.Errorf("a node name started a line: %q", line)
		}
	}
}

func TestMarkdownEscapes(t *testing.T) {
	var b bytes.Buffer
	if err := Markdown(&b, sample(), Options{}); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(line, "| conv") && strings.Count(strings.ReplaceAll(line, `\|`, ""), "|") != 11 {
			t.Errorf("a node name broke the table row: %q", line)
		}
	}
	if got := MarkdownEscape("<b>a|b</b>"); got != `&lt;b&gt;a\|b&lt;/b&gt;` {
		t.Errorf("MarkdownEscape = %q", got)
	}
}

func TestByOpSortsByTime(t *testing.T) {
	ops := ByOp(sample())
	if len(ops) != 3 || ops[0].OpType != "Conv" || ops[1].OpType != "Add" {
		t.Errorf("ByOp = %+v; want Conv first, then Add and Relu by name", ops)
	}
}

// TestHeaderNamesTheCalibration: a report priced with a calibration says
// so in its first line, naming the file; one without says nothing.
func TestHeaderNamesTheCalibration(t *testing.T) {
	r := &report.Report{GPU: "H200", DType: "fp16", Plan: "fused"}
	if h := Header(r); strings.Contains(h, "calibrated") {
		t.Errorf("uncalibrated header %q", h)
	}
	r.Calibration = "calibration runs/h200.cal.yaml: fitted on H200-SXM-141GB from 12 rows of m.csv; applied in full (GPU factor 0.9, 3 cells)"
	if h := Header(r); !strings.HasSuffix(h, " · calibrated by runs/h200.cal.yaml") {
		t.Errorf("header %q", h)
	}
	// A report carries its file apart from the line: a name the line
	// could not give back whole (": " in a directory) still reads whole.
	r.CalibrationFile = "runs: H200/h200.cal.yaml"
	if h := Header(r); !strings.HasSuffix(h, " · calibrated by runs: H200/h200.cal.yaml") {
		t.Errorf("header %q", h)
	}
	c := &report.Comparison{Model: "m.onnx", GPU: "H200", DType: "fp16", Calibration: r.Calibration, CalibrationFile: r.CalibrationName()}
	if h := compareHeader(c, 1); !strings.HasSuffix(h, " · calibrated by runs: H200/h200.cal.yaml") {
		t.Errorf("compare header %q", h)
	}
	for _, line := range []string{"no calibration", "calibration x.yaml without its colon", ""} {
		if got := (&report.Report{Calibration: line}).CalibrationName(); got != "" {
			t.Errorf("CalibrationName of %q = %q, want none", line, got)
		}
	}
}

// TestHeaderQuantized: a quantized model's header says so, and says when
// --dtype ran it at another type.
func TestHeaderQuantized(t *testing.T) {
	r := &report.Report{GPU: "A100", DType: "int8", Quantized: "int8", Plan: "fused"}
	if h := Header(r); !strings.Contains(h, "dtype int8 (quantized model) ·") {
		t.Errorf("header %q", h)
	}
	r.DType = "fp16"
	if h := Header(r); !strings.Contains(h, "dtype fp16 (quantized model, int8; costed at fp16 as asked)") {
		t.Errorf("header %q", h)
	}
	r.Quantized = ""
	if h := Header(r); !strings.Contains(h, "dtype fp16 · plan") {
		t.Errorf("header %q", h)
	}
}
