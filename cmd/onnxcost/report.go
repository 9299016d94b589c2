package main

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/onnxcost/onnxcost/calib"
	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/internal/config"
	"github.com/onnxcost/onnxcost/internal/gctune"
	"github.com/onnxcost/onnxcost/pipeline"
	"github.com/spf13/cobra"
)

func init() { register("report", newReportCmd) }

// costFlags are the flags of every command that estimates cost.
type costFlags struct {
	modelFlags
	gpu     string
	gpuFile string
	// runtime names the execution profile, runtimeFile a user file of
	// profiles over the built-in ones (as gpuFile is for GPUs).
	runtime     string
	runtimeFile string
	dtype       string
	plan        string
	// gpus is the tensor-parallel degree (cost/parallel.go); 0, the
	// zero value of flags built in code, is one GPU.
	gpus gpuCount
	passFlags
	// powerCap (W) and smClock (MHz) price every kernel under a board
	// power limit or an SM clock lock; 0 is the GPU's default.
	powerCap, smClock float64
	trainFlags
	// samples is the training set size for per-epoch figures (--samples;
	// 0: none).
	samples int64
	// gpuSource says where an omitted --gpu came from (applyGPUDefault).
	gpuSource string
	// countOnly lets a command go on with no GPU anywhere: it then
	// counts (pipeline.Count) instead of pricing (report).
	countOnly bool
	// calibration is a CAL.yaml from `onnxcost calibrate` (--calibration).
	calibration string
	warm        bool // --warm (report): a call repeated back to back
}

func (f *costFlags) add(c *cobra.Command) {
	f.addBase(c)
	c.Flags().Float64Var(&f.powerCap, "power-cap", 0, "board power limit in watts, as nvidia-smi -pl sets it (default: the GPU's TDP)")
	c.Flags().Float64Var(&f.smClock, "sm-clock", 0, "lock the SM clock at most this many MHz, as nvidia-smi -lgc does (default: no lock)")
}

// addBase adds every cost flag but --power-cap and --sm-clock (the energy
// command takes lists there).
func (f *costFlags) addBase(c *cobra.Command) {
	f.modelFlags.add(c)
	c.Flags().StringVar(&f.gpu, "gpu", "", "target GPU (see 'onnxcost gpus'); default: $ONNXCOST_GPU, else defaults.gpu of the nearest .onnxcost.yaml (this folder or above, up to the repository root; on Unix only a file and folders that are yours and not writable by everyone)")
	c.Flags().StringVar(&f.gpuFile, "gpu-file", "", "YAML or JSON file with your own GPU specs (e.g. measured ceilings)")
	c.Flags().StringVar(&f.runtime, "runtime", "", "runtime to price, and the kernels it runs: tensorrt (fused; the default) | onnxruntime | pytorch (eager) | pytorch-compile (inductor) | graph (eager kernels replayed as a CUDA graph); see 'onnxcost gpus runtimes'. With --train or an autocast --dtype (fp16-amp, bf16-amp) the default is pytorch, for a model holding operators only onnxruntime runs (com.microsoft's, or integer ops such as MatMulInteger and QLinearConv) onnxruntime")
	c.Flags().StringVar(&f.runtimeFile, "runtime-file", "", "YAML or JSON file with your own runtime profiles (format of 'onnxcost gpus runtimes'), searched first")
	c.Flags().StringVar(&f.dtype, "dtype", "", "compute dtype: fp32|tf32|fp16|bf16|fp8|int8, or fp16-amp|bf16-amp (the fp32 model under torch.autocast) (default: the model's own)")
	c.Flags().StringVar(&f.plan, "plan", "", planHelp)
	c.Flags().StringVar(&f.calibration, "calibration", "", "correct kernel times by a calibration from 'onnxcost calibrate' (`CAL.yaml`): in full on the GPU it was fitted on, its kernel-relative part on another")
	f.gpus = 1
	c.Flags().Var(&f.gpus, "gpus", "tensor-parallel over N GPUs of the kind: GEMM work and weights split N ways, an all-reduce after each row-parallel GEMM over NVLink or PCIe; times and fit are one GPU's")
	f.passFlags.add(c)
	f.trainFlags.add(c)
}

// addWarm adds --warm, which every command that prices a model takes
// (calibrate and serve declare their own, of another meaning).
func (f *costFlags) addWarm(c *cobra.Command) {
	c.Flags().BoolVar(&f.warm, "warm", false, "price a call repeated back to back, as a benchmark loop or CUDA-graph replays time it: L2 holds what the previous call left (default: the first call, every weight and input read from DRAM; not with --train)")
}

// addSamples adds --samples (report and energy: the commands that print a
// training step's energy).
func (f *costFlags) addSamples(c *cobra.Command) {
	c.Flags().Int64Var(&f.samples, "samples", 0, "with --train: samples per epoch `N`; adds the epoch's time and energy (ceil(N / (batch × grad-accum × data-parallel)) optimizer steps)")
}

// validDTypes are --dtype's values: "" (the model's own) and cost's list.
var validDTypes = append([]string{""}, cost.DTypes()...)

// estimate loads a model, applies the plan's passes and runs the cost model.
func estimate(path string, f *costFlags) (*report.Report, *pipeline.Loaded, error) {
	r, l, _, err := estimateWith(path, f)
	return r, l, err
}

// estimateWith is estimate, also returning the cost model's options, so a
// command that prices the same plan again (energy, once per power setting)
// asks for exactly what the flags did.
func estimateWith(path string, f *costFlags) (*report.Report, *pipeline.Loaded, pipeline.EstimateOptions, error) {
	var opt pipeline.EstimateOptions
	r, l, err := estimateOnce(path, f, &opt)
	return r, l, opt, err
}

func estimateOnce(path string, f *costFlags, opt *pipeline.EstimateOptions) (*report.Report, *pipeline.Loaded, error) {
	cfg, err := f.config(path)
	if err != nil {
		return nil, nil, err
	}
	prog := con.Start(path, 0)
	defer prog.Stop()
	cfg.Progress = func(p pipeline.Phase) {
		switch {
		case p == pipeline.PhasePlan:
			prog.Phase("plan " + cmp.Or(f.plan, "of the runtime"))
		case p == pipeline.PhaseCost && cfg.GPUSpec != nil:
			prog.Phase("estimating on " + cfg.GPUSpec.Name)
			gctune.CollectBeforeCost()
		case p == pipeline.PhaseCost:
			prog.Phase("counting")
		default:
			prog.Phase(p.String())
		}
	}
	res, err := pipeline.Analyze(path, cfg)
	if err != nil {
		return nil, nil, pipeErr(err)
	}
	*opt = res.Estimate
	if err := f.applyEpoch(res.Report, res.Loaded); err != nil {
		return nil, nil, err
	}
	return res.Report, res.Loaded, nil
}

// config checks the flags and turns them into the pipeline's settings
// for the model at path.
func (f *costFlags) config(path string) (pipeline.Config, error) {
	if err := applyGPUDefault(f); err != nil {
		return pipeline.Config{}, err
	}
	if f.gpu == "" && !f.countOnly {
		return pipeline.Config{}, usageErr("--gpu is required (see 'onnxcost gpus' for the list; or set $%s, or defaults.gpu in %s)", config.GPUEnv, config.BudgetFileName)
	}
	// Case-insensitive, like GPU names: FP16 is fp16.
	f.dtype = strings.ToLower(strings.TrimSpace(f.dtype))
	if err := checkValue("--dtype", f.dtype, validDTypes...); err != nil {
		return pipeline.Config{}, err
	}
	if err := checkPlan(f.plan); err != nil {
		return pipeline.Config{}, err
	}
	cfg := pipeline.Config{
		Plan:          f.plan,
		DType:         f.dtype,
		PowerCapW:     f.powerCap,
		SMClockMHz:    f.smClock,
		GPUs:          int(f.gpus),
		ModelName:     path,
		ToolVersion:   version,
		DropFilePages: true,
		Counted:       gctune.SizeHeap,
		Warm:          f.warm,
	}
	if f.gpu == "" {
		if err := f.refuseWithoutGPU(); err != nil {
			return pipeline.Config{}, err
		}
	} else {
		var err error
		if cfg.GPUSpec, err = resolveGPU(f.gpu, f.gpuFile); err != nil {
			return pipeline.Config{}, err
		}
		// The flag, a budget's or a profile's; else what a training step
		// or an autocast call runs; else the model decides, among the
		// profiles of --runtime-file too. f.runtime keeps the choice for
		// gate.Requested.
		if f.runtime = pipeline.RequestedRuntime(f.runtime, f.train, f.dtype); f.runtime != "" {
			cfg.RuntimeSpec, err = resolveRuntime(f.runtime, f.runtimeFile)
		} else {
			cfg.Runtimes, err = runtimeDB(f.runtimeFile)
		}
		if err != nil {
			return pipeline.Config{}, err
		}
	}
	if err := f.modelFlags.config(&cfg); err != nil {
		return pipeline.Config{}, err
	}
	if err := f.trainFlags.validate(); err != nil {
		return pipeline.Config{}, err
	}
	cfg.Train = f.trainFlags.options()
	pf := f.passFlags
	if err := pf.validate(); err != nil {
		return pipeline.Config{}, err
	}
	cfg.Passes = pf.options()
	var err error
	cfg.Calibration, err = loadCalibration(f.calibration)
	return cfg, err
}

// refuseWithoutGPU names the first flag given that prices on a GPU, when
// there is none to price on (a count-only report).
func (f *costFlags) refuseWithoutGPU() error {
	if f.modelFlags.cmd == nil {
		return nil
	}
	for _, name := range []string{"gpu-file", "runtime", "runtime-file", "power-cap", "sm-clock", "gpus", "train", "samples", "trace", "pprof", "warm"} {
		if fl := f.modelFlags.cmd.Flags().Lookup(name); fl != nil && fl.Changed {
			return usageErr("--%s needs a GPU to price on: add --gpu NAME (see 'onnxcost gpus'); without one, report prints the counts only", name)
		}
	}
	return nil
}

func newReportCmd(stdout, stderr io.Writer) *cobra.Command {
	var f costFlags
	var format, by string
	var top int
	var vf viewerFlags
	c := &cobra.Command{
		Use: "report MODEL.onnx [--gpu NAME]", Example: "  onnxcost report testdata/models/resnet50.onnx --gpu T4 --batch 1 --top 5\n  onnxcost report zoo:resnet50 --gpu A100-SXM4-40GB --train --batch 64 --top 3",
		Short: "Estimate MACs, FLOPs, bytes, launches and time per node on a GPU (counts only without one)",
		Args:  exactArgs(1, "MODEL.onnx"),
		RunE: func(c *cobra.Command, args []string) error {
			if err := checkFormat(format, "text", "json", "csv", "markdown"); err != nil {
				return err
			}
			if err := checkValue("--by", by, "", "op"); err != nil {
				return err
			}
			if top < 0 {
				return usageErr("--top must be ≥ 0")
			}
			if top > 0 && format == "json" {
				// A JSON report is a contract: its totals are the sum of
				// its nodes, so it always lists every one.
				return usageErr("--top applies to the text, csv and markdown tables; a JSON report lists every node (select with jq)")
			}
			if err := vf.check(f.inputs(args[0])...); err != nil {
				return err
			}
			f.dumpTo = stderr
			f.countOnly = true
			if err := applyGPUDefault(&f); err != nil {
				return err
			}
			if f.gpu == "" && (format == "csv" || format == "markdown") {
				return usageErr("--format %s is a priced table: it needs --gpu NAME (see 'onnxcost gpus'); without a GPU, report counts in text or json", format)
			}
			r, _, err := estimate(args[0], &f)
			if err != nil {
				return err
			}
			gctune.ReleaseBeforeOutput() // the graph is garbage now
			printWarnings(stderr, r.Warnings)
			if r.CountOnly {
				if format == "json" {
					fmt.Fprintf(stderr, "onnxcost: note: %s\n", render.NeedGPULine)
					return writeReportJSON(stdout, r)
				}
				bw := bufio.NewWriterSize(stdout, 1<<16)
				if err := render.CountText(bw, r, top, by == "op"); err != nil {
					return err
				}
				return bw.Flush()
			}
			if err := vf.write([]*report.Report{r}, f.gpu, f.gpuFile); err != nil {
				return err
			}
			opt := render.Options{Top: top, ByOp: by == "op"}
			switch format {
			case "json":
				return writeReportJSON(stdout, r)
			case "csv":
				return render.CSV(stdout, r, opt)
			}
			// Buffered: the markdown table is a write per line.
			bw := bufio.NewWriterSize(stdout, 1<<16)
			out := &config.SourceMarker{W: bw, GPU: r.GPU, Source: f.gpuSource}
			if format == "markdown" {
				err = render.Markdown(out, r, opt)
			} else {
				err = render.Text(out, r, opt)
			}
			if err != nil {
				return err
			}
			if err := out.Close(); err != nil {
				return err
			}
			return bw.Flush()
		},
	}
	f.add(c)
	f.addSamples(c)
	c.Flags().StringVar(&format, "format", "text", "output format: text|json|csv|markdown")
	c.Flags().IntVar(&top, "top", 0, "show only the `N` costliest nodes, or op types with --by op (0: all; not with --format json)")
	c.Flags().StringVar(&by, "by", "", "aggregate: op (totals per op type)")
	f.addWarm(c)
	vf.add(c, true)
	return c
}

// checkValue requires a flag's value to be one of allowed ("" among them
// means the flag may be left unset); a usage error (exit 2) otherwise.
func checkValue(flag, got string, allowed ...string) error {
	return asUsage(pipeline.CheckValue(flag, got, allowed...))
}

// planHelp is --plan's help: "" prices the runtime's own kernels.
const planHelp = "kernels to cost: eager|inductor|onnxruntime|fused|unfused (default: the runtime's own; see 'gpus runtimes')"

func checkPlan(p string) error {
	return checkValue("--plan", p, append([]string{""}, pipeline.PlanNames()...)...)
}

// asUsage makes a check's error a usage error (exit 2); nil stays nil.
func asUsage(err error) error {
	if err == nil {
		return nil
	}
	return usageErr("%w", err)
}

// gpuCount is --gpus: checked when parsed, so "--gpus 0" is a usage
// error while flags built in code (zero value) mean one GPU.
type gpuCount int

func (g *gpuCount) String() string { return strconv.Itoa(int(*g)) }
func (g *gpuCount) Type() string   { return "int" }

func (g *gpuCount) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 || n > pipeline.MaxGPUs {
		return fmt.Errorf("--gpus %s: want a whole number from 1 to %d", s, pipeline.MaxGPUs)
	}
	*g = gpuCount(n)
	return nil
}

// loadCalibration reads --calibration's file; "" is none.
func loadCalibration(path string) (*calib.Calibration, error) {
	if path == "" {
		return nil, nil
	}
	c, err := calib.Load(path)
	if err != nil {
		return nil, usageErr("--calibration: %v", err)
	}
	return c, nil
}
