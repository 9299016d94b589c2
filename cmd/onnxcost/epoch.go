package main

import (
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/pipeline"
)

// applyEpoch adds the per-epoch figures --samples asks for to a training
// report (nothing without --samples).
func (f *costFlags) applyEpoch(r *report.Report, l *pipeline.Loaded) error {
	if !f.given("samples") {
		return nil
	}
	if f.samples <= 0 {
		return usageErr("--samples %d: want a positive number of samples per epoch", f.samples)
	}
	if !f.train || r.Totals.Train == nil {
		return usageErr("--samples prices a training epoch: it needs --train")
	}
	per, err := samplesPerStep(&f.modelFlags, l)
	if err != nil {
		return err
	}
	if err := r.Totals.Train.SetEpoch(f.samples, per); err != nil {
		return usageErr("--samples %d: %v", f.samples, err)
	}
	return nil
}

// samplesPerStep is pipeline.SamplesPerStep for the model flags, a
// usage error when it cannot say.
func samplesPerStep(f *modelFlags, l *pipeline.Loaded) (int64, error) {
	per, err := pipeline.SamplesPerStep(f.batch, f.dims, l)
	return per, asUsage(err)
}
