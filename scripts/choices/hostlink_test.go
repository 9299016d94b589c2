package main

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/hwdb"
)

// TestHostLinkTable: a --host-link table is read one copy per row, each
// set beside the price of such a copy (perf.HostCopyS), with the best
// rate per direction and memory kind as a share of the GPU's link; a
// size that is not a number is refused naming the file. A format check:
// the rows are hand-written in a GPU run's shape.
func TestHostLinkTable(t *testing.T) {
	g, err := hwdb.Lookup("H100")
	if err != nil {
		t.Fatal(err)
	}
	write := tableWriter(t, hostLinkHeader+"\n")
	ok := write("ok.csv", "h2d,pageable,4096,0.02000\nh2d,pageable,268435456,20.00000\nd2h,pinned,268435456,5.00000\n")
	s := tableOutput(t, "H100", ok)
	t.Log("\n" + s)
	priced, _ := perf.HostCopyS(g, 268435456, perf.DefaultParams())
	for _, want := range []string{
		fmt.Sprintf("h2d pageable: best %.2f GB/s, %.2f of the link's %.2f GB/s", 268435456/20e-3/1e9, 268435456/20e-3/g.PCIeBW, g.PCIeBW/1e9),
		fmt.Sprintf("%.2f", 5e-3/priced),
		"d2h pinned: best ",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	bad := write("bad.csv", "h2d,pinned,big,1.0\n")
	if err := run(io.Discard, "H100", []string{bad}); err == nil || !strings.Contains(err.Error(), "bad.csv") {
		t.Errorf("bad size: %v", err)
	}
}
