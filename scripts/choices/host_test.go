package main

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
)

// TestHostTable: a --host-ops table is read one op kind per row, each set
// beside the pytorch runtime's charge for a model of that one op (the
// kind's host cost, no op_call_scale: report.CallsScale; the module form
// for a module's call, a view's too), with
// a median ratio per mode; a time that is not a number is refused naming
// the file. A format check: the rows are hand-written in a GPU run's
// shape.
func TestHostTable(t *testing.T) {
	rt, err := hwdb.LookupRuntime("pytorch")
	if err != nil {
		t.Fatal(err)
	}
	charge := func(kind string) float64 { return report.HostKindS(rt.DispatchS, kind) * 1e6 }
	write := tableWriter(t, hostHeader+"\n")
	ok := write("ok.csv", "add,functional,1,6.00,2.10\nlinear,module,1,42.00,3.00\nview,functional,0,1.00,\nlinear,autocast,1,24.00,\n"+
		"linear,fp16-3d,1,30.00,\nbert_layer,block,17,400.00,60.00\n")
	s := tableOutput(t, "H100", ok)
	t.Log("\n" + s)
	// the upper median of the two (main.go median)
	functional := max(6/charge("add"), 1/charge("view"))
	for _, want := range []string{
		fmt.Sprintf("functional: median measured/charged %.2f over 2 op kinds", functional),
		fmt.Sprintf("module: median measured/charged %.2f", 42/charge("linear.module")),
		fmt.Sprintf("autocast: median measured/charged %.2f", 24/charge("linear")),
		fmt.Sprintf("%.1f", charge("linear.module")),
		fmt.Sprintf("fp16-3d: median measured/charged %.2f over 1 op kinds", 30/charge("linear")),
		"bert_layer   block           17     400.00      60.00          -        -",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	bad := write("bad.csv", "add,functional,1,fast,\n")
	if err := run(io.Discard, "H100", []string{bad}); err == nil || !strings.Contains(err.Error(), "bad.csv") {
		t.Errorf("bad time: %v", err)
	}
}
