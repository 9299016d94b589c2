package loop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/calib"
	"github.com/onnxcost/onnxcost/calib/profile"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/pipeline"
)

const repo = "../.."

// A measurements table is priced row by row with each row's settings; a
// bad row is an error naming the table and its line.
func TestMeasuredRows(t *testing.T) {
	dir := t.TempDir()
	model, err := filepath.Abs(filepath.Join(repo, "testdata", "models", "resnet50.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	table := filepath.Join(dir, "runs.csv")
	write := func(body string) {
		if err := os.WriteFile(table, []byte("model,ms,batch,dtype,runtime\n"+body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(model + ",1.2,1,fp32,graph\n" + model + ",3.4,8,fp16,pytorch\nzoo:alexnet,0.5,2,,\n")
	rows, err := MeasuredRows(table, pipeline.Config{GPU: "A100"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	if r := rows[1].Report; r.Runtime.Name != "pytorch" || r.DType != "fp16" || r.Bindings["batch"] != 8 || rows[1].MeasuredS != 3.4e-3 {
		t.Errorf("row 2 priced as %s %s batch %d, measured %g", r.Runtime.Name, r.DType, r.Bindings["batch"], rows[1].MeasuredS)
	}
	if r := rows[2].Report; r.Runtime.Name != "tensorrt" || r.Plan != "fused" {
		t.Errorf("a row without a runtime: %s %s, want the configured default", r.Runtime.Name, r.Plan)
	}
	src := CalibrationSource(rows, "runs.csv", "2026-11-29")
	if src.Runtime != "graph, pytorch, tensorrt" || src.Date != "2026-11-29" {
		t.Errorf("source %+v", src)
	}
	write(model + ",1.2,1,fp99,graph\n")
	if _, err := MeasuredRows(table, pipeline.Config{GPU: "A100"}); err == nil || !strings.Contains(err.Error(), "runs.csv:2") {
		t.Errorf("bad dtype: %v, want an error naming runs.csv:2", err)
	}
	if _, err := MeasuredRows(filepath.Join(dir, "none.csv"), pipeline.Config{GPU: "A100"}); err == nil || !pipeline.IsInputError(err) {
		t.Errorf("missing table: %v, want an input error", err)
	}
}

// A profile's comparison, its rows for a fit, and the runtime each
// format was measured under.
func TestProfileComparison(t *testing.T) {
	p, err := ReadProfile(filepath.Join(repo, "calib", "profile", "testdata", "ort_transformer.json"), "")
	if err != nil {
		t.Fatal(err)
	}
	if ProfileRuntime(p.Format) != "onnxruntime" || ProfileRuntime(profile.PyTorch) != "pytorch" || ProfileRuntime(profile.TensorRT) != "tensorrt" {
		t.Errorf("profile runtimes wrong")
	}
	c, m, rep, err := ProfileComparison(filepath.Join(repo, "calib", "profile", "testdata", "models", "transformer.onnx"), p, pipeline.Config{GPU: "A100", Runtime: "onnxruntime"})
	if err != nil {
		t.Fatal(err)
	}
	if c.MatchedTimeFraction < 0.95 || len(c.Nodes) == 0 {
		t.Fatalf("matched %.3f of the time over %d nodes", c.MatchedTimeFraction, len(c.Nodes))
	}
	rows := m.Rows(rep)
	if len(rows) == 0 {
		t.Fatal("no rows for a fit")
	}
	cal, err := calib.Fit(mustGPU(t), rows, CalibrationSource(rows, "ort_transformer.json", "2026-11-29"))
	if err != nil || cal.Source.Rows != len(rows) {
		t.Fatalf("fit: %v", err)
	}
	if !strings.Contains(FitSummary(cal, "x.yaml"), "from ") {
		t.Errorf("summary %q", FitSummary(cal, "x.yaml"))
	}
}

func mustGPU(t *testing.T) *hwdb.GPU {
	t.Helper()
	g, err := hwdb.Lookup("A100")
	if err != nil {
		t.Fatal(err)
	}
	return g
}
