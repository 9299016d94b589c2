package cost

import (
	"strings"
	"testing"
)

// TestDynamicQuantizeLSTMCounts: quantize_dynamic's LSTM
// (testdata/models/qoperator/qlstm.onnx, 6 steps at batch 2: a
// bidirectional layer of input 8, then a forward one of input 32, hidden
// 16) is LSTM's arithmetic over its transposed 8-bit weights, priced at
// int8: per cell 4·16·(in+16) multiply-accumulates; per gate
// pre-activation the two products' scales (2 flops) besides LSTM's 15
// per hidden element and the 4 bias adds; X and each step's hidden state
// quantized first (DynamicQuantizeLinear's 5 flops an element), in a
// kernel a direction plus one a step.
func TestDynamicQuantizeLSTMCounts(t *testing.T) {
	m := loadFixture(t, "qoperator/qlstm", map[string]int64{"S": 6, "N": 2})
	r := analyzeModelOn(t, m.Graph, m, "A100", "")
	for _, c := range []struct {
		node     string
		dirs, in float64
		launches float64
	}{
		{"lstm_1_quant", 2, 8, 2 * (2 + 3*6)},
		{"lstm_2_quant", 1, 32, 2 + 3*6},
	} {
		nc := nodeNamed(t, r, c.node)
		rows, h := 6*c.dirs*2, 16.0
		macs := rows * 4 * h * (c.in + h)
		flops := 2*macs + rows*4*h + rows*(15+8)*h + 5*(6*2*c.in+rows*h)
		if nc.MACs != macs || nc.FLOPs != flops || nc.Launches != c.launches {
			t.Errorf("%s: %g MACs (want %g), %g FLOPs (want %g), %g launches (want %g)", c.node, nc.MACs, macs, nc.FLOPs, flops, nc.Launches, c.launches)
		}
		if nc.Precision != "int8_tensor" || !strings.Contains(nc.Note, "at 8 bits") {
			t.Errorf("%s: priced at %s (%q), want int8", c.node, nc.Precision, nc.Note)
		}
	}
}
