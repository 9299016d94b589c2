package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/hwdb"
)

// powerHeader is --power's table.
const powerHeader = "op,dtype,shape,ms,power_w,clock_mhz"

// powerTable prints each kernel of a --power table beside the power
// model's draw and clock for it (perf.UnderControl at the default limit,
// as a graph replay runs it: what hwdb's mem_pj_per_byte and the busy-SM
// rule were set from rests on these rows).
func powerTable(w io.Writer, g *hwdb.GPU, path string, recs [][]string) error {
	o, err := replayOptions()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%-6s %-5s %-20s %10s %10s %8s %8s %8s %6s %6s\n", "op", "dtype", "shape", "measured", "priced", "error", "W meas", "W model", "MHz", "model")
	var errs, implied []float64
	for _, r := range recs {
		k, err := powerKernel(g, path, r[0], r[1], r[2])
		if err != nil {
			return err
		}
		ms, err := millis(path, r[3])
		if err != nil {
			return err
		}
		pk := perf.UnderControl(g, k, o, perf.PowerControl{})
		line := fmt.Sprintf("%-6s %-5s %-20s %8.3fms %8.3fms %+7.1f%%", r[0], r[1], r[2], ms, pk.TimeS*1e3, 100*(pk.TimeS/(ms*1e-3)-1))
		if watts, err := strconv.ParseFloat(r[4], 64); err == nil && watts > 0 {
			e := pk.PowerW/watts - 1
			errs = append(errs, math.Abs(e))
			line += fmt.Sprintf(" %7.0fW %7.0fW %6s %6.0f  %+.1f%%", watts, pk.PowerW, r[5], pk.ClockMHz, 100*e)
			if k.Class == perf.ClassElementwise {
				// What the stream says hwdb's mem_pj_per_byte should be:
				// its draw above idle over the bytes it moved a second.
				implied = append(implied, (watts-perf.IdleW(g))/(k.Bytes/(ms*1e-3))*1e12)
			}
		} else {
			line += fmt.Sprintf(" %8s %7.0fW %6s %6.0f", "-", pk.PowerW, r[5], pk.ClockMHz)
		}
		fmt.Fprintln(w, line)
	}
	if len(errs) > 0 {
		fmt.Fprintf(w, "%d kernels with power on %s: median |power error| %.1f%%\n", len(errs), g.Name, 100*median(errs))
		for _, e := range implied {
			fmt.Fprintf(w, "a DRAM stream implies %.0f pJ/B above the %g W idle (hwdb mem_pj_per_byte: %g; 0 = the TDP share)\n", e, perf.IdleW(g), g.MemPJPerByte)
		}
	} else {
		fmt.Fprintf(w, "%d kernels on %s: no power readings (a CPU dry run, or a driver without them)\n", len(recs), g.Name)
	}
	return nil
}

// powerKernel is the kernel a --power row ran: an Add of two vectors of
// n (read both, write one), a MatMul MxNxK, or a Conv NxCxHxWxKxR
// (stride 1, padded to keep the size), in the row's precision.
func powerKernel(g *hwdb.GPU, path, op, dtype, shape string) (perf.Kernel, error) {
	dims, err := positive(path, strings.Split(shape, "x"))
	if err != nil {
		return perf.Kernel{}, err
	}
	eb := 4.0
	if dtype == "fp16" {
		eb = 2
	}
	switch {
	case op == "Add" && len(dims) == 1:
		n := float64(dims[0])
		pr := perf.ResolvePrecision(g, perf.WantedPrecision(dtype, perf.ClassElementwise))
		return perf.Kernel{Class: perf.ClassElementwise, Precision: pr, FLOPs: n, Bytes: 3 * eb * n, WorkingSet: 3 * eb * n, ElemBytes: eb, Launches: 1}, nil
	case op == "MatMul" && len(dims) == 3:
		pr := perf.ResolvePrecision(g, perf.WantedPrecision(dtype, perf.ClassGEMM))
		return perf.GEMMKernel(dims[0], dims[1], dims[2], 1, pr, eb, eb), nil
	case op == "Conv" && len(dims) == 6:
		pr := perf.ResolvePrecision(g, perf.WantedPrecision(dtype, perf.ClassConv))
		geom := perf.ConvGeom{N: dims[0], C: dims[1], H: dims[2], W: dims[3], K: dims[4], R: dims[5], S: dims[5],
			PadH: dims[5] / 2, PadW: dims[5] / 2, StrideH: 1, StrideW: 1}
		return perf.ConvKernel(geom, pr, eb, eb), nil
	}
	return perf.Kernel{}, fmt.Errorf("%s: unknown kernel %s %s", path, op, shape)
}
