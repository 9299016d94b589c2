package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/console"
	"github.com/onnxcost/onnxcost/internal/gctune"
	"github.com/onnxcost/onnxcost/internal/outfile"
	"github.com/onnxcost/onnxcost/pipeline"
	"github.com/onnxcost/onnxcost/sweep"
	"github.com/onnxcost/onnxcost/viz"
	"github.com/spf13/cobra"
)

func init() { register("sweep", newSweepCmd) }

// sweepFlags are the flags of `sweep` (and of `gpus compare`, a sweep of
// one point).
type sweepFlags struct {
	gpus, gpuFile, dtype, plan, inputData string
	batch                                 string
	dims, params                          []string
	findMax                               bool
	format, out, fit, fitX                string
	// chart is the -o metric (--chart): "", throughput, time or memory.
	chart string
	passFlags
	trainFlags
	// shared holds the settings declared by report's own flag code
	// (borrowReportFlags): --runtime, --runtime-file, --gpus, --power-cap,
	// --sm-clock.
	shared costFlags
}

// checkOut refuses an -o file whose extension names no chart format
// before anything is costed.
func (f *sweepFlags) checkOut() error {
	if f.out == "" {
		return nil
	}
	_, err := outFormat(f.out, "svg", "png", "pdf")
	return err
}

// addCostFlags declares the cost settings sweep and gpus compare share
// (every GPU in the list is costed with them).
func (f *sweepFlags) addCostFlags(c *cobra.Command) {
	c.Flags().StringVar(&f.gpuFile, "gpu-file", "", "YAML or JSON file with your own GPU specs")
	c.Flags().StringVar(&f.dtype, "dtype", "", "compute dtype: fp32|tf32|fp16|bf16|fp8|int8, or fp16-amp|bf16-amp (the fp32 model under torch.autocast) (default: the model's own)")
	c.Flags().StringVar(&f.plan, "plan", "", planHelp)
	c.Flags().StringVar(&f.inputData, "input-data", "", "bind graph inputs to the tensors in `DIR`/input_<i>.pb")
	f.borrowReportFlags(c, "runtime", "runtime-file", "gpus", "power-cap", "sm-clock", "calibration", "warm")
}

// borrowReportFlags declares the named flags exactly as report declares
// them (help, default, and parse-time checks such as --gpus's range), so
// that the commands cannot drift apart: report's flag code runs on a
// scratch command and the named flags move to c, their values landing in
// f.shared. f.shared.given still sees them set, since a flag's Changed
// mark lives on the flag that both flag sets share.
func (f *sweepFlags) borrowReportFlags(c *cobra.Command, names ...string) {
	scratch := &cobra.Command{Use: c.Name()}
	f.shared.add(scratch)
	f.shared.addWarm(scratch)
	for _, n := range names {
		c.Flags().AddFlag(scratch.Flags().Lookup(n))
	}
}

// runtime resolves --runtime as report does: a training step, or a call
// under torch.autocast, runs in PyTorch eager unless told otherwise;
// otherwise nil, for the model to name (sweep.Config.Runtimes).
func (f *sweepFlags) runtime() (*hwdb.Runtime, error) {
	return sweepRuntime(f.shared.runtime, f.shared.runtimeFile, f.train, f.dtype)
}

// sweepRuntime is the profile a sweep of many points prices under: the
// one the flags ask for (pipeline.RequestedRuntime), or nil for the model to name
// once it is read.
func sweepRuntime(name, runtimeFile string, training bool, dtype string) (*hwdb.Runtime, error) {
	name = pipeline.RequestedRuntime(name, training, dtype)
	if name == "" {
		return nil, nil
	}
	return resolveRuntime(name, runtimeFile)
}

func newSweepCmd(stdout, stderr io.Writer) *cobra.Command {
	var f sweepFlags
	c := &cobra.Command{
		Use: "sweep MODEL [MODEL...] --gpu A[,B...] --batch LIST [--dim NAME=LIST] [--param K=LIST]", Example: "  onnxcost sweep zoo:resnet50 --gpu T4,A10 --batch 1,8,64\n  onnxcost sweep zoo:lstm-ptb --gpu V100 --param layers=1,2,3,4 --fit linear",
		Short: "Sweep batch, symbols or zoo parameters across GPUs: time, throughput, memory, fit",
		Long: `sweep costs a model at every combination of the swept values on every GPU
given, and prints one row per GPU and point: latency (the time of one
batch), throughput (items/s = batch / time), peak memory and whether it
fits in the GPU's memory. Rows past the memory limit are marked, never
dropped. Per GPU it also reports the knee, the smallest batch reaching 90%
of the best throughput (only when batch is swept), and with
--find-max-batch the largest integer batch that fits (doubling then
bisection; peak memory must not fall as batch grows, which is checked).
Without --batch, throughput counts the model's own batch: a zoo model's
batch parameter, the bound batch symbol, or a static export's batch dim.

--runtime, --gpus, --power-cap and --sm-clock are report's, applied to
every GPU and point.

LIST is a comma list (1,8,32) or a range a..b of powers of two (1..1024).
--batch binds the leading symbolic dim of the inputs as report's --batch
does (for a zoo model, its batch parameter); --dim NAME=LIST binds a
symbol; --param K=LIST sets a zoo parameter (the model is rebuilt per
value), and --param K=OTHER ties K to the swept parameter OTHER
(--param hidden=128..1024 --param embed=hidden).

--fit linear|quadratic fits time, FLOPs and GEMM FLOPs against the one
swept dimension by least squares and prints baseline, slope and quadratic
term. -o FILE.svg|png|pdf draws throughput (or time, when the swept
dimension is not batch; or what --chart names: throughput, time, memory)
with one line per GPU, hollow markers past the memory limit.

Several MODELs are swept alike and drawn on one chart, one line per model
and GPU; each row then names its model, and max_batch and knee are keyed
"MODEL on GPU".

  onnxcost sweep zoo:resnet50 --gpu V100,T4 --batch 1..256 --find-max-batch -o r50.png
  onnxcost sweep zoo:lstm-ptb --gpu V100 --param hidden=256,512,1024 --param embed=hidden --fit quadratic
  onnxcost sweep zoo:alexnet zoo:vgg16 --gpu V100-SXM2-32GB --train --batch 64,128,256 --chart memory -o mem.svg`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) < 1 {
				return usageErr("%s: want MODEL [MODEL...], got no argument (see '%s --help')", c.Name(), c.CommandPath())
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			f.dumpTo = stderr
			if err := f.trainFlags.validate(); err != nil {
				return err
			}
			if err := checkValue("--chart", f.chart, "", "throughput", "time", "memory"); err != nil {
				return err
			}
			if err := f.checkOut(); err != nil {
				return err
			}
			inputs := append(slices.Clone(args), f.gpuFile, f.shared.runtimeFile)
			if err := refuseOutputs(inputs, outfile.Target{Flag: "-o", Path: f.out}); err != nil {
				return err
			}
			res, err := runSweeps(args, &f)
			if err != nil {
				return err
			}
			if f.train {
				res.Warnings = append([]string{"--train: latency is one training step (optimizer " + f.optimizer + ", checkpoint " + f.checkpoint + "), peak memory the step's device peak (nvidia-smi view: caching-allocator reserve + CUDA context)"}, res.Warnings...)
			}
			printWarnings(stderr, res.Warnings)
			if f.out != "" {
				if err := writeChart(f.out, func(format string) ([]byte, error) { return viz.SweepResultChart(res, f.chart, format) }); err != nil {
					return err
				}
			}
			return writeAs(stdout, f.format, res, sweep.WriteCSV, sweep.WriteText)
		},
	}
	c.Flags().StringVar(&f.gpus, "gpu", "", "target GPUs, comma-separated, or all (see 'onnxcost gpus'); required")
	f.addCostFlags(c)
	c.Flags().StringVar(&f.batch, "batch", "", "batch sizes: `LIST` (1,8,32 or 1..256 in powers of two); default: the model's own")
	c.Flags().StringArrayVar(&f.dims, "dim", nil, "sweep or bind a symbol: `NAME=LIST` (repeatable)")
	c.Flags().StringArrayVar(&f.params, "param", nil, "sweep a zoo parameter: `K=LIST`, or K=OTHER to tie it to another (repeatable)")
	c.Flags().BoolVar(&f.findMax, "find-max-batch", false, "find the largest batch that fits on each GPU")
	c.Flags().StringVar(&f.format, "format", "text", "output format: text|json|csv")
	c.Flags().StringVarP(&f.out, "output", "o", "", "draw the sweep to `FILE` (.svg, .png or .pdf)")
	c.Flags().StringVar(&f.chart, "chart", "", "what -o draws against the swept dimension: throughput|time|memory (default: throughput against batch, else time)")
	c.Flags().StringVar(&f.fit, "fit", "", "fit cost against the swept dimension: linear|quadratic")
	c.Flags().StringVar(&f.fitX, "fit-x", "", "the dimension to fit against (default: the only one swept)")
	f.passFlags.add(c)
	f.trainFlags.add(c)
	return c
}

// config checks the flags and turns them into the sweep of model.
func (f *sweepFlags) config(model string) (sweep.Config, error) {
	var cfg sweep.Config
	for _, err := range []error{checkFormat(f.format, "text", "json", "csv"), checkValue("--dtype", f.dtype, validDTypes...),
		checkPlan(f.plan), f.checkOut()} {
		if err != nil {
			return cfg, err
		}
	}
	if strings.TrimSpace(f.gpus) == "" {
		return cfg, usageErr("--gpu is required: one or more GPUs, comma-separated, or all (see 'onnxcost gpus')")
	}
	// One database for every name (a --gpu-file is read once), and all
	// its GPUs for "all".
	db, err := gpuDB(f.gpuFile)
	if err != nil {
		return cfg, err
	}
	gpus := db.All()
	all := strings.EqualFold(strings.TrimSpace(f.gpus), "all")
	if !all {
		gpus = nil
		for _, name := range strings.Split(f.gpus, ",") {
			if strings.EqualFold(strings.TrimSpace(name), "all") {
				return cfg, usageErr("--gpu: all stands alone, not in a list (%q)", f.gpus)
			}
			g, err := lookupFlag("--gpu", strings.TrimSpace(name), db.Lookup)
			if err != nil {
				return cfg, err
			}
			gpus = append(gpus, g)
		}
	}
	names := map[string]bool{}
	pc := f.shared.powerControl()
	var left []string
	for _, g := range gpus {
		if names[g.Name] {
			return cfg, usageErr("--gpu: %s given twice", g.Name)
		}
		names[g.Name] = true
		if err := checkPowerControl(g, pc); err != nil {
			// A GPU named is one the user wants: its error stands. Of
			// all, those the setting does not fit are left out.
			if !all || pipeline.CheckPowerValue(pc) != nil {
				return cfg, err
			}
			left = append(left, g.Name)
			continue
		}
		cfg.GPUs = append(cfg.GPUs, g)
	}
	if len(left) > 0 {
		if len(cfg.GPUs) == 0 {
			return cfg, usageErr("--gpu all: %s fits none of the %d GPUs", powerControlText(pc), len(left))
		}
		cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("--gpu all: %s is outside what %d of the %d GPUs can be set to; left out: %s",
			powerControlText(pc), len(left), len(gpus), strings.Join(left, ", ")))
	}
	rt, err := f.runtime()
	if err != nil {
		return cfg, err
	}
	if cfg.Runtimes, err = runtimeDB(f.shared.runtimeFile); err != nil {
		return cfg, err
	}
	if cfg.Axes, err = sweep.ParseAxes(f.params, f.dims); err != nil {
		return cfg, usageErr("%v", err)
	}
	if f.batch != "" {
		if cfg.Batches, err = sweep.ParseList(f.batch); err != nil {
			return cfg, usageErr("--batch: %v", err)
		}
	}
	if err := f.passFlags.validate(); err != nil {
		return cfg, err
	}
	cfg.Model, cfg.FindMaxBatch, cfg.Fit, cfg.FitX, cfg.Plan, cfg.Passes = model, f.findMax, f.fit, f.fitX, f.plan, f.passFlags.options()
	cfg.Load = pipeline.Options{InputDataDir: f.inputData, Counted: gctune.SizeHeap}
	if err := asUsage(pipeline.CheckWarm(f.shared.warm, f.train)); err != nil {
		return cfg, err
	}
	cal, err := loadCalibration(f.shared.calibration)
	cfg.Estimate = pipeline.EstimateOptions{DType: f.dtype, Runtime: rt, ToolVersion: version, Power: f.shared.powerControl(),
		Train: f.trainFlags.options(), GPUs: int(f.shared.gpus), Calibration: cal, Warm: f.shared.warm}
	return cfg, err
}

// runSweeps sweeps each model alike (sweep.RunModels), with a progress
// line per model on a terminal.
func runSweeps(models []string, f *sweepFlags) (*sweep.Result, error) {
	cfg, err := f.config(models[0])
	if err != nil {
		return nil, err
	}
	var prog *console.Progress
	cfg.Progress = func(done, total int) {
		if done == 0 {
			if prog != nil {
				prog.Stop()
			}
			prog = con.Start("sweep", total)
		}
		prog.Add(1)
	}
	defer func() {
		if prog != nil {
			prog.Stop()
		}
	}()
	res, err := sweep.RunModels(models, cfg)
	return res, pipeErr(err)
}

// writeChart draws a chart to path in the format its extension names.
func writeChart(path string, draw func(format string) ([]byte, error)) error {
	format, err := outFormat(path, "svg", "png", "pdf")
	if err != nil {
		return err
	}
	img, err := draw(format)
	if err != nil {
		return usageErr("%s: %v", path, err)
	}
	return writeOut(path, img)
}

// powerControlText names the cap and lock c sets, as the flags read.
func powerControlText(c perf.PowerControl) string {
	var parts []string
	if c.CapW != 0 {
		parts = append(parts, fmt.Sprintf("--power-cap %g W", c.CapW))
	}
	if c.SMClockMHz != 0 {
		parts = append(parts, fmt.Sprintf("--sm-clock %g MHz", c.SMClockMHz))
	}
	return strings.Join(parts, " with ")
}
