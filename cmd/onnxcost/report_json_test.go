package main

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/passes"
	"github.com/onnxcost/onnxcost/pipeline"
)

// TestReportJSONStreamed: writeReportJSON writes writeJSON's bytes for the
// reports of every fixture (both plans), for reports
// without nodes, and for one with more rows than a chunk holds whose names
// need escaping (HTML left as is) and whose rows have nested lists.
func TestReportJSONStreamed(t *testing.T) {
	var reports []*report.Report
	models, err := filepath.Glob(filepath.Join(repoRoot, "testdata", "models", "*.onnx"))
	if err != nil || len(models) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	sort.Strings(models)
	gpu, err := resolveGPU("A100", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range models {
		for _, plan := range []string{"fused", "unfused"} {
			l, err := pipeline.Load(m, pipeline.Options{BindAll: true})
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Plan(plan, passes.Options{}); err != nil {
				t.Fatal(err)
			}
			r, err := pipeline.Estimate(l, gpu, pipeline.EstimateOptions{Plan: plan, ToolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			reports = append(reports, r)
		}
	}
	reports = append(reports, &report.Report{Nodes: []report.NodeCost{}, Warnings: []string{}}, &report.Report{})
	many := &report.Report{Model: "m<&>\n\"x\".onnx", Warnings: []string{"w & <b>"},
		UnsupportedOps: []report.Unsupported{{OpType: "X", Count: 0, Nodes: []string{}}, {OpType: "Y", Count: 1, Nodes: []string{"a"}}}}
	for i := range 3*nodesPerChunk + 7 {
		many.Nodes = append(many.Nodes, report.NodeCost{
			Name: fmt.Sprintf("n<%d>&\"é\"\t", i), OpType: "MatMul", FusedFrom: []string{"a", "b>"},
			Inputs:  []report.TensorInfo{{Name: "x", DType: "float32", Shape: report.Shape{ir.D(2), ir.S("batch")}}},
			Outputs: []report.TensorInfo{}, TimeS: float64(i) / 3, Note: "",
		})
	}
	many.Nodes[5].Backward = &report.Backward{}
	reports = append(reports, many)
	for i, r := range reports {
		var want, got bytes.Buffer
		if err := writeJSON(&want, r); err != nil {
			t.Fatal(err)
		}
		if err := writeReportJSON(&got, r); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("report %d (%s, %d nodes): streamed JSON differs from writeJSON's", i, r.Model, len(r.Nodes))
		}
	}
}

// TestReportJSONRowError: a row that cannot be encoded (a NaN, which the
// cost model never leaves) fails the write, naming the row, and nothing
// after the chunk before it is written.
func TestReportJSONRowError(t *testing.T) {
	r := &report.Report{Warnings: []string{}}
	for i := range 2*nodesPerChunk + 1 {
		r.Nodes = append(r.Nodes, report.NodeCost{Name: fmt.Sprint("n", i)})
	}
	r.Nodes[nodesPerChunk+3].TimeS = math.NaN()
	var got bytes.Buffer
	err := writeReportJSON(&got, r)
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte(fmt.Sprintf("%q", r.Nodes[nodesPerChunk+3].Name))) {
		t.Fatalf("error %v, want one naming the row", err)
	}
	if bytes.Contains(got.Bytes(), []byte(fmt.Sprintf("%q", r.Nodes[2*nodesPerChunk].Name))) {
		t.Errorf("rows after the failing chunk were written")
	}
}
