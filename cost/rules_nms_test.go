package cost

import (
	"math"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// TestNMSRule: detection exports (ssdlite, Faster R-CNN, RetinaNet) end in
// NonMaxSuppression; it must be costed, not listed as unsupported.
func TestNMSRule(t *testing.T) {
	const B, C, N, maxOut = 2, 3, 100, 10
	b := newBuilder(t)
	boxes := b.Input("boxes", B, N, 4)
	scores := b.Input("scores", B, C, N)
	limit := b.Ints("max_out", maxOut)
	sel, err := b.G.NewValue("selected")
	if err != nil {
		t.Fatal(err)
	}
	sel.DType, sel.Shape = ir.Int64, ir.RankedShape(ir.S("?nms_1"), ir.D(3))
	b.G.AddOutput(sel)
	b.Node("NonMaxSuppression", []*ir.Value{boxes, scores, limit}, []*ir.Value{sel})
	r := b.analyze(Options{})
	if len(r.UnsupportedOps) != 0 {
		t.Fatalf("unsupported_ops = %+v", r.UnsupportedOps)
	}
	n := nodeByOp(t, r, "NonMaxSuppression")
	perBox := float64(nmsAreaFLOPs + 1)        // area + score compare
	sortCmp := N * math.Log2(N)                // sort the candidates
	iou := float64(N*(N-1)/2) * nmsIoUFLOPs    // every pair, upper bound
	want := B * C * (N*perBox + sortCmp + iou) // per (batch, class)
	if math.Abs(n.FLOPs-want) > 1e-6*want {
		t.Errorf("flops = %v, want %v", n.FLOPs, want)
	}
	wantW := float64(B * C * maxOut * 3 * 8) // kept (batch, class, box) int64 triples
	if n.BytesWritten != wantW {
		t.Errorf("bytes written = %v, want %v", n.BytesWritten, wantW)
	}
	wantR := float64((B*N*4+B*C*N)*4 + 8) // float32 boxes and scores, one int64
	if n.BytesRead != wantR {
		t.Errorf("bytes read = %v, want %v", n.BytesRead, wantR)
	}
}
