package cost

import (
	"slices"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

const mib = 1 << 20

// TestBFCArenaRegions: the arena's regions as bfc_arena.cc's Extend takes
// them under kNextPowerOfTwo: 1 MiB first and each later region twice the
// last, a larger request growing the current size by powers of two (and
// then not doubling it again), capped at 1 GiB; freed chunks merge within
// their region and are reused best fit.
func TestBFCArenaRegions(t *testing.T) {
	a := newBFCArena()
	a.alloc(0, 3*mib) // 1 MiB grows to 4 MiB for it: one 4 MiB region
	if got := a.reserved(); got != 4*mib {
		t.Fatalf("one 3 MiB tensor: %g MiB reserved, want 4", got/mib)
	}
	a.alloc(1, 1*mib) // fits the 4 MiB region's rest
	a.alloc(2, 1*mib) // none left: a 4 MiB region (grown, so not doubled before)
	if got := a.reserved(); got != 8*mib {
		t.Errorf("3 + 1 + 1 MiB: %g MiB reserved, want 4 + 4", got/mib)
	}
	a.alloc(3, 1*mib) // the second region's rest (3 MiB: split)
	a.alloc(4, 3*mib) // nothing holds 3 MiB now: a region of 8 MiB (doubled)
	if got := a.reserved(); got != 16*mib {
		t.Errorf("then 1 + 3 MiB: %g MiB reserved, want 4 + 4 + 8", got/mib)
	}
	a.free(0)
	a.free(1)
	a.alloc(5, 4*mib) // the first region, whole again after the merges
	if got := a.reserved(); got != 16*mib {
		t.Errorf("a 4 MiB tensor after freeing the first region's two: %g MiB reserved, want no new region", got/mib)
	}
	// The doubling stops at 1 GiB.
	b := newBFCArena()
	for i := range 14 {
		b.alloc(i, b.curr)
	}
	if last := b.last; last != arenaMaxExtend || b.curr != arenaMaxExtend {
		t.Errorf("region %d MiB, next %d MiB: want the 1 GiB cap", int(last/mib), int(b.curr/mib))
	}
}

// TestPatternPeak: the memory pattern puts a tensor in the lowest gap
// that holds it with the least waste, else after the highest end, and
// leaves out the buffers outside it (graph inputs and outputs).
func TestPatternPeak(t *testing.T) {
	ev := []arenaEvent{
		{id: 0, bytes: 1 * mib}, {id: 1, bytes: 1 * mib},
		{id: 0, free: true},
		{id: 2, bytes: mib / 2}, // into the freed first MiB
		{id: 3, bytes: 2 * mib}, // after the highest end: 2 MiB
		{id: 9, bytes: 64 * mib, outside: true},
	}
	if got := patternPeak(ev); got != 4*mib {
		t.Errorf("pattern peak %g MiB, want 4", got/mib)
	}
}

// TestORTDeviceMemory: under onnxruntime a call's device memory is its
// weights, the arena's regions after two runs, the bound inputs where
// they are the caller's, and the floor; under a runtime without the
// arena it is the peak and the floor, as before.
func TestORTDeviceMemory(t *testing.T) {
	gpu := testGPU(t, "A100-SXM4-80GB")
	build := func() *builder {
		b := newBuilder(t)
		x := b.Input("x", 64, 1024, 256)
		h := b.Val("h", ir.Float32, 64, 1024, 256)
		y := b.Val("y", ir.Float32, 64, 1024, 256)
		b.Node("Add", []*ir.Value{x, x}, []*ir.Value{h})
		b.Node("Mul", []*ir.Value{h, h}, []*ir.Value{y})
		b.G.AddOutput(y)
		return b
	}
	for _, name := range []string{"onnxruntime", "onnxruntime-iobinding", "onnxruntime-cudagraph", "graph", "tensorrt"} {
		b := build()
		r, err := Analyze(b.G, b.M, gpu, Options{Runtime: testRuntime(t, name), Plan: testRuntime(t, name).PlanOrFused()})
		if err != nil {
			t.Fatal(err)
		}
		ri, tt := r.Runtime, r.Totals
		arena := strings.HasPrefix(name, "onnxruntime")
		if !arena {
			if ri.ArenaReservedBytes != 0 || ri.DeviceMemoryBytes != tt.PeakMemoryBytes+ri.MemoryFloorBytes {
				t.Errorf("%s: arena %g B, device %g B: want none and the peak plus the floor", name, ri.ArenaReservedBytes, ri.DeviceMemoryBytes)
			}
			continue
		}
		// Three 64 MiB tensors, all live at the Mul (x is the
		// caller's, kept to the end). Under onnxruntime, fed host
		// arrays, x's device copy is the arena's: its first region
		// grows from 1 MiB to 64 MiB for x, the next is 64 MiB (a
		// grown size is not doubled again) for h, the third 128 MiB
		// for y; the pattern holds h alone (x and y are outside it),
		// and the second run finds room for all three: 256 MiB. Bound
		// (iobinding, cudagraph), x is the caller's buffer beside the
		// arena: 64 MiB for h and 64 MiB for y.
		wantArena, inputs := 256.0*mib, 0.0
		if name != "onnxruntime" {
			wantArena, inputs = 128*mib, 64*mib
		}
		if ri.ArenaReservedBytes != wantArena || ri.MemoryPatternBytes != 64*mib {
			t.Errorf("%s: arena %g MiB, pattern %g MiB: want %g and 64", name, ri.ArenaReservedBytes/mib, ri.MemoryPatternBytes/mib, wantArena/mib)
		}
		if want := tt.ParamBytes + ri.ArenaReservedBytes + inputs + ri.MemoryFloorBytes; ri.DeviceMemoryBytes != want || ri.DeviceMemoryBytes < tt.PeakMemoryBytes+ri.MemoryFloorBytes {
			t.Errorf("%s: device %g MiB, want weights + arena + bound inputs + floor = %g MiB, and at least the peak + floor", name, ri.DeviceMemoryBytes/mib, want/mib)
		}
	}
}

// TestORTPlanReuse: a tensor takes a dead buffer of its own size, the
// most recently freed first, so the arena sees the buffer allocated once
// and freed after its last holder; other sizes, graph inputs and outputs
// are never given or taken.
func TestORTPlanReuse(t *testing.T) {
	ev := []arenaEvent{
		{id: 0, bytes: mib}, {id: 1, bytes: mib},
		{id: 0, bytes: mib, free: true}, {id: 1, bytes: mib, free: true},
		{id: 2, bytes: mib},     // takes 1, the last freed
		{id: 3, bytes: 2 * mib}, // no dead buffer of 2 MiB
		{id: 4, bytes: mib, outside: true},
		{id: 2, bytes: mib, free: true},
		{id: 5, bytes: mib}, // takes 1 again, freed as 2
		{id: 5, bytes: mib, free: true},
	}
	got := ortPlanReuse(ev)
	want := []arenaEvent{
		{id: 0, bytes: mib}, {id: 1, bytes: mib},
		{id: 0, bytes: mib, free: true},
		{id: 3, bytes: 2 * mib},
		{id: 4, bytes: mib, outside: true},
		{id: 1, bytes: mib, free: true},
	}
	if !slices.Equal(got, want) {
		t.Errorf("reused events:\n got %v\nwant %v", got, want)
	}
}
