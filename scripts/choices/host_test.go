package main

import (
	"io"
	"strings"
	"testing"
)

// TestHostTable: a --host-ops table is read one op kind per row, each set
// beside the pytorch runtime's charge (dispatch_us for a kernel, module_us
// more for a module's call, nothing for a view), with a median ratio per
// mode; a time that is not a number is refused naming the file. A format
// check: the rows are hand-written in a GPU run's shape.
func TestHostTable(t *testing.T) {
	write := tableWriter(t, hostHeader+"\n")
	ok := write("ok.csv", "add,functional,1,6.00,2.10\nlinear,module,1,42.00,3.00\nview,functional,0,1.00,\nlinear,autocast,1,24.00,\n")
	s := tableOutput(t, "H100", ok)
	t.Log("\n" + s)
	for _, want := range []string{"functional: median measured/charged 0.75 over 1 op kinds", "module: median measured/charged 1.50", "autocast: median measured/charged 3.00", "28.0"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	bad := write("bad.csv", "add,functional,1,fast,\n")
	if err := run(io.Discard, "H100", []string{bad}); err == nil || !strings.Contains(err.Error(), "bad.csv") {
		t.Errorf("bad time: %v", err)
	}
}
