package main

import (
	"io"
	"strings"

	"github.com/onnxcost/onnxcost/generate"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/pipeline"
	"github.com/onnxcost/onnxcost/sweep"
	"github.com/spf13/cobra"
)

func init() { register("generate", newGenerateCmd) }

// generateFlags are the flags of `generate`.
type generateFlags struct {
	cf                                        costFlags // --gpu and --gpu-file, with their defaults
	runtime, runtimeFile, dtype, plan, format string
	dims                                      []string
	batch, prompt, output                     int64
	exact                                     bool
	concurrency                               string
	ttftSLO, tpotSLO, price                   float64
	pf                                        passFlags
	gpus                                      gpuCount
}

func newGenerateCmd(stdout, stderr io.Writer) *cobra.Command {
	g := generateFlags{gpus: gpuCount(1)}
	c := &cobra.Command{
		Use: "generate MODEL --gpu NAME --prompt N --output M [--batch B]", Example: "  onnxcost generate zoo:llama-7b --gpu H100 --dtype fp16 --prompt 512 --output 128 --batch 8",
		Short: "Time to first token, time per output token, tokens/s and memory of LLM generation with a KV cache",
		Long: `generate costs serving B sequences of an N-token prompt and M generated
tokens with a decoder that takes a key/value cache: a zoo decoder
(zoo:llama-7b, zoo:gpt2-small, ...) or an ONNX export whose cache inputs
(past_key_values.*) have a symbolic length (past_sequence_length).

The prompt's step (B × N tokens, empty cache) is the time to first token;
M−1 decode steps of one token follow, the cache growing from N to N+M−1.
Each step writes the cache in place (the new entries only), as serving
runtimes do, not as the export's Concat copies it. A few decode steps are
costed and a line through them is summed over every step (--exact: all).
Output tokens/s is B·M / end-to-end time.

--concurrency LIST adds the serving curve of continuous batching at steady
state: C requests always in flight, each cycle C prefills (batch 1) and
M−1 decode steps at batch C; per C, tokens/s, TTFT, TPOT, e2e, energy per
token (--price: cost per million tokens), KV cache and memory, up to the
largest C that fits. --ttft-slo / --tpot-slo pick the best point.

--gpus N models tensor parallelism as report --gpus does, except the KV
cache: serving runtimes split it by heads, so each GPU holds ⌈kv_heads/N⌉
of them (one whole head when there are fewer heads than GPUs), and the
memory, the largest batch and the serving curve's cap count that part.

  onnxcost generate zoo:llama-7b --gpu H100 --dtype fp16 --prompt 512 --output 128 --batch 8
  onnxcost generate model.onnx --gpu A100 --prompt 1024 --output 256 --format json
  onnxcost generate zoo:llama-7b --gpu H100 --dtype fp16 --prompt 512 --output 128 --concurrency 1..256 --tpot-slo 0.05`,
		Args: exactArgs(1, "MODEL"),
		RunE: func(c *cobra.Command, args []string) error {
			cfg, err := g.config(c, args[0])
			if err != nil {
				return err
			}
			g.pf.dumpTo = stderr
			cfg.Passes = g.pf.options()
			res, err := generate.Run(cfg)
			if err != nil {
				return pipeErr(err)
			}
			printWarnings(stderr, res.Warnings)
			if g.format == "json" {
				return generate.WriteJSON(stdout, res)
			}
			return generate.WriteText(stdout, res)
		},
	}
	g.add(c)
	return c
}

// config checks the flags and turns them into the generation of model.
func (g *generateFlags) config(c *cobra.Command, model string) (generate.Config, error) {
	var cfg generate.Config
	if err := checkFormat(g.format, "text", "json"); err != nil {
		return cfg, err
	}
	g.dtype = strings.ToLower(strings.TrimSpace(g.dtype))
	if err := checkValue("--dtype", g.dtype, validDTypes...); err != nil {
		return cfg, err
	}
	if err := checkPlan(g.plan); err != nil {
		return cfg, err
	}
	if err := g.pf.validate(); err != nil {
		return cfg, err
	}
	if err := applyGPUDefault(&g.cf); err != nil {
		return cfg, err
	}
	if g.cf.gpu == "" {
		return cfg, usageErr("generate: --gpu is required (see 'onnxcost gpus')")
	}
	for _, f := range [][2]string{{"prompt", "--prompt N, the prompt's tokens per sequence"}, {"output", "--output M, the tokens generated per sequence"}} {
		if !c.Flags().Changed(f[0]) {
			return cfg, usageErr("generate: %s, is required", f[1])
		}
	}
	if c.Flags().Changed("batch") && g.batch < 1 {
		return cfg, usageErr("--batch must be ≥ 1, got %d", g.batch)
	}
	var conc []int64
	if g.concurrency != "" {
		var err error
		if conc, err = sweep.ParseList(g.concurrency); err != nil {
			return cfg, usageErr("--concurrency: %v", err)
		}
	}
	for _, f := range []string{"ttft-slo", "tpot-slo", "price"} {
		if v, _ := c.Flags().GetFloat64(f); c.Flags().Changed(f) && !(v > 0) {
			return cfg, usageErr("--%s must be > 0, got %g", f, v)
		}
	}
	gpu, err := resolveGPU(g.cf.gpu, g.cf.gpuFile)
	if err != nil {
		return cfg, err
	}
	if err := checkPowerControl(gpu, g.cf.powerControl()); err != nil {
		return cfg, err
	}
	// With no --runtime, a call under torch.autocast runs in PyTorch as
	// report's does, and otherwise the model decides
	// (generate.Config.Runtime nil), among the profiles of --runtime-file
	// too.
	var rt *hwdb.Runtime
	rts, err := runtimeDB(g.runtimeFile)
	if err != nil {
		return cfg, err
	}
	if name := pipeline.RequestedRuntime(g.runtime, false, g.dtype); name != "" {
		if rt, err = lookupFlag("--runtime", name, rts.Lookup); err != nil {
			return cfg, err
		}
	}
	bound, err := parseDims(g.dims)
	if err != nil {
		return cfg, err
	}
	cal, err := loadCalibration(g.cf.calibration)
	if err != nil {
		return cfg, err
	}
	return generate.Config{
		Model: model, GPU: gpu, Runtime: rt, Runtimes: rts, DType: g.dtype, Plan: g.plan, Calibration: cal,
		GPUs: int(g.gpus), Power: g.cf.powerControl(), Batch: g.batch, Prompt: g.prompt, Output: g.output, Dims: bound, Exact: g.exact, ToolVersion: version,
		Concurrency: conc, TTFTSLOS: g.ttftSLO, TPOTSLOS: g.tpotSLO, PriceUSDPerGPUHour: g.price,
	}, nil
}

func (g *generateFlags) add(c *cobra.Command) {
	fl := c.Flags()
	fl.StringVar(&g.cf.gpu, "gpu", "", "target GPU (see 'onnxcost gpus'); default: $ONNXCOST_GPU, else defaults.gpu of the nearest .onnxcost.yaml (this folder or above, up to the repository root; on Unix only a file and folders that are yours and not writable by everyone)")
	fl.StringVar(&g.cf.gpuFile, "gpu-file", "", "YAML or JSON file with your own GPU specs")
	fl.Int64Var(&g.prompt, "prompt", 0, "prompt tokens per sequence `N` (required, ≥ 1)")
	fl.Int64Var(&g.output, "output", 0, "generated tokens per sequence `M` (required, ≥ 1; the first comes from the prompt's step)")
	fl.Int64Var(&g.batch, "batch", 0, "sequences generated together `B` (default 1, or batch= of a zoo path)")
	fl.Var(&g.gpus, "gpus", "tensor-parallel over N GPUs of the kind (as report --gpus, but the KV cache split by heads, ⌈kv_heads/N⌉ per GPU); times and memory are one GPU's")
	fl.StringVar(&g.dtype, "dtype", "", "compute dtype: fp32|tf32|fp16|bf16|fp8|int8, the KV cache stored at it, or fp16-amp|bf16-amp (torch.autocast: weights as stored, the KV cache at the half type the projections write) (default: the model's own)")
	fl.StringVar(&g.runtime, "runtime", "", "execution profile: graph|tensorrt|onnxruntime|pytorch|pytorch-compile (see 'onnxcost gpus runtimes'); default tensorrt, or onnxruntime-iobinding for a model holding operators only onnxruntime runs (com.microsoft's), as onnxruntime-genai runs it")
	fl.StringVar(&g.runtimeFile, "runtime-file", "", "YAML or JSON file with your own runtime profiles")
	fl.StringVar(&g.plan, "plan", "", planHelp)
	fl.StringVar(&g.cf.calibration, "calibration", "", "correct kernel times by a calibration from 'onnxcost calibrate' (`CAL.yaml`)")
	fl.Float64Var(&g.cf.powerCap, "power-cap", 0, "board power limit in watts every step is priced under, as nvidia-smi -pl sets it (default: the GPU's TDP)")
	fl.Float64Var(&g.cf.smClock, "sm-clock", 0, "lock the SM clock at most this many MHz for every step, as nvidia-smi -lgc does (default: no lock)")
	fl.StringArrayVar(&g.dims, "dim", nil, "bind another symbolic dim: `NAME=VALUE` (repeatable; the cache and token lengths are bound by generate)")
	fl.BoolVar(&g.exact, "exact", false, "cost every decode step instead of a line through a few")
	fl.StringVar(&g.concurrency, "concurrency", "", "serving curve at concurrencies `LIST` (1,4,16 or 1..256 in powers of two)")
	fl.Float64Var(&g.ttftSLO, "ttft-slo", 0, "with --concurrency: the best point with TTFT ≤ `SECONDS`")
	fl.Float64Var(&g.tpotSLO, "tpot-slo", 0, "with --concurrency: the best point with TPOT ≤ `SECONDS`")
	fl.Float64Var(&g.price, "price", 0, "with --concurrency: cost per million output tokens at `USD` per GPU-hour")
	fl.StringVar(&g.format, "format", "text", "output format: text|json")
	g.pf.add(c)
}
