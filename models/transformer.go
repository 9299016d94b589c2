package models

import (
	"cmp"
	"fmt"
	"strconv"

	"github.com/onnxcost/onnxcost/ir"
)

// TransformerConfig is nn.TransformerEncoder of nn.TransformerEncoderLayer
// (post-LN, ReLU feed-forward, batch_first) with an additive attention mask.
type TransformerConfig struct {
	DModel int64 // default 512
	Heads  int64 // default 8
	Layers int   // default 6
	FF     int64 // feed-forward width; default 2048
	Seq    int64 // default 128; Symbolic = "seq"
	Batch  int64 // default 1; Symbolic = "batch"
	// NoMask drops the "src_mask" input and its Add (as the fixture,
	// exported without a mask). Default false: a [seq,seq] additive mask.
	NoMask bool
}

func (c *TransformerConfig) defaults() {
	c.DModel = cmp.Or(c.DModel, 512)
	c.Heads = cmp.Or(c.Heads, 8)
	c.FF = cmp.Or(c.FF, 2048)
	c.Seq = cmp.Or(c.Seq, 128)
	c.Batch = cmp.Or(c.Batch, 1)
	if c.Layers == 0 {
		c.Layers = 6
	}
}

// TransformerEncoder builds the encoder stack; input "src" [batch,seq,d],
// output "output" of the same shape.
func TransformerEncoder(c TransformerConfig) (*ir.Model, error) {
	c.defaults()
	if c.DModel <= 0 || c.Heads <= 0 || c.FF <= 0 || c.Layers <= 0 || c.DModel%c.Heads != 0 {
		return nil, fmt.Errorf("transformer: d_model, heads, ff and layers must be > 0 and heads must divide d_model")
	}
	if err := checkDims(c.Batch, c.Seq); err != nil {
		return nil, fmt.Errorf("transformer: %v", err)
	}
	b := newBuilder("transformer_encoder")
	seq, batch := dim(c.Seq, "seq"), dim(c.Batch, "batch")
	d := c.DModel
	x := b.input("src", ir.Float32, batch, seq, ir.D(d))
	var mask *ir.Value
	if !c.NoMask {
		mask = b.input("src_mask", ir.Float32, seq, seq)
	}
	for l := 0; b.err == nil && l < c.Layers; l++ {
		scope := "/layers." + strconv.Itoa(l)
		prefix := "layers." + strconv.Itoa(l)
		a := b.encoderAttention(scope+"/self_attn", prefix+".self_attn", x, mask, c.Heads, d)
		x = b.layerNorm(scope+"/norm1", prefix+".norm1", b.op(scope, "Add", []*ir.Value{x, a}), d, 1e-5)
		h := b.linear(scope+"/linear1", prefix+".linear1", x, d, c.FF, true)
		h = b.op(scope, "Relu", []*ir.Value{h})
		h = b.linear(scope+"/linear2", prefix+".linear2", h, c.FF, d, true)
		x = b.layerNorm(scope+"/norm2", prefix+".norm2", b.op(scope, "Add", []*ir.Value{x, h}), d, 1e-5)
	}
	b.output(x, "output")
	return b.finish()
}

// encoderAttention is nn.MultiheadAttention as exported: one packed
// in-projection MatMul, split into q, k, v, attention, and the output
// projection as a Gemm over the flattened tokens, reshaped back to the
// input's shape.
func (b *builder) encoderAttention(scope, prefix string, x, mask *ir.Value, heads, d int64) *ir.Value {
	qkv := b.linear(scope, prefix+".in_proj", x, d, 3*d, true)
	parts := b.opN(scope, "Split", 3, []*ir.Value{qkv, b.ints(scope, d, d, d)}, ir.IntAttr("axis", 2))
	y := b.mha(scope, parts[0], parts[1], parts[2], mask, heads, d)
	flat := b.op(scope, "Reshape", []*ir.Value{y, b.ints(scope, -1, d)})
	o := b.gemm(scope, prefix+".out_proj", flat, d, d)
	return b.op(scope, "Reshape", []*ir.Value{o, b.op(scope, "Shape", []*ir.Value{x})})
}
