package passes

import (
	"testing"

	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/ir/irtest"
)

// ints8 adds an integer initializer of type dt (int8, uint8, int32).
func (b *builder) intsOf(name string, dt ir.DType, dims []int64, vals []int64) *ir.Value {
	v := b.value(name)
	t := ir.IntTensor(dims, vals)
	t.DType, t.Name = dt, name
	b.g.AddInitializer(v, t)
	return v
}

// qweight adds a random int8 weight in [-127, 127].
func (b *builder) qweight(name string, dims ...int64) *ir.Value {
	return b.intsOf(name, ir.Int8, dims, fill(dims, func() int64 { return int64(b.rng.Intn(255)) - 127 }))
}

// qdqOpts vary the hand-built Q/DQ block.
type qdqOpts struct {
	int8Act      bool // activations int8 with zero point 0 (TensorRT's symmetric form): a Relu cannot be dropped
	floatBias    bool // the conv bias is a float initializer, not DQ(int32)
	sharedDQ     bool // the first DQ output is also read by a residual-style Add
	perChannel   bool // conv weights dequantized per output channel (axis 0)
	noZeroPoint  bool // the activation DQ omits its zero point
	badBiasScale bool // the bias DQ's scale is not x_scale·w_scale
	weightAxis1  bool // per-channel weight scales along axis 1 (input channels)
}

// buildQDQ builds the form Q/DQ exporters write: x -> Q -> DQ -> Conv(DQ w,
// DQ b) -> Relu -> Q -> DQ -> Conv(DQ w) -> Q -> DQ -> y, over x [1,3,6,6].
func buildQDQ(b *builder, o qdqOpts) {
	actT, zp := ir.Uint8, int64(0)
	if o.int8Act {
		actT = ir.Int8
	}
	x := b.input("x", 1, 3, 6, 6)
	s1 := b.scalar("s1", 0.02)
	z1 := b.intsOf("z1", actT, nil, []int64{zp})
	xq := b.op("QuantizeLinear", nil, x, s1, z1)
	var xd *ir.Value
	if o.noZeroPoint {
		xd = b.op("DequantizeLinear", nil, xq, s1)
	} else {
		xd = b.op("DequantizeLinear", nil, xq, s1, z1)
	}
	w1 := b.qweight("w1", 4, 3, 3, 3)
	var w1d *ir.Value
	var bs *ir.Value
	var bAttrs []*ir.Attribute
	switch {
	case o.badBiasScale:
		bs = b.scalar("bs1", 0.0003)
	case !o.perChannel:
		bs = b.scalar("bs1", 0.02*0.01)
	}
	bz := b.intsOf("bz1", ir.Int32, nil, []int64{0})
	if o.perChannel {
		bAttrs = []*ir.Attribute{ir.IntAttr("axis", 0)}
		bz = b.intsOf("bz1c", ir.Int32, []int64{4}, []int64{0, 0, 0, 0})
		ws := b.constant("ws1", []int64{4}, []float64{0.01, 0.02, 0.015, 0.005})
		bs = b.constant("bs1c", []int64{4}, []float64{0.02 * 0.01, 0.02 * 0.02, 0.02 * 0.015, 0.02 * 0.005})
		wz := b.intsOf("wz1", ir.Int8, []int64{4}, []int64{0, 0, 0, 0})
		w1d = b.op("DequantizeLinear", []*ir.Attribute{ir.IntAttr("axis", 0)}, w1, ws, wz)
	} else if o.weightAxis1 {
		ws := b.constant("ws1", []int64{3}, []float64{0.01, 0.01, 0.01})
		wz := b.intsOf("wz1", ir.Int8, []int64{3}, []int64{0, 0, 0})
		w1d = b.op("DequantizeLinear", []*ir.Attribute{ir.IntAttr("axis", 1)}, w1, ws, wz)
	} else {
		w1d = b.op("DequantizeLinear", nil, w1, b.scalar("ws1", 0.01), b.intsOf("wz1", ir.Int8, nil, []int64{0}))
	}
	var bias *ir.Value
	if o.floatBias {
		bias = b.weight("b1", 4)
	} else {
		bias = b.op("DequantizeLinear", bAttrs, b.intsOf("b1q", ir.Int32, []int64{4}, []int64{50, -20, 7, 0}), bs, bz)
	}
	c1 := b.op("Conv", []*ir.Attribute{ir.IntsAttr("pads", 1, 1, 1, 1)}, xd, w1d, bias)
	r1 := b.op("Relu", nil, c1)
	s2 := b.scalar("s2", 0.03)
	z2 := b.intsOf("z2", actT, nil, []int64{zp})
	hd := b.op("DequantizeLinear", nil, b.op("QuantizeLinear", nil, r1, s2, z2), s2, z2)
	w2d := b.op("DequantizeLinear", nil, b.qweight("w2", 2, 4, 1, 1), b.scalar("ws2", 0.02), b.intsOf("wz2", ir.Int8, nil, []int64{0}))
	c2 := b.op("Conv", nil, hd, w2d)
	s3 := b.scalar("s3", 0.05)
	z3 := b.intsOf("z3", actT, nil, []int64{zp})
	y := b.op("DequantizeLinear", nil, b.op("QuantizeLinear", nil, c2, s3, z3), s3, z3)
	b.output(y)
	if o.sharedDQ {
		b.output(b.op("Add", nil, xd, xd))
	}
}

func TestFuseQDQ(t *testing.T) {
	cases := []struct {
		name string
		o    qdqOpts
		want string
	}{
		{"uint8 activations, Relu absorbed", qdqOpts{}, "QuantizeLinear QLinearConv QLinearConv DequantizeLinear"},
		{"per-channel weights", qdqOpts{perChannel: true}, "QuantizeLinear QLinearConv QLinearConv DequantizeLinear"},
		{"shared DQ stays for its other reader", qdqOpts{sharedDQ: true}, "QuantizeLinear DequantizeLinear QLinearConv QLinearConv DequantizeLinear Add"},
		// Guards: the first conv must stay as it is.
		{"int8 zero point 0: Relu is not a no-op", qdqOpts{int8Act: true}, "QuantizeLinear DequantizeLinear DequantizeLinear DequantizeLinear Conv Relu QuantizeLinear QLinearConv DequantizeLinear"},
		{"float bias", qdqOpts{floatBias: true}, "QuantizeLinear DequantizeLinear DequantizeLinear Conv Relu QuantizeLinear QLinearConv DequantizeLinear"},
		{"bias scale not x·w", qdqOpts{badBiasScale: true}, "QuantizeLinear DequantizeLinear DequantizeLinear DequantizeLinear Conv Relu QuantizeLinear QLinearConv DequantizeLinear"},
		{"weights scaled along input channels", qdqOpts{weightAxis1: true}, "QuantizeLinear DequantizeLinear DequantizeLinear DequantizeLinear Conv Relu QuantizeLinear QLinearConv DequantizeLinear"},
		{"DQ without zero point", qdqOpts{noZeroPoint: true}, "QuantizeLinear DequantizeLinear DequantizeLinear DequantizeLinear Conv Relu QuantizeLinear QLinearConv DequantizeLinear"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newBuilder(t)
			buildQDQ(b, c.o)
			g := b.run("fuse-qdq")
			if got := irtest.Ops(g); got != c.want {
				t.Errorf("after fuse-qdq:\n got %s\nwant %s", got, c.want)
			}
		})
	}
}

// TestFuseQDQContribDomain: onnxruntime's com.microsoft QuantizeLinear and
// DequantizeLinear (what its quantizer writes with UseQDQContribOps) fuse
// as the ONNX ones do.
func TestFuseQDQContribDomain(t *testing.T) {
	b := newBuilder(t)
	buildQDQ(b, qdqOpts{})
	for _, n := range b.g.Nodes {
		if n.OpType == "QuantizeLinear" || n.OpType == "DequantizeLinear" {
			n.Domain = "com.microsoft"
		}
	}
	g := b.run("fuse-qdq")
	if got, want := irtest.Ops(g), "com.microsoft.QuantizeLinear QLinearConv QLinearConv com.microsoft.DequantizeLinear"; got != want {
		t.Errorf("after fuse-qdq:\n got %s\nwant %s", got, want)
	}
}

// TestFuseQDQPreserves: the QLinear ops compute exactly what the Q/DQ
// graph did (same float math, same rounding), in the reference evaluator.
func TestFuseQDQPreserves(t *testing.T) {
	for _, o := range []qdqOpts{{}, {perChannel: true}, {sharedDQ: true}} {
		b := newBuilder(t)
		buildQDQ(b, o)
		checkPreserves(t, b.infer(), "fuse-qdq")
	}
}

// TestFuseQDQMatMul: DQ(x), DQ(w) -> MatMul -> Q becomes QLinearMatMul.
func TestFuseQDQMatMul(t *testing.T) {
	b := newBuilder(t)
	x := b.input("x", 2, 8)
	s, z := b.scalar("s", 0.02), b.intsOf("z", ir.Uint8, nil, []int64{128})
	xd := b.op("DequantizeLinear", nil, b.op("QuantizeLinear", nil, x, s, z), s, z)
	wd := b.op("DequantizeLinear", nil, b.qweight("w", 8, 4), b.scalar("ws", 0.01), b.intsOf("wz", ir.Int8, nil, []int64{0}))
	so, zo := b.scalar("so", 0.05), b.intsOf("zo", ir.Uint8, nil, []int64{128})
	b.output(b.op("DequantizeLinear", nil, b.op("QuantizeLinear", nil, b.op("MatMul", nil, xd, wd), so, zo), so, zo))
	g := b.infer()
	checkPreserves(t, g, "fuse-qdq")
	if got, want := irtest.Ops(g), "QuantizeLinear QLinearMatMul DequantizeLinear"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
