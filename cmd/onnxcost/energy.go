package main

import (
	"io"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/energy"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/outfile"
	"github.com/onnxcost/onnxcost/pipeline"
	"github.com/onnxcost/onnxcost/viz"
	"github.com/spf13/cobra"
)

func init() { register("energy", newEnergyCmd) }

func newEnergyCmd(stdout, stderr io.Writer) *cobra.Command {
	var f costFlags
	var caps, clocks, format, out string
	c := &cobra.Command{
		Use: "energy MODEL --gpu NAME [--power-cap LIST | --sm-clock LIST]", Example: "  onnxcost energy zoo:lstm-ptb --gpu V100 --batch 20\n  onnxcost energy zoo:resnet50 --gpu V100 --batch 64 --sm-clock 900,1200,1530",
		Short: "Time, power, energy-to-solution and energy-delay product across power caps or SM clocks",
		Long: `energy costs the model once per power cap (nvidia-smi -pl) or SM clock
lock (nvidia-smi -lgc) and prints, per setting, the time of one inference
(with --train: of one training step), the average board power, the energy
to solution and the energy-delay product (energy × time). The rows of least
energy and least EDP are marked. Δ is relative to the GPU's default
setting (power limit at TDP, no clock lock), priced even when no row
lists it. With --train --samples N each row also prices an epoch of N
samples: ceil(N / (batch × grad-accum × data-parallel)) optimizer steps.

Under a cap every kernel settles at the highest SM clock at which its own
modelled power fits: compute-bound kernels slow about as 1/clock,
memory-bound ones barely (DRAM stays saturated down to about half the boost
clock), launch-bound ones not at all.

LIST is a comma list (150,200,250) or a range LO..HI[:STEP] (150..300:25).
By default the caps run from the GPU's minimum power limit to its TDP in
25 W steps.

  onnxcost energy zoo:resnet50 --gpu V100 --batch 64 -o r50-energy.svg
  onnxcost energy zoo:lstm-ptb --gpu V100 --sm-clock 600..1530:100 --format csv
  onnxcost energy zoo:resnet50 --gpu V100 --batch 64 --train --samples 1281167`,
		Args: exactArgs(1, "MODEL"),
		RunE: func(c *cobra.Command, args []string) error {
			if err := checkFormat(format, "text", "json", "csv"); err != nil {
				return err
			}
			if caps != "" && clocks != "" {
				return usageErr("--power-cap and --sm-clock are alternatives: sweep one of them")
			}
			if out != "" {
				if _, err := outFormat(out, "svg", "png", "pdf"); err != nil {
					return err
				}
			}
			if err := refuseOutputs(f.inputs(args[0]), outfile.Target{Flag: "-o", Path: out}); err != nil {
				return err
			}
			f.dumpTo = stderr
			res, err := runEnergy(args[0], &f, caps, clocks)
			if err != nil {
				return err
			}
			printWarnings(stderr, res.Warnings)
			if out != "" {
				if err := writeChart(out, func(format string) ([]byte, error) { return viz.EnergyResultChart(res, format) }); err != nil {
					return err
				}
			}
			return writeAs(stdout, format, res, energy.WriteCSV, energy.WriteText)
		},
	}
	f.addBase(c)
	f.addWarm(c)
	f.addSamples(c)
	c.Flags().StringVar(&caps, "power-cap", "", "power caps in watts: `LIST` (150,200,250 or 150..300:25); default: the GPU's minimum power limit to its TDP in 25 W steps")
	c.Flags().StringVar(&clocks, "sm-clock", "", "SM clock locks in MHz instead of caps: `LIST` (600,900,1200 or 600..1500:100)")
	c.Flags().StringVar(&format, "format", "text", "output format: text|json|csv")
	c.Flags().StringVarP(&out, "out", "o", "", "draw time and energy against the setting to `FILE`.svg|png|pdf")
	return c
}

// checkPowerControl refuses a cap or clock the GPU cannot be set to.
func checkPowerControl(g *hwdb.GPU, c perf.PowerControl) error {
	return asUsage(pipeline.CheckPowerControl(g, c))
}

// powerControl is the cap or lock the flags ask for.
func (f *costFlags) powerControl() perf.PowerControl {
	return perf.PowerControl{CapW: f.powerCap, SMClockMHz: f.smClock}
}

// runEnergy prices the model as report would, then per setting.
func runEnergy(path string, f *costFlags, caps, clocks string) (*energy.Result, error) {
	r0, l, opt, err := estimateWith(path, f)
	if err != nil {
		return nil, err
	}
	g, err := resolveGPU(f.gpu, f.gpuFile)
	if err != nil {
		return nil, err
	}
	// r0 was priced with no cap and no lock (energy's --power-cap and
	// --sm-clock are lists, not costFlags'): the default setting.
	cfg := energy.Config{Model: path, Loaded: l, GPU: g, Estimate: opt, Default: r0}
	switch {
	case clocks != "":
		cfg.Clocks, err = energy.ParseList("--sm-clock", clocks, 100)
	case caps != "":
		cfg.Caps, err = energy.ParseList("--power-cap", caps, energy.CapStepW)
	}
	if err != nil {
		return nil, asUsage(err)
	}
	if f.given("samples") && r0.Totals.Train != nil {
		cfg.Samples = f.samples
		if cfg.SamplesPerStep, err = samplesPerStep(&f.modelFlags, l); err != nil {
			return nil, err
		}
	}
	res, err := energy.Run(cfg)
	return res, asUsage(err)
}
