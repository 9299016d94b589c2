package cost

import (
	"math"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// TestORTCUDAGraph: under onnxruntime-cudagraph a call replays the
// session's kernels: no host work per node (a host node's included),
// the in-graph gap instead of a stream launch's, the same kernels as
// onnxruntime-iobinding, and so a shorter call; a model with control
// flow or with copies between host and device inside the call is
// refused with the reason, as onnxruntime's session creation fails.
func TestORTCUDAGraph(t *testing.T) {
	gpu := testGPU(t, "A100-SXM4-80GB")
	build := func() *builder {
		b := newBuilder(t)
		x := b.Input("x", 32, 256)
		h := b.Val("h", ir.Float32, 32, 256)
		y := b.Val("y", ir.Float32, 32, 256)
		s := b.Val("s", ir.Int64, 2)
		b.Node("Relu", []*ir.Value{x}, []*ir.Value{h})
		shape := b.Node("Shape", []*ir.Value{h}, []*ir.Value{s})
		b.Node("Reshape", []*ir.Value{h, s}, []*ir.Value{y})
		b.G.AddOutput(y)
		b.G.Session = &ir.Session{Host: map[*ir.Value]bool{s: true}}
		_ = shape
		return b
	}
	// priced is a call under one runtime: its latency, kernel gap, host
	// work over the nodes, host nodes and notes.
	type priced struct {
		latency, gap, host float64
		onHost             int
		notes              string
	}
	price := func(name string) priced {
		t.Helper()
		b := build()
		r, err := Analyze(b.G, b.M, gpu, Options{Runtime: testRuntime(t, name)})
		if err != nil {
			t.Fatal(err)
		}
		p := priced{latency: r.Runtime.LatencyS, gap: r.Runtime.KernelGapS, notes: strings.Join(r.Runtime.Notes, "\n")}
		for _, n := range r.Nodes {
			p.host += n.HostS
			if n.OnHost {
				p.onHost++
			}
		}
		return p
	}
	boundP, replayP := price("onnxruntime-iobinding"), price("onnxruntime-cudagraph")
	bound, boundGap, boundHost := boundP.latency, boundP.gap, boundP.host
	replay, gap, host, onHost, notes := replayP.latency, replayP.gap, replayP.host, replayP.onHost, replayP.notes
	if host != 0 || boundHost <= 0 {
		t.Errorf("host work per call: replay %.3g s, iobinding %.3g s: want none on replay, some node by node", host, boundHost)
	}
	if onHost != 1 || !strings.Contains(notes, "1 host node(s) ran at the capture") {
		t.Errorf("%d host nodes, notes %q: want the Shape on the host, said to run at capture", onHost, notes)
	}
	if math.Abs(gap/boundGap-0.53) > 1e-9 {
		t.Errorf("kernel gap %.3g s against a stream launch's %.3g s: want 0.53 of it", gap, boundGap)
	}
	if !(replay < bound) {
		t.Errorf("a replayed call takes %.4g s, a bound node-by-node call %.4g s: want the replay faster", replay, bound)
	}

	// onnxruntime refuses to capture a model whose call copies between
	// host and device (a memcpy node) ...
	b := build()
	var relu *ir.Node
	for _, n := range b.G.Nodes {
		if n.OpType == "Relu" {
			relu = n
		}
	}
	b.G.Session.Uploads = map[*ir.Node][]*ir.Value{relu: {relu.Inputs[0]}}
	_, err := Analyze(b.G, b.M, gpu, Options{Runtime: testRuntime(t, "onnxruntime-cudagraph")})
	if err == nil || !strings.Contains(err.Error(), "1 copy: x to the GPU for") {
		t.Errorf("a call with a memcpy: error %v, want a refusal naming the copy", err)
	}
	if _, err := Analyze(b.G, b.M, gpu, Options{Runtime: testRuntime(t, "onnxruntime-iobinding")}); err != nil {
		t.Errorf("onnxruntime-iobinding refuses the same model: %v", err)
	}

	// ... or has control flow.
	c, _ := ifOnCapturedInput(t)
	_, err = Analyze(c.G, c.M, gpu, Options{Runtime: testRuntime(t, "onnxruntime-cudagraph")})
	if err == nil || !strings.Contains(err.Error(), "control flow (1 node: If") {
		t.Errorf("a model with an If: error %v, want a refusal naming it", err)
	}
}
