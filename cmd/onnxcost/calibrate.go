package main

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"

	"github.com/onnxcost/onnxcost/calib"
	"github.com/onnxcost/onnxcost/calib/loop"
	"github.com/onnxcost/onnxcost/calib/profile"
	"github.com/onnxcost/onnxcost/internal/outfile"
	"github.com/onnxcost/onnxcost/pipeline"
	"github.com/spf13/cobra"
)

func init() { register("calibrate", newCalibrateCmd) }

// calibrate's logic is in calib, calib/profile and pipeline; this is flags.
func newCalibrateCmd(stdout, stderr io.Writer) *cobra.Command {
	var f costFlags
	var meas, prof, layers, replay, out, format, trace, date string
	var top int
	c := &cobra.Command{
		Use:   "calibrate --gpu NAME (--measurements FILE.csv | --profile TRACE MODEL) [-o CAL.yaml]",
		Short: "Compare a measured profile with the estimate node by node, and fit a calibration (CAL.yaml) from measurements for --calibration",
		Long: `--profile: onnxruntime's profiling JSON, a PyTorch (Kineto) trace or trtexec
--exportProfile against MODEL's nodes, per node and per kernel class.
--measurements: a CSV of measured calls (model,ms[,batch,dtype,dims,runtime])
fitted into the calibration -o writes, for --calibration on every cost
command. See docs/commands.md, "Measurements, calibration and intervals".`,
		Example: "  onnxcost calibrate --gpu H100 --measurements runs.csv -o h100.cal.yaml\n" +
			"  onnxcost calibrate --gpu A100 --profile onnxruntime_profile.json model.onnx --trace overlay.json",
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if (meas == "") == (prof == "") || (prof != "") != (len(args) == 1) {
				return usageErr("calibrate: give --measurements FILE.csv, or --profile TRACE and the MODEL it profiled")
			}
			if err := checkValue("--format", format, "text", "json"); err != nil {
				return err
			}
			if f.calibration != "" {
				// What calibrate compares and fits is the estimate before
				// any calibration; taking the flag and pricing without it
				// would be a silent no-op.
				return usageErr("calibrate: --calibration corrects the cost commands' estimates (report, compare, sweep, …); calibrate compares and fits the uncalibrated one: drop it, or price the model with 'onnxcost report --calibration'")
			}
			if meas != "" {
				return calibrateTable(stdout, stderr, &f, meas, out, date)
			}
			if replay != "" && layers != "" {
				return usageErr("calibrate: --replay goes with a PyTorch trace, --layer-info with a trtexec profile: give one")
			}
			return calibrateProfile(stdout, stderr, &f, args[0], prof, layers, replay, out, trace, date, format, top)
		},
	}
	f.addBase(c)
	c.Flags().StringVar(&meas, "measurements", "", "CSV of measured calls to fit (`FILE.csv`: model,ms[,batch,dtype,dims,runtime])")
	c.Flags().StringVar(&prof, "profile", "", "measured profile of MODEL (`TRACE`: onnxruntime JSON, PyTorch Kineto trace, trtexec --exportProfile; gzipped too)")
	c.Flags().StringVar(&layers, "layer-info", "", "trtexec --exportLayerInfo `FILE` (which ONNX nodes each TensorRT layer fused)")
	c.Flags().StringVar(&replay, "replay", "", "with --profile of one eager call (a PyTorch trace): take each kernel's time from a CUDA-graph replay of the same call, `FILE` a PyTorch trace of the replay or a kernel,us table (scripts/measure_gpu.py --profile; FILE#SPEC picks one call); prices --runtime graph")
	c.Flags().StringVarP(&out, "output", "o", "", "write the fitted calibration to `CAL.yaml`")
	c.Flags().StringVar(&trace, "trace", "", "with --profile: write a Chrome trace `FILE`.json with the predicted and measured timelines one above the other")
	c.Flags().StringVar(&format, "format", "text", "with --profile: text|json")
	c.Flags().IntVar(&top, "top", 30, "with --profile, text: the nodes listed (0: all)")
	c.Flags().BoolVar(&f.warm, "warm", false, "with --profile: price the profiled call as one repeated back to back (L2 holds what the previous call left); default: true for a profile that averages several calls, false for one call")
	c.Flags().StringVar(&date, "date", "", "the date recorded in the calibration (default: today, UTC)")
	return c
}

// calibrateTable fits a calibration from a measurements table.
func calibrateTable(stdout, stderr io.Writer, f *costFlags, table, out, date string) error {
	cfg, err := f.config(table)
	if err != nil {
		return err
	}
	rows, prov, err := loop.MeasuredTable(table, cfg)
	if err != nil {
		return pipeErr(err)
	}
	if w := prov.MismatchWarning(table, cfg.GPUSpec); w != "" {
		printWarnings(stderr, []string{w})
	}
	return fitAndWrite(stdout, stderr, f, cfg, rows, prov, filepath.Base(table), out, date)
}

// calibrateProfile prints the profile's comparison and, with -o, fits it.
func calibrateProfile(stdout, stderr io.Writer, f *costFlags, model, prof, layers, replay, out, trace, date, format string, top int) error {
	var p *profile.Profile
	var err error
	if replay != "" {
		p, err = profile.ReadKinetoReplay(prof, replay)
	} else {
		p, err = loop.ReadProfile(prof, layers)
	}
	if err != nil {
		return usageErr("%v", err)
	}
	if rt := loop.ProfileRuntime(p.Format); rt != "" && !f.given("runtime") {
		f.runtime = rt // the kernels to match are those the profiled runtime ran
		if p.Replayed {
			f.runtime = "graph" // the eager call's kernels, replayed
		}
	}
	if !f.given("warm") {
		// Times averaged over several calls are of calls that each came
		// after one like it (onnxruntime's runs after its warm-up,
		// trtexec's iterations, profiler steps): priced as such unless
		// --warm=false says otherwise. A training step's traffic is
		// priced as its own, warm or not (--warm refuses --train).
		f.warm = p.Runs > 1 && !f.train
	}
	cfg, err := f.config(model)
	if err != nil {
		return err
	}
	cmpn, m, rep, err := loop.ProfileComparison(model, p, cfg)
	if err != nil {
		return pipeErr(err)
	}
	if w := p.Device.MismatchWarning(prof, cfg.GPUSpec); w != "" {
		printWarnings(stderr, []string{w})
	}
	if trace != "" {
		b, err := m.Trace()
		if err == nil {
			in := f.inputs(model, prof)
			if replay != "" {
				path, _ := profile.ReplayFile(replay)
				in = append(in, path)
			}
			err = writeFiles(in, outfile.Bytes(trace, b))
		}
		if err != nil {
			return err
		}
	}
	if format == "json" {
		err = cmpn.WriteJSON(stdout)
	} else {
		err = cmpn.WriteText(stdout, top)
	}
	if err != nil || out == "" {
		return err
	}
	prov := p.Device
	if prov.Software == "" {
		prov.Software = loop.ProfileSoftware(p.Format)
	}
	return fitAndWrite(stdout, stderr, f, cfg, m.Rows(rep), prov, filepath.Base(prof), out, date)
}

// fitAndWrite fits rows on the configured GPU and writes the file, its
// source naming the device, driver and software the measurements name
// (prov).
func fitAndWrite(stdout, stderr io.Writer, f *costFlags, cfg pipeline.Config, rows []calib.Row, prov calib.Provenance, source, out, date string) error {
	src := loop.CalibrationSource(rows, source, date)
	src.Device, src.Driver = prov.DeviceText(), prov.Driver
	src.Runtime = loop.SourceRuntime(src.Runtime, prov.Software)
	cal, err := calib.Fit(cfg.GPUSpec, rows, src)
	if err != nil {
		return usageErr("calibrate: %v", err)
	}
	printWarnings(stderr, loop.FitWarnings(cal))
	var b bytes.Buffer
	if err := cal.Write(&b); err != nil {
		return err
	}
	if out == "" {
		_, err := stdout.Write(b.Bytes())
		return err
	}
	if err := writeFiles(f.inputs(source), outfile.Bytes(out, b.Bytes())); err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, loop.FitSummary(cal, out))
	return err
}
