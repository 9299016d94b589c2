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

// TestIntervalTextNamesTheHost: where most of a call waits on the host,
// the interval line says so (its width is then the host band's, not the
// kernels'); a device-bound call keeps the kernel-class wording, and a
// calibration in force is named instead of either.
func TestIntervalTextNamesTheHost(t *testing.T) {
	r := &report.Report{Totals: report.Totals{TimeS: 4e-3, TimeIntervalS: []float64{3e-3, 6e-3}},
		Runtime: &report.Runtime{Name: "pytorch", DispatchS: 10e-6, WaitS: 3e-3, HostBound: true}}
	if got := IntervalText(r); !strings.Contains(got, "75% of the call waits on the host's dispatch") {
		t.Errorf("host-bound: %q", got)
	}
	// A TensorRT engine's tiny call waits on its per-call work, not on
	// Python.
	trt := &report.Report{Totals: r.Totals, Runtime: &report.Runtime{Name: "tensorrt", CallS: 4e-3, WaitS: 3e-3, HostBound: true}}
	if got := IntervalText(trt); !strings.Contains(got, "75% of the call waits on the runtime's fixed per-call work") || strings.Contains(got, "Python") {
		t.Errorf("per-call bound: %q", got)
	}
	r.Runtime.WaitS = 1e-3
	if got := IntervalText(r); !strings.Contains(got, "each kernel class") || strings.Contains(got, "host") {
		t.Errorf("device-bound: %q", got)
	}
	r.Runtime.WaitS, r.Calibration = 3e-3, "calibrated on H100 (x.yaml)"
	if got := IntervalText(r); !strings.Contains(got, "calibrated on H100") || strings.Contains(got, "waits on the host") {
		t.Errorf("calibrated: %q", got)
	}
}
