package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/gctune"
	"github.com/onnxcost/onnxcost/pipeline"
	"github.com/onnxcost/onnxcost/sweep"
	"github.com/onnxcost/onnxcost/viz"
)

// timeRooflineFlags are roofline's --time mode flags.
type timeRooflineFlags struct {
	on    bool
	sweep string // NAME=LIST
	node  string
}

// timeRooflinePoints costs the model at every value of the swept
// parameter and returns the floors and estimate of the whole model, or of
// one node (by name, or the fused node that absorbed it).
func timeRooflinePoints(model string, f *costFlags, tf *timeRooflineFlags, stderr io.Writer) ([]viz.TimePoint, string, error) {
	name, values, err := sweep.ParseAlong(tf.sweep)
	if err != nil {
		return nil, "", usageErr("%v", err)
	}
	if f.gpu == "" {
		return nil, "", usageErr("--gpu is required (see 'onnxcost gpus' for the list)")
	}
	if strings.Contains(f.gpu, ",") {
		return nil, "", usageErr("--time draws one GPU; got %s (use 'sweep' to compare GPUs)", f.gpu)
	}
	if pipeline.IsZoo(model) {
		if _, err := pipeline.ParseZoo(model); err != nil {
			return nil, "", pipeErr(err)
		}
	}
	// Validate the flags the way sweep does, then walk the values.
	if err := checkValue("--dtype", f.dtype, validDTypes...); err != nil {
		return nil, "", err
	}
	if err := checkPlan(f.plan); err != nil {
		return nil, "", err
	}
	g, err := resolveGPU(f.gpu, f.gpuFile)
	if err != nil {
		return nil, "", err
	}
	if err := f.passFlags.validate(); err != nil {
		return nil, "", err
	}
	if err := f.trainFlags.validate(); err != nil {
		return nil, "", err
	}
	if err := checkPowerControl(g, f.powerControl()); err != nil {
		return nil, "", err
	}
	// Priced as report prices one point: the runtime named (or the
	// model's), a training step, a power setting, a calibration.
	rt, err := sweepRuntime(f.runtime, f.runtimeFile, f.train, f.dtype)
	if err != nil {
		return nil, "", err
	}
	db, err := runtimeDB(f.runtimeFile)
	if err != nil {
		return nil, "", err
	}
	cal, err := loadCalibration(f.calibration)
	if err != nil {
		return nil, "", err
	}
	if err := asUsage(pipeline.CheckWarm(f.warm, f.train)); err != nil {
		return nil, "", err
	}
	s, err := sweep.NewSweeper(sweep.Config{Model: model, GPUs: []*hwdb.GPU{g}, Plan: f.plan, Passes: f.passFlags.options(), Runtimes: db,
		Load: pipeline.Options{InputDataDir: f.inputData, Counted: gctune.SizeHeap},
		Estimate: pipeline.EstimateOptions{DType: f.dtype, Runtime: rt, ToolVersion: version, Power: f.powerControl(),
			Train: f.trainFlags.options(), GPUs: int(f.gpus), Calibration: cal, Warm: f.warm}})
	if err != nil {
		return nil, "", pipeErr(err)
	}
	dims, err := parseDims(f.dims)
	if err != nil {
		return nil, "", err
	}
	var pts []viz.TimePoint
	dtype, priced := "", ""
	err = s.Along(sweep.Along{Name: name, Values: values, Batch: f.batch, Dims: dims}, func(v int64, r *report.Report) error {
		dtype, priced = r.DType, render.PricedText(r, ", ")
		tp, ok := viz.TimePointOf(r, tf.node, float64(v))
		if !ok {
			return usageErr("--node %q: no such node in %s (names as in 'report')", tf.node, model)
		}
		pts = append(pts, tp)
		return nil
	})
	if err != nil {
		return nil, "", pipeErr(err)
	}
	printWarnings(stderr, s.Warnings())
	what := viz.ModelTitle(model)
	if tf.node != "" {
		what += " node " + tf.node
	}
	return pts, fmt.Sprintf("%s on %s, dtype %s, %s: time against %s", what, g.Name, dtype, priced, name), nil
}

// writeTimeRoofline draws the time-based roofline to out.
func writeTimeRoofline(model, out, format string, f *costFlags, tf *timeRooflineFlags, stderr io.Writer) error {
	pts, title, err := timeRooflinePoints(model, f, tf, stderr)
	if err != nil {
		return err
	}
	name, _, _ := strings.Cut(tf.sweep, "=")
	img, err := viz.TimeRoofline(pts, viz.TimeRooflineOptions{Title: title, XLabel: strings.TrimSpace(name)}, format)
	if err != nil {
		return usageErr("%v", err)
	}
	return writeOut(out, img)
}
