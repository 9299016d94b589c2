package passes

import (
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// qaddOpts vary the hand-built quantized residual add.
type qaddOpts struct {
	noRelu     bool // Add -> Q without the Relu
	int8Out    bool // every tensor int8 with zero point 0: the Relu cannot be dropped
	mixedTypes bool // the skip is int8, the other operand uint8
	perChannel bool // the skip's DQ scales per channel
	addReused  bool // the Add's float sum is also a graph output
}

// buildQAdd builds the residual add of an int8 ResNet in the form
// onnxruntime's static quantizer writes (scripts/qdq_resnet50.py
// --residual): x and r quantized, DQ(x) + DQ(r) -> Relu -> Q -> DQ -> y.
func buildQAdd(b *builder, o qaddOpts) {
	const c = 4
	t, zp := ir.Uint8, int64(3)
	if o.int8Out {
		t, zp = ir.Int8, 0
	}
	quant := func(name string, v *ir.Value, dt ir.DType, z int64, scale float64) (*ir.Value, *ir.Value, *ir.Value) {
		s, zv := b.scalar(name+"_s", scale), b.intsOf(name+"_z", dt, nil, []int64{z})
		return b.op("QuantizeLinear", nil, v, s, zv), s, zv
	}
	xq, xs, xz := quant("x", b.input("x", c, 3, 3), t, zp, 0.02)
	xd := b.op("DequantizeLinear", nil, xq, xs, xz)
	rt, rzp := t, zp
	if o.mixedTypes {
		rt, rzp = ir.Int8, 0
	}
	rq, rs, rz := quant("r", b.input("r", c, 3, 3), rt, rzp, 0.03)
	var rd *ir.Value
	if o.perChannel {
		ch := func(name string, dt ir.DType, vals []int64) *ir.Value { return b.intsOf(name, dt, []int64{c}, vals) }
		rd = b.op("DequantizeLinear", []*ir.Attribute{ir.IntAttr("axis", 0)}, rq,
			b.constant("r_sc", []int64{c}, []float64{0.03, 0.03, 0.03, 0.03}), ch("r_zc", rt, []int64{rzp, rzp, rzp, rzp}))
	} else {
		rd = b.op("DequantizeLinear", nil, rq, rs, rz)
	}
	sum := b.op("Add", nil, xd, rd)
	if o.addReused {
		b.output(sum)
	}
	y := sum
	if !o.noRelu {
		y = b.op("Relu", nil, sum)
	}
	yq, ys, yz := quant("y", y, t, zp, 0.05)
	if !o.int8Out {
		// uint8 with a zero point above the minimum could not drop the
		// Relu; the residual stream's zero point is the minimum.
		yz.Const.Ints[0] = 0
	}
	b.output(b.op("DequantizeLinear", nil, yq, ys, yz))
}

// The DQ, DQ, Add, Relu, Q become one QLinearAdd reading the quantized
// operands; values are bit-identical and the launches drop by 4 (or 3).
func TestFuseQDQAdd(t *testing.T) {
	for _, noRelu := range []bool{false, true} {
		b := newBuilder(t)
		buildQAdd(b, qaddOpts{noRelu: noRelu})
		g := b.infer()
		before := analyzeAt(t, b, g, "")
		checkPreservesExact(t, g, "fuse-qdq-add")
		var qa *ir.Node
		for _, n := range g.Nodes {
			if n.Domain == "com.microsoft" && n.OpType == "QLinearAdd" {
				qa = n
			}
			if isOp(n, "Add") || isOp(n, "Relu") {
				t.Errorf("noRelu %v: %s %s left", noRelu, n.OpType, n.Name)
			}
		}
		if qa == nil || len(qa.Inputs) != 8 || qa.Out(0).DType != ir.Uint8 {
			t.Fatalf("noRelu %v: no QLinearAdd:\n%s", noRelu, ir.Dump(g))
		}
		after := analyzeAt(t, b, g, "")
		gone := 4.0 // DQ, DQ, Add, Relu, Q -> 1
		if noRelu {
			gone = 3
		}
		if after.Totals.Launches != before.Totals.Launches-gone {
			t.Errorf("noRelu %v: launches %g -> %g, want %g fewer", noRelu, before.Totals.Launches, after.Totals.Launches, gone)
		}
		// 36 elements · (2 DQ + Add + Q) = 36·8.
		if got := nodeCost(t, after, qa.Name).FLOPs; got != 36*8 {
			t.Errorf("QLinearAdd FLOPs %g, want %d", got, 36*8)
		}
	}
}

func TestFuseQDQAddGuards(t *testing.T) {
	for name, o := range map[string]qaddOpts{
		"Relu with a zero point above the minimum": {int8Out: true},
		"operands of two types":                    {mixedTypes: true},
		"per-channel operand scale":                {perChannel: true},
		"float sum read elsewhere":                 {addReused: true},
	} {
		t.Run(name, func(t *testing.T) {
			b := newBuilder(t)
			buildQAdd(b, o)
			g := b.infer()
			checkPreservesExact(t, g, "fuse-qdq-add")
			for _, n := range g.Nodes {
				if n.OpType == "QLinearAdd" {
					t.Errorf("QLinearAdd though a guard fails: %s", ir.NodeText(n))
				}
			}
		})
	}
}
