package cost

import (
	"fmt"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
)

// rnnKind describes one recurrent op family per step, per direction and
// per batch row, for hidden size h and input size in:
//
//	macs  = gates*h*(in+h)      one GEMM over [x, h_prev] · [W; R]
//	bias  = biasAdds*h          flops, when B is present
//	gates = gateFLOPs*h         elementwise gate work (transcendentals: gateTrans*h)
type rnnKind struct {
	gates     float64 // weight matrices per direction (LSTM 4, GRU 3, RNN 1)
	biasAdds  float64
	gateFLOPs float64
	gateTrans float64
	peepholes int // input slot of P (LSTM), -1 if none
	// quantized: DynamicQuantizeLSTM's 8-bit form, W [dirs, input,
	// gates·h] and R [dirs, h, gates·h], X and each step's hidden state
	// quantized per call.
	quantized bool
}

var (
	// LSTM: Wb+Rb are summed once per sequence, so each of the 4h gate
	// pre-activations gets one bias add per step (the FLOPs
	// measured per step at batch 1 grow as 16·h² + 4·h). Gates per h element:
	// 3 sigmoids (3 flops, 1 exp each) + tanh(g) + c = f*c + i*g (3) +
	// tanh(c) + o*tanh(c) (1) = 15 flops, 5 transcendentals. Peepholes add
	// 3 multiplies and 3 adds.
	lstmKind = rnnKind{gates: 4, biasAdds: 4, gateFLOPs: 15, gateTrans: 5, peepholes: 7}
	// GRU: Rb of the candidate gate sits inside r*(...), so both bias
	// vectors are added: 6h adds. Gates per h element: 2 sigmoids (6, 2
	// transcendentals), r*(R_h h + Rb_h) (1), add the input part (1),
	// tanh (1, 1 transcendental), h = (1-z)*h~ + z*h (4) = 13 flops.
	gruKind = rnnKind{gates: 3, biasAdds: 6, gateFLOPs: 13, gateTrans: 3, peepholes: -1}
	// RNN: one summed bias add and one activation (tanh by default) per element.
	rnnKindPlain = rnnKind{gates: 1, biasAdds: 1, gateFLOPs: 1, gateTrans: 1, peepholes: -1}
	// quantize_dynamic's LSTM: LSTM's cell; each gate pre-activation is
	// two 8-bit products (input and recurrent) scaled back to float, one
	// flop each.
	dynamicQuantizeLSTMKind = rnnKind{gates: 4, biasAdds: 4, gateFLOPs: 15 + 2*4, gateTrans: 5, peepholes: 7, quantized: true}
)

func init() {
	RegisterRule("", "LSTM", recurrentRule(lstmKind))
	RegisterRule("", "GRU", recurrentRule(gruKind))
	RegisterRule("", "RNN", recurrentRule(rnnKindPlain))
	RegisterRule(msDomain, "DynamicQuantizeLSTM", recurrentRule(dynamicQuantizeLSTMKind))
}

// recurrentRule costs a whole recurrent op: per-step work times
// seq_length times num_directions. Launches follow the usual cuDNN plan:
// one GEMM for all input projections, then per step one recurrent GEMM and
// one gate kernel, per direction.
func recurrentRule(k rnnKind) Rule {
	return func(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
		e := kernel(n, c, perf.ClassRNN)
		x, ok := c.Dims(n.In(0))
		if !ok || len(x) != 3 {
			return e, nil
		}
		seq, batch, in := x[0], x[1], x[2]
		if n.AttrInt("layout", 0) == 1 {
			seq, batch = x[1], x[0]
		}
		w, ok := c.Dims(n.In(1))
		if !ok || len(w) != 3 || k.gates == 0 {
			return e, nil
		}
		dirs := w[0]
		h := float64(n.AttrInt("hidden_size", 0))
		if k.quantized {
			hq, ok := ir.DynamicQuantizeLSTMHidden(n)
			if !ok {
				return e, nil
			}
			h = float64(hq)
		} else if h <= 0 {
			h = w[1] / k.gates
		}
		rows := seq * dirs * batch // cell evaluations
		e.MACs = rows * k.gates * h * (in + h)
		e.FLOPs = perf.FMAFLOPs * e.MACs
		if n.In(3) != nil {
			e.FLOPs += rows * k.biasAdds * h
		}
		gate := k.gateFLOPs
		if k.peepholes >= 0 && n.In(k.peepholes) != nil {
			gate += 6
		}
		e.FLOPs += rows * gate * h
		e.Transcendentals = rows * k.gateTrans * h
		// The time model's recurrent view (kernel.go RNNKernel): M = gates*h,
		// N = batch, K = h, InputK = input, Batch = directions, Steps = seq.
		e.M, e.N, e.K, e.InputK = clampInt(k.gates*h), clampInt(batch), clampInt(h), clampInt(in)
		e.Batch = clampInt(dirs)
		e.Steps = clampInt(seq)
		e.Launches = dirs * (1 + 2*seq)
		e.Note = fmt.Sprintf("%g steps x %g direction(s); launches = directions*(1 + 2*steps)", seq, dirs)
		if k.quantized {
			// X quantized once for the input products, each step's
			// hidden state before its recurrent one (DynamicQuantizeLinear's
			// count an element), each in a kernel of its own.
			q, _, _ := OpCount("DynamicQuantizeLinear")
			quantized := seq*batch*in + rows*h
			e.FLOPs += q * quantized
			e.BytesWritten += quantized
			e.BytesRead += quantized
			e.Launches += dirs * (1 + seq)
			e.Note = fmt.Sprintf("%g steps x %g direction(s) at 8 bits: X and each step's hidden state quantized first; launches = directions*(2 + 3*steps)", seq, dirs)
		}
		return e, nil
	}
}
