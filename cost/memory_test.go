package cost

import (
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
		v := b.val(name, ir.Int64, rows, 1)
		vals := make([]int64, rows)
		for i := range vals {
			vals[i] = int64(i)
		}
		b.g.AddInitializer(v, ir.IntTensor([]int64{rows, 1}, vals))
		return v
	}
	for _, c := range []struct {
		name  string
		build func(b *builder)
		want  float64 // peak activation elements
	}{
		{"dead cache updated in place", func(b *builder) {
			cache, upd := b.input("past", cacheN), b.input("new", rows)
			present := b.val("present", ir.Float32, cacheN)
			b.g.AddOutput(present)
			b.node("ScatterND", []*ir.Value{cache, idx(b, "i"), upd}, []*ir.Value{present})
		}, cacheN + rows},
		{"cache read afterwards is copied", func(b *builder) {
			cache, upd := b.input("past", cacheN), b.input("new", rows)
			present, r := b.val("present", ir.Float32, cacheN), b.val("r", ir.Float32, cacheN)
			b.g.AddOutput(present)
			b.g.AddOutput(r)
			b.node("ScatterND", []*ir.Value{cache, idx(b, "i"), upd}, []*ir.Value{present})
			b.node("Relu", []*ir.Value{cache}, []*ir.Value{r})
		}, 3 * cacheN}, // at the Relu: old cache, present, r (new rows freed)
		{"two updates share one buffer", func(b *builder) {
			cache, upd := b.input("past", cacheN), b.input("new", rows)
			mid, present := b.val("mid", ir.Float32, cacheN), b.val("present", ir.Float32, cacheN)
			b.g.AddOutput(present)
			b.node("ScatterND", []*ir.Value{cache, idx(b, "i"), upd}, []*ir.Value{mid})
			b.node("ScatterElements", []*ir.Value{mid, idx(b, "j"), upd}, []*ir.Value{present})
		}, cacheN + rows},
		{"update of a view of a dead cache", func(b *builder) {
			cache, upd := b.input("past", cacheN), b.input("new", rows)
			flat, present := b.val("flat", ir.Float32, cacheN), b.val("present", ir.Float32, cacheN)
			b.g.AddOutput(present)
			b.node("Reshape", []*ir.Value{cache, b.ints("shape", cacheN)}, []*ir.Value{flat})
			b.node("ScatterND", []*ir.Value{flat, idx(b, "i"), upd}, []*ir.Value{present})
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
