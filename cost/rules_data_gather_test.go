package cost

import (
	"math"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/costtest"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/ir/irtest"
)

// embeddingGather is an embedding lookup: tokens ids into a vocab×hidden
// fp16 table (what F.embedding exports to).
func embeddingGather(t *testing.T, tokens, vocab, hidden int64, scalar bool) *irtest.Builder {
	b := irtest.New(t, 13)
	var ids *ir.Value
	if scalar {
		ids = b.Input("ids", ir.Int64)
	} else {
		ids = b.Input("ids", ir.Int64, tokens)
	}
	b.Output(b.Op("Gather", nil, initializer(b, "table", ir.Float16, vocab, hidden), ids))
	b.Infer()
	return b
}

func gatherOn(t *testing.T, b *irtest.Builder, gpu, runtime string) report.NodeCost {
	t.Helper()
	rt, err := hwdb.LookupRuntime(runtime)
	if err != nil {
		t.Fatal(err)
	}
	return gatherUnder(t, b, gpu, rt)
}

func gatherUnder(t *testing.T, b *irtest.Builder, gpu string, rt *hwdb.Runtime) report.NodeCost {
	t.Helper()
	g, err := hwdb.Lookup(gpu)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Analyze(b.G, b.M, g, Options{DType: "fp16", Plan: "unfused", Runtime: rt})
	if err != nil {
		t.Fatal(err)
	}
	costtest.CheckSane(t, r)
	return nodeByOp(t, r, "Gather")
}

// olderPyTorch is the graph runtime of a PyTorch before 2.8, whose
// index_select is indexSelectLargeIndex's loop (Vidur's rows).
func olderPyTorch(t *testing.T) *hwdb.Runtime {
	rt, err := hwdb.LookupRuntime("graph")
	if err != nil {
		t.Fatal(err)
	}
	rt = rt.Clone()
	rt.IndexSelectGather = 0
	return rt
}

// TestEmbeddingGatherIndexSelect: under a runtime of a PyTorch before 2.8
// an embedding lookup is priced as its index_select ran it (SM- and
// latency-bound, far below the bytes' DRAM time), never below its bytes;
// PyTorch 2.8 and later (the built-in eager runtimes) run it as a
// vectorized gather, bound by its bytes.
func TestEmbeddingGatherIndexSelect(t *testing.T) {
	old := olderPyTorch(t)
	// Vidur's A100 emb rows (fp16, F.embedding alone): 4096 tokens of
	// 8192 take 437-449 µs, 8 tokens 8 µs, 1 token 3 µs.
	big := gatherUnder(t, embeddingGather(t, 4096, 32000, 8192, false), "A100-SXM4-80GB", old)
	if us := big.TimeS * 1e6; us < 330 || us > 480 {
		t.Errorf("4096×8192 lookup on A100: %.0f µs, Vidur measures 437-449 µs", us)
	}
	g, _ := hwdb.Lookup("A100-SXM4-80GB")
	floor := (big.BytesRead + big.BytesWritten) / g.MemBW
	if big.TimeS < 4*floor {
		t.Errorf("4096×8192 lookup: %.0f µs is within 4× its bytes' DRAM time %.0f µs", big.TimeS*1e6, floor*1e6)
	}
	gather := gatherOn(t, embeddingGather(t, 4096, 32000, 8192, false), "A100-SXM4-80GB", "graph")
	if gather.TimeS < floor || gather.TimeS > 1.5*floor || gather.Bound != "memory" {
		t.Errorf("PyTorch 2.8's vectorized gather: %.0f µs (%s), its bytes' DRAM time %.0f µs", gather.TimeS*1e6, gather.Bound, floor*1e6)
	}
	// The time never falls as the indices grow (PyTorch's separate kernel
	// for at most 16 indices is not priced: see cost/perf/gather.go).
	for _, rt := range []*hwdb.Runtime{old, nil} {
		var prev float64
		for _, n := range []int64{1, 2, 4, 8, 16, 17, 24, 32, 64, 256, 1024} {
			b := embeddingGather(t, n, 32000, 4096, false)
			var nc report.NodeCost
			if rt == nil {
				nc = gatherOn(t, b, "A100-SXM4-80GB", "graph")
			} else {
				nc = gatherUnder(t, b, "A100-SXM4-80GB", rt)
			}
			if nc.TimeS <= prev {
				t.Errorf("%d tokens: %.2f µs after %.2f µs; want growing", n, nc.TimeS*1e6, prev*1e6)
			}
			prev = nc.TimeS
		}
		// Vidur, A100, 1024 tokens of 4096: 57-63 µs.
		if us := prev * 1e6; rt != nil && (us < 48 || us > 66) {
			t.Errorf("1024 tokens on A100: %.1f µs, Vidur measures 57-63 µs", us)
		}
	}
	trt := gatherOn(t, embeddingGather(t, 4096, 32000, 8192, false), "A100-SXM4-80GB", "tensorrt")
	if trt.TimeS > big.TimeS/3 || trt.Bound != "memory" {
		t.Errorf("under TensorRT the lookup keeps the bytes model: %.0f µs (%s), PyTorch's %.0f µs", trt.TimeS*1e6, trt.Bound, big.TimeS*1e6)
	}
	// A scalar index (x[:, i] in PyTorch: a view) is not an index_select.
	one := gatherUnder(t, embeddingGather(t, 1, 32000, 4096, false), "A100-SXM4-80GB", old)
	sc := gatherUnder(t, embeddingGather(t, 1, 32000, 4096, true), "A100-SXM4-80GB", old)
	if sc.Bound == "latency" || math.Abs(sc.TimeS-one.TimeS) < 1e-9 {
		t.Errorf("scalar index priced as index_select: %.2f µs (%s)", sc.TimeS*1e6, sc.Bound)
	}
}

// TestGatherTakesItsKernel: PyTorch 2.8's gather copies whole 16-byte
// vectors only where each index selects a contiguous run of them (an
// embedding table's rows, at an element size that fills vectors); a
// gather along an inner axis, or rows of 4,097 half-precision elements,
// runs the generic loop, which pays the strided loop's index arithmetic.
func TestGatherTakesItsKernel(t *testing.T) {
	rows := gatherOn(t, embeddingGather(t, 512, 32000, 4096, false), "H200-SXM-141GB", "graph")
	odd := gatherOn(t, embeddingGather(t, 512, 32000, 4097, false), "H200-SXM-141GB", "graph")
	b := irtest.New(t, 13)
	ids := b.Input("ids", ir.Int64, 512)
	b.Output(b.Op("Gather", []*ir.Attribute{ir.IntAttr("axis", 1)}, initializer(b, "table", ir.Float16, 4096, 32000), ids))
	b.Infer()
	inner := gatherOn(t, b, "H200-SXM-141GB", "graph")
	g, _ := hwdb.Lookup("H200-SXM-141GB")
	strided := perf.StridedLoopS(g, 4)
	if d := odd.TimeS - rows.TimeS; d < strided {
		t.Errorf("rows of 4,097 fp16: %.2f µs, of 4,096: %.2f µs; want the strided loop's %.2f µs more", odd.TimeS*1e6, rows.TimeS*1e6, strided*1e6)
	}
	if d := inner.TimeS - rows.TimeS; d < strided {
		t.Errorf("a gather along axis 1: %.2f µs, the rows' %.2f µs; want the strided loop's %.2f µs more", inner.TimeS*1e6, rows.TimeS*1e6, strided*1e6)
	}
}

// TestGatherNoteNamesItsKernel: under PyTorch's runtimes a lookup's note
// names the kernel it is priced as, and says so where PyTorch runs a
// slower one for a few indices; TensorRT's has none.
func TestGatherNoteNamesItsKernel(t *testing.T) {
	old := olderPyTorch(t)
	for _, c := range []struct {
		tokens, hidden int64
		rt             *hwdb.Runtime
		runtime, want  string
	}{
		{512, 4096, nil, "graph", "vectorized_gather_kernel"},
		{512, 4097, nil, "graph", "generic gather loop"},
		{8, 4096, nil, "pytorch", "indexSelectSmallIndex"},
		{512, 4096, old, "", "indexSelectLargeIndex"},
		{512, 4096, nil, "tensorrt", ""},
	} {
		b := embeddingGather(t, c.tokens, 32000, c.hidden, false)
		var nc report.NodeCost
		if c.rt != nil {
			nc = gatherUnder(t, b, "H200-SXM-141GB", c.rt)
		} else {
			nc = gatherOn(t, b, "H200-SXM-141GB", c.runtime)
		}
		if (c.want == "") != (nc.Note == "") || !strings.Contains(nc.Note, c.want) {
			t.Errorf("%d×%d under %s: note %q, want one naming %q", c.tokens, c.hidden, c.runtime, nc.Note, c.want)
		}
	}
}
