package cost

import (
	"testing"

	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/ir/irtest"
)

// TestFusedMatMulCounts: BERT's attention scores as onnxruntime's
// FusedMatMul(Q, K, transB = 1, alpha = 1/8) and, with transBatchA, Q
// given sequence-first: both are 12·128·128 dot products of 64, one GEMM
// view of batch 12, and alpha costs nothing (cuBLAS's alpha).
func TestFusedMatMulCounts(t *testing.T) {
	const h, s, d = 12, 128, 64
	for _, c := range []struct {
		name, op string
		q        []int64
		attrs    []*ir.Attribute
		act      float64 // the activation's flops
	}{
		{"transB", "FusedMatMul", []int64{1, h, s, d}, nil, 0},
		{"transBatchA", "FusedMatMul", []int64{s, 1, h, d}, []*ir.Attribute{ir.IntAttr("transBatchA", 1)}, 0},
		// FusedMatMul's older name; the same with a Relu, 1 flop a score.
		{"TransposeMatMul", "TransposeMatMul", []int64{1, h, s, d}, nil, 0},
		{"Relu", "FusedMatMulActivation", []int64{1, h, s, d}, []*ir.Attribute{ir.StringAttr("activation", "Relu")}, h * s * s},
	} {
		b := irtest.New(t, 17)
		q := b.Tensor("q", ir.Float16, c.q...)
		k := b.Tensor("k", ir.Float16, 1, h, s, d)
		y := b.Tensor("y", ir.Float16, 1, h, s, s)
		attrs := append([]*ir.Attribute{ir.IntAttr("transB", 1), ir.FloatAttr("alpha", 0.125)}, c.attrs...)
		e := msAttnCost(t, b, c.op, []*ir.Value{q, k}, []*ir.Value{y}, attrs...)
		const macs = h * s * s * d
		if e.MACs != macs || e.FLOPs != 2*macs+c.act {
			t.Errorf("%s: %v MACs, %v FLOPs, want %v and %v", c.name, e.MACs, e.FLOPs, macs, 2*macs+c.act)
		}
		if e.M != s || e.N != s || e.K != d || e.Batch != h {
			t.Errorf("%s: GEMM view %d×%d×%d batch %d, want %d×%d×%d batch %d", c.name, e.M, e.N, e.K, e.Batch, s, s, d, h)
		}
		if want := float64(2 * h * s * d * 2); e.BytesRead != want {
			t.Errorf("%s: %v bytes read, want Q and K once, %v", c.name, e.BytesRead, want)
		}
	}
}

// TestBiasSoftmaxCounts: onnxruntime's BiasSoftmax over BERT's scores and
// mask is Softmax's counts plus one add per score, the mask read once.
func TestBiasSoftmaxCounts(t *testing.T) {
	const bs, h, s = 2, 12, 128
	b := irtest.New(t, 17)
	x := b.Tensor("x", ir.Float16, bs, h, s, s)
	mask := b.Tensor("mask", ir.Float16, bs, 1, 1, s)
	y := b.Tensor("y", ir.Float16, bs, h, s, s)
	e := msAttnCost(t, b, "BiasSoftmax", []*ir.Value{x, mask}, []*ir.Value{y},
		ir.IntAttr("axis", 3), ir.IntAttr("is_inner_broadcast", 1))
	const scores, rows = bs * h * s * s, bs * h * s
	// Softmax: 4 FLOPs and 1 exp per score, 1 FLOP per row; + the add.
	if want := float64(4*scores + rows + scores); e.FLOPs != want || e.ExecutedFLOPs != want {
		t.Errorf("FLOPs %v (executed %v), want %v", e.FLOPs, e.ExecutedFLOPs, want)
	}
	if want := float64((scores + bs*s) * 2); e.BytesRead != want {
		t.Errorf("bytes read %v, want the scores and the mask once, %v", e.BytesRead, want)
	}
	if e.Rows != rows || e.RowLen != s {
		t.Errorf("row view %d × %d, want %d × %d", e.Rows, e.RowLen, rows, s)
	}
}
