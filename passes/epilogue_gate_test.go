package passes

import (
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// swigluOpts vary the hand-built LLaMA MLP.
type swigluOpts struct {
	upFirst     bool // up_proj before gate_proj in node order (the zoo's order)
	noAct       bool // Mul(x·W1, x·W3): a bilinear product, no activation
	broadcastUp bool // the other operand broadcasts ([1, F]): a scale, not a gate
	constUp     bool // the other operand is a constant
	actReused   bool // the activated gate is also a graph output
}

// buildSwiGLU builds LLaMA's MLP as exported: down(Mul(SiLU(x·W1), x·W3)),
// SiLU written Sigmoid+Mul.
func buildSwiGLU(b *builder, o swigluOpts) {
	const m, d, f = 6, 8, 12
	x := b.input("x", 1, m, d)
	var up *ir.Value
	mkUp := func() {
		switch {
		case o.broadcastUp:
			up = b.weight("up_c", 1, f)
			up = b.op("Add", nil, up, b.input("up_in", 1, f))
		case o.constUp:
			up = b.weight("up_c", 1, m, f)
		default:
			up = b.op("MatMul", nil, x, b.weight("w3", d, f))
		}
	}
	if o.upFirst {
		mkUp()
	}
	h := b.op("MatMul", nil, x, b.weight("w1", d, f))
	if !o.noAct {
		h = b.op("Mul", nil, h, b.op("Sigmoid", nil, h))
	}
	if o.actReused {
		b.output(h)
	}
	if !o.upFirst {
		mkUp()
	}
	y := b.op("MatMul", nil, b.op("Mul", nil, h, up), b.weight("w2", f, d))
	b.output(y)
}

// SwiGLU: the gating Mul joins the gate projection's epilogue, in either
// node order; FLOPs do not move and one launch goes.
func TestFuseGemmGate(t *testing.T) {
	for _, upFirst := range []bool{false, true} {
		b := newBuilder(t)
		buildSwiGLU(b, swigluOpts{upFirst: upFirst})
		g := b.infer()
		before := analyzeAt(t, b, g, "fp32")
		checkPreservesExact(t, g, "fuse-gemm")
		var gated *ir.Node
		for _, n := range fusedNodes(g, "FusedGemm") {
			if n.AttrInt(ir.KeyGate, 0) == 1 {
				gated = n
			}
		}
		if gated == nil || gated.AttrString("activation", "") != "Silu" || len(gated.Inputs) != 5 || gated.In(3) != nil {
			t.Fatalf("upFirst %v: no gated Silu FusedGemm: %s", upFirst, ir.Dump(g))
		}
		expectNoneOf(t, g, "Mul", "Sigmoid")
		after := analyzeAt(t, b, g, "fp32")
		if after.Totals.FLOPs != before.Totals.FLOPs {
			t.Errorf("upFirst %v: FLOPs %g -> %g", upFirst, before.Totals.FLOPs, after.Totals.FLOPs)
		}
		// Unfused: 3 MatMul, Sigmoid, Mul (SiLU), Mul (gate) = 6; fused:
		// gate GEMM (SiLU, gate), up GEMM, down GEMM = 3.
		if before.Totals.Launches != 6 || after.Totals.Launches != 3 {
			t.Errorf("upFirst %v: launches %g -> %g, want 6 -> 3", upFirst, before.Totals.Launches, after.Totals.Launches)
		}
	}
}

// With every pass the whole table keeps the values.
func TestFuseGemmGateFullTable(t *testing.T) {
	b := newBuilder(t)
	buildSwiGLU(b, swigluOpts{upFirst: true})
	g := b.infer()
	checkPreserves(t, g, DefaultNames()...)
}

func TestFuseGemmGateGuards(t *testing.T) {
	for name, o := range map[string]swigluOpts{
		"no activation (bilinear)":    {noAct: true},
		"broadcast operand":           {broadcastUp: true},
		"constant operand":            {constUp: true},
		"activation read elsewhere":   {actReused: true},
		"activation read elsewhere 2": {actReused: true, upFirst: true},
	} {
		t.Run(name, func(t *testing.T) {
			b := newBuilder(t)
			buildSwiGLU(b, o)
			g := b.infer()
			checkPreservesExact(t, g, "fuse-gemm")
			for _, n := range fusedNodes(g, "FusedGemm") {
				if n.AttrInt(ir.KeyGate, 0) != 0 {
					t.Errorf("gated though a guard fails: %s", ir.NodeText(n))
				}
			}
		})
	}
}
