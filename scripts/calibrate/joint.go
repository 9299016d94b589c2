package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/calibrate"
	"github.com/onnxcost/onnxcost/internal/kernelrows"
)

// The joint fit (-joint) fits the time model on the fit rows of every
// measured-kernel source internal/kernelrows loads: DeepBench's training
// split (library calls in a loop, priced Isolated) and Vidur's fit shapes
// (fp16 transformer-block kernels on A100, H100, A40, priced as a plan's
// kernels without the gap between kernels: Vidur times kernel durations
// only). Held out and never fitted: DeepBench's every third row, Vidur's
// every fourth shape per (GPU, op), all our H100 rows.

// vidurPricedOn is the GPU a Vidur row is priced on where it is not the
// one kernelrows names. Vidur does not record which A100 its compute
// profiles ran on (its docs name an A100 80GB DGX and Azure's NC A100 v4,
// whose A100s are the 300 W PCIe 80GB); the rows say PCIe: the largest
// fp16 GEMMs reach 80% of dense peak, the PCIe card's measured best bf16
// GEMM (MAMF 81%; the SXM's is 87%, gpus.yaml), and the model's median
// GEMM error with the committed DeepBench parameters is 7.4% as PCIe
// against 14.7% as SXM (kernelrows' TestErrors).
var vidurPricedOn = map[string]string{"A100-SXM4-80GB": "A100-PCIe-80GB"}

// pricedOn is the hwdb name r is priced on.
func pricedOn(r kernelrows.Row) string {
	if alt, ok := vidurPricedOn[r.GPU]; ok && r.Source == kernelrows.SourceVidur {
		return alt
	}
	return r.GPU
}

// jointSamples turns the fit rows into samples; Vidur keeps every
// vidurEvery-th fit row of each (GPU, op) (its groups weigh alike
// whatever their size, so thinning only saves time).
func jointSamples(rows []kernelrows.Row, vidurEvery int) ([]calibrate.Sample, error) {
	gpus := map[string]*hwdb.GPU{}
	seen := map[string]int{}
	var out []calibrate.Sample
	for _, r := range rows {
		if r.HeldOut || kernelrows.IsOwn(r.Source) {
			continue
		}
		group := r.Source + " " + r.GPU + " " + r.Op
		if r.Source == kernelrows.SourceVidur {
			seen[group]++
			if (seen[group]-1)%max(vidurEvery, 1) != 0 {
				continue
			}
		}
		g, ok := gpus[pricedOn(r)]
		if !ok {
			var err error
			if g, err = hwdb.Lookup(pricedOn(r)); err != nil {
				return nil, fmt.Errorf("%s: %v", group, err)
			}
			gpus[pricedOn(r)] = g
		}
		out = append(out, calibrate.Sample{Group: group, MeasuredS: r.MeasuredS,
			Weight: rowWeight(r), Price: func(p perf.Params) float64 { return measuredAs(r, g, p) }})
	}
	return out, nil
}

// measuredAs prices r on g under p in the terms its source measured:
// Vidur's kernel durations without the gap; our H100 rows, timed per call
// inside a CUDA graph, with the graph's gap (kernelrows charges the
// default runtime's, a stream launch); DeepBench as kernelrows does.
func measuredAs(r kernelrows.Row, g *hwdb.GPU, p perf.Params) float64 {
	t := kernelrows.PriceWith(r, g, p)
	switch r.Source {
	case kernelrows.SourceVidur:
		return calibrate.KernelOnlyS(t)
	case kernelrows.SourceH100, kernelrows.SourceH200:
		return calibrate.KernelOnlyS(t) + perf.IdleGap(g, nil, p)
	}
	return t.TimeS
}

// rowWeight is calibrate.RowWeight for DeepBench rows (their fp16 and
// int8 operands are zeros), 1 for the others.
func rowWeight(r kernelrows.Row) float64 {
	if r.Source != kernelrows.SourceDeepBench {
		return 1
	}
	_, prec, _ := strings.Cut(r.Op, "/")
	return calibrate.RowWeight(calibrate.BenchRow{Precision: calibrate.BenchPrecision(prec)})
}

// jointTable prints the held-out error per (source, GPU, op) and per
// (source, GPU) under p, Vidur rows compared as kernel durations.
func jointTable(w io.Writer, rows []kernelrows.Row, p perf.Params) error {
	var priced []kernelrows.Priced
	for _, r := range rows {
		if !r.HeldOut {
			continue
		}
		g, err := hwdb.Lookup(pricedOn(r))
		if err != nil {
			return err
		}
		priced = append(priced, kernelrows.Priced{Row: r, PredictedS: measuredAs(r, g, p), Family: kernelrows.Family(g)})
	}
	for _, key := range []func(kernelrows.Priced) []string{
		func(x kernelrows.Priced) []string { return []string{x.Source, x.GPU, x.Op} },
		func(x kernelrows.Priced) []string { return []string{x.Source, x.GPU} },
	} {
		fmt.Fprintln(w, "| source | GPU | op | n | median abs err | P90 | median signed |")
		fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|")
		for _, s := range kernelrows.Stats(priced, key) {
			op := "all"
			if len(s.Key) > 2 {
				op = s.Key[2]
			}
			fmt.Fprintf(w, "| %s | %s | %s | %d | %.1f%% | %.1f%% | %+.1f%% |\n", s.Key[0], s.Key[1], op, s.N, 100*s.MedianAbs, 100*s.P90, 100*s.MedianSigned)
		}
		fmt.Fprintln(w)
	}
	return nil
}

// runJoint loads every source from the repository root, fits (when fit)
// and prints the held-out tables and the parameters.
func runJoint(w io.Writer, p perf.Params, fit bool, vidurEvery, evals int) (perf.Params, error) {
	rows, _, err := kernelrows.LoadAll(".")
	if err != nil {
		return p, err
	}
	if fit {
		if p.PointwiseRate <= 0 {
			// A start for a model without the pointwise limit: A100's
			// RMSNorm rows' FLOPs per SM-cycle (see timemodel.go).
			p.PointwiseRate = 5
		}
		if p.TensorPowerExp <= 0 {
			// A start: H100's MAMF (80% of peak) at FullClockPower.
			p.TensorPowerExp = 0.25
		}
		samples, err := jointSamples(rows, vidurEvery)
		if err != nil {
			return p, err
		}
		fp, loss, err := calibrate.FitSamples(samples, p, evals)
		if err != nil {
			return p, err
		}
		p = fp
		fmt.Fprintf(w, "joint training loss %.4f on %d rows\n\n", loss, len(samples))
	}
	if err := jointTable(w, rows, p); err != nil {
		return p, err
	}
	calibrate.WriteParams(w, p)
	return p, nil
}
