package ir

// Shape functions for the recurrent layers RNN, GRU and LSTM.

func init() {
	Register(
		&OpSchema{Name: "RNN", Family: FamilyRNN, Since: 1, MinIn: 3, MaxIn: 6, MinOut: 0, MaxOut: 2, Check: checkRecurrent, Infer: inferRecurrent},
		&OpSchema{Name: "GRU", Family: FamilyRNN, Since: 1, MinIn: 3, MaxIn: 6, MinOut: 0, MaxOut: 2, Check: checkRecurrent, Infer: inferRecurrent},
		&OpSchema{Name: "LSTM", Family: FamilyRNN, Since: 1, MinIn: 3, MaxIn: 8, MinOut: 0, MaxOut: 3, Check: checkRecurrent, Infer: inferRecurrent},
		// DynamicQuantizeLSTM(X, W, R, B?, sequence_lens?, initial_h?,
		// initial_c?, P?, W_scale, W_zero_point, R_scale, R_zero_point):
		// quantize_dynamic's LSTM, its 8-bit weights transposed to
		// W [dirs, input, 4·hidden] and R [dirs, hidden, 4·hidden].
		&OpSchema{Domain: "com.microsoft", Name: "DynamicQuantizeLSTM", Family: FamilyRNN, Since: 1, MinIn: 12, MaxIn: 12, MinOut: 0, MaxOut: 3,
			Infer: inferDynamicQuantizeLSTM, Doc: "LSTM's outputs over 8-bit W [dirs, input, 4·hidden] and R [dirs, hidden, 4·hidden]"},
	)
}

// DynamicQuantizeLSTMHidden is a DynamicQuantizeLSTM's hidden size: the
// attribute, else R's [dirs, hidden, 4·hidden] rows, else W's columns
// over 4; ok is false when none says.
func DynamicQuantizeLSTMHidden(n *Node) (int64, bool) {
	if h := n.AttrInt("hidden_size", 0); h > 0 {
		return h, true
	}
	if r := n.In(2); r != nil && r.Shape.Rank() == 3 {
		if h, ok := knownDim(r.Shape, 1); ok && h > 0 {
			return h, true
		}
	}
	if w := n.In(1); w != nil && w.Shape.Rank() == 3 {
		if g, ok := knownDim(w.Shape, 2); ok && g > 0 && g%4 == 0 {
			return g / 4, true
		}
	}
	return 0, false
}

func inferDynamicQuantizeLSTM(c *InferCtx) error {
	for _, i := range []int{1, 2} {
		if t := c.InType(i); t != Undefined && t != Int8 && t != Uint8 {
			return c.Errorf("input %d (%s) is %s, want 8-bit weights (int8 or uint8)", i, []string{"", "W", "R"}[i], t)
		}
		if s := c.InShape(i); s.Ranked && s.Rank() != 3 {
			return c.Errorf("input %d (%s) has rank %d, want 3", i, []string{"", "W", "R"}[i], s.Rank())
		}
	}
	hidden := c.Fresh("hidden")
	if h, ok := DynamicQuantizeLSTMHidden(c.Node); ok {
		hidden = D(h)
	}
	return recurrentShapes(c, hidden)
}

// RNNGates is the number of stacked gate matrices in W and R of a
// recurrent op (RNN 1, GRU 3, LSTM 4), 0 for any other op. Shape inference
// and the cost model both read it here.
func RNNGates(op string) int64 {
	switch op {
	case "RNN":
		return 1
	case "GRU":
		return 3
	case "LSTM":
		return 4
	}
	return 0
}

// inferRecurrent sets Y [seq, dirs, batch, hidden] and the final states
// Y_h (and LSTM's Y_c) [dirs, batch, hidden]. With layout=1 (opset 14) the
// batch comes first: X is [batch, seq, input], Y [batch, seq, dirs, hidden]
// and the states [batch, dirs, hidden]. Optional outputs may be omitted.
func inferRecurrent(c *InferCtx) error {
	w, r := c.InShape(1), c.InShape(2)
	hidden := D(c.AttrInt("hidden_size", 0))
	if hidden.Value <= 0 {
		// Without the attribute, R is [dirs, gates*hidden, hidden].
		hidden = dimOr(c, r, 2, "hidden")
		if !hidden.IsKnown() && w.Rank() == 3 && w.Dims[1].IsKnown() {
			hidden = D(w.Dims[1].Value / RNNGates(c.Node.OpType))
		}
	}
	return recurrentShapes(c, hidden)
}

// recurrentShapes sets a recurrent op's outputs for its hidden size.
func recurrentShapes(c *InferCtx, hidden Dim) error {
	x := c.InShape(0)
	dt := c.InType(0)
	if x.Ranked && len(x.Dims) != 3 {
		return c.Errorf("X of rank %d, want 3", len(x.Dims))
	}
	layout := c.AttrInt("layout", 0)
	dirs := D(1)
	switch dir := c.AttrString("direction", "forward"); dir {
	case "forward", "reverse":
	case "bidirectional":
		dirs = D(2)
	default:
		return c.Errorf("unknown direction %q", dir)
	}
	seq, batch := dimOr(c, x, 0, "seq"), dimOr(c, x, 1, "batch")
	if layout != 0 {
		seq, batch = batch, seq
	}
	y := RankedShape(seq, dirs, batch, hidden)
	state := RankedShape(dirs, batch, hidden)
	if layout != 0 {
		y = RankedShape(batch, seq, dirs, hidden)
		state = RankedShape(batch, dirs, hidden)
	}
	if err := c.SetOut(0, dt, y); err != nil {
		return err
	}
	if err := c.SetOut(1, dt, state); err != nil {
		return err
	}
	return c.SetOut(2, dt, state.Clone())
}
