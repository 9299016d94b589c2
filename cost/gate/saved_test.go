package gate

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
)

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDecodeSavedAndBases: a saved report and a saved check result decode
// to their reports, and --base-report maps them to the budget's models; a
// file that is not a report is refused with a reason.
func TestDecodeSavedAndBases(t *testing.T) {
	a, b := mkReport(1e-3, 1e9, 10), mkReport(2e-3, 2e9, 20)
	a.Model, b.Model = "models/a.onnx", "b.onnx"
	bud := &Budget{File: ".onnxcost.yaml", Models: []ModelBudget{{Name: "a", Path: "a.onnx"}, {Name: "b", Path: "b.onnx"}}}

	rs, err := DecodeSaved(mustJSON(t, a))
	if err != nil || len(rs) != 1 || rs[0].Name != "" || rs[0].Report.Model != a.Model {
		t.Fatalf("plain report: %+v, %v", rs, err)
	}
	bases, err := Bases(mustJSON(t, a), bud)
	if err != nil || bases["a"] == nil || len(bases) != 1 {
		t.Errorf("plain report as base: %v, %v; want it matched to a by file name", bases, err)
	}

	chk := &CheckResult{SchemaVersion: report.SchemaVersion, Models: []ModelResult{{Name: "a", Report: a}, {Name: "b", Report: b}, {Name: "c"}}}
	data := mustJSON(t, chk)
	rs, err = DecodeSaved(data)
	if err != nil || len(rs) != 2 || rs[1].Name != "b" {
		t.Fatalf("check result: %+v, %v", rs, err)
	}
	if bases, err = Bases(data, bud); err != nil || bases["a"] != nil && bases["a"].Model != a.Model || len(bases) != 2 {
		t.Errorf("check result as base: %v, %v", bases, err)
	}
	if _, err := DecodeReport(data); err == nil || !strings.Contains(err.Error(), "a check result of 2 models (a, b)") {
		t.Errorf("DecodeReport of two models: %v", err)
	}

	other := &Budget{File: "x.yaml", Models: []ModelBudget{{Name: "x", Path: "x.onnx"}, {Name: "y", Path: "y.onnx"}}}
	if _, err := Bases(mustJSON(t, a), other); err == nil || !strings.Contains(err.Error(), "matches no model of x.yaml") {
		t.Errorf("unmatched base: %v", err)
	}
	for in, want := range map[string]string{
		`{"totals": {}}`:                         "no schema_version",
		`{"schema_version": 1}`:                  "no totals",
		`{"schema_version": 99999, "totals":{}}`: "newer than this onnxcost",
		`{"schema_version": 1, "models": []}`:    "no model report",
		`{`:                                      "not a valid JSON report",
	} {
		if _, err := DecodeSaved([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("DecodeSaved(%s): %v, want %q", in, err, want)
		}
	}
}

// TestSidePick: a check result of several models gives the report of the
// other side's model, by budget name or file name; two such sides, or no
// match, are errors.
func TestSidePick(t *testing.T) {
	a, b := mkReport(1e-3, 1e9, 10), mkReport(2e-3, 2e9, 20)
	a.Model, b.Model = "a.onnx", "b.onnx"
	saved := &Side{Path: "check.json", Saved: true, Reports: []Saved{{Name: "a", Report: a}, {Name: "b", Report: b}}}
	model := &Side{Path: "dir/b.onnx", Reports: []Saved{{Report: &report.Report{Model: "dir/b.onnx"}}}}
	if r, err := saved.Pick(model); err != nil || r != b {
		t.Errorf("Pick = %v, %v; want b's report", r, err)
	}
	if r, err := model.Pick(saved); err != nil || r.Model != "dir/b.onnx" {
		t.Errorf("a one-report side picks its own: %v, %v", r, err)
	}
	if _, err := saved.Pick(saved); err == nil || !strings.Contains(err.Error(), "holds several too") {
		t.Errorf("two check results: %v", err)
	}
	none := &Side{Path: "c.onnx", Reports: []Saved{{Report: &report.Report{Model: "c.onnx"}}}}
	if _, err := saved.Pick(none); err == nil || !strings.Contains(err.Error(), "none or more than one") {
		t.Errorf("no match: %v", err)
	}
}

// TestMismatches: every flag a saved report was not computed with is
// named, with what it was computed with; matching flags are not.
func TestMismatches(t *testing.T) {
	r := mkReport(1e-3, 1e9, 10)
	r.Bindings = map[string]int64{"batch": 8, "seq": 128}
	eight, four := int64(8), int64(4)
	if m := Mismatches(r, Requested{GPU: "t4", GPUName: "T4", DType: "FP32", Plan: "fused", Batch: &eight, Dims: map[string]int64{"seq": 128}}); len(m) != 0 {
		t.Errorf("matching flags: %+v", m)
	}
	m := Mismatches(r, Requested{GPU: "a100", GPUName: "A100", DType: "fp16", RuntimeGiven: true, Runtime: "eager", Plan: "unfused", Batch: &four, Dims: map[string]int64{"seq": 64}})
	var flags []string
	for _, x := range m {
		flags = append(flags, x.Flag+" / "+x.Saved)
	}
	want := "--gpu a100 / GPU T4|--dtype fp16 / dtype fp32|--runtime eager / runtime none (written before runtime profiles)|--plan unfused / plan fused|--batch 4 / bindings batch=8 seq=128|--dim seq=64 / bindings batch=8 seq=128"
	if got := strings.Join(flags, "|"); got != want {
		t.Errorf("mismatches\n%s\nwant\n%s", got, want)
	}
}

// TestBudgetYAML: a generated budget parses, and every limit sits at or
// above the estimate it was made from plus headroom.
func TestBudgetYAML(t *testing.T) {
	r := mkReport(1.234567e-3, 123456789, 321)
	r.Totals.PeakMemoryBytes = 987654321
	text := BudgetYAML(Settings{GPU: "T4", Plan: "fused", Batch: 8, Dims: map[string]int64{"seq": 128}}, []BudgetEntry{{Path: "m.onnx", Report: r}}, 0.1)
	b, err := ParseBudget("gen.yaml", []byte(text))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if len(b.Models) != 1 || b.Models[0].Settings.Batch != 8 || b.Models[0].Settings.Dims["seq"] != 128 {
		t.Fatalf("parsed %+v", b.Models)
	}
	for _, a := range b.Models[0].Assertions {
		if !a.HasMax {
			continue
		}
		if v := MetricValue(a.Metric, r.Totals) * 1.1; a.Max < v {
			t.Errorf("%s: max %g below estimate+headroom %g", a.Metric.Name, a.Max, v)
		}
	}
}

// TestBudgetYAMLModelRuntime: a model the defaults' runtime does not
// price (one whose contrib operators made onnxruntime its default) gets
// its runtime and plan written in its entry, so check prices it as init
// did; the others inherit the defaults.
func TestBudgetYAMLModelRuntime(t *testing.T) {
	ort := mkReport(1e-3, 1e9, 10)
	ort.Runtime, ort.Plan = &report.Runtime{Name: "onnxruntime"}, "onnxruntime"
	trt := mkReport(1e-3, 1e9, 10)
	trt.Runtime, trt.Plan = &report.Runtime{Name: "tensorrt"}, "fused"
	text := BudgetYAML(Settings{GPU: "T4", Plan: "fused"}, []BudgetEntry{{Path: "bert.onnx", Report: ort}, {Path: "resnet.onnx", Report: trt}}, 0.1)
	b, err := ParseBudget("gen.yaml", []byte(text))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	got := [][2]string{{b.Models[0].Settings.Runtime, b.Models[0].Settings.Plan}, {b.Models[1].Settings.Runtime, b.Models[1].Settings.Plan}}
	if want := [][2]string{{"onnxruntime", "onnxruntime"}, {"", "fused"}}; !slices.Equal(got, want) {
		t.Errorf("models' runtime and plan %q, want %q\n%s", got, want, text)
	}
}
