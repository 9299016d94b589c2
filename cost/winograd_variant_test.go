package cost

import "testing"

// TestWinogradArithFused states the fused F(2×2,3×3) count by hand for
// AlexNet's conv3 at batch 1 (C=192, K=384, 13×13 outputs: 7×7 = 49 tiles,
// run as two blocks of 32 = 64 tiles): the transforms cost 32 FLOPs per
// input tile and channel (Bᵀ·d·B: 8 1-D transforms of 4 adds), 24 per
// output tile and channel (Aᵀ·M·A: 6 of 4), 70 per filter (G·g·Gᵀ: 7 1-D
// transforms of 10), the input transform repeated per block of 32 output
// channels and the filter transform per block of 32 tiles.
func TestWinogradArithFused(t *testing.T) {
	inOps, outOps, _ := WinogradTransformOps(2)
	if inOps != 32 || outOps != 24 || winogradFilterOps(2) != 70 {
		t.Fatalf("transform ops %g %g %g, want 32 24 70", inOps, outOps, winogradFilterOps(2))
	}
	const c, k = 192.0, 384.0
	macs, flops, ok := winogradArith(2, 49, c, k)
	wantMACs := 16 * 64 * c * k
	wantFLOPs := 2*wantMACs + 64*c*(k/32)*32 + 2*c*k*70 + 64*k*24
	if !ok || macs != wantMACs || flops != wantFLOPs {
		t.Fatalf("fused: %g MACs %g FLOPs, want %g %g", macs, flops, wantMACs, wantFLOPs)
	}
	direct := 2 * 9 * 13 * 13 * c * k
	if r := flops / direct; r < 0.72 || r > 0.76 {
		t.Errorf("fused F(2x2) executes %.3f of the direct FLOPs, want 0.74 (the P4 nvprof measurement: 0.72)", r)
	}
	// Non-fused F(4×4): the products and one transform of each, no padding.
	macs, flops, _ = winogradArith(4, 16, c, k)
	in4, out4, _ := WinogradTransformOps(4)
	if macs != 36*16*c*k || flops != 2*macs+16*c*in4+16*k*out4 {
		t.Errorf("non-fused F(4x4): %g MACs %g FLOPs", macs, flops)
	}
	if winogradRows(2, 49) != 64 || winogradRows(4, 49) != 49 {
		t.Errorf("GEMM rows %g %g, want 64 (padded) and 49", winogradRows(2, 49), winogradRows(4, 49))
	}
}
