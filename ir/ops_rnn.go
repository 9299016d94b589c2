package ir

// Shape functions for the recurrent layers RNN, GRU and LSTM.

func init() {
	Register(
		&OpSchema{Name: "RNN", Family: FamilyRNN, Since: 1, MinIn: 3, MaxIn: 6, MinOut: 0, MaxOut: 2, Check: checkRecurrent, Infer: inferRecurrent},
		&OpSchema{Name: "GRU", Family: FamilyRNN, Since: 1, MinIn: 3, MaxIn: 6, MinOut: 0, MaxOut: 2, Check: checkRecurrent, Infer: inferRecurrent},
		&OpSchema{Name: "LSTM", Family: FamilyRNN, Since: 1, MinIn: 3, MaxIn: 8, MinOut: 0, MaxOut: 3, Check: checkRecurrent, Infer: inferRecurrent},
	)
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
	x, w, r := c.InShape(0), c.InShape(1), c.InShape(2)
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
	hidden := D(c.AttrInt("hidden_size", 0))
	if hidden.Value <= 0 {
		// Without the attribute, R is [dirs, gates*hidden, hidden].
		hidden = dimOr(c, r, 2, "hidden")
		if !hidden.IsKnown() && w.Rank() == 3 && w.Dims[1].IsKnown() {
			hidden = D(w.Dims[1].Value / RNNGates(c.Node.OpType))
		}
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
