package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// overflowProductModel writes a MatMul of two [2^32, 2^32] inputs: each
// operand has 2^64 elements and the product 2^97 FLOPs, past int64 in
// every count and in the GEMM's tile products.
func overflowProductModel(t *testing.T) string {
	t.Helper()
	g := ir.NewGraph("overflow_product")
	m := &ir.Model{IRVersion: 8, Opsets: []ir.OpsetImport{{Domain: "", Version: 13}}, Graph: g}
	val := func(name string) *ir.Value {
		v, err := g.NewValue(name)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	const side = int64(1) << 32
	a, b := val("a"), val("b")
	for _, v := range []*ir.Value{a, b} {
		v.Kind, v.DType, v.Shape = ir.TensorValue, ir.Float32, ir.KnownShape(side, side)
		g.AddInput(v)
	}
	y := val("y")
	if err := g.AddNode(&ir.Node{Name: "matmul", OpType: "MatMul", Inputs: []*ir.Value{a, b}, Outputs: []*ir.Value{y}}); err != nil {
		t.Fatal(err)
	}
	g.AddOutput(y)
	p := filepath.Join(t.TempDir(), "overflow_product.onnx")
	if err := ir.WriteFile(p, m); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestOverflowProductPriced: a model whose dims multiply past int64 is
// either refused naming the size or priced at no less than its FLOPs over
// the GPU's peak, with a warning naming the node and the tensor past
// int64's exact range; a wrapped tile count
// once priced it at 2.3e8 s, seven orders of magnitude under the floor.
func TestOverflowProductPriced(t *testing.T) {
	path := overflowProductModel(t)
	code, out, errs := runCLI(t, "report", path, "--gpu", "T4", "--format", "json")
	if code == 2 {
		if !strings.Contains(errs, "2^63") && !strings.Contains(errs, "int64") && !strings.Contains(errs, "overflow") {
			t.Fatalf("refused without naming the size: %s", errs)
		}
		return
	}
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r struct {
		Totals struct {
			FLOPs float64 `json:"flops"`
			TimeS float64 `json:"time_s"`
		} `json:"totals"`
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	const peakT4FP32 = 8.141e12 // hwdb's T4 fp32 rate, rounded up
	flops := 2 * math.Exp2(96)
	floor := flops / peakT4FP32
	t.Logf("time %g s, floor %g s, warnings %q", r.Totals.TimeS, floor, r.Warnings)
	if r.Totals.TimeS < floor {
		t.Errorf("time %g s, below 2·2^96 FLOPs over the fp32 peak: %g s (FLOPs reported %g)", r.Totals.TimeS, floor, r.Totals.FLOPs)
	}
	warned := false
	for _, w := range r.Warnings {
		if strings.Contains(w, `"matmul"`) && strings.Contains(w, "2^62") {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no warning names the saturated MatMul: %q", r.Warnings)
	}
	checkFiniteJSON(t, "overflow_product", out)
}
