package cost

import (
	"math"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/ir/irtest"
)

// Mixtral-8x7B's expert FFN: hidden 4096, inter 14336, 8 experts, top 2,
// SwiGLU with fc1 and its gate fused (fc1 [8, 2·14336, 4096]).
const mixHidden, mixInter, mixExperts = 4096, 14336, 8

// mixtralMoE builds one MoE layer over tokens rows at fp16, or QMoE with
// 4-bit experts (per-channel fp16 scales) when quantized.
func mixtralMoE(t *testing.T, tokens int64, quantized bool) *irtest.Builder {
	b := msBuilder(t, 17)
	x := b.Input("x", ir.Float16, tokens, mixHidden)
	router := b.Input("router", ir.Float16, tokens, mixExperts)
	var ins []*ir.Value
	attrs := []*ir.Attribute{ir.IntAttr("k", 2), ir.StringAttr("activation_type", "swiglu"), ir.IntAttr("swiglu_fusion", 1)}
	op := "MoE"
	if quantized {
		op = "QMoE"
		ins = []*ir.Value{x, router, initializer(b, "w1", ir.Uint8, mixExperts, 2*mixInter, mixHidden/2),
			initializer(b, "s1", ir.Float16, mixExperts, 2*mixInter), nil,
			initializer(b, "w2", ir.Uint8, mixExperts, mixHidden, mixInter/2), initializer(b, "s2", ir.Float16, mixExperts, mixHidden)}
		attrs = append(attrs, ir.IntAttr("expert_weight_bits", 4))
	} else {
		ins = []*ir.Value{x, router, initializer(b, "w1", ir.Float16, mixExperts, 2*mixInter, mixHidden), nil,
			initializer(b, "w2", ir.Float16, mixExperts, mixHidden, mixInter)}
	}
	return finishMSNode(b, b.Node(op, ins, 1, attrs...), "moe")
}

// TestMoEDecodeCounts: one token routed to 2 of 8 experts: the two
// experts' GEMVs and only their weights read, as written out.
func TestMoEDecodeCounts(t *testing.T) {
	const (
		h, i, e, k = mixHidden, mixInter, mixExperts, 2.0
		rows       = k // one token, two experts
	)
	r := analyzeCovered(t, mixtralMoE(t, 1, false), "H100")
	nc := nodeNamed(t, r, "moe")
	macs := rows * h * (2*i + i)
	// softmax over 8 scores (4 an element, 1 a row), top 2 of 8, SwiGLU's
	// 7 an inter element, the weighted sum's 2 a hidden element a row.
	flops := 2*macs + 4*e + 1 + e*k + 7*rows*i + 2*rows*h
	// x, router scores, the permuted rows written and read back, fc1's
	// output written and read back, the activation written and read by
	// fc2, fc2's rows written and read back with their routing weights,
	// the output; of the weights, the two experts'.
	weights := k * (2*i*h + h*i) * 2
	read := h*2 + e*2 + rows*h*2 + rows*2*i*2 + rows*i*2 + rows*h*2 + rows*4 + weights
	written := rows*h*2 + rows*2*i*2 + rows*i*2 + rows*h*2 + h*2
	for _, c := range []struct {
		what      string
		got, want float64
	}{{"macs", nc.MACs, macs}, {"flops", nc.FLOPs, flops}, {"bytes read", nc.BytesRead, read},
		{"bytes written", nc.BytesWritten, written}, {"launches", nc.Launches, 6}, {"params", nc.Params, e * (2*i*h + h*i)}} {
		if math.Abs(c.got-c.want) > 1e-9*c.want {
			t.Errorf("%s = %.0f, want %.0f", c.what, c.got, c.want)
		}
	}
	if !strings.Contains(nc.Note, "2 of 8 experts") {
		t.Errorf("note %q does not say how many experts are read", nc.Note)
	}
	g, err := hwdb.Lookup("H100")
	if err != nil {
		t.Fatal(err)
	}
	if floor := weights / g.MemBW; !(nc.TimeS > floor) {
		t.Errorf("decode %.3g s under its two experts' weights at the DRAM rate, %.3g s", nc.TimeS, floor)
	}
}

// TestMoETokensReachEveryExpert: 64 tokens route to nearly all 8 experts
// (8·(1 − (3/4)^64)), so a prefill reads about 4× the weights of a decode
// step and takes over 2.5× as long on an H100 (the one-token step's GEMVs
// stream their weights at a lower rate than the tiled GEMMs: 1.9 against
// 2.7 TB/s); 4-bit experts (QMoE) read a quarter of the fp16 bytes and
// decode in under 40% of the time.
func TestMoETokensReachEveryExpert(t *testing.T) {
	one := nodeNamed(t, analyzeOn(t, mixtralMoE(t, 1, false), "H100", ""), "moe")
	many := nodeNamed(t, analyzeOn(t, mixtralMoE(t, 64, false), "H100", ""), "moe")
	q := nodeNamed(t, analyzeOn(t, mixtralMoE(t, 1, true), "H100", ""), "moe")
	if !(many.TimeS > 2.5*one.TimeS) || !(many.BytesRead > 3.9*one.BytesRead) {
		t.Errorf("64 tokens %.3g s, %.3g B read; 1 token %.3g s, %.3g B", many.TimeS, many.BytesRead, one.TimeS, one.BytesRead)
	}
	if !(q.TimeS < 0.4*one.TimeS) || !(q.BytesRead < 0.3*one.BytesRead) || !(q.ExecutedFLOPs > one.ExecutedFLOPs) {
		t.Errorf("QMoE 4-bit %.3g s, %.3g B, %.3g FLOPs; MoE fp16 %.3g s, %.3g B, %.3g FLOPs",
			q.TimeS, q.BytesRead, q.ExecutedFLOPs, one.TimeS, one.BytesRead, one.ExecutedFLOPs)
	}
}

// TestMoEGatedByFC3: Mixtral as onnxruntime-genai's CUDA builder writes it
// unfused: fc1 and fc3 [8, 14336, 4096], SiLU times fc3's gate (Swish's 4
// and the product's 1, one exp, an inter element; softmax one exp a
// score), one decode token.
func TestMoEGatedByFC3(t *testing.T) {
	const h, i, e, rows = mixHidden, mixInter, mixExperts, 2.0
	b := msBuilder(t, 17)
	ins := []*ir.Value{b.Input("x", ir.Float16, 1, h), b.Input("router", ir.Float16, 1, e),
		initializer(b, "w1", ir.Float16, e, i, h), nil, initializer(b, "w2", ir.Float16, e, h, i), nil, initializer(b, "w3", ir.Float16, e, i, h)}
	n := b.Node("MoE", ins, 1, ir.IntAttr("k", 2), ir.StringAttr("activation_type", "silu"))
	nc := nodeNamed(t, analyzeOn(t, finishMSNode(b, n, "moe"), "H100", ""), "moe")
	macs := rows * h * (i + i + i)
	flops := 2*macs + 4*e + 1 + e*2 + 5*rows*i + 2*rows*h
	if nc.MACs != macs || math.Abs(nc.FLOPs-flops) > 1e-9*flops || nc.Transcendentals != e+rows*i {
		t.Errorf("%g MACs, %g FLOPs, %g transcendentals; want %g, %g, %g", nc.MACs, nc.FLOPs, nc.Transcendentals, macs, flops, e+rows*i)
	}
}

// TestMoETensorParallel: over two H100s every expert GEMM is split, fc2
// (the node's trailer kernel) as fc1: a 512-token Mixtral layer takes
// about half the one-GPU time (under 0.6 of it; fc2 left whole would
// leave two thirds).
func TestMoETensorParallel(t *testing.T) {
	g, err := hwdb.Lookup("H100")
	if err != nil {
		t.Fatal(err)
	}
	rt, err := hwdb.LookupRuntime("graph")
	if err != nil {
		t.Fatal(err)
	}
	time := func(gpus int) float64 {
		b := mixtralMoE(t, 512, false)
		r, err := Analyze(b.G, b.M, g, Options{Plan: "unfused", Runtime: rt, GPUs: gpus})
		if err != nil {
			t.Fatal(err)
		}
		return nodeNamed(t, r, "moe").TimeS
	}
	one, two := time(1), time(2)
	if !(two < 0.6*one) {
		t.Errorf("two GPUs %.3g s, one %.3g s: want under 0.6 of it", two, one)
	}
}
