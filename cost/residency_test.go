package cost

import (
	"fmt"
	"math"
	"testing"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/costtest"
	"github.com/onnxcost/onnxcost/ir"
)

// TestL2ReachRule: a consumer finds in L2 only the resident bytes it
// reaches before its own new lines push them out. A tensor that fits is
// read whole from L2; one larger than the cache, read right after it was
// written, is read whole from DRAM (its resident tail is evicted by the
// misses on its head before the reader gets there), where crediting the
// tail priced memory-bound kernels of our H100 whole models 30% too fast.
func TestL2ReachRule(t *testing.T) {
	const c = 100.0
	var g *ir.Graph
	val := func(name string) *ir.Value {
		v, err := g.NewValue(name)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// A producer writes x (s bytes) from a cold input, a kernel in between
	// may stream other data, then an elementwise consumer reads x and
	// writes y of its size: the bytes of x it must read from DRAM.
	coldReads := func(s, between, out float64) float64 {
		g = ir.NewGraph("g")
		r := newL2Residency(c, g)
		in, x, y, z, w := val("in"), val("x"), val("y"), val("z"), val("w")
		r.access([]tensorIO{{in, s}}, []tensorIO{{x, s}}, s, s)
		if between > 0 {
			r.access([]tensorIO{{z, between}}, []tensorIO{{w, between}}, between, between)
		}
		return s - r.reachable([]tensorIO{{x, s}}, []tensorIO{{y, out}})[0]
	}
	for _, c := range []struct {
		name            string
		s, between, out float64
		wantReadDRAM    float64
	}{
		{"fits: read from L2", 40, 0, 40, 0},
		{"twice the cache: read from DRAM, not the tail", 200, 0, 200, 200},
		{"just over the cache: nothing reached", 110, 0, 110, 110},
		{"its head pushed out by a kernel in between: the tail is evicted before it is reached", 60, 30, 60, 60},
		{"a kernel in between that leaves it whole: reached", 30, 20, 30, 0},
		// Writing 3 bytes per byte read, the reader's new lines overtake it
		// once they have used the 60 bytes of older and free lines: 30 of
		// its 40 resident bytes are reached.
		{"a writer of thrice its reads: reached until its writes catch up", 40, 0, 120, 10},
	} {
		if got := coldReads(c.s, c.between, c.out); math.Abs(got-c.wantReadDRAM) > 1e-9 {
			t.Errorf("%s: the consumer read %g bytes from DRAM, want %g", c.name, got, c.wantReadDRAM)
		}
	}
}

// TestL2ReuseBytes: GA100 and GH100 parts keep one partition's worth of a
// tensor all SMs share; a GPU with one L2 keeps all of it.
func TestL2ReuseBytes(t *testing.T) {
	for name, frac := range map[string]float64{"H100-SXM5-80GB": 0.5, "H200": 0.5, "A100-SXM4-40GB": 0.5, "A30": 0.5, "L4": 1, "V100": 1, "RTX-4090": 1} {
		g, err := hwdb.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := g.L2ReuseBytes() / g.L2Bytes; got != frac {
			t.Errorf("%s: L2ReuseBytes is %.2f of the L2, want %.2f", name, got, frac)
		}
	}
}

// TestWriteBackChargedToWriter: a kernel's DRAM traffic is the cold share
// of its reads and all of its writes, and a later kernel pays nothing for
// evicting them. Charged to the evicting kernel, the same write-back cost
// time or nothing depending on which kernel that was, and decode steps
// got cheaper as their batch or KV cache grew.
func TestWriteBackChargedToWriter(t *testing.T) {
	const c = 100.0
	g := ir.NewGraph("g")
	val := func(name string) *ir.Value {
		v, err := g.NewValue(name)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	r := newL2Residency(c, g)
	in, x, w, y, z := val("in"), val("x"), val("w"), val("y"), val("z")
	// A producer reads 10 cold bytes and writes 40 that stay in L2.
	if got, _ := r.access([]tensorIO{{in, 10}}, []tensorIO{{x, 40}}, 10, 40); got != 50 {
		t.Errorf("producer: %g DRAM bytes, want its 10 cold reads + 40 writes", got)
	}
	// A weight stream of 150 bytes evicts x: only its own reads and writes.
	if got, _ := r.access([]tensorIO{{w, 150}}, []tensorIO{{y, 5}}, 150, 5); got != 155 {
		t.Errorf("evicting kernel: %g DRAM bytes, want its 150 cold reads + 5 writes and no write-back of x", got)
	}
	// x's consumer now finds nothing of it: read from DRAM.
	if got, _ := r.access([]tensorIO{{x, 40}}, []tensorIO{{z, 40}}, 40, 40); got != 80 {
		t.Errorf("consumer of an evicted tensor: %g DRAM bytes, want 40 + 40", got)
	}
	// Writes to outputs of no known size are charged and leave the cache
	// as it was (no line of NaN bytes).
	used := r.used
	if got, _ := r.access([]tensorIO{{z, 40}}, []tensorIO{{val("u"), 0}}, 40, 7); got != 7 || r.used != used {
		t.Errorf("unsized output: %g DRAM bytes and %g resident, want 7 and %g", got, r.used, used)
	}
}

// TestWarmOperandsShortenTheFill: a GEMM whose operands earlier kernels
// just wrote (attention's Q·Kᵀ) finds them in L2 and pays perf.WarmGEMMFill of
// its fill; the same GEMM against a weight, whose first read is from
// DRAM, pays all of it. It fails if residency stops reporting the coldest
// input's warmth or the fill stops following it.
func TestWarmOperandsShortenTheFill(t *testing.T) {
	b := newBuilder(t)
	x := b.Input("x", 256, 256)
	q, k := b.Val("q", ir.Float32, 256, 256), b.Val("k", ir.Float32, 256, 256)
	warm, cold := b.Val("warm", ir.Float32, 256, 256), b.Val("cold", ir.Float32, 256, 256)
	b.Node("Relu", []*ir.Value{x}, []*ir.Value{q})
	b.Node("Neg", []*ir.Value{x}, []*ir.Value{k})
	b.Node("MatMul", []*ir.Value{q, k}, []*ir.Value{warm})
	b.Node("MatMul", []*ir.Value{q, b.Weight("w", 256, 256)}, []*ir.Value{cold})
	b.G.AddOutput(warm)
	b.G.AddOutput(cold)
	r := b.analyze(Options{Runtime: testRuntime(t, "graph"), Plan: "unfused"})
	w, c := r.Nodes[2], r.Nodes[3]
	if !(c.LatencyS > 0) || math.Abs(w.LatencyS/c.LatencyS-perf.WarmGEMMFill) > 1e-9 {
		t.Errorf("fill %.3g s with both operands in L2, %.3g s against a cold weight: ratio %.3f, want %.2f", w.LatencyS, c.LatencyS, w.LatencyS/c.LatencyS, perf.WarmGEMMFill)
	}
}

// TestWarmConvolutionFill: a library convolution's fill follows its
// operands' warmth as a GEMM's does: a small convolution repeated back to
// back (Options.Warm: its input and filter left in L2 by the call
// before) pays perf.WarmGEMMFill of the fill its first call pays against
// DRAM. Our H200's conv-choice sweep times such calls (ResNet-50's layers
// at batch 1, each call in a CUDA graph of repeats: 6-16 µs with the bias
// kernel), which the whole cold fill had priced 32-59% over
// (scripts/choices TestH200ConvChoices). It fails if the convolution's
// fill stops following OperandsWarm.
func TestWarmConvolutionFill(t *testing.T) {
	b := newBuilder(t)
	x := b.Input("x", 1, 64, 56, 56)
	y := b.Val("y", ir.Float32, 1, 64, 56, 56)
	b.Node("Conv", []*ir.Value{x, b.Weight("w", 64, 64, 3, 3)}, []*ir.Value{y},
		ir.IntsAttr("pads", 1, 1, 1, 1), ir.IntsAttr("kernel_shape", 3, 3))
	b.G.AddOutput(y)
	opt := Options{Runtime: testRuntime(t, "graph"), Plan: "unfused"}
	cold := b.analyze(opt).Nodes[0]
	opt.Warm = true
	warm := b.analyze(opt).Nodes[0]
	if !(cold.LatencyS > 0) || math.Abs(warm.LatencyS/cold.LatencyS-perf.WarmGEMMFill) > 1e-9 {
		t.Errorf("convolution fill %.3g s repeated, %.3g s first: ratio %.3f, want %.2f", warm.LatencyS, cold.LatencyS, warm.LatencyS/cold.LatencyS, perf.WarmGEMMFill)
	}
}

// TestConvolutionInAPlanKeepsItsFill: the warm share of a convolution's
// fill was measured only on convolutions repeated back to back; one that
// follows another kernel pays its whole fill however warm its operands
// (perf gpuFillScale), as our whole-model replays of MobileNet-V2 and
// DenseNet-121 at batch 1 want, their filters in L2 from the replay
// before. A GEMM's fill keeps following its operands' warmth.
func TestConvolutionInAPlanKeepsItsFill(t *testing.T) {
	b := newBuilder(t)
	x := b.Input("x", 1, 64, 56, 56)
	r, y, z := b.Val("r", ir.Float32, 1, 64, 56, 56), b.Val("y", ir.Float32, 1, 64, 56, 56), b.Val("z", ir.Float32, 1, 64, 56, 56)
	b.Node("Relu", []*ir.Value{x}, []*ir.Value{r})
	b.Node("Conv", []*ir.Value{r, b.Weight("w", 64, 64, 3, 3)}, []*ir.Value{y},
		ir.IntsAttr("pads", 1, 1, 1, 1), ir.IntsAttr("kernel_shape", 3, 3))
	b.Node("MatMul", []*ir.Value{y, b.Weight("v", 56, 56)}, []*ir.Value{z})
	b.G.AddOutput(z)
	opt := Options{Runtime: testRuntime(t, "graph"), Plan: "unfused"}
	coldR := b.analyze(opt)
	opt.Warm = true
	warmR := b.analyze(opt)
	cold, warm := nodeByOp(t, coldR, "Conv"), nodeByOp(t, warmR, "Conv")
	if !(cold.LatencyS > 0) || math.Abs(warm.LatencyS/cold.LatencyS-1) > 1e-9 {
		t.Errorf("a convolution after a Relu: fill %.3g s warm, %.3g s cold; want the same", warm.LatencyS, cold.LatencyS)
	}
	if cm, wm := nodeByOp(t, coldR, "MatMul"), nodeByOp(t, warmR, "MatMul"); !(wm.LatencyS < cm.LatencyS) {
		t.Errorf("the GEMM after it: fill %.3g s warm, %.3g s cold; want shorter warm", wm.LatencyS, cm.LatencyS)
	}
}

// TestWarmCall: a call repeated back to back (Options.Warm) finds in L2
// what the previous call left: an Add over 4 MB operands, whose inputs and
// output fit, reads them at L2 speed (our H100's torch.add over 2^20 fp32
// elements, timed in a loop: 2.9 µs; here 10.5 µs cold, 5.5 warm), and a model
// whose weights outgrow L2 finds none of them (the physics suite's rule
// holds for it warm too). The first call is unchanged.
func TestWarmCall(t *testing.T) {
	small := newBuilder(t)
	x, y := small.Input("x", 1<<20), small.Input("y", 1<<20)
	z := small.Val("z", ir.Float32, 1<<20)
	small.Node("Add", []*ir.Value{x, y}, []*ir.Value{z})
	small.G.AddOutput(z)
	big := newBuilder(t)
	h := big.Input("h", 1, 8192)
	for i := range 8 { // 8 × 256 MB of fp32 weights: far more than any L2
		o := big.Val(fmt.Sprint("o", i), ir.Float32, 1, 8192)
		big.Node("MatMul", []*ir.Value{h, big.Weight(fmt.Sprint("w", i), 8192, 8192)}, []*ir.Value{o})
		h = o
	}
	big.G.AddOutput(h)
	for _, c := range []struct {
		name   string
		b      *builder
		faster bool
	}{{"small Add", small, true}, {"large weights", big, false}} {
		cold := c.b.analyze(Options{Runtime: testRuntime(t, "graph")})
		warm := c.b.analyze(Options{Runtime: testRuntime(t, "graph"), Warm: true})
		if cold.Warm || !warm.Warm {
			t.Errorf("%s: report.Warm %v cold, %v warm", c.name, cold.Warm, warm.Warm)
		}
		// The kernels' sum: the runtime's per-call floor hides a small one.
		sum := func(r *report.Report) (s float64) {
			for _, n := range r.Nodes {
				s += n.TimeS
			}
			return s
		}
		if got := sum(warm) < sum(cold)*0.9; got != c.faster {
			t.Errorf("%s: warm %.3g s against cold %.3g s; want faster: %v", c.name, sum(warm), sum(cold), c.faster)
		}
		if again := c.b.analyze(Options{Runtime: testRuntime(t, "graph")}); sum(again) != sum(cold) {
			t.Errorf("%s: a warm analysis changed the next cold one: %.6g s, was %.6g", c.name, sum(again), sum(cold))
		}
	}
}

// TestReadAfterWrite: a binary op reading one tensor the kernel before it
// just wrote (w bytes) and one cold one of the same size, writing w, on
// an L2 of capacity c: its own cold read and write take lines, so it
// finds the whole warm tensor up to c/2, then c − w of it, and nothing
// once it outgrows the cache; with no input marked, every read is DRAM.
func TestReadAfterWrite(t *testing.T) {
	const c = 100.0
	for _, tc := range []struct{ w, hit float64 }{{10, 10}, {50, 50}, {75, 25}, {100, 0}, {150, 0}} {
		dram, warm := ReadAfterWrite(c, []float64{tc.w, tc.w}, []bool{true, false}, 2*tc.w, tc.w)
		if want := 3*tc.w - tc.hit; math.Abs(dram-want) > 1e-9 {
			t.Errorf("w=%g: DRAM %g bytes, want %g (%g of the warm tensor from L2)", tc.w, dram, want, tc.hit)
		}
		if warm != 0 {
			t.Errorf("w=%g: coldest input %g warm, want 0 (the second is cold)", tc.w, warm)
		}
	}
	if dram, _ := ReadAfterWrite(c, []float64{10, 10}, nil, 20, 10); dram != 30 {
		t.Errorf("nothing just written: DRAM %g, want 30", dram)
	}
}

// TestDeadActivationsGiveBackTheirLines: a runtime reuses a dead
// activation's memory for the next tensor, so a call whose activations
// outgrow L2 only in sum, a few live at a time, leaves its weights there
// for the next call. A chain of Relus writes 16 times the L2's reuse
// capacity but holds two tensors at once; the GEMV before it reads a
// weight of an eighth of L2, from DRAM on the first call and from L2 when
// the call runs again back to back. Without the reclaim the chain's
// writes pushed the weight out and the warm call read it from DRAM too;
// so they did while a node priced by no rule read each link and kept its
// count from falling.
func TestDeadActivationsGiveBackTheirLines(t *testing.T) {
	b := newBuilder(t)
	elems := int64(costtest.GPU().L2ReuseBytes() / 4 / 8)
	x := b.Input("x", 1, elems)
	dot := b.Val("dot", ir.Float32, 1, 1)
	b.Node("MatMul", []*ir.Value{x, b.Weight("w", elems, 1)}, []*ir.Value{dot})
	h := b.Val("h0", ir.Float32, 1, elems)
	b.Node("Relu", []*ir.Value{x}, []*ir.Value{h})
	for i := range 128 {
		o := b.Val(fmt.Sprint("h", i+1), ir.Float32, 1, elems)
		b.Node("Relu", []*ir.Value{h}, []*ir.Value{o})
		// A node priced by no rule reads it too; its read still counts
		// down.
		u := b.Val(fmt.Sprint("u", i+1), ir.Float32, 1)
		b.Node("Unpriced", []*ir.Value{o}, []*ir.Value{u}).Domain = "test.unpriced"
		b.G.AddOutput(u)
		h = o
	}
	b.G.AddOutput(dot)
	b.G.AddOutput(h)
	level := func(warm bool) (string, float64) {
		n := b.analyze(Options{Runtime: testRuntime(t, "graph"), Warm: warm}).Nodes[0]
		return n.MemLevel, n.MemoryS
	}
	coldLevel, coldS := level(false)
	warmLevel, warmS := level(true)
	if coldLevel == "l2" || warmLevel != "l2" || !(warmS < coldS/2) {
		t.Errorf("the GEMV's weight: first call from %q (%.3g s), warm call from %q (%.3g s); want DRAM, then L2 at least twice as fast",
			coldLevel, coldS, warmLevel, warmS)
	}
}
