// Command gemmchoices sets the kernels cuBLAS ran for a sweep of products
// (scripts/measure_gpu.py --gemm-choices) beside the plan the time model
// prices each product with (perf.ChooseGEMM: the fastest tile and K split
// it knows), and the measured per-call time beside the priced one: where
// the library's choice and the model's part, and what it costs.
//
//	go run ./scripts/gemmchoices -gpu H200 gemm_choices.csv
//
// The priced time is the kernel's in a CUDA-graph replay, its operands
// not resident in L2 (a first call; the sweep's back-to-back calls find
// small operands in L2, so its small products read slow here).
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/measured"
)

const header = "dtype,batch,m,n,k,ms,kernel,grid,block,regs,smem,us"

func main() {
	fs := flag.NewFlagSet("gemmchoices", flag.ContinueOnError)
	gpuName := fs.String("gpu", "", "the GPU the sweep ran on (hwdb name or alias)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if err := run(os.Stdout, *gpuName, fs.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "gemmchoices:", err)
		os.Exit(2)
	}
}

// product is one swept product: its measured time and the kernels cuBLAS ran.
type product struct {
	dtype          string
	batch, m, n, k int64
	ms             float64
	kernels, grids []string
}

func run(w io.Writer, gpuName string, files []string) error {
	if gpuName == "" || len(files) != 1 {
		return fmt.Errorf("usage: gemmchoices -gpu GPU FILE.csv")
	}
	g, err := hwdb.Lookup(gpuName)
	if err != nil {
		return err
	}
	ps, err := read(files[0])
	if err != nil {
		return err
	}
	rt, err := hwdb.LookupRuntime("graph")
	if err != nil {
		return err
	}
	o := perf.PlanOptions()
	o.Runtime = rt
	fmt.Fprintf(w, "%-5s %6s %6s %6s %5s %10s %10s %8s  %-24s  %s\n", "dtype", "m", "n", "k", "batch", "measured", "priced", "error", "model plan", "cuBLAS kernels (grid)")
	var errs []float64
	for _, p := range ps {
		pr := perf.ResolvePrecision(g, perf.WantedPrecision(p.dtype, perf.ClassGEMM))
		eb := 4.0
		if p.dtype == "fp16" {
			eb = 2
		}
		k := perf.GEMMKernel(p.m, p.n, p.k, p.batch, pr, eb, eb)
		kt := perf.EstimateKernel(g, k, o)
		priced := kt.TimeS - kt.LaunchS // the kernel, as a replay's per-call time has it less the gap
		plan := "GEMV"
		if pl, ok := perf.ChooseGEMM(g, k, o); ok {
			plan = fmt.Sprintf("%dx%d split %d, %.0f CTAs", pl.TileM, pl.TileN, pl.Split, pl.CTAs)
			if pl.Passes > 1 {
				plan += fmt.Sprintf(" ×%d", pl.Passes)
			}
		}
		e := priced/(p.ms*1e-3) - 1
		errs = append(errs, math.Abs(e))
		var ks []string
		for i, name := range p.kernels {
			ks = append(ks, fmt.Sprintf("%s (%s)", shortName(name), p.grids[i]))
		}
		fmt.Fprintf(w, "%-5s %6d %6d %6d %5d %8.2fus %8.2fus %+7.1f%%  %-24s  %s\n", p.dtype, p.m, p.n, p.k, p.batch,
			p.ms*1e3, priced*1e6, 100*e, plan, strings.Join(ks, ", "))
	}
	slices.Sort(errs)
	fmt.Fprintf(w, "%d products on %s: median |error| %.1f%%\n", len(ps), g.Name, 100*errs[len(errs)/2])
	return nil
}

// read groups the sweep's rows (one per kernel) into products, in order.
func read(path string) ([]product, error) {
	recs, err := measured.Read(path, header)
	if err != nil {
		return nil, err
	}
	var ps []product
	for _, r := range recs {
		var dims [4]int64
		for i, s := range r[1:5] {
			d, err := strconv.ParseInt(s, 10, 64)
			if err != nil || d <= 0 {
				return nil, fmt.Errorf("%s: bad size %q", path, s)
			}
			dims[i] = d
		}
		ms, err := strconv.ParseFloat(r[5], 64)
		if err != nil || !(ms > 0) {
			return nil, fmt.Errorf("%s: bad time %q", path, r[5])
		}
		p := product{dtype: r[0], batch: dims[0], m: dims[1], n: dims[2], k: dims[3], ms: ms}
		if last := len(ps) - 1; last >= 0 && ps[last].dtype == p.dtype && ps[last].batch == p.batch &&
			ps[last].m == p.m && ps[last].n == p.n && ps[last].k == p.k {
			ps[last].kernels, ps[last].grids = append(ps[last].kernels, r[6]), append(ps[last].grids, r[7])
			continue
		}
		p.kernels, p.grids = []string{r[6]}, []string{r[7]}
		ps = append(ps, p)
	}
	return ps, nil
}

// shortName is a kernel's name without its template arguments and
// parameter list: "sgemm_largek_lds64", "sm80_xmma_gemm_f32f32_..._tilesize32x32x8_...".
func shortName(s string) string {
	s = strings.TrimPrefix(s, "void ")
	if i := strings.IndexAny(s, "<("); i > 0 {
		s = s[:i]
	}
	return s
}
