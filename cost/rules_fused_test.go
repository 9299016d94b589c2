package cost

import (
	"testing"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
)

func fusedVal(name string, dims ...int64) *ir.Value {
	return &ir.Value{Name: name, Kind: ir.TensorValue, DType: ir.Float32, Shape: ir.KnownShape(dims...)}
}

func fusedNode(op string, ins []*ir.Value, out *ir.Value, attrs ...*ir.Attribute) *ir.Node {
	return &ir.Node{Name: op, OpType: op, Domain: ir.FusedDomain, Inputs: ins, Outputs: []*ir.Value{out}, Attrs: attrs}
}

func runFused(t *testing.T, n *ir.Node, dt ir.DType) NodeEstimate {
	t.Helper()
	r := LookupRule(ir.FusedDomain, n.OpType)
	if r == nil {
		t.Fatalf("no rule for %s", n.OpType)
	}
	c := &RuleCtx{DType: dt, node: n}
	e, err := r(n, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.warnings) > 0 {
		t.Errorf("warnings: %v", c.warnings)
	}
	return e
}

// FusedConv(conv 3x3 pad 1 + bias + Relu + MaxPool 2x2/2): the sum of
// its parts' arithmetic, only its own inputs and output as bytes.
func TestFusedConvRule(t *testing.T) {
	const N, C, H, W, K, R, S = 1, 3, 8, 8, 4, 3, 3
	const P, Q = 8, 8 // pad 1, stride 1
	x, w, b := fusedVal("x", N, C, H, W), fusedVal("w", K, C, R, S), fusedVal("b", K)
	y := fusedVal("y", N, K, P/2, Q/2)
	n := fusedNode("FusedConv", []*ir.Value{x, w, b}, y, ir.IntsAttr("pads", 1, 1, 1, 1), ir.IntsAttr("kernel_shape", 3, 3),
		ir.StringAttr("activation", "Relu"), ir.StringAttr("pool", "MaxPool"), ir.IntsAttr("pool_kernel_shape", 2, 2), ir.IntsAttr("pool_strides", 2, 2))
	e := runFused(t, n, ir.Undefined)
	macs := float64(N * K * P * Q * C * R * S)
	convOut := float64(N * K * P * Q)
	poolTaps := float64(2 * 2)
	wantFLOPs := 2*macs + convOut /*bias*/ + convOut /*relu*/ + float64(N*K*P/2*Q/2)*poolTaps
	if e.MACs != macs || e.FLOPs != wantFLOPs {
		t.Errorf("macs %v flops %v, want %v %v", e.MACs, e.FLOPs, macs, wantFLOPs)
	}
	const f32 = 4
	if want := f32 * float64(N*C*H*W+K*C*R*S+K); e.BytesRead != want {
		t.Errorf("bytes read %v, want %v (x, w, b once)", e.BytesRead, want)
	}
	if want := f32 * float64(N*K*P/2*Q/2); e.BytesWritten != want {
		t.Errorf("bytes written %v, want %v (the pooled output only)", e.BytesWritten, want)
	}
	if e.Launches != 1 || e.Class != perf.ClassConv {
		t.Errorf("launches %v class %s, want 1 conv", e.Launches, e.Class)
	}
}

func TestWinogradTransformOps(t *testing.T) {
	// F(2,3): Bᵀ rows have 2 nonzeros (±1): 4 adds per 1-D transform, 2·4 of them per tile.
	// Aᵀ rows have 3 nonzeros (±1): 4 adds; (4 columns + 2 rows) transforms.
	// F(4,3): Bᵀ 1-D = 4+5+5+5+5+4 = 28 (adds + non-unit multiplies), 2·6 transforms;
	// Aᵀ 1-D = 4+5+5+6 = 20, (6 + 4) transforms.
	for _, c := range []struct {
		m       int64
		in, out float64
	}{{2, 2 * 4 * 4, (4 + 2) * 4}, {4, 2 * 6 * 28, (6 + 4) * 20}} {
		in, out, ok := WinogradTransformOps(c.m)
		if !ok || in != c.in || out != c.out {
			t.Errorf("m=%d: %v %v, want %v %v", c.m, in, out, c.in, c.out)
		}
	}
	if _, _, ok := WinogradTransformOps(3); ok {
		t.Error("m=3 accepted")
	}
}

func TestWinogradConvRule(t *testing.T) {
	const N, C, H, W, K = 2, 64, 16, 16, 64
	const P, Q, m, alpha = 16, 16, 4, 6
	x, w, b := fusedVal("x", N, C, H, W), fusedVal("w", K, C, 3, 3), fusedVal("b", K)
	y := fusedVal("y", N, K, P, Q)
	n := fusedNode("WinogradConv", []*ir.Value{x, w, b}, y, ir.IntsAttr("pads", 1, 1, 1, 1), ir.IntsAttr("kernel_shape", 3, 3),
		ir.StringAttr("activation", "Relu"), ir.IntAttr("winograd_tile", m))
	e := runFused(t, n, ir.Undefined)
	tiles := float64(N * (P / m) * (Q / m))
	macs := alpha * alpha * tiles * C * K
	inOps, outOps := 2*6*28.0, (6+4)*20.0
	wantFLOPs := 2*macs + tiles*C*inOps + tiles*K*outOps + 2*float64(N*K*P*Q) // + bias + relu
	if e.ExecutedMACs != macs || e.ExecutedFLOPs != wantFLOPs {
		t.Errorf("executed macs %v flops %v, want %v %v", e.ExecutedMACs, e.ExecutedFLOPs, macs, wantFLOPs)
	}
	// The model's arithmetic is the direct convolution's: + bias + relu.
	direct := 2.0 * N * K * P * Q * C * 9
	if e.MACs != direct/2 || e.FLOPs != direct+2*float64(N*K*P*Q) {
		t.Errorf("macs %v flops %v, want the direct convolution's %v %v", e.MACs, e.FLOPs, direct/2, direct+2*float64(N*K*P*Q))
	}
	t.Logf("F(4x4,3x3) on 16x16: %.3f of direct FLOPs", (e.ExecutedFLOPs-2*float64(N*K*P*Q))/direct)
	const f32 = 4
	if want := f32 * float64(N*C*H*W+alpha*alpha*C*K+K); e.BytesRead != want {
		t.Errorf("bytes read %v, want %v (transformed filter α²·C·K)", e.BytesRead, want)
	}
	if e.Class != perf.ClassWinograd || e.Batch != alpha*alpha || e.M != int64(tiles) {
		t.Errorf("class %s GEMM view M=%d batch=%d", e.Class, e.M, e.Batch)
	}
	// On tensor cores the node is costed as the direct convolution.
	h := runFused(t, n, ir.Float16)
	if h.Class != perf.ClassConv || h.MACs != float64(N*K*P*Q*C*9) {
		t.Errorf("fp16: class %s macs %v, want direct conv", h.Class, h.MACs)
	}
	// Without a tensor path for fp16 (Pascal), Winograd stays.
	r := LookupRule(ir.FusedDomain, n.OpType)
	p, err := r(n, &RuleCtx{DType: ir.Float16, NoConvTensorCores: true, node: n})
	if err != nil || p.Class != perf.ClassWinograd || p.ExecutedMACs != macs {
		t.Errorf("fp16 with no tensor path: class %s executed macs %v (%v), want Winograd's %v", p.Class, p.ExecutedMACs, err, macs)
	}
}

func TestFusedGemmRule(t *testing.T) {
	const M, Kd, Nd = 8, 16, 32
	a, w, b, r := fusedVal("a", M, Kd), fusedVal("w", Kd, Nd), fusedVal("b", Nd), fusedVal("r", M, Nd)
	y := fusedVal("y", M, Nd)
	n := fusedNode("FusedGemm", []*ir.Value{a, w, b, r}, y, ir.StringAttr("anchor", "MatMul"), ir.IntAttr("residual", 1), ir.StringAttr("activation", "Gelu"))
	e := runFused(t, n, ir.Undefined)
	const geluFLOPs = 5 // opCounts["Gelu"]
	want := 2.0*M*Nd*Kd + M*Nd /*bias*/ + M*Nd /*residual*/ + geluFLOPs*M*Nd
	if e.FLOPs != want || e.Transcendentals != M*Nd || e.Class != perf.ClassGEMM || e.Launches != 1 {
		t.Errorf("flops %v trans %v class %s, want %v %v gemm", e.FLOPs, e.Transcendentals, e.Class, want, M*Nd)
	}
}

// GroupedGemm (passes/qkv.go): one GEMM over the packed weights, X read
// once; the time model sees N = N1+N2+N3.
func TestGroupedGemmRule(t *testing.T) {
	const M, K, N1, N2, N3 = 128, 64, 64, 64, 32
	x := fusedVal("x", 1, M, K)
	w1, w2, w3 := fusedVal("w1", K, N1), fusedVal("w2", K, N2), fusedVal("w3", N3, K)
	b1 := fusedVal("b1", N1)
	y1, y2, y3 := fusedVal("y1", 1, M, N1), fusedVal("y2", 1, M, N2), fusedVal("y3", 1, M, N3)
	n := &ir.Node{Name: "g", OpType: "GroupedGemm", Domain: ir.FusedDomain,
		Inputs: []*ir.Value{x, w1, b1, w2, nil, w3}, Outputs: []*ir.Value{y1, y2, y3}, Attrs: []*ir.Attribute{ir.IntsAttr("trans_b", 0, 0, 1)}}
	e := runFused(t, n, ir.Undefined)
	macs := float64(M * K * (N1 + N2 + N3))
	wantFLOPs := 2*macs + M*N1 // bias on the first branch only
	const f32 = 4
	wantRead := f32 * float64(M*K+K*(N1+N2+N3)+N1)
	wantWritten := f32 * float64(M*(N1+N2+N3))
	if e.MACs != macs || e.FLOPs != wantFLOPs || e.BytesRead != wantRead || e.BytesWritten != wantWritten || e.Launches != 1 {
		t.Errorf("macs %v flops %v read %v written %v launches %v; want %v %v %v %v 1", e.MACs, e.FLOPs, e.BytesRead, e.BytesWritten, e.Launches, macs, wantFLOPs, wantRead, wantWritten)
	}
	if e.Class != perf.ClassGEMM || e.M != M || e.N != N1+N2+N3 || e.K != K {
		t.Errorf("GEMM view %s M %d N %d K %d, want gemm %d %d %d", e.Class, e.M, e.N, e.K, M, N1+N2+N3, K)
	}
}

// SkipLayerNormalization without part attributes: the residual add plus
// the LayerNorm of the sum over the real rows; the sum is read from
// nowhere but written when it is an output.
func TestSkipLayerNormRule(t *testing.T) {
	const R, D = 16, 32
	x, s, g, b := fusedVal("x", R, D), fusedVal("s", R, D), fusedVal("g", D), fusedVal("b", D)
	y, sum := fusedVal("y", R, D), fusedVal("sum", R, D)
	n := &ir.Node{Name: "sln", OpType: "SkipLayerNormalization", Domain: ir.FusedDomain,
		Inputs: []*ir.Value{x, s, g, b}, Outputs: []*ir.Value{y, sum}, Attrs: []*ir.Attribute{ir.IntAttr("axis", -1)}}
	e := runFused(t, n, ir.Undefined)
	ln := normOps["LayerNormalization"]
	wantFLOPs := R*D /*add*/ + ln.inFLOPs*R*D + ln.rowFLOPs*R
	const f32 = 4
	if e.FLOPs != wantFLOPs || e.BytesRead != f32*(2*R*D+2*D) || e.BytesWritten != f32*2*R*D || e.Launches != 1 {
		t.Errorf("flops %v read %v written %v launches %v; want %v %v %v 1", e.FLOPs, e.BytesRead, e.BytesWritten, e.Launches, wantFLOPs, f32*(2*R*D+2*D), f32*2*R*D)
	}
}
