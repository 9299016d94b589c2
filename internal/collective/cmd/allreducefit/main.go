// Command allreducefit fits the all-reduce model (cost/perf AllReduceFit)
// to the NCCL timings in internal/collective/testdata and prints the
// hold-out error of the model it replaces, of the committed parameters
// and of the refit, then the refit as Go.
//
//	go run ./internal/collective/cmd/allreducefit [-data DIR] [-shape ring|tree]
package main

import (
	"flag"
	"fmt"
	"os"
	"sort"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/internal/collective"
)

func main() {
	data := flag.String("data", "internal/collective/testdata", "data folder (the layout of shared/data)")
	shape := flag.String("shape", "ring", "latency growth with N: ring (N−1) or tree (log2 N)")
	flag.Parse()
	if err := run(*data, collective.Shape(*shape)); err != nil {
		fmt.Fprintln(os.Stderr, "allreducefit:", err)
		os.Exit(1)
	}
}

func run(dir string, s collective.Shape) error {
	rows, err := collective.Load(dir)
	if err != nil {
		return err
	}
	nv, err := collective.Fit(rows, collective.NVLink, s)
	if err != nil {
		return err
	}
	pc, err := collective.Fit(rows, collective.PCIe, s)
	if err != nil {
		return err
	}
	train := 0
	for _, r := range rows {
		if !r.Holdout {
			train++
		}
	}
	fmt.Printf("%d rows, %d trained, %d held out; shape %s\n\n", len(rows), train, len(rows)-train, s)
	models := []struct {
		name string
		m    collective.Model
	}{
		{"before (link BW + 8 µs)", collective.Before},
		{"committed", collective.Fitted(perf.AllReduceNVLink, perf.AllReducePCIe, collective.Ring)},
		{"refit", collective.Fitted(nv, pc, s)},
	}
	sets := []struct {
		name string
		keep func(collective.Row) bool
	}{
		{"hold-out, all", func(r collective.Row) bool { return r.Holdout }},
		{"hold-out, nvlink", func(r collective.Row) bool { return r.Holdout && r.Kind == collective.NVLink }},
		{"hold-out, pcie", func(r collective.Row) bool { return r.Holdout && r.Kind == collective.PCIe }},
		{"hold-out, ≤ 1 MiB", func(r collective.Row) bool { return r.Holdout && r.Bytes <= 1<<20 }},
		{"training", func(r collective.Row) bool { return !r.Holdout }},
	}
	fmt.Printf("%-20s %-26s %6s %8s %8s\n", "rows", "model", "n", "median", "P90")
	for _, set := range sets {
		for _, m := range models {
			e, err := collective.Errors(rows, m.m, set.keep)
			if err != nil {
				return err
			}
			fmt.Printf("%-20s %-26s %6d %7.1f%% %7.1f%%\n", set.name, m.name, len(e), 100*collective.Quantile(e, 0.5), 100*collective.Quantile(e, 0.9))
		}
	}
	groups := map[string]bool{}
	for _, r := range rows {
		groups[r.Group()] = true
	}
	var names []string
	for g := range groups {
		names = append(names, g)
	}
	sort.Strings(names)
	fmt.Printf("\nhold-out per series: median |error| before → refit\n")
	for _, g := range names {
		keep := func(r collective.Row) bool { return r.Holdout && r.Group() == g }
		b, _ := collective.Errors(rows, collective.Before, keep)
		a, _ := collective.Errors(rows, collective.Fitted(nv, pc, s), keep)
		fmt.Printf("  %-78s %4d  %6.1f%% → %5.1f%%\n", g, len(a), 100*collective.Quantile(b, 0.5), 100*collective.Quantile(a, 0.5))
	}
	fmt.Printf("\nAllReduceNVLink = perf.AllReduceFit{Alpha0S: %.3g, Alpha1S: %.3g, Fraction: [3]float64{%.3f, %.3f, %.3f}}\n", nv.Alpha0S, nv.Alpha1S, nv.Fraction[0], nv.Fraction[1], nv.Fraction[2])
	fmt.Printf("AllReducePCIe   = perf.AllReduceFit{Alpha0S: %.3g, Alpha1S: %.3g, Fraction: [3]float64{%.3f, %.3f, %.3f}}\n", pc.Alpha0S, pc.Alpha1S, pc.Fraction[0], pc.Fraction[1], pc.Fraction[2])
	return nil
}
