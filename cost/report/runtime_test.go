package report

import (
	"testing"
)

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
