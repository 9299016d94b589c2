package models

import (
	"cmp"
	"fmt"
	"strconv"

	"github.com/onnxcost/onnxcost/ir"
)

// LSTMConfig is the word-level LSTM language model of pytorch/examples
// (word_language_model), seq-first: Embedding → stacked LSTM → Linear
// decoder over the vocabulary, with the recurrent state as input and
// output (truncated BPTT). The defaults are the PTB benchmark's "large"
// setting used by the lstm_ptb fixture.
type LSTMConfig struct {
	Vocab  int64 // default 10000
	Embed  int64 // embedding width; default 1024
	Hidden int64 // default 1024
	Layers int   // default 2
	Seq    int64 // default 32; Symbolic = "seq"
	Batch  int64 // default 128; Symbolic = "batch"
}

func (c *LSTMConfig) defaults() {
	c.Vocab = cmp.Or(c.Vocab, 10000)
	c.Embed = cmp.Or(c.Embed, 1024)
	c.Hidden = cmp.Or(c.Hidden, 1024)
	c.Seq = cmp.Or(c.Seq, 32)
	c.Batch = cmp.Or(c.Batch, 128)
	if c.Layers == 0 {
		c.Layers = 2
	}
}

// LSTM builds the LSTM language model.
func LSTM(c LSTMConfig) (*ir.Model, error) {
	c.defaults()
	if c.Vocab <= 0 || c.Embed <= 0 || c.Hidden <= 0 || c.Layers <= 0 {
		return nil, fmt.Errorf("lstm: vocab, embed, hidden and layers must be > 0")
	}
	if err := checkDims(c.Batch, c.Seq); err != nil {
		return nil, fmt.Errorf("lstm: %v", err)
	}
	b := newBuilder("lstm_lm")
	seq, batch := dim(c.Seq, "seq"), dim(c.Batch, "batch")
	L, H := int64(c.Layers), c.Hidden
	tokens := b.input("tokens", ir.Int64, seq, batch)
	h0 := b.input("h0", ir.Float32, ir.D(L), batch, ir.D(H))
	c0 := b.input("c0", ir.Float32, ir.D(L), batch, ir.D(H))

	x := b.op("/encoder", "Gather", []*ir.Value{b.weight("encoder.weight", c.Vocab, c.Embed), tokens})
	in := c.Embed
	var hs, cs []*ir.Value
	for l := int64(0); b.err == nil && l < L; l++ {
		ls := strconv.FormatInt(l, 10)
		layerState := func(s *ir.Value) *ir.Value {
			return b.op("/rnn", "Slice", []*ir.Value{s, b.ints("/rnn", l), b.ints("/rnn", l+1), b.ints("/rnn", 0)})
		}
		hl, cl := layerState(h0), layerState(c0)
		outs := b.opN("/rnn", "LSTM", 3, []*ir.Value{x,
			b.weight("rnn.weight_ih_l"+ls, 1, 4*H, in),
			b.weight("rnn.weight_hh_l"+ls, 1, 4*H, H),
			b.weight("rnn.bias_l"+ls, 1, 8*H),
			nil, hl, cl}, ir.IntAttr("hidden_size", H))
		// Y is [seq, num_directions=1, batch, H].
		x = b.op("/rnn", "Squeeze", []*ir.Value{outs[0], b.ints("/rnn", 1)})
		hs, cs = append(hs, outs[1]), append(cs, outs[2])
		in = H
	}
	hn := b.op("/rnn", "Concat", hs, ir.IntAttr("axis", 0))
	cn := b.op("/rnn", "Concat", cs, ir.IntAttr("axis", 0))
	logits := b.linear("/decoder", "decoder", x, H, c.Vocab, true)
	b.output(logits, "logits")
	b.output(hn, "hn")
	b.output(cn, "cn")
	return b.finish()
}
