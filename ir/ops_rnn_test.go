package ir

import (
	"strings"
	"testing"
)

func TestRecurrentShapes(t *testing.T) {
	const seq, batch, input, hidden = 7, 3, 5, 4
	x := fcKnownIn("x", Float32, seq, batch, input)
	lstmW := func(dirs int64) fcIn { return fcKnownIn("w", Float32, dirs, 4*hidden, input) } // 4 gates
	lstmR := func(dirs int64) fcIn { return fcKnownIn("r", Float32, dirs, 4*hidden, hidden) }
	bi := []*Attribute{fcAttrInt("hidden_size", hidden), fcAttrStr("direction", "bidirectional")}
	// Y [seq, dirs, batch, hidden], Y_h and Y_c [dirs, batch, hidden].
	fcCheck(t, 14, "LSTM", bi, []fcIn{x, lstmW(2), lstmR(2)},
		"float32[7,2,3,4]", "float32[2,3,4]", "float32[2,3,4]")
	// layout=1: X [batch, seq, input], Y [batch, seq, dirs, hidden], states [batch, dirs, hidden].
	fcCheck(t, 14, "LSTM", append(bi, fcAttrInt("layout", 1)), []fcIn{fcKnownIn("x", Float32, batch, seq, input), lstmW(2), lstmR(2)},
		"float32[3,7,2,4]", "float32[3,2,4]", "float32[3,2,4]")
	// hidden_size absent: taken from R's last dim.
	fcCheck(t, 14, "GRU", nil, []fcIn{x, fcKnownIn("w", Float32, 1, 3*hidden, input), fcKnownIn("r", Float32, 1, 3*hidden, hidden)},
		"float32[7,1,3,4]", "float32[1,3,4]")
	// Symbolic sequence length and batch flow through.
	fcCheck(t, 14, "RNN", []*Attribute{fcAttrInt("hidden_size", hidden)},
		[]fcIn{fcTensorIn("x", Float16, S("T"), S("B"), D(input)), fcKnownIn("w", Float16, 1, hidden, input), fcKnownIn("r", Float16, 1, hidden, hidden)},
		"float16[T,1,B,4]", "float16[1,B,4]")

	// Omitted Y: only Y_h is produced.
	g := NewGraph("g")
	ins := fcAddInputs(t, g, []fcIn{x, lstmW(1), lstmR(1)})
	n := fcNode(t, g, "LSTM", []*Attribute{fcAttrInt("hidden_size", hidden)}, ins, 2)
	n.Outputs[0].Producer = nil
	n.Outputs[0] = nil
	m := &Model{Opsets: []OpsetImport{{Version: 14}}, Graph: g}
	if _, err := InferShapes(m, InferOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := n.Outputs[1].Shape.String(); got != "[1,3,4]" {
		t.Errorf("LSTM Y_h with Y omitted = %s, want [1,3,4]", got)
	}

	if _, err := fcInfer(t, 14, "LSTM", []*Attribute{fcAttrStr("direction", "sideways")}, []fcIn{x, lstmW(1), lstmR(1)}, 1); err == nil {
		t.Error("LSTM with an unknown direction: no error")
	}
}

// TestDynamicQuantizeLSTMInfer: quantize_dynamic's LSTM takes LSTM's
// outputs over its transposed 8-bit weights (W [dirs, input, 4h], R
// [dirs, h, 4h]); without hidden_size, R's rows give h; float or
// mis-ranked weights are refused.
func TestDynamicQuantizeLSTMInfer(t *testing.T) {
	const op = "com.microsoft::DynamicQuantizeLSTM"
	q := func(w, r faIn) []faIn {
		s := faInput(Float32, faShape(2, 64))
		z := faInput(Int8, faShape(2, 64))
		return []faIn{faInput(Float32, faShape("S", "N", 8)), w, r, faOmitted, faOmitted, faOmitted, faOmitted, faOmitted, s, z, s, z}
	}
	ins := q(faInput(Int8, faShape(2, 8, 64)), faInput(Int8, faShape(2, 16, 64)))
	bi := []*Attribute{StringAttr("direction", "bidirectional")}
	want := []TypeInfo{{DType: Float32, Shape: faShape("S", 2, "N", 16)}, {DType: Float32, Shape: faShape(2, "N", 16)}, {DType: Float32, Shape: faShape(2, "N", 16)}}
	runFAOutputs(t, "hidden from R", op, 17, ins, bi, want)
	runFAOutputs(t, "hidden_size", op, 17, ins, append(bi, IntAttr("hidden_size", 16)), want)
	for _, c := range []struct {
		ins  []faIn
		want string
	}{
		{q(faInput(Float32, faShape(2, 8, 64)), ins[2]), "input 1 (W) is float32, want 8-bit"},
		{q(ins[1], faInput(Int8, faShape(16, 64))), "input 2 (R) has rank 2"},
	} {
		if _, err := runFAOp(t, op, 17, c.ins, bi, 3); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want an error with %q, got %v", c.want, err)
		}
	}
}
