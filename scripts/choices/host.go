package main

import (
	"fmt"
	"io"
	"strconv"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
)

// hostHeader is --host-ops' table.
const hostHeader = "op,mode,kernels,us,kernel_us"

// hostTable prints each op kind's measured host cost per eager call
// beside what the pytorch runtime charges a model of that one op for it
// (hwdb/runtimes.yaml, cost/report NodeHosts): the kind's cost
// (report.HostKindS, this very table scaled to dispatch_us), the module
// form for a module's call, and no op_call_scale (report.CallsScale: a
// call of one op is the op called back to back, as the table times it).
// The ratio is the same for every kind, this machine's host over the
// one dispatch_us is taken from; it says which side of the fitted scale
// a kind sits. Autocast rows are the functional op with its casts, which the
// eager plan prices as kernels of their own; fp16-3d rows the kind as a
// transformer calls it (16-bit, its ranks and broadcasts); block rows a
// whole module's call (a transformer layer, a ResNet bottleneck), which
// no one kind's charge prices: set beside the sum of its ops' rows, they
// say what the model's own Python adds. A row whose kernel_us is not well
// below us was not host-bound and says nothing.
func hostTable(w io.Writer, path string, recs [][]string) error {
	rt, err := hwdb.LookupRuntime("pytorch")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%-12s %-10s %7s %10s %10s %10s %8s\n", "op", "mode", "kernels", "host µs", "kernel µs", "charged µs", "ratio")
	byMode := map[string][]float64{}
	for _, r := range recs {
		us, err := strconv.ParseFloat(r[3], 64)
		if err != nil || !(us > 0) {
			return fmt.Errorf("%s: us %q is not a positive number", path, r[3])
		}
		k, err := strconv.Atoi(r[2])
		if err != nil || k < 0 {
			return fmt.Errorf("%s: kernels %q is not a count", path, r[2])
		}
		kind := r[0]
		if r[1] == "module" {
			kind += ".module"
		}
		// A block row is a whole module's call: no one kind's charge
		// prices it (set it beside the sum of its ops' rows by hand).
		var charged float64
		if r[1] != "block" {
			charged = report.HostCallS(rt.DispatchS, report.CallsScale(rt.OpCallScale, 1), kind) * 1e6
		}
		ratio := "-"
		if charged > 0 {
			ratio = fmt.Sprintf("%.2f", us/charged)
			byMode[r[1]] = append(byMode[r[1]], us/charged)
		}
		kus := r[4]
		if kus == "" {
			kus = "-"
		}
		chargedText := "-"
		if charged > 0 {
			chargedText = fmt.Sprintf("%.1f", charged)
		}
		fmt.Fprintf(w, "%-12s %-10s %7d %10.2f %10s %10s %8s\n", r[0], r[1], k, us, kus, chargedText, ratio)
	}
	for _, m := range sortedModes(byMode) {
		fmt.Fprintf(w, "%s: median measured/charged %.2f over %d op kinds (dispatch_us %g, module_us %g; op_call_scale %g charged on a model's further calls only)\n", m, median(byMode[m]), len(byMode[m]), rt.DispatchS*1e6, rt.ModuleS*1e6, rt.OpCallScale)
	}
	return nil
}

func sortedModes(m map[string][]float64) []string {
	var out []string
	for _, k := range []string{"functional", "module", "autocast", "fp16-3d"} {
		if len(m[k]) > 0 {
			out = append(out, k)
		}
	}
	return out
}
