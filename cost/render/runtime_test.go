package render

import (
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
)

// TestRuntimeLineHost: the header says how the host was priced: per
// kernel at dispatch_us, or by op kind (an eager profile's op_call_scale)
// with the bare add's cost, so a reader of an eager estimate does not
// take dispatch_us for every op's; a graph replay has none.
func TestRuntimeLineHost(t *testing.T) {
	r := &report.Report{Runtime: &report.Runtime{Name: "onnxruntime", DispatchS: 5e-6, HostS: 1e-3, DeviceS: 2e-3}}
	if got := RuntimeLine(r); !strings.Contains(got, "host dispatch 5.00 µs/kernel") {
		t.Errorf("per-kernel dispatch: %q", got)
	}
	r.Runtime = &report.Runtime{Name: "pytorch", DispatchS: 8e-6, OpCallScale: 1.35, HostS: 3e-3, DeviceS: 2e-3, HostBound: true}
	if got := RuntimeLine(r); !strings.Contains(got, "host calls by op kind (a bare add 10.8 µs") || strings.Contains(got, "/kernel") || !strings.Contains(got, "(host-bound)") {
		t.Errorf("by op kind: %q", got)
	}
	r.Runtime = &report.Runtime{Name: "graph"}
	if got := RuntimeLine(r); !strings.Contains(got, "no host dispatch") {
		t.Errorf("graph replay: %q", got)
	}
}
