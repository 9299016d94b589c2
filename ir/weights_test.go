package ir_test

import (
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/ir/irtest"
)

// TestWeightInputsPromoted: graph inputs read only in weight slots (an
// export_params=False export) become initializers without data, once,
// with one warning; data inputs, inputs also read as data, inputs of
// unknown shape and inputs given data stay inputs.
func TestWeightInputsPromoted(t *testing.T) {
	b := irtest.New(t, 13)
	x := b.Input("x", ir.Float32, 1, 16, 8, 8)
	w := b.Input("conv.weight", ir.Float32, 16, 16, 3, 3)
	bias := b.Input("conv.bias", ir.Float32, 16)
	y := b.Op("Conv", nil, x, w, bias)
	y = b.Op("Flatten", nil, y)
	// Linear as torch exports it for a 3-D input: MatMul(x, Transpose(W)) + b.
	fc := b.Input("fc.weight", ir.Float32, 10, 576)
	fcb := b.Input("fc.bias", ir.Float32, 10)
	z := b.Op("Add", nil, b.Op("MatMul", nil, y, b.Op("Transpose", nil, fc)), fcb)
	// Both operands of a MatMul are graph inputs: A is data, B a weight.
	a2 := b.Input("a2", ir.Float32, 8, 8)
	b2 := b.Input("b2", ir.Float32, 8, 8)
	m2 := b.Op("MatMul", nil, a2, b2)
	// An input read as a weight and as data is data.
	both := b.Input("both", ir.Float32, 8, 8)
	m3 := b.Op("Add", nil, b.Op("MatMul", nil, m2, both), both)
	// W·x with W constant: x is the data.
	wc := b.Tensor("wc", ir.Float32, 8, 4)
	b.G.AddInitializer(wc, &ir.Tensor{Name: "wc", DType: ir.Float32, Dims: []int64{8, 4}})
	m4 := b.Op("MatMul", nil, wc, b.Input("xr", ir.Float32, 4, 8))
	b.Output(z, m3, m4)

	res, err := ir.InferShapes(b.M, ir.InferOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"conv.weight": true, "conv.bias": true, "fc.weight": true, "fc.bias": true, "b2": true}
	for _, v := range b.G.Inputs {
		if v.IsInitializer != want[v.Name] {
			t.Errorf("input %s: initializer %v, want %v", v.Name, v.IsInitializer, want[v.Name])
		}
		if n, _ := v.Shape.NumElements(); v.IsInitializer && (v.Const == nil || v.Const.HasData || v.Const.NumElements() != n) {
			t.Errorf("input %s: promoted without a data-less tensor of its shape: %+v", v.Name, v.Const)
		}
	}
	if len(b.G.Inputs) != 9 || len(b.G.Initializers) != 1 {
		t.Errorf("%d inputs, %d initializers: the promoted inputs must stay inputs (and out of Initializers)", len(b.G.Inputs), len(b.G.Initializers))
	}
	n := 0
	for _, w := range res.Warnings {
		if strings.Contains(w, "look like weights") {
			n++
			if !strings.HasPrefix(w, "5 graph inputs look like weights (export_params=False?): counted as parameters (conv.weight, conv.bias, fc.weight, … 2 more)") {
				t.Errorf("warning %q", w)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d weight-input warnings, want 1: %q", n, res.Warnings)
	}
	if err := ir.VerifyInferred(b.G); err != nil {
		t.Error(err)
	}
	// Inferring again finds them initializers already: no second warning.
	res, err = ir.InferShapes(b.M, ir.InferOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range res.Warnings {
		if strings.Contains(w, "weight") {
			t.Errorf("second inference warns again: %q", w)
		}
	}
}

// TestWeightInputWithDataOrSymbolStays: an input given data (--input-data)
// or of symbolic shape is not promoted; one promoted input is "a weight".
func TestWeightInputWithDataOrSymbolStays(t *testing.T) {
	b := irtest.New(t, 13)
	x := b.Input("x", ir.Float32, 1, 16, 8, 8)
	w := b.Input("w", ir.Float32, 16, 16, 3, 3)
	y := b.Op("Conv", nil, x, w)
	sym := b.Value("ws")
	sym.Kind, sym.DType = ir.TensorValue, ir.Float32
	sym.Declared = &ir.TypeInfo{Kind: ir.TensorValue, DType: ir.Float32, Shape: ir.RankedShape(ir.S("k"), ir.D(16), ir.D(3), ir.D(3))}
	b.G.AddInput(sym)
	y = b.Op("Conv", nil, y, sym)
	given := b.Input("wg", ir.Float32, 16)
	y = b.Op("Conv", nil, y, w, given)
	b.Output(y)
	res, err := ir.InferShapes(b.M, ir.InferOptions{InputData: map[string]*ir.Tensor{
		"wg": ir.FloatTensor(ir.Float32, []int64{16}, make([]float64, 16))}})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range b.G.Inputs {
		if v.IsInitializer != (v.Name == "w") {
			t.Errorf("input %s: initializer %v", v.Name, v.IsInitializer)
		}
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "1 graph input looks like a weight (export_params=False?): counted as parameters (w)") {
		t.Errorf("warnings %q", res.Warnings)
	}
}
