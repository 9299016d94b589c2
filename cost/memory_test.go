package cost

import (
	"fmt"
	"math"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// A KV-cache update: ScatterND writes 10 new rows into a 1000-element
// cache. When the old cache is read by nothing after the update, the
// runtime writes into it (ir.InPlace), so the cache is counted once:
// peak = cache + new rows, not two caches. When something reads the old
// cache later, the update needs its own buffer.
func TestPeakMemoryInPlaceUpdate(t *testing.T) {
	const elem = 4 // float32 bytes
	const cacheN, rows = 1000, 10
	idx := func(b *builder, name string) *ir.Value {
		v := b.Val(name, ir.Int64, rows, 1)
		vals := make([]int64, rows)
		for i := range vals {
			vals[i] = int64(i)
		}
		b.G.AddInitializer(v, ir.IntTensor([]int64{rows, 1}, vals))
		return v
	}
	for _, c := range []struct {
		name  string
		build func(b *builder)
		want  float64 // peak activation elements
	}{
		{"dead cache updated in place", func(b *builder) {
			cache, upd := b.Input("past", cacheN), b.Input("new", rows)
			present := b.Val("present", ir.Float32, cacheN)
			b.G.AddOutput(present)
			b.Node("ScatterND", []*ir.Value{cache, idx(b, "i"), upd}, []*ir.Value{present})
		}, cacheN + rows},
		{"cache read afterwards is copied", func(b *builder) {
			cache, upd := b.Input("past", cacheN), b.Input("new", rows)
			present, r := b.Val("present", ir.Float32, cacheN), b.Val("r", ir.Float32, cacheN)
			b.G.AddOutput(present)
			b.G.AddOutput(r)
			b.Node("ScatterND", []*ir.Value{cache, idx(b, "i"), upd}, []*ir.Value{present})
			b.Node("Relu", []*ir.Value{cache}, []*ir.Value{r})
		}, 3*cacheN + rows}, // at the Relu: old cache, present, r, and the caller's new rows
		{"two updates share one buffer", func(b *builder) {
			cache, upd := b.Input("past", cacheN), b.Input("new", rows)
			mid, present := b.Val("mid", ir.Float32, cacheN), b.Val("present", ir.Float32, cacheN)
			b.G.AddOutput(present)
			b.Node("ScatterND", []*ir.Value{cache, idx(b, "i"), upd}, []*ir.Value{mid})
			b.Node("ScatterElements", []*ir.Value{mid, idx(b, "j"), upd}, []*ir.Value{present})
		}, cacheN + rows},
		{"update of a view of a dead cache", func(b *builder) {
			cache, upd := b.Input("past", cacheN), b.Input("new", rows)
			flat, present := b.Val("flat", ir.Float32, cacheN), b.Val("present", ir.Float32, cacheN)
			b.G.AddOutput(present)
			b.Node("Reshape", []*ir.Value{cache, b.Ints("shape", cacheN)}, []*ir.Value{flat})
			b.Node("ScatterND", []*ir.Value{flat, idx(b, "i"), upd}, []*ir.Value{present})
		}, cacheN + rows},
	} {
		b := newBuilder(t)
		c.build(b)
		r := b.analyze(Options{})
		if got, want := r.Totals.PeakActivationBytes, c.want*elem; got != want {
			t.Errorf("%s: peak activations = %v B, want %v B (%v elements)", c.name, got, want, c.want)
		}
	}
}

// TestPeakMemoryEagerScopes: under the eager plan a tensor handed to a
// module lives until that module returns (scopelive.go), however early
// its last reader inside runs; other plans, and names without module
// scopes, free it after its last reader. The caller's input is held in
// every case. Four tensors of 4000 B:
//
//	x -> /stem/Relu -> s -> /blk/c1/Relu -> a -> /blk/c2/Relu -> b
//	  -> /blk/c3/Relu -> c -> /head/Relu -> y (output)
//
// Last use: at most x and two more (3). Eager: s was the argument of /blk,
// so at /blk/c2 x, s, a and b are live (4). The dynamo exporter's nodes
// carry the same modules in metadata (ir.NameScopesKey), not in names.
func TestPeakMemoryEagerScopes(t *testing.T) {
	const elem = 4 * 1000
	const (
		unscoped = iota
		names
		dynamo
	)
	build := func(scopes int) *builder {
		b := newBuilder(t)
		x := b.Input("x", 1000)
		vals := []*ir.Value{x}
		paths := []string{"/stem/Relu", "/blk/c1/Relu", "/blk/c2/Relu", "/blk/c3/Relu", "/head/Relu"}
		lists := []string{"['', 'stem', 'relu']", "['', 'blk', 'blk.c1', 'relu']", "['', 'blk', 'blk.c2', 'relu']",
			"['', 'blk', 'blk.c3', 'relu']", "['', 'head', 'relu']"}
		for i := range paths {
			o := b.Val(fmt.Sprintf("v%d", i), ir.Float32, 1000)
			n := b.Node("Relu", []*ir.Value{vals[i]}, []*ir.Value{o})
			switch scopes {
			case names:
				n.Name = paths[i]
			case dynamo:
				n.Name = fmt.Sprintf("node_relu_%d", i)
				n.SetMetadata([]ir.KeyValue{{Key: ir.NameScopesKey, Value: lists[i]}})
			}
			vals = append(vals, o)
		}
		b.G.AddOutput(vals[len(vals)-1])
		return b
	}
	for _, c := range []struct {
		plan   string
		scopes int
		want   float64
	}{
		{"eager", names, 4},
		{"eager", dynamo, 4},
		{"fused", names, 3},
		{"fused", dynamo, 3},
		{"eager", unscoped, 3},
		{"", unscoped, 3},
	} {
		r := build(c.scopes).analyze(Options{Plan: c.plan})
		if got := r.Totals.PeakActivationBytes; got != c.want*elem {
			t.Errorf("plan %q, scopes %d: peak activations %v B, want %v tensors", c.plan, c.scopes, got, c.want)
		}
	}
}

// TestScopeCuts: the modules of a module path, and where two paths part.
func TestScopeCuts(t *testing.T) {
	a, b := "/layer1/layer1.0/conv1", "/layer1/layer1.1"
	ca, cb := scopeCuts(a), scopeCuts(b)
	if scopeDepth(ca) != 3 || scopeDepth(cb) != 2 {
		t.Errorf("depths %d, %d; want 3 and 2", scopeDepth(ca), scopeDepth(cb))
	}
	if k := commonScope(a, ca, b, cb); k != 1 {
		t.Errorf("common depth %d, want 1 (/layer1)", k)
	}
	if k := commonScope(a, ca, "/layer1/layer1.0", scopeCuts("/layer1/layer1.0")); k != 2 {
		t.Errorf("common depth with the parent %d, want 2", k)
	}
	if c := scopeCuts(""); scopeDepth(c) != 0 {
		t.Errorf("no path: depth %d, want 0", scopeDepth(c))
	}
}

// TestPeakMemoryORTInPlace: onnxruntime's CUDA activations may run in
// place (MayInplace(0, 0)): under its plan a Relu whose input dies there
// writes into it, as the allocation planner arranges; never into a graph
// input (the caller's), and not under other plans. 4000 B tensors:
//
//	x -> Neg -> a -> Relu -> b -> Shape -> s (output)
//
// At the Relu x, a and b are live (3), or x and a=b in place (2).
func TestPeakMemoryORTInPlace(t *testing.T) {
	const elem = 4 * 1000
	build := func(direct bool) *builder {
		b := newBuilder(t)
		x := b.Input("x", 1000)
		a := x
		if !direct {
			a = b.Val("a", ir.Float32, 1000)
			b.Node("Neg", []*ir.Value{x}, []*ir.Value{a})
		}
		r := b.Val("b", ir.Float32, 1000)
		b.Node("Relu", []*ir.Value{a}, []*ir.Value{r})
		s := b.Val("s", ir.Int64, 1)
		b.Node("Shape", []*ir.Value{r}, []*ir.Value{s})
		b.G.AddOutput(s)
		return b
	}
	for _, c := range []struct {
		plan   string
		direct bool
		want   float64
	}{
		{"onnxruntime", false, 2},
		{"fused", false, 3},
		{"eager", false, 3},
		{"onnxruntime", true, 2}, // x and b: the caller's x is not reused
	} {
		r := build(c.direct).analyze(Options{Plan: c.plan})
		if got := math.Round(r.Totals.PeakActivationBytes / elem); got != c.want {
			t.Errorf("plan %q (Relu on a graph input %v): peak activations %v tensors, want %v", c.plan, c.direct, got, c.want)
		}
	}
}
