package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/onnxcost/onnxcost/calib"
	"github.com/onnxcost/onnxcost/internal/gctune"
	"github.com/onnxcost/onnxcost/internal/safefile"
	"github.com/onnxcost/onnxcost/pipeline"
	"github.com/onnxcost/onnxcost/web"
	"github.com/onnxcost/onnxcost/web/session"
	"github.com/spf13/cobra"
)

func init() { register("serve", newServeCmd) }

func newServeCmd(stdout, stderr io.Writer) *cobra.Command {
	var addr string
	var allowRemote bool
	var f costFlags
	c := &cobra.Command{
		Use: "serve [MODEL.onnx]", Example: "  onnxcost serve testdata/models/resnet50.onnx --gpu T4",
		Short: "Serve the browser app (drop a model, pick a GPU) on a local address",
		Long: `serve runs onnxcost's browser app from this binary: the page runs the same
pipeline as 'report' on a model dropped onto it. A binary built after
scripts/build_web.sh runs it in the browser, compiled to WebAssembly; one
built without (a plain 'go install') runs it here, the page sending the
model to this server, which keeps it in memory only. Either way the model
stays on this machine. With MODEL the page opens that model on start (it
is served read-only at /preload.onnx). --gpu, --dtype, --batch, --dim,
--plan, --runtime, --train, --optimizer, --checkpoint, --grad-accum,
--data-parallel, --samples, --warm, --power-cap, --sm-clock and --gpus
set the page's first settings (the URL's
#gpu=...&batch=... wins over them), so the page opens on the numbers
'report MODEL' prints with the same flags; --calibration CAL.yaml is in
force on the page until another file is chosen there or it is removed,
--gpu-file FILE adds your own GPUs to its menu and --runtime-file FILE
your own runtime profiles to its runtime menu.

The address is loopback (127.0.0.1:8080) by default; a non-loopback
address is refused unless --allow-remote is given, since anyone who can
reach it can read MODEL. Requests naming another host than the one served
(a web page's DNS name rebound to this address) and posts from another
origin are refused.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			gctune.UseGCPercent()
			f.modelFlags.cmd = c // given: an explicit --samples 0 is refused, as report refuses it
			if err := checkLoopback(addr, allowRemote); err != nil {
				return err
			}
			st, err := f.pageSettings()
			if err != nil {
				return err
			}
			pre := &web.Preload{Settings: st}
			if len(args) == 1 {
				if pre, err = readPreload(args[0]); err != nil {
					return err
				}
				pre.Settings = st
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return usageErr("--addr %s: %v", addr, err)
			}
			srv := &http.Server{Handler: web.Handler(pre, web.Config{AllowRemote: allowRemote, Version: version}),
				ReadHeaderTimeout: 10 * time.Second,
				// A model of the protobuf limit (2 GiB) reads over loopback
				// in seconds; the longest answer (every GPU's estimate of
				// a large model) takes seconds too.
				ReadTimeout: 2 * time.Minute, WriteTimeout: 5 * time.Minute, IdleTimeout: 2 * time.Minute}
			fmt.Fprintf(stdout, "onnxcost: serving on http://%s/ (Ctrl-C stops)\n", ln.Addr())
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			go func() {
				<-ctx.Done()
				shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				_ = srv.Shutdown(shut)
			}()
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	c.Flags().StringVar(&addr, "addr", "127.0.0.1:8080", "listen on `HOST:PORT` (loopback unless --allow-remote)")
	c.Flags().BoolVar(&allowRemote, "allow-remote", false, "allow a non-loopback --addr (anyone who can reach it can read MODEL)")
	c.Flags().StringVar(&f.gpu, "gpu", "", "the page's first GPU (see 'onnxcost gpus')")
	c.Flags().StringVar(&f.dtype, "dtype", "", "the page's first compute dtype: fp32|tf32|fp16|bf16|fp8|int8|fp16-amp|bf16-amp")
	c.Flags().Int64Var(&f.batch, "batch", 0, "the page's first batch (binds the leading symbolic dim of every graph input)")
	c.Flags().StringArrayVar(&f.dims, "dim", nil, "the page's first binding of a symbolic dim: `NAME=VALUE` (repeatable)")
	c.Flags().StringVar(&f.plan, "plan", "", "the page's first plan: "+planHelp)
	c.Flags().StringVar(&f.runtime, "runtime", "", "the page's first execution profile (see 'onnxcost gpus runtimes')")
	c.Flags().BoolVar(&f.train, "train", false, "the page opens costing one training step")
	c.Flags().StringVar(&f.optimizer, "optimizer", "", "the page's first optimizer with --train (default adam)")
	c.Flags().StringVar(&f.checkpoint, "checkpoint", "", "the page's first activation recomputation with --train (default none)")
	c.Flags().Float64Var(&f.powerCap, "power-cap", 0, "the page's first board power limit in watts (default: the GPU's TDP)")
	c.Flags().Float64Var(&f.smClock, "sm-clock", 0, "the page's first SM clock lock in MHz (default: no lock)")
	f.gpus = 1
	c.Flags().Var(&f.gpus, "gpus", "the page's first tensor-parallel degree")
	f.trainFlags.fromFlags = true // zero --grad-accum and --data-parallel are the user's
	c.Flags().IntVar(&f.gradAccum, "grad-accum", 1, "the page's first gradient accumulation with --train: `K` micro-batches per optimizer step")
	c.Flags().IntVar(&f.dataParallel, "data-parallel", 1, "the page's first data parallelism with --train: `N` DistributedDataParallel replicas")
	c.Flags().BoolVar(&f.warm, "warm", false, "the page opens pricing a call repeated back to back (report's --warm)")
	c.Flags().Int64Var(&f.samples, "samples", 0, "the page's first samples per epoch `N` with --train (report's --samples: the epoch's time and energy)")
	c.Flags().StringVar(&f.calibration, "calibration", "", "the page's first calibration (`CAL.yaml`, from 'onnxcost calibrate'), as report's --calibration")
	c.Flags().StringVar(&f.gpuFile, "gpu-file", "", "the page's GPU file (`FILE`, your own GPU specs), as report's --gpu-file: its GPUs join the page's menu")
	c.Flags().StringVar(&f.runtimeFile, "runtime-file", "", "the page's runtime file (`FILE`, your own runtime profiles), as report's --runtime-file: its profiles join the page's menu")
	return c
}

// pageSettings checks the serve flags that set the page's first settings,
// as `report` checks the same flags.
func (f *costFlags) pageSettings() (*session.Settings, error) {
	if err := checkValue("--dtype", f.dtype, validDTypes...); err != nil {
		return nil, err
	}
	if err := checkPlan(f.plan); err != nil {
		return nil, err
	}
	if f.batch < 0 {
		return nil, usageErr("--batch must be positive, got %d", f.batch)
	}
	dims, err := parseDims(f.dims)
	if err != nil {
		return nil, err
	}
	// Flags left out stay empty, so the page's own defaults (and its URL)
	// apply; validate would fill them in.
	opt, ckpt := f.optimizer, f.checkpoint
	if err := asUsage(pipeline.CheckTrain(&opt, &ckpt)); err != nil {
		return nil, err
	}
	// As report checks them (trainFlags.validate, pipeline.CheckWarm);
	// 1, the flags' default, is left to the page's own.
	if !f.fromFlags {
		// A costFlags built in code: zero is "not set".
		f.gradAccum, f.dataParallel = max(f.gradAccum, 1), max(f.dataParallel, 1)
	}
	if f.dataParallel < 1 {
		return nil, usageErr("--data-parallel %d: want 1 or more replicas", f.dataParallel)
	}
	if f.gradAccum < 1 {
		return nil, usageErr("--grad-accum %d: want 1 or more micro-batches per optimizer step", f.gradAccum)
	}
	if err := asUsage(pipeline.CheckWarm(f.warm, f.train)); err != nil {
		return nil, err
	}
	if f.samples != 0 || f.given("samples") {
		if err := asUsage(pipeline.CheckEpoch(f.samples, f.train)); err != nil {
			return nil, err
		}
	}
	st := &session.Settings{DType: f.dtype, Batch: f.batch, Dims: dims, Plan: f.plan, Runtime: f.runtime,
		Train: f.train, Optimizer: f.optimizer, Checkpoint: f.checkpoint, PowerCap: f.powerCap, SMClock: f.smClock, Warm: f.warm,
		Samples: f.samples}
	if f.gradAccum > 1 {
		st.GradAccum = f.gradAccum
	}
	if f.dataParallel > 1 {
		st.DataParallel = f.dataParallel
	}
	if f.gpus > 1 {
		st.GPUs = int(f.gpus)
	}
	// The files are read and checked here, so that a bad one stops serve
	// as it stops report; the page sends their text with every call.
	if f.calibration != "" {
		b, err := safefile.ReadFile(f.calibration, safefile.SideFileLimit)
		if err != nil {
			return nil, usageErr("--calibration: calibration %s: %v", f.calibration, safefile.Reason(err))
		}
		if _, err := calib.Parse(f.calibration, b); err != nil {
			return nil, usageErr("--calibration: %v", err)
		}
		st.Calibration = &session.File{Name: f.calibration, Text: string(b)}
	}
	if f.gpuFile != "" {
		b, err := safefile.ReadFile(f.gpuFile, safefile.SideFileLimit)
		if err != nil {
			return nil, usageErr("--gpu-file %s: %v", f.gpuFile, safefile.Reason(err))
		}
		st.GPUFile = &session.File{Name: f.gpuFile, Text: string(b)}
	}
	if f.runtimeFile != "" {
		b, err := safefile.ReadFile(f.runtimeFile, safefile.SideFileLimit)
		if err != nil {
			return nil, usageErr("--runtime-file %s: %v", f.runtimeFile, safefile.Reason(err))
		}
		st.RuntimeFile = &session.File{Name: f.runtimeFile, Text: string(b)}
	}
	// The page's runtimes, read once as its GPUs below: the file's over
	// the built-in profiles.
	rts, err := session.RuntimeDB(st.RuntimeFile)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	if f.runtime != "" {
		if _, err := lookupFlag("--runtime", f.runtime, rts.Lookup); err != nil {
			return nil, err
		}
	}
	// The page's database: read once, the file's GPUs over the built-in.
	db, err := session.GPUDB(st.GPUFile)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	if f.gpu != "" {
		g, err := lookupGPU(db, f.gpu)
		if err != nil {
			return nil, err
		}
		if err := checkPowerControl(g, f.powerControl()); err != nil {
			return nil, err
		}
		st.GPU = g.Name
	}
	return st, nil
}

// checkLoopback refuses an address other machines could reach, unless
// allowed: an empty host listens on every interface.
func checkLoopback(addr string, allow bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usageErr("--addr %q: %v", addr, err)
	}
	if allow || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return usageErr("--addr %s is not a loopback address; pass --allow-remote to serve it to other machines", addr)
}

// readPreload reads MODEL and checks it loads, so a bad file fails here
// with the CLI's one-line error instead of in the page.
func readPreload(path string) (*web.Preload, error) {
	if _, err := pipeline.Load(path, pipeline.Options{BindAll: true}); err != nil {
		return nil, pipeErr(err)
	}
	// The same bound as an upload: the page gets these bytes as one.
	data, err := safefile.ReadFile(path, web.MaxModelBytes)
	if err != nil {
		return nil, usageErr("%s: %v", path, safefile.Reason(err))
	}
	return &web.Preload{Name: path, Data: data}, nil
}
