package report

import (
	"math"
	"testing"
)

// TestNodeDispatchS: a node's host time per launch is one op dispatch per
// launch of its own, a driver launch for each kernel its library call
// issues itself (at least one launch stays the op's), and module_us once
// for a node called from a module's forward.
func TestNodeDispatchS(t *testing.T) {
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b)) }
	conv := NodeCost{Name: "/layer1/conv1/Conv", Launches: 4, LibraryLaunches: 3}
	if got, want := NodeDispatchS(8e-6, 20e-6, &conv), (8e-6+3*LibraryLaunchHostS+20e-6)/4; !near(got, want) {
		t.Errorf("conv with three cuDNN transposes: %g s per launch, want %g", got, want)
	}
	plain := NodeCost{Name: "Conv_0", Launches: 1}
	if got := NodeDispatchS(8e-6, 20e-6, &plain); got != 8e-6 {
		t.Errorf("unscoped single launch: %g, want the bare dispatch", got)
	}
	// A dynamo export's node: its name has no scope, its Module does.
	dynamo := NodeCost{Name: "node_conv2d", Module: "/layer1/layer1.conv1", Launches: 1}
	if got := NodeDispatchS(8e-6, 20e-6, &dynamo); !near(got, 28e-6) {
		t.Errorf("dynamo-exported module op: %g, want dispatch plus module_us", got)
	}
	// All launches claimed by the library still leave the op's own.
	odd := NodeCost{Name: "x", Launches: 2, LibraryLaunches: 5}
	if got, want := NodeDispatchS(8e-6, 0, &odd), (8e-6+LibraryLaunchHostS)/2; !near(got, want) {
		t.Errorf("library launches capped: %g, want %g", got, want)
	}
	// A GEMM library's helpers cost no host time of their own: a Linear
	// run as largek (three kernels) dispatches as one op.
	lin := NodeCost{Name: "/fc/Gemm", Launches: 3, LibraryLaunches: 2, HelperLaunches: 2}
	if got, want := NodeDispatchS(8e-6, 0, &lin), 8e-6/3; !near(got, want) {
		t.Errorf("helper launches: %g per launch, want %g", got, want)
	}
	// A runtime with no host work per kernel (a graph replay) stays at none.
	if got := NodeDispatchS(0, 0, &conv); got != 0 {
		t.Errorf("graph replay: %g, want 0", got)
	}
}

// TestScopedName: a dynamo export's node gets its module path in front of
// its name; a TorchScript name keeps its own; a node of no module stays.
func TestScopedName(t *testing.T) {
	for _, c := range []struct {
		n    NodeCost
		want string
	}{
		{NodeCost{Name: "node_conv2d", Module: "/layer1/layer1.0"}, "/layer1/layer1.0/node_conv2d"},
		{NodeCost{Name: "/layer1/conv1/Conv", Module: "/layer1/conv1"}, "/layer1/conv1/Conv"},
		{NodeCost{Name: "node_add"}, "node_add"},
	} {
		if got := c.n.ScopedName(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.n, got, c.want)
		}
	}
}
