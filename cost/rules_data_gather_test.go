package cost

import (
	"math"
	"testing"

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
	g, err := hwdb.Lookup(gpu)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := hwdb.LookupRuntime(runtime)
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

// TestEmbeddingGatherIndexSelect: under a runtime that runs PyTorch's
// kernels an embedding lookup is priced as index_select runs it (SM- and
// latency-bound, far below the bytes' DRAM time), never below its bytes;
// other runtimes keep the bytes model.
func TestEmbeddingGatherIndexSelect(t *testing.T) {
	// Vidur's A100 emb rows (fp16, F.embedding alone): 4096 tokens of
	// 8192 take 437-449 µs, 8 tokens 8 µs, 1 token 3 µs.
	big := gatherOn(t, embeddingGather(t, 4096, 32000, 8192, false), "A100-SXM4-80GB", "graph")
	if us := big.TimeS * 1e6; us < 330 || us > 480 {
		t.Errorf("4096×8192 lookup on A100: %.0f µs, Vidur measures 437-449 µs", us)
	}
	g, _ := hwdb.Lookup("A100-SXM4-80GB")
	if floor := (big.BytesRead + big.BytesWritten) / g.MemBW; big.TimeS < 4*floor {
		t.Errorf("4096×8192 lookup: %.0f µs is within 4× its bytes' DRAM time %.0f µs", big.TimeS*1e6, floor*1e6)
	}
	// The time never falls as the indices grow (PyTorch's separate kernel
	// for at most 16 indices is not priced: see cost/perf/gather.go).
	var prev float64
	for _, n := range []int64{1, 2, 4, 8, 16, 17, 24, 32, 64, 256, 1024} {
		nc := gatherOn(t, embeddingGather(t, n, 32000, 4096, false), "A100-SXM4-80GB", "graph")
		if nc.TimeS <= prev {
			t.Errorf("%d tokens: %.2f µs after %.2f µs; want growing", n, nc.TimeS*1e6, prev*1e6)
		}
		prev = nc.TimeS
	}
	// Vidur, A100, 1024 tokens of 4096: 57-63 µs.
	if us := prev * 1e6; us < 48 || us > 66 {
		t.Errorf("1024 tokens on A100: %.1f µs, Vidur measures 57-63 µs", us)
	}
	trt := gatherOn(t, embeddingGather(t, 4096, 32000, 8192, false), "A100-SXM4-80GB", "tensorrt")
	if trt.TimeS > big.TimeS/3 || trt.Bound != "memory" {
		t.Errorf("under TensorRT the lookup keeps the bytes model: %.0f µs (%s), PyTorch's %.0f µs", trt.TimeS*1e6, trt.Bound, big.TimeS*1e6)
	}
	// A scalar index (x[:, i] in PyTorch: a view) is not an index_select.
	one := gatherOn(t, embeddingGather(t, 1, 32000, 4096, false), "A100-SXM4-80GB", "graph")
	sc := gatherOn(t, embeddingGather(t, 1, 32000, 4096, true), "A100-SXM4-80GB", "graph")
	if sc.Bound == "latency" || math.Abs(sc.TimeS-one.TimeS) < 1e-9 {
		t.Errorf("scalar index priced as index_select: %.2f µs (%s)", sc.TimeS*1e6, sc.Bound)
	}
}
