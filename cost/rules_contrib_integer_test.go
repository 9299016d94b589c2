package cost

import (
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// TestContribIntegerCounts counts onnxruntime's integer and tensor
// contrib ops by hand:
//
//	MatMulInteger16 [4,64]·[64,32]: 4·32·64 MACs; 2-byte operands, a
//	  4-byte product
//	MulInteger [8,16] with both zero points: 3 flops a product
//	ReduceSumInteger of int8 [4,12,64] over the last axis: 1 flop an
//	  element, 48 int32 sums written
//	QLinearReduceMean of uint8 [4,12,64] over axis 1: ReduceMean's 1 an
//	  element and 1 a mean, + 2 to dequantize each element and 3 to
//	  quantize each mean; scales and zero points read (a byte each: as
//	  for every QLinear op, its float scalars at the 8-bit compute type)
//	Range 0..100000 without delta: 1 flop and 8 bytes an element
//	UnfoldTensor of [2,1024] in windows of 64, 32 apart: [2,31,64] written
//	TorchEmbedding of [30522,768] fp32 at [2,8]: 16 rows read and written
func TestContribIntegerCounts(t *testing.T) {
	b := msBuilder(t, 17)
	ms := func(name, op string, ins []*ir.Value, attrs ...*ir.Attribute) *ir.Value {
		return msNamed(b, name, op, 1, ins, attrs...).Out(0)
	}
	outs := []*ir.Value{
		ms("mm16", "MatMulInteger16", []*ir.Value{b.Input("a16", ir.Int16, 4, 64), initializer(b, "b16", ir.Int16, 64, 32)}),
		ms("mulint", "MulInteger", []*ir.Value{b.Input("a8", ir.Uint8, 8, 16), initializer(b, "azp", ir.Uint8), b.Input("b8", ir.Uint8, 8, 16), initializer(b, "bzp", ir.Uint8)}),
		ms("rsum", "ReduceSumInteger", []*ir.Value{b.Input("x8", ir.Int8, 4, 12, 64)}, ir.IntsAttr("axes", -1), ir.IntAttr("keepdims", 0)),
		ms("qmean", "QLinearReduceMean", []*ir.Value{b.Input("q8", ir.Uint8, 4, 12, 64), initializer(b, "xs", ir.Float32), initializer(b, "xz", ir.Uint8),
			initializer(b, "ys", ir.Float32), initializer(b, "yz", ir.Uint8)}, ir.IntsAttr("axes", 1), ir.IntAttr("keepdims", 1)),
		ms("range", "Range", []*ir.Value{constant(b, "start", ir.Int64, nil, []int64{0}), constant(b, "limit", ir.Int64, nil, []int64{100000})}),
		ms("unfold", "UnfoldTensor", []*ir.Value{b.Input("sig", ir.Float32, 2, 1024)}, ir.IntAttr("size", 64), ir.IntAttr("step", 32)),
		ms("emb", "TorchEmbedding", []*ir.Value{initializer(b, "table", ir.Float32, 30522, 768), b.Input("ids", ir.Int64, 2, 8)}),
	}
	b.Output(outs...)
	b.Infer()
	r := analyzeCovered(t, b, "A100")
	for _, c := range []struct {
		name                  string
		macs, flops, read, wr float64
	}{
		{"mm16", 4 * 32 * 64, 2 * 4 * 32 * 64, 4*64*2 + 64*32*2, 4 * 32 * 4},
		{"mulint", 0, 3 * 128, 128 + 1 + 128 + 1, 128 * 4},
		{"rsum", 0, 3072, 3072, 48 * 4},
		{"qmean", 0, 3072 + 256 + 2*3072 + 3*256, 3072 + 4 + 1 + 4 + 1, 256}, // float32 scales, uint8 zero points
		{"range", 0, 100000, 16, 800000},
		{"unfold", 0, 0, 2 * 1024 * 4, 2 * 31 * 64 * 4},
		{"emb", 0, 0, 16*768*4 + 16*8, 16 * 768 * 4},
	} {
		nc := nodeNamed(t, r, c.name)
		if nc.MACs != c.macs || nc.FLOPs != c.flops || nc.BytesRead != c.read || nc.BytesWritten != c.wr || !(nc.TimeS > 0) {
			t.Errorf("%s: %g MACs, %g FLOPs, %g B read, %g B written, %g s; want %g, %g, %g, %g", c.name, nc.MACs, nc.FLOPs, nc.BytesRead, nc.BytesWritten, nc.TimeS, c.macs, c.flops, c.read, c.wr)
		}
	}
}

// TestContribUniqueIsUnsupported: com.microsoft Unique is inferred but,
// as the standard Unique, has no cost rule: it is reported, never costed
// as zero.
func TestContribUniqueIsUnsupported(t *testing.T) {
	b := msBuilder(t, 17)
	n := b.Node("Unique", []*ir.Value{b.Input("x", ir.Int64, 100)}, 3)
	n.Domain = "com.microsoft"
	b.Output(n.Outputs...)
	b.Infer()
	r := analyzeOn(t, b, "A100", "")
	if len(r.UnsupportedOps) != 1 {
		t.Errorf("unsupported ops %v, want com.microsoft Unique", r.UnsupportedOps)
	}
}
