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
	return asUsage(pipeline.SetEpoch(r, l, f.samples, f.batch, f.dims))
}

// samplesPerStep is pipeline.SamplesPerStep for the model flags, a
// usage error when it cannot say.
func samplesPerStep(f *modelFlags, l *pipeline.Loaded) (int64, error) {
	per, err := pipeline.SamplesPerStep(f.batch, f.dims, l)
	return per, asUsage(err)
}
