package main

import (
	"fmt"
	"io"
	"strconv"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/hwdb"
)

// hostLinkHeader is --host-link's table.
const hostLinkHeader = "direction,memory,bytes,ms"

// hostLinkTable prints each measured copy between host and device memory
// beside what onnxruntime's host copies are priced at (perf.HostCopyS: a
// launch and the bytes at perf.HostLinkShare of the GPU's pcie_gbps), and
// per direction and memory kind the best rate the copies reached as a
// share of the link: the pinned rows check HostLinkShare, the pageable
// ones say how much slower a NumPy input copies.
func hostLinkTable(w io.Writer, g *hwdb.GPU, path string, recs [][]string) error {
	if g.PCIeBW <= 0 {
		return fmt.Errorf("%s: %s has no pcie_gbps to price copies with", path, g.Name)
	}
	p := perf.DefaultParams()
	best := map[string]float64{}
	var order []string
	fmt.Fprintf(w, "%-3s %-8s %12s %12s %8s %12s %7s\n", "dir", "memory", "bytes", "measured µs", "GB/s", "priced µs", "ratio")
	for _, r := range recs {
		b, err := strconv.ParseFloat(r[2], 64)
		if err != nil || !(b > 0) {
			return fmt.Errorf("%s: bytes %q is not a positive number", path, r[2])
		}
		ms, err := strconv.ParseFloat(r[3], 64)
		if err != nil || !(ms > 0) {
			return fmt.Errorf("%s: ms %q is not a positive number", path, r[3])
		}
		priced, _ := perf.HostCopyS(g, b, p)
		rate := b / (ms * 1e-3)
		key := r[0] + " " + r[1]
		if _, seen := best[key]; !seen {
			order = append(order, key)
		}
		best[key] = max(best[key], rate)
		fmt.Fprintf(w, "%-3s %-8s %12.0f %12.2f %8.2f %12.2f %7.2f\n", r[0], r[1], b, ms*1e3, rate/1e9, priced*1e6, ms*1e-3/priced)
	}
	for _, k := range order {
		fmt.Fprintf(w, "%s: best %.2f GB/s, %.2f of the link's %.2f GB/s (priced at %.2f)\n", k, best[k]/1e9, best[k]/g.PCIeBW, g.PCIeBW/1e9, perf.HostLinkShare)
	}
	return nil
}
