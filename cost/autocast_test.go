package cost

import (
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// TestAutocastFlow: under --dtype fp16-amp a linear layer casts its fp32
// input, weight and bias (the weight once per call however often it is
// read), the fp32-listed softmax casts its half input up and writes fp32,
// the next matmul casts that activation back down, a residual add of a
// half and an fp32 tensor reads both as they are and writes fp32 (no
// cast), and a 0-d constant does not widen a half tensor. The weights
// stay fp32 in memory; every cast is a launch of its own.
func TestAutocastFlow(t *testing.T) {
	const b, s, d = 8, 16, 64
	bld := newBuilder(t)
	x := bld.Input("x", b, s, d)
	w := bld.Weight("w", d, d)
	bias := bld.Weight("bias", d)
	h := bld.Val("h", ir.Float32, b, s, d)
	bld.Node("MatMul", []*ir.Value{x, w}, []*ir.Value{h})
	hb := bld.Val("hb", ir.Float32, b, s, d)
	bld.Node("Add", []*ir.Value{h, bias}, []*ir.Value{hb})
	p := bld.Val("p", ir.Float32, b, s, d)
	bld.Node("Softmax", []*ir.Value{hb}, []*ir.Value{p}, ir.IntAttr("axis", -1))
	y := bld.Val("y", ir.Float32, b, s, d)
	bld.Node("MatMul", []*ir.Value{p, w}, []*ir.Value{y})
	half := bld.Val("half", ir.Float32)
	bld.G.AddInitializer(half, ir.FloatTensor(ir.Float32, nil, []float64{0.5}))
	ys := bld.Val("ys", ir.Float32, b, s, d)
	bld.Node("Mul", []*ir.Value{y, half}, []*ir.Value{ys})
	r := bld.Val("r", ir.Float32, b, s, d)
	bld.Node("Sub", []*ir.Value{ys, x}, []*ir.Value{r})
	bld.G.Outputs = append(bld.G.Outputs, r)

	plain := bld.analyze(Options{DType: "fp32"})
	amp := bld.analyze(Options{DType: "fp16-amp"})
	act := float64(b * s * d)
	want := []struct {
		launches    float64
		read, write float64 // bytes, casts included
	}{
		{3, 4*act + 4*d*d + 2*act + 2*d*d, 2*act + 2*d*d + 2*act}, // MatMul: casts x and w, reads their halves
		{2, 4*d + 2*act + 2*d, 2*d + 2*act},                       // bias add: casts the bias
		{2, 2*act + 4*act, 4*act + 4*act},                         // softmax: cast up, fp32 in and out
		{2, 4*act + 2*act + 2*d*d, 2*act + 2*act},                 // MatMul: casts p; w's cast is cached
		{1, 2*act + 4, 2 * act},                                   // ×0.5 stays half
		{1, 2*act + 4*act, 4 * act},                               // half − fp32 promotes: fp32 out
	}
	for i, n := range amp.Nodes {
		if n.Launches != want[i].launches || n.BytesRead != want[i].read || n.BytesWritten != want[i].write {
			t.Errorf("%s: launches %g, read %g, written %g; want %g, %g, %g", n.Name, n.Launches, n.BytesRead, n.BytesWritten,
				want[i].launches, want[i].read, want[i].write)
		}
		if n.FLOPs != plain.Nodes[i].FLOPs {
			t.Errorf("%s: %g FLOPs under autocast, %g in fp32: casts count none", n.Name, n.FLOPs, plain.Nodes[i].FLOPs)
		}
	}
	if mm := amp.Nodes[0]; mm.Precision != "fp16_tensor" {
		t.Errorf("MatMul runs at %q under autocast, want fp16_tensor", mm.Precision)
	}
	if amp.Totals.ParamBytes != plain.Totals.ParamBytes {
		t.Errorf("weights %g bytes under autocast, %g in fp32: autocast keeps them fp32", amp.Totals.ParamBytes, plain.Totals.ParamBytes)
	}
}

// TestAutocastBatchMonotone: the casts never make a larger batch faster.
func TestAutocastBatchMonotone(t *testing.T) {
	prev := 0.0
	for _, batch := range []int64{1, 2, 4, 8, 16, 32, 64, 128} {
		bld := newBuilder(t)
		x := bld.Input("x", batch, 128, 768)
		w := bld.Weight("w", 768, 768)
		h := bld.Val("h", ir.Float32, batch, 128, 768)
		bld.Node("MatMul", []*ir.Value{x, w}, []*ir.Value{h})
		tm := bld.analyze(Options{DType: "fp16-amp"}).Totals.TimeS
		if tm < prev {
			t.Errorf("batch %d: %g s, below the smaller batch's %g s", batch, tm, prev)
		}
		prev = tm
	}
}

// TestAutocastKVCache: under autocast the KV cache a decode step is fed is
// at the half dtype (the previous step's key projection wrote it), so the
// cache append reads it at half and writes half, and CacheBytes sizes it
// at half; at fp32 both stay fp32.
func TestAutocastKVCache(t *testing.T) {
	build := func() *builder {
		b := newBuilder(t)
		x := b.Input("x", 1, 1, 64)
		past := b.Input("past", 1, 128, 64)
		k := b.Val("k", ir.Float32, 1, 1, 64)
		b.Node("MatMul", []*ir.Value{x, b.Weight("wk", 64, 64)}, []*ir.Value{k})
		present := b.Val("present", ir.Float32, 1, 129, 64)
		b.Node("Concat", []*ir.Value{past, k}, []*ir.Value{present}, ir.IntAttr("axis", 1))
		b.G.Outputs = append(b.G.Outputs, present)
		return b
	}
	read := map[string]float64{}
	for _, dt := range []string{"fp32", "fp16-amp"} {
		b := build()
		rep := b.analyze(Options{DType: dt, AppendKVCache: true})
		for _, n := range rep.Nodes {
			if n.OpType == "Concat" {
				read[dt] = n.BytesRead
			}
		}
		kv, err := CacheBytes(b.G, dt)
		if err != nil {
			t.Fatal(err)
		}
		if want := 129 * 64 * map[string]float64{"fp32": 4, "fp16-amp": 2}[dt]; kv != want {
			t.Errorf("%s: CacheBytes %g, want %g", dt, kv, want)
		}
	}
	if !(read["fp16-amp"] > 0) || read["fp16-amp"] >= read["fp32"] {
		t.Errorf("cache append reads %g B under fp16-amp and %g B at fp32: want fewer under autocast", read["fp16-amp"], read["fp32"])
	}
}
