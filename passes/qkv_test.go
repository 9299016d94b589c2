package passes

import (
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

// Geometry of the hand-built projections: X [B, L, E] times weights
// [E, Nq], [E, Nk], [E, Nv].
const (
	qkvB, qkvL, qkvE            = 2, 5, 8
	qkvNq, qkvNk, qkvNv         = 6, 6, 4
	qkvNsum                     = qkvNq + qkvNk + qkvNv
	qkvRows                     = qkvB * qkvL
	f32Bytes                    = 4
	qkvWantMACs         float64 = qkvRows * qkvE * qkvNsum // M·K·(Nq+Nk+Nv)
)

// projection adds MatMul(x, W[E,n]) + b[n] and returns the sum.
func projection(b *builder, x *ir.Value, name string, n int64) *ir.Value {
	return b.op("Add", nil, b.op("MatMul", nil, x, b.weight(name+"_w", qkvE, n)), b.weight(name+"_b", n))
}

// TestQKVFuses: three biased projections of one X become one GroupedGemm
// that writes the same three values. Q's reader sits between the Q and K
// projections, so the fused node must take Q's place; K and V are graph
// outputs, which horizontal fusion keeps (the values survive).
func TestQKVFuses(t *testing.T) {
	b := newBuilder(t)
	x := b.input("x", qkvB, qkvL, qkvE)
	q := projection(b, x, "q", qkvNq)
	qr := b.op("Mul", nil, q, q) // not an epilogue activation
	k := projection(b, x, "k", qkvNk)
	v := projection(b, x, "v", qkvNv)
	b.output(qr, k, v, b.op("Relu", nil, x)) // x is also read by a non-GEMM
	g := b.infer()
	unfused, err := cost.Analyze(g, b.M, a100(t), cost.Options{DType: "fp32"})
	if err != nil {
		t.Fatal(err)
	}
	checkPreservesExact(t, g, "fuse-gemm", "fuse-qkv")
	n := expectGrouped(t, g, q, k, v)
	if n.In(0) != x || len(n.Inputs) != 7 || n.In(1).Name != "q_w" || n.In(2).Name != "q_b" || n.In(6).Name != "v_b" {
		t.Errorf("inputs %v, want (x, q_w, q_b, k_w, k_b, v_w, v_b)", n.Inputs)
	}
	// Builder names: MatMul_1 Add_2 (Q), Mul_3, MatMul_4 Add_5 (K), MatMul_6 Add_7 (V).
	if got, want := strings.Join(n.FusedFrom, " "), "MatMul_1 Add_2 MatMul_4 Add_5 MatMul_6 Add_7"; got != want || n.Name != "MatMul_1" {
		t.Errorf("%s fused from %q, want Q's name and %q", n.Name, got, want)
	}

	rep, err := cost.Analyze(g, b.M, a100(t), cost.Options{DType: "fp32"})
	if err != nil {
		t.Fatal(err)
	}
	nc := nodeCost(t, rep, n.Name)
	wantFLOPs := 2*qkvWantMACs + qkvRows*qkvNsum                      // + one bias add per output element
	wantRead := f32Bytes * float64(qkvRows*qkvE+qkvE*qkvNsum+qkvNsum) // X once, the three weights, the biases
	wantWritten := f32Bytes * float64(qkvRows*qkvNsum)                // Q, K, V
	if nc.MACs != qkvWantMACs || nc.FLOPs != wantFLOPs || nc.BytesRead != wantRead || nc.BytesWritten != wantWritten || nc.Launches != 1 {
		t.Errorf("macs %g flops %g read %g written %g launches %g; want %g %g %g %g 1",
			nc.MACs, nc.FLOPs, nc.BytesRead, nc.BytesWritten, nc.Launches, qkvWantMACs, wantFLOPs, wantRead, wantWritten)
	}
	if rep.Totals.FLOPs != unfused.Totals.FLOPs {
		t.Errorf("fused FLOPs %g, unfused %g", rep.Totals.FLOPs, unfused.Totals.FLOPs)
	}
}

// expectGrouped checks g has one GroupedGemm writing exactly outs.
func expectGrouped(t *testing.T, g *ir.Graph, outs ...*ir.Value) *ir.Node {
	t.Helper()
	ns := fusedNodes(g, "GroupedGemm")
	if len(ns) != 1 {
		t.Fatalf("%d GroupedGemm nodes, want 1:\n%s", len(ns), ir.Dump(g))
	}
	n := ns[0]
	if len(n.Outputs) != len(outs) {
		t.Fatalf("GroupedGemm writes %d values, want %d", len(n.Outputs), len(outs))
	}
	for i, o := range outs {
		if n.Out(i) != o {
			t.Errorf("output %d is %s, want %s", i, n.Out(i).Name, o.Name)
		}
	}
	return n
}

// nodeCost returns the report row of the node named name.
func nodeCost(t *testing.T, rep *report.Report, name string) report.NodeCost {
	t.Helper()
	for _, nc := range rep.Nodes {
		if nc.Name == name {
			return nc
		}
	}
	t.Fatalf("no report row for %s", name)
	return report.NodeCost{}
}

// TestQKVGemm: 2-D Gemm projections with transB (nn.Linear on a matrix)
// group with a plain MatMul; the kernel's N is the sum of the three.
func TestQKVGemm(t *testing.T) {
	b := newBuilder(t)
	x := b.input("x", qkvRows, qkvE)
	tb := []*ir.Attribute{ir.IntAttr("transB", 1)}
	q := b.op("Gemm", tb, x, b.weight("q_w", qkvNq, qkvE), b.weight("q_b", qkvNq))
	k := b.op("Gemm", tb, x, b.weight("k_w", qkvNk, qkvE), b.weight("k_b", 1, qkvNk))
	v := b.op("MatMul", nil, x, b.weight("v_w", qkvE, qkvNv))
	b.output(q, k, v)
	g := b.infer()
	checkPreservesExact(t, g, "fuse-qkv")
	n := expectGrouped(t, g, q, k, v)
	if tr, _ := n.AttrInts("trans_b"); len(tr) != 3 || tr[0] != 1 || tr[1] != 1 || tr[2] != 0 {
		t.Errorf("trans_b %v, want [1 1 0]", tr)
	}
	if len(n.Inputs) != 6 { // x, q_w, q_b, k_w, k_b, v_w
		t.Errorf("inputs %v, want V's absent bias trimmed", n.Inputs)
	}
	rep, err := cost.Analyze(g, b.M, a100(t), cost.Options{DType: "fp32"})
	if err != nil {
		t.Fatal(err)
	}
	nc := nodeCost(t, rep, n.Name)
	wantFLOPs := 2*qkvWantMACs + qkvRows*(qkvNq+qkvNk) // biases on Q and K only
	if nc.MACs != qkvWantMACs || nc.FLOPs != wantFLOPs {
		t.Errorf("macs %g flops %g, want %g %g", nc.MACs, nc.FLOPs, qkvWantMACs, wantFLOPs)
	}
}

// TestQKVGuards: projections that cannot share one GEMM stay apart.
func TestQKVGuards(t *testing.T) {
	cases := map[string]struct {
		build   func(b *builder, x *ir.Value) []*ir.Value
		grouped int // outputs of the GroupedGemm, 0 for none
	}{
		"one projection": {func(b *builder, x *ir.Value) []*ir.Value {
			return []*ir.Value{projection(b, x, "q", qkvNq), b.op("Relu", nil, x)}
		}, 0},
		"activation epilogue": {func(b *builder, x *ir.Value) []*ir.Value {
			// Relu joins Q's epilogue: Q is no plain projection; K and V still group.
			return []*ir.Value{b.op("Relu", nil, projection(b, x, "q", qkvNq)), projection(b, x, "k", qkvNk), projection(b, x, "v", qkvNv)}
		}, 2},
		"residual epilogue": {func(b *builder, x *ir.Value) []*ir.Value {
			r := b.input("r", qkvB, qkvL, qkvNq)
			return []*ir.Value{b.op("Add", nil, projection(b, x, "q", qkvNq), r), projection(b, x, "k", qkvNk)}
		}, 0},
		"weight computed at run time": {func(b *builder, x *ir.Value) []*ir.Value {
			// Not a bare graph input: one read only as a weight is taken
			// for one (export_params=False, ir/weights.go).
			w := b.op("Relu", nil, b.input("w", qkvE, qkvNk))
			return []*ir.Value{projection(b, x, "q", qkvNq), b.op("MatMul", nil, x, w)}
		}, 0},
		"batched weight": {func(b *builder, x *ir.Value) []*ir.Value {
			return []*ir.Value{projection(b, x, "q", qkvNq), b.op("MatMul", nil, x, b.weight("w3", qkvB, qkvE, qkvNk))}
		}, 0},
		"other dtype": {func(b *builder, x *ir.Value) []*ir.Value {
			w := b.blind("w16", qkvE, qkvNk)
			w.DType, w.Const.DType = ir.Float16, ir.Float16
			return []*ir.Value{projection(b, x, "q", qkvNq), b.op("MatMul", nil, x, w)}
		}, 0},
		"x is the weight operand": {func(b *builder, x *ir.Value) []*ir.Value {
			a := b.input("a", qkvB, 3, qkvL)
			return []*ir.Value{projection(b, x, "q", qkvNq), b.op("MatMul", nil, a, x)}
		}, 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := newBuilder(t)
			x := b.input("x", qkvB, qkvL, qkvE)
			b.output(tc.build(b, x)...)
			g := b.run("fuse-gemm", "fuse-qkv")
			ns := fusedNodes(g, "GroupedGemm")
			switch {
			case tc.grouped == 0 && len(ns) != 0:
				t.Errorf("GroupedGemm fired (%v) though a guard fails", ns[0].FusedFrom)
			case tc.grouped > 0 && (len(ns) != 1 || len(ns[0].Outputs) != tc.grouped):
				t.Errorf("want one GroupedGemm of %d branches:\n%s", tc.grouped, ir.Dump(g))
			}
		})
	}
}

// TestQKVInteger: integer GEMMs are not fused (float math only).
func TestQKVInteger(t *testing.T) {
	b := newBuilder(t)
	x := b.input("x", qkvRows, qkvE)
	x.DType, x.Declared.DType = ir.Int64, ir.Int64
	w := func(name string) *ir.Value {
		v := b.value(name)
		b.g.AddInitializer(v, ir.IntTensor([]int64{qkvE, 2}, make([]int64, 2*qkvE)))
		return v
	}
	b.output(b.op("MatMul", nil, x, w("a")), b.op("MatMul", nil, x, w("c")))
	g := b.run("fuse-qkv")
	expectNone(t, g, "GroupedGemm")
}

// TestQKVReadBack: GroupedGemm's shape function gives every output its
// projection's shape, so an optimized model reads back.
func TestQKVReadBack(t *testing.T) {
	b := newBuilder(t)
	x := b.input("x", qkvRows, qkvE)
	tb := []*ir.Attribute{ir.IntAttr("transB", 1)}
	q := b.op("Gemm", tb, x, b.weight("q_w", qkvNq, qkvE))
	v := b.op("MatMul", nil, x, b.weight("v_w", qkvE, qkvNv))
	b.output(q, v)
	b.run("fuse-qkv")
	for _, o := range []*ir.Value{q, v} {
		o.Shape = ir.Unranked()
	}
	if _, err := ir.InferShapes(b.M, ir.InferOptions{}); err != nil {
		t.Fatal(err)
	}
	if !q.Shape.Equal(ir.KnownShape(qkvRows, qkvNq)) || !v.Shape.Equal(ir.KnownShape(qkvRows, qkvNv)) {
		t.Errorf("re-inferred %s and %s, want [%d,%d] and [%d,%d]", q.Shape, v.Shape, qkvRows, qkvNq, qkvRows, qkvNv)
	}
}
