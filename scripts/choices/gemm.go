package main

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/measured"
)

// gemmHeader is --gemm-choices' table; linearHeader --linear-choices',
// whose products add a bias (F.linear) and read their weights cold;
// layoutHeader --layouts', each product timed as A·B and as A·Bᵀ.
const (
	gemmHeader   = "dtype,batch,m,n,k,ms,kernel,grid,block,regs,smem,us"
	linearHeader = "dtype,batch,m,n,k,bias,ms,kernel,grid,block,regs,smem,us"
	layoutHeader = "dtype,batch,m,n,k,layout,ms,kernel,grid,block,regs,smem,us"
)

// productTable says which of the three tables a file is.
type productTable int

const (
	matmulTable productTable = iota // --gemm-choices: torch.matmul, A·B
	linearTable                     // --linear-choices: F.linear, A·Bᵀ
	layoutTable                     // --layouts: a layout column, nn or tn
)

// product is one swept product: its measured time and the kernels cuBLAS ran.
type product struct {
	dtype          string
	batch, m, n, k int64
	// bias marks a product with a bias epilogue (a Linear's), priced as
	// the model prices a Gemm with its C input: one FLOP per output beyond
	// the product's.
	bias bool
	// transposed marks A·Bᵀ over B stored [N, K] (cuBLAS "TN"): F.linear's
	// weight, priced as perf.Kernel.TransposedB.
	transposed     bool
	ms             float64
	kernels, grids []string
}

// gemmTable prints each product of a --gemm-choices table beside the
// model's plan and price.
func gemmTable(w io.Writer, g *hwdb.GPU, path string, recs [][]string, kind productTable) error {
	ps, err := readProducts(path, recs, kind)
	if err != nil {
		return err
	}
	o, err := replayOptions()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%-5s %6s %6s %6s %5s %10s %10s %8s  %-24s  %s\n", "dtype", "m", "n", "k", "batch", "measured", "priced", "error", "model plan", "cuBLAS kernels (grid)")
	var errs []float64
	priced := make([]float64, len(ps))
	for i, p := range ps {
		pr := perf.ResolvePrecision(g, perf.WantedPrecision(p.dtype, perf.ClassGEMM))
		eb := 4.0
		if p.dtype == "fp16" {
			eb = 2
		}
		k := perf.GEMMKernel(p.m, p.n, p.k, p.batch, pr, eb, eb)
		k.TransposedB = p.transposed
		if p.bias {
			k.FLOPs += float64(p.m) * float64(p.n) * float64(p.batch)
		}
		kt := perf.EstimateKernel(g, k, o)
		priced[i] = kt.TimeS - kt.LaunchS // the kernel, as a replay's per-call time has it less the gap
		plan := "GEMV"
		if pl, ok := perf.ChooseGEMM(g, k, o); ok {
			plan = fmt.Sprintf("%dx%d split %d, %.0f CTAs", pl.TileM, pl.TileN, pl.Split, pl.CTAs)
			if pl.Passes > 1 {
				plan += fmt.Sprintf(" ×%d", pl.Passes)
			}
		}
		if p.transposed {
			plan += ", A·Bᵀ"
		}
		e := priced[i]/(p.ms*1e-3) - 1
		errs = append(errs, math.Abs(e))
		var ks []string
		for i, name := range p.kernels {
			ks = append(ks, fmt.Sprintf("%s (%s)", measured.KernelName(name), p.grids[i]))
		}
		fmt.Fprintf(w, "%-5s %6d %6d %6d %5d %8.2fus %8.2fus %+7.1f%%  %-24s  %s\n", p.dtype, p.m, p.n, p.k, p.batch,
			p.ms*1e3, priced[i]*1e6, 100*e, plan, strings.Join(ks, ", "))
	}
	fmt.Fprintf(w, "%d products on %s: median |error| %.1f%%\n", len(ps), g.Name, 100*median(errs))
	if kind == layoutTable {
		layoutRatios(w, ps, priced)
	}
	return nil
}

// layoutRatios prints, per dtype, the median over a --layouts table's
// products of A·Bᵀ's time over A·B's, measured and priced (the model's
// perf.TransposedBCost on a CUDA-core path, 1 on a tensor-core one).
func layoutRatios(w io.Writer, ps []product, priced []float64) {
	type key struct {
		dtype          string
		batch, m, n, k int64
	}
	nn := map[key]int{}
	for i, p := range ps {
		if !p.transposed {
			nn[key{p.dtype, p.batch, p.m, p.n, p.k}] = i
		}
	}
	measuredR, pricedR := map[string][]float64{}, map[string][]float64{}
	var dtypes []string
	for i, p := range ps {
		j, ok := nn[key{p.dtype, p.batch, p.m, p.n, p.k}]
		if !p.transposed || !ok {
			continue
		}
		if _, seen := measuredR[p.dtype]; !seen {
			dtypes = append(dtypes, p.dtype)
		}
		measuredR[p.dtype] = append(measuredR[p.dtype], p.ms/ps[j].ms)
		pricedR[p.dtype] = append(pricedR[p.dtype], priced[i]/priced[j])
	}
	for _, dt := range dtypes {
		fmt.Fprintf(w, "%s: A·Bᵀ over A·B, median of %d pairs: measured %.3f, priced %.3f\n", dt, len(measuredR[dt]), median(measuredR[dt]), median(pricedR[dt]))
	}
}

// readProducts groups the sweep's rows (one per kernel) into products,
// in order; a --linear-choices or --layouts table has a bias or layout
// column after k.
func readProducts(path string, recs [][]string, kind productTable) ([]product, error) {
	var ps []product
	for _, r := range recs {
		dims, err := positive(path, r[1:5])
		if err != nil {
			return nil, err
		}
		p := product{dtype: r[0], batch: dims[0], m: dims[1], n: dims[2], k: dims[3]}
		switch kind {
		case linearTable:
			p.bias, p.transposed = r[5] == "1", true
		case layoutTable:
			if r[5] != "nn" && r[5] != "tn" {
				return nil, fmt.Errorf("%s: layout %q is not nn or tn", path, r[5])
			}
			p.transposed = r[5] == "tn"
		}
		if kind != matmulTable {
			r = append(r[:5:5], r[6:]...)
		}
		if p.ms, err = millis(path, r[5]); err != nil {
			return nil, err
		}
		if last := len(ps) - 1; last >= 0 && ps[last].dtype == p.dtype && ps[last].batch == p.batch &&
			ps[last].m == p.m && ps[last].n == p.n && ps[last].k == p.k && ps[last].bias == p.bias &&
			ps[last].transposed == p.transposed {
			ps[last].kernels, ps[last].grids = append(ps[last].kernels, r[6]), append(ps[last].grids, r[7])
			continue
		}
		p.kernels, p.grids = []string{r[6]}, []string{r[7]}
		ps = append(ps, p)
	}
	return ps, nil
}
